/*
 * dispatch.h - the dispatcher (dispatch.c, wait.c): what it offers the
 * rest of the library besides the public API.  It routes each entry to
 * an executor, re-routes what an executor hands back (internal.h, "what
 * an executor says of an entry"), collects completions, and is the one
 * place that switches a handle to other executors when the caller's
 * sandbox changes.
 */
#ifndef XSC_DISPATCH_H
#define XSC_DISPATCH_H
#include "internal.h"

#pragma GCC visibility push(hidden)

/* Re-routes what the executors handed back, in order (and, after a ring
 * was lost, routes every number again).  Called after each executor
 * call that may hand entries back: by the dispatcher, and by multi-calls,
 * which drive the ring themselves (multicall_uring.c). */
void xsc__reroute_slow(struct xsc *x);
static inline void xsc__reroute(struct xsc *x)
{
	if (__builtin_expect(x->nback != 0 || x->routes_stale, 0))
		xsc__reroute_slow(x);
}

/* A call routed to io_uring runs in the caller instead: AUTO, no seccomp
 * filter unless the fiber is sole (a row's .cheap_if may look at its
 * arguments with a system call of its own, which a sole fiber's never
 * makes), and the row's .cheap_if says so for these arguments on this
 * host (x->here_*: the host profile). */
static inline bool xsc__cheap_here(const struct xsc *x, const struct xsc_sysdef *d,
				   const int64_t a[6], enum xsc_here where)
{
	return __builtin_expect(d->cheap_if != NULL, 0) &&
	       x->cfg.backend == XSC_BACKEND_AUTO &&
	       (!x->pr.seccomp || where == XSC_HERE_SOLE) && d->cheap_if(x, a, where);
}

/* A call of the library's own on the owner's handle, posted and waited
 * for like xsc_call (also on a handle with a done_cb, which never sees
 * it: tag XSC_TAG_OWN).  Its result, or -errno. */
long xsc__call_own(struct xsc *x, long nr, long a0, long a1, long a2);

/* Owner: flushes, then sleeps until a completion, a kick after `seen`, or
 * timeout_ns (< 0: none).  For schedulers built on a handle. */
int xsc__idle_wait(struct xsc *x, uint32_t seen, int64_t timeout_ns);

/* Waits for poll events on fd without holding an entry, on whichever of
 * the two the handle has: a POLL_ADD in the ring (uring.h
 * xsc__uring_wait_fd), else the handle's epoll thread (fdwait.h).  Its
 * end goes to done_cb as id -1 with `tag`.  -ENOTSUP if neither. */
int xsc__wait_fd(struct xsc *x, int fd, unsigned events, uint64_t tag);

/* The caller's sandbox or credentials changed: from now on everything
 * runs on `backend` (INLINE: in the caller; WORKER: on syscall threads,
 * when they carry the change too), with a one-line reason. */
void xsc__sandboxed(struct xsc *x, const char *why, int backend);
/* What a call changes of the caller's sandbox or credentials, once it
 * succeeds ("seccomp filter", "Landlock", "credentials changed"), or NULL. */
const char *xsc__sandboxing(long nr, const int64_t a[6]);

/* ---- between handle.c, dispatch.c and wait.c ---- */

/* Index in the pending ring of the k-th posted entry. */
static inline unsigned xsc__pend_pos(const struct xsc *x, unsigned k)
{
	return (x->pend_head + k) & x->pend_mask;
}
/* Collects what every executor completed, no system call; re-routes what
 * the ring handed back meanwhile.  The number of entries. */
int xsc__reap(struct xsc *x);

/* The ring has something to reap or to wait for: entries with CQEs
 * outstanding, or readiness waits while it is mapped. */
static inline bool xsc__ring_reapable(const struct xsc *x)
{
	return x->inflight_uring || (x->inflight_waits && x->ring_open);
}

/* Completions the kernel holds until we enter: deferred ones
 * (DEFER_TASKRUN) and CQEs a full CQ could not take. */
static inline bool xsc__ring_held(const struct xsc *x)
{
	return (x->have_ring || (x->drain && !atomic_load(&xsc__uring_enter_denied))) &&
	       (IO_URING_READ_ONCE(*x->ring.sq.kflags) &
		((x->defer_tw ? IORING_SQ_TASKRUN : 0) | IORING_SQ_CQ_OVERFLOW));
}

/* True when xsc__reap would find nothing now: no CQE on the ring and
 * none held in the kernel, nothing on the syscall threads' or the
 * readiness waits' side, nothing the ring gave back, nothing to
 * submit.  Loads only: for the look before each call a fiber alone on
 * its vcpu makes directly (sched/syscalls.c alone), where a call in
 * flight is most often a sleep that has not ended. */
static inline bool xsc__reap_idle(struct xsc *x)
{
	if (x->inflight_worker || (x->inflight_waits && x->fdw) || x->nback ||
	    x->routes_stale || x->sq_ready)
		return false;
	if (!xsc__ring_reapable(x))
		return true;
	return *x->ring.cq.khead == io_uring_smp_load_acquire(x->ring.cq.ktail) &&
	       !xsc__ring_held(x);
}
/* Sleeps until some executor completes something.  0 or -EINTR. */
int xsc__block(struct xsc *x);
/* Every posted, unflushed entry completes with -ECANCELED (close). */
void xsc__drop_pending(struct xsc *x);
/* Waits for entry id as a synchronous call would, then frees it: its
 * result, -EINTR where a signal stopped it before it ran. */
long xsc__call_wait(struct xsc *x, int id);

#pragma GCC visibility pop
#endif
