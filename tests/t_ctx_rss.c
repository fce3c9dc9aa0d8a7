/*
 * t_ctx_rss - resident memory of an idle fiber: start N fibers on default
 * (256 KiB, lazily committed) stacks, let each run until its first switch
 * back, and divide the RSS growth by N.  Expect one or two pages each.
 * Then finish them all and check nothing leaked.
 */
#include <string.h>

#include "fiber/ctx.h"
#include "testlib.h"

#define N 2000

static struct xsc_ctx main_ctx;

static void idle(void *arg)
{
	struct xsc_ctx *self = arg;

	xsc__ctx_switch(self, &main_ctx);	/* park */
}

static void done(struct xsc_ctx *self)
{
	xsc__ctx_exit(self, &main_ctx);
}

int main(void)
{
	static struct xsc_stack *st[N];
	static struct xsc_ctx ctx[N];
	struct xsc_stack_stats s;
	long rss0, rss1;
	double per;

	CHECK_EQ(xsc__stack_thread_init(), 0);
	memset(ctx, 0, sizeof(ctx));		/* fault the arrays in first */
	memset(st, 0, sizeof(st));
	rss0 = rss_kib();
	for (int i = 0; i < N; i++) {
		CHECK_EQ(xsc__stack_get(0, &st[i]), 0);
		CHECK_EQ(xsc__ctx_make(&ctx[i], st[i]->lo,
				       (char *)st[i]->hi - (char *)st[i]->lo,
				       idle, &ctx[i], done), 0);
		xsc__ctx_switch(&main_ctx, &ctx[i]);
	}
	rss1 = rss_kib();
	per = (double)(rss1 - rss0) / N;
	printf("RSS per idle fiber: %.1f KiB (%d fibers, %zu KiB stacks, "
	       "RSS %ld -> %ld KiB)\n", per, N,
	       xsc__stack_default_size() >> 10, rss0, rss1);
	CHECK(per <= (test_sanitized() ? 64 : 12));

	for (int i = 0; i < N; i++)
		xsc__ctx_switch(&main_ctx, &ctx[i]);	/* idle returns */
	for (int i = 0; i < N; i++)
		xsc__stack_put(st[i]);
	xsc__stack_thread_fini();
	xsc__stack_stats(&s);
	CHECK_EQ(s.live, 0);
	return 0;
}
