/*
 * preload.h - transparent mode internals the preload library's files and
 * its stubs share (the rest: shim.h).
 */
#ifndef XSC_TP_H
#define XSC_TP_H

#include "sched/sched.h"
#include "state.h"
#include "rawsys.h"
#include "insn.h"

extern bool xsc__tp;	/* transparent mode is on in this process */

#define TP_SEL_ALLOW 0	/* SYSCALL_DISPATCH_FILTER_ALLOW */
#define TP_SEL_BLOCK 1	/* SYSCALL_DISPATCH_FILTER_BLOCK */

/* Executes a call for the running fiber of a vcpu (selector already
 * ALLOW): the emulated ones (futex, thread identity, signals...), the
 * table's asynchronous ones (post + switch), the rest inline. */
long xsc__tp_call(long nr, const long *a);
/* A call made in a program's signal handler on vcpu v (preload.c): the
 * runtime's own answers (sigaction, thread ids, signals), the rest
 * directly. */
long xsc__tp_handler_call(struct xsc_vcpu *v, long nr, const long *a);
/* Raises signals other threads sent to running fiber f (signals/pending.c). */
void xsc__tp_deliver(struct xsc_fiber *f);
/* Its emulation needs the trapped registers (clone, fork, ...): a
 * rewritten site hands such a call back to its trap (preload.c,
 * rewrite.c). */
bool xsc__tp_needs_frame(long nr);

/* Syscall-site rewriting (rewrite.c): set up at start-up, a trapped site
 * at ip for nr, off in a forked child, the -v report. */
void xsc__tp_rewrite_init(void);
/* rewrite.c: the stub's xsave area, and whether it uses xsavec */
extern unsigned long xsc__tp_xsave_size;
extern unsigned char xsc__tp_xsavec;
extern bool xsc__tp_novec;		/* rewrite.c: sites may save no vector state */
extern const char *xsc__tp_novec_why;	/* why not, when not */
void xsc__tp_rewrite_site(uintptr_t ip, long nr);
void xsc__tp_rewrite_stop(void);
void xsc__tp_rewrite_child(void);
struct tp_counters;
void xsc__tp_rewrite_report(const struct tp_counters *c);


/* The vcpu, through the GS base every vcpu thread sets: right also while
 * FS holds another thread's TLS (setxid.c), and a load from the line of
 * the selector, where xsc__vcpu() loads from the GOT and the TLS block.
 * Only on a vcpu. */
static inline struct xsc_vcpu *gs_vcpu(void)
{
	struct xsc_vcpu *v;
	__asm__ __volatile__("mov %%gs:16, %0" : "=r"(v));
	return v;
}

/* Program code on fiber v->cur makes call nr through the runtime: the
 * selector is ALLOW while it runs, *count counts it, and signals other
 * threads sent it are raised before it returns (the fiber may come back
 * on another vcpu).  For the interposed functions and the rewritten
 * sites (rewrite.c). */
static inline long xsc__tp_enter(struct xsc_vcpu *v, long nr, const long *a,
				 uint64_t *count)
{
	long r;

	TP(v)->sel = TP_SEL_ALLOW;
	(*count)++;
	r = xsc__tp_call(nr, a);
	v = gs_vcpu();	/* still a vcpu, maybe another after a park */
	if (__builtin_expect((v->cur->sig_pending & ~v->cur->sigmask) != 0, 0))
		xsc__tp_deliver(v->cur);
	TP(v)->sel = TP_SEL_BLOCK;
	return r;
}

/* Entry from a libc function the library interposes (wrap.c): program
 * code on a fiber runs with the selector at BLOCK and goes to the
 * runtime; a program's signal handler follows the handler rules
 * (xsc__tp_handler_call); anything else (our own code, threads that are
 * not vcpus, a forked child) runs the call directly. */
/* The vcpu whose program code (a fiber, or a program's signal handler
 * on it) makes this call, or NULL for anything else. */
static inline struct xsc_vcpu *xsc__tp_program(void)
{
	struct xsc_vcpu *v;

	if (xsc__tp && (v = xsc__vcpu()) != NULL && TP(v)->sel == TP_SEL_BLOCK &&
	    (v->cur || TP(v)->in_handler))
		return v;
	return NULL;
}

static inline long xsc__tp_fast(long nr, long a0, long a1, long a2, long a3,
				long a4, long a5)
{
	struct xsc_vcpu *v = xsc__tp_program();

	if (v) {
		long a[6] = { a0, a1, a2, a3, a4, a5 }, r;
		if (!TP(v)->in_handler)
			return xsc__tp_enter(v, nr, a, &TP(v)->nfast);
		TP(v)->sel = TP_SEL_ALLOW;	/* the handler rules (signals/handlers.c) */
		r = xsc__tp_handler_call(v, nr, a);
		TP(v)->sel = TP_SEL_BLOCK;
		return r;
	}
	return xsc__sys6(nr, a0, a1, a2, a3, a4, a5);
}

#endif
