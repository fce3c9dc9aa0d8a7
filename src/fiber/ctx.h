/*
 * ctx.h - execution contexts and fiber stacks (internal layer under the
 * M:N scheduler).  A context is a saved stack pointer; xsc__ctx_swap
 * (switch.S) pushes the callee-saved registers and the MXCSR/x87 control
 * word, so rsp is valid at every instruction of a switch.
 *
 * Rules (the why: docs/design.md, "Contexts and fiber stacks"):
 *  - a zeroed struct xsc_ctx is a valid "from"; it belongs to the thread
 *    that first switches away from it: one per kernel thread;
 *  - xsc__ctx_make(ctx, lo, size, fn, arg, exit_hook) lays out the first
 *    frame, xsc__ctx_switch(&self, ctx) runs fn(arg); when fn returns,
 *    exit_hook(ctx) runs on the fiber's stack and must leave for good
 *    with xsc__ctx_exit(ctx, next); a NULL or returning hook aborts;
 *  - free a fiber's stack only once the code on "next" has taken over;
 *  - a new fiber inherits its creator's MXCSR and x87 control word
 *    (C11 7.6), then keeps its own;
 *  - use xsc__ctx_switch (ASan's fiber bookkeeping around the raw swap);
 *    TSan is not supported;
 *  - every function returning int returns 0 or a negative errno.
 */
#ifndef XSC_FIBER_CTX_H
#define XSC_FIBER_CTX_H

#include <stddef.h>
#include <stdint.h>

#if defined(__SANITIZE_ADDRESS__)
#define XSC_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define XSC_ASAN 1
#endif
#endif

#ifdef XSC_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

/* ---- contexts ------------------------------------------------------- */

struct xsc_ctx {
	void *sp;		/* saved rsp; offset 0 is used by switch.S */
	void *stack_lo;		/* lowest usable byte of the stack, for ASan */
	size_t stack_size;	/* 0: a thread's own stack, bounds unknown */
	void (*fn)(void *);
	void *arg;
	void (*exit_hook)(struct xsc_ctx *self);
	void *asan_fake;	/* ASan fake stack kept while switched out */
	uint32_t pkru;		/* its protection keys' rights while switched
				   out, where the OS enabled protection keys
				   (xsc__ctx_pkru); offset 56, switch.S's */
};

/* Nonzero where the OS enabled protection keys (CPUID OSPKE): PKRU is
 * thread state, and a switch carries each context's own (switch.S). */
extern unsigned char xsc__ctx_pkru __attribute__((visibility("hidden")));

/* Raw switch (switch.S): save the current context into *from, resume *to.
 * Returns, in the resumed context, the "from" of the switch that resumed
 * it.  No sanitizer bookkeeping. */
struct xsc_ctx *xsc__ctx_swap(struct xsc_ctx *from, struct xsc_ctx *to);

/* Prepare ctx to run fn(arg) on the stack [stack_lo, stack_lo+stack_size)
 * at its first switch-in.  exit_hook runs when fn returns (see above).
 * Returns -EINVAL if the stack is too small (under 4 KiB) or NULL. */
int xsc__ctx_make(struct xsc_ctx *ctx, void *stack_lo, size_t stack_size,
		  void (*fn)(void *), void *arg,
		  void (*exit_hook)(struct xsc_ctx *self));

/* Leave a dead fiber for good: like xsc__ctx_switch but tells ASan the
 * fiber's fake stack can be dropped.  Call it from exit_hook only. */
void xsc__ctx_exit(struct xsc_ctx *self, struct xsc_ctx *to)
	__attribute__((noreturn));

#ifdef XSC_ASAN
/* After a switch lands: finish the ASan switch and learn the bounds of a
 * thread's own stack when we just left it (its stack_size is 0). */
static inline void xsc__ctx_landed(struct xsc_ctx *self, struct xsc_ctx *prev)
{
	const void *lo;
	size_t size;

	__sanitizer_finish_switch_fiber(self ? self->asan_fake : NULL, &lo, &size);
	if (prev && !prev->stack_size) {
		prev->stack_lo = (void *)lo;
		prev->stack_size = size;
	}
}
#endif

/* Switch from the running context (saved into *from) to *to.  Returns when
 * someone switches back to *from; the value is that someone's context. */
static inline struct xsc_ctx *xsc__ctx_switch(struct xsc_ctx *from,
					      struct xsc_ctx *to)
{
#ifdef XSC_ASAN
	struct xsc_ctx *prev;

	__sanitizer_start_switch_fiber(&from->asan_fake, to->stack_lo,
				       to->stack_size);
	prev = xsc__ctx_swap(from, to);
	xsc__ctx_landed(from, prev);
	return prev;
#else
	return xsc__ctx_swap(from, to);
#endif
}

/* ---- stacks --------------------------------------------------------- */

/* A stack: [lo, hi) is usable, one guard page sits right below lo, and
 * this descriptor lives in the mapping just above hi.  Callers may carve
 * their own small structures (fiber control block) from below hi. */
struct xsc_stack {
	void *lo;			/* lowest usable byte */
	void *hi;			/* one past the highest usable byte, 64-aligned */
	size_t size;			/* requested usable size (the pool key) */
	void *map;			/* the mmap'd region, guard page first */
	size_t map_size;
	struct xsc_stack *next;		/* pool free list */
	unsigned vg_id;			/* valgrind stack id */
	int slot;			/* index in the guard-page registry */
};

#define XSC_STACK_DEFAULT_SIZE (256u << 10)
#define XSC_STACK_MIN_SIZE (16u << 10)
#define XSC_STACK_POOL_DEFAULT 64u

/* Per kernel thread that runs fibers, before the first fiber runs: install
 * an alternate signal stack (unless one is already there) and, once per
 * process, the SIGSEGV handler.  Idempotent.  Undone by
 * xsc__stack_thread_fini or automatically at thread exit. */
int xsc__stack_thread_init(void);
/* Empty this thread's pool and remove the alternate stack we installed. */
void xsc__stack_thread_fini(void);

/* Take a stack of `size` bytes (0: the default size; rounded up to a
 * page), from this thread's pool when it has one of that size.  The top 64
 * bytes hold the descriptor, so hi - lo is size - 64. */
int xsc__stack_get(size_t size, struct xsc_stack **out);
/* Give a stack back (to this thread's pool, or unmap it if the pool is
 * full or the size is not the default).  Never call it while running on
 * that stack. */
void xsc__stack_put(struct xsc_stack *st);
/* Unmap stacks in this thread's pool until at most `keep` remain; returns
 * how many were unmapped. */
unsigned xsc__stack_trim(unsigned keep);

/* Process-wide settings, read when a stack is taken.  The size is rounded
 * up to a page and must be at least XSC_STACK_MIN_SIZE (else -EINVAL). */
int xsc__stack_set_default_size(size_t size);
size_t xsc__stack_default_size(void);
void xsc__stack_set_pool_max(unsigned n);

struct xsc_stack_stats {
	long live;		/* mapped stacks in the process, pooled or not */
	unsigned pooled;	/* stacks in this thread's pool */
	long mapped;		/* mmap calls made (for tests of reuse) */
};
void xsc__stack_stats(struct xsc_stack_stats *s);

#endif
