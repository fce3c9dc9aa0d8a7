/*
 * handle.h - whose a handle is, and its life (handle.c): the owner check
 * every entry point makes, the runtime's shared handles, a forked child's
 * copy.
 */
#ifndef XSC_HANDLE_H
#define XSC_HANDLE_H
#include "internal.h"

#pragma GCC visibility push(hidden)

/* True when the calling thread may not use x: not the thread that
 * opened it, or a forked child of it.  A few loads, no system call: the
 * mark's model is said here too, or every file but handle.c would reach
 * it through __tls_get_addr (post and flush are in dispatch.c). */
extern __thread char xsc__owner_mark __attribute__((tls_model("initial-exec")));
extern _Atomic unsigned xsc__fork_gen;
static inline bool xsc__foreign(const struct xsc *x)
{
	return __builtin_expect(!x->shared && (x->owner != &xsc__owner_mark ||
		x->gen != atomic_load_explicit(&xsc__fork_gen, memory_order_relaxed)), 0);
}

/* The part of it post needs, one compare on the fast path: a forked
 * child posts into its own copy of the pages, which harms nobody, and its
 * flush or wait says -EBADFD before anything runs. */
static inline bool xsc__foreign_thread(const struct xsc *x)
{
	return __builtin_expect(x->owner != &xsc__owner_mark, 0) && !x->shared;
}

/* An entry id of x (the public calls' first check). */
static inline bool xsc__valid(const struct xsc *x, int id)
{
	return id >= 0 && (unsigned)id < x->n;
}

/* The runtime's own handles skip the ownership check (see struct xsc). */
void xsc__handle_shared(struct xsc *x);
/* In a forked child, that copy of a runtime's handle: its memory freed,
 * the child's fds of it closed, nothing the parent uses touched. */
void xsc__handle_forget(struct xsc *x);
/* 1 when the thread that opened x still exists */
bool xsc__owner_alive(const struct xsc *x);

#pragma GCC visibility pop
#endif
