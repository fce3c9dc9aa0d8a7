/*
 * ctx.c - preparing fresh contexts and the first and last moments of a
 * fiber's life; the switch itself is in src/arch/x86_64/switch.S.
 *
 * xsc__ctx_make writes the frame xsc__ctx_swap pops (layout documented in
 * switch.S) at the top of the new stack, with xsc__ctx_trampoline as the
 * return address and the context in the r12 slot.  The first switch-in
 * "returns" into the trampoline, which calls xsc__ctx_entry(ctx, prev):
 * finish the sanitizer switch, run fn(arg), then hand over to exit_hook.
 *
 * Sanitizer protocol (ASan's common_interface_defs.h):
 *  - ordinary switch: start(&from->asan_fake, to bounds) ... finish(
 *    from->asan_fake) once we are back;
 *  - first entry of a fiber: finish(NULL), the fiber has no fake stack yet;
 *  - final exit: start(NULL, to bounds), which frees the dead fiber's fake
 *    stack; the context we land in runs its usual finish.
 * Valgrind registration belongs to whoever owns the stack memory
 * (stack.c), not to contexts.
 */
#include <cpuid.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fiber/ctx.h"
#include "rawsys.h"

void xsc__ctx_trampoline(void);
void xsc__ctx_entry(struct xsc_ctx *ctx, struct xsc_ctx *prev)
	__attribute__((noreturn, used));

#define FRAME_WORDS 8		/* update with the frame in switch.S */

_Static_assert(offsetof(struct xsc_ctx, pkru) == 56, "switch.S reads pkru at 56");

unsigned char xsc__ctx_pkru;

/* PKRU (protection keys for user pages) is thread state the kernel keeps
 * per kernel thread, in the xsave area.  Fibers share their kernel
 * thread, so where the OS enabled protection keys the switch carries
 * each context's own, as a kernel switch between threads does. */
static __attribute__((constructor)) void pkru_probe(void)
{
	unsigned a, b, c, d;

	if (__get_cpuid_count(7, 0, &a, &b, &c, &d))
		xsc__ctx_pkru = (c & bit_OSPKE) != 0;
}

static uint32_t rdpkru(void)
{
	uint32_t a, d;

	__asm__ volatile("rdpkru" : "=a"(a), "=d"(d) : "c"(0));
	return a;
}

static __attribute__((noreturn)) void die(const char *msg)
{
	/* raw: in libxsc-preload.so, write() is the shim's own */
	xsc__sys3(SYS_write, STDERR_FILENO, msg, strlen(msg));
	abort();
}

int xsc__ctx_make(struct xsc_ctx *ctx, void *stack_lo, size_t stack_size,
		  void (*fn)(void *), void *arg,
		  void (*exit_hook)(struct xsc_ctx *self))
{
	uintptr_t top;
	uint64_t *sp;
	uint32_t mxcsr;
	uint16_t fpucw;

	if (!ctx || !stack_lo || !fn || stack_size < 4096)
		return -EINVAL;
	/* 16 bytes of zeros above the frame: after the trampoline's "return"
	 * rsp sits here, 16-aligned, as the call it makes requires. */
	top = ((uintptr_t)stack_lo + stack_size) & ~(uintptr_t)15;
	sp = (uint64_t *)(top - 16) - FRAME_WORDS;
	memset(sp, 0, (FRAME_WORDS + 2) * sizeof(*sp));

	/* C11 7.6: the new fiber inherits its creator's FP control state. */
	__asm__ volatile("stmxcsr %0" : "=m"(mxcsr));
	__asm__ volatile("fnstcw %0" : "=m"(fpucw));
	sp[0] = mxcsr | (uint64_t)fpucw << 32;
	sp[4] = (uintptr_t)ctx;				/* r12 */
	sp[7] = (uintptr_t)xsc__ctx_trampoline;		/* return address */

	memset(ctx, 0, sizeof(*ctx));
	ctx->sp = sp;
	ctx->stack_lo = stack_lo;
	ctx->stack_size = stack_size;
	ctx->fn = fn;
	ctx->arg = arg;
	ctx->exit_hook = exit_hook;
	/* ... and its protection keys' rights, as a new thread does */
	if (xsc__ctx_pkru)
		ctx->pkru = rdpkru();
	return 0;
}

void xsc__ctx_entry(struct xsc_ctx *ctx, struct xsc_ctx *prev)
{
#ifdef XSC_ASAN
	xsc__ctx_landed(ctx, prev);	/* ctx->asan_fake is NULL: first entry */
#else
	(void)prev;
#endif
	ctx->fn(ctx->arg);
	if (ctx->exit_hook)
		ctx->exit_hook(ctx);
	die("xsc: fiber function returned and its exit hook did not switch away\n");
}

void xsc__ctx_exit(struct xsc_ctx *self, struct xsc_ctx *to)
{
#ifdef XSC_ASAN
	__sanitizer_start_switch_fiber(NULL, to->stack_lo, to->stack_size);
#endif
	xsc__ctx_swap(self, to);
	die("xsc: a dead fiber was switched back to\n");
}
