/*
 * t_ctx_pkru - each fiber keeps its own protection keys' rights (PKRU)
 * across switches, as each thread does across the kernel's: PKRU is
 * thread state, and fibers share their kernel thread.  A new fiber starts
 * with its creator's, as a new thread does.  Where the OS has not enabled
 * protection keys there is no PKRU to carry: skip.
 */
#include <stdint.h>

#include "fiber/ctx.h"
#include "testlib.h"
#include "tp/tp_pkru.h"

#define SWITCHES 10000

static struct xsc_ctx m_ctx, f_ctx;
static uint32_t want_main, want_fiber;

static void fiber(void *arg)
{
	CHECK_EQ(rdpkru(), *(uint32_t *)arg);	/* its creator's */
	wrpkru(want_fiber);
	for (int i = 0; i < SWITCHES; i++) {
		xsc__ctx_switch(&f_ctx, &m_ctx);
		CHECK_EQ(rdpkru(), want_fiber);
	}
}

static void back_to_main(struct xsc_ctx *self)
{
	xsc__ctx_exit(self, &m_ctx);
}

int main(void)
{
	struct xsc_stack *st;
	uint32_t p0, made;

	if (!xsc__ctx_pkru) {
		printf("SKIP: the OS has not enabled protection keys (no OSPKE): no PKRU to carry\n");
		return 77;
	}
	CHECK_EQ(xsc__stack_thread_init(), 0);
	CHECK_EQ(xsc__stack_get(0, &st), 0);
	p0 = rdpkru();
	/* rights of keys 1 and 2 (access disable) flipped; key 0's, which
	 * every page here has, never */
	want_main = p0 ^ (1u << 2);
	want_fiber = p0 ^ (1u << 4);
	made = want_main;
	wrpkru(want_main);
	CHECK_EQ(xsc__ctx_make(&f_ctx, st->lo, (char *)st->hi - (char *)st->lo,
			       fiber, &made, back_to_main), 0);
	for (int i = 0; i <= SWITCHES; i++) {
		xsc__ctx_switch(&m_ctx, &f_ctx);
		CHECK_EQ(rdpkru(), want_main);
	}
	/* made under other rights: the new fiber starts with those */
	made = p0;
	wrpkru(p0);
	CHECK_EQ(xsc__ctx_make(&f_ctx, st->lo, (char *)st->hi - (char *)st->lo,
			       fiber, &made, back_to_main), 0);
	want_main = p0;
	for (int i = 0; i <= SWITCHES; i++) {
		xsc__ctx_switch(&m_ctx, &f_ctx);
		CHECK_EQ(rdpkru(), p0);
	}
	xsc__stack_put(st);
	xsc__stack_thread_fini();
	printf("ok: PKRU %#x in main, %#x in the fiber, kept over %d switches\n",
	       p0 ^ (1u << 2), want_fiber, 4 * SWITCHES);
	return 0;
}
