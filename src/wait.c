/*
 * wait.c - the owner's side of completions: reaping every executor (no
 * system call), sleeping until one completes, results, release, cancel,
 * and a call waited for as a synchronous call would be.
 *
 * Completions are collected only by the owner (xsc_poll/xsc_wait reap the
 * CQ, the worker completion stack and the epoll waiter), so all
 * bookkeeping is single-threaded (done.c).  What the ring hands back
 * while it is reaped is re-routed before the reap returns (dispatch.c).
 */
#include "dispatch.h"
#include "done.h"
#include "fdwait.h"
#include "handle.h"
#include "uring.h"
#include "worker.h"

#include <stdatomic.h>

/* ---- waiting ---------------------------------------------------------- */

int xsc__wait_fd(struct xsc *x, int fd, unsigned events, uint64_t tag)
{
	if (x->have_ring) {
		/* making room may find the ring lost: its entries go on */
		int ret = xsc__uring_wait_fd(x, fd, events, tag);
		xsc__reroute(x);
		return ret;
	}
	if (x->fdw)
		return xsc__fdwait_add(x, fd, events, tag);
	return -ENOTSUP;
}

int xsc__reap(struct xsc *x)
{
	int n = 0;

	if (xsc__ring_reapable(x)) {
		n += xsc__uring_reap(x);
		if (x->nback || x->routes_stale) {
			/* what the reaper gave back: still the reaper, so
			 * nothing that may block runs here */
			bool was = x->reaping;
			x->reaping = true;
			xsc__reroute_slow(x);
			x->reaping = was;
		}
		if (x->sq_ready) {	/* blocking forms of non-blocking attempts */
			xsc__uring_submit(x);
			xsc__reroute(x);
		}
	}
	if (x->inflight_worker)
		n += xsc__worker_reap(x);
	if (x->fdw && x->inflight_waits)
		n += xsc__fdwait_reap(x);
	return n;
}

/* Sleeps until some executor completes something, a kick after `seen`
 * (with kick), or timeout_ns (< 0: none).  0 or -EINTR. */
static int block_on(struct xsc *x, uint32_t seen, int64_t timeout_ns, bool kick)
{
	bool u = xsc__ring_reapable(x);
	bool w = x->inflight_worker > 0;

	kick |= x->fdw && x->inflight_waits;	/* its thread kicks us */
	int ret = 0;

	if (u)
		ret = xsc__uring_wait(x, w || kick, seen, timeout_ns);
	else if (w)
		ret = xsc__worker_wait(x, seen, timeout_ns);
	else if (kick)
		ret = xsc__futex_wait_kick(x, seen, timeout_ns) == -EINTR ? -EINTR : 0;
	if (!x->futex_armed)
		atomic_store(&x->owner_waiting, 0);
	xsc__reroute(x);	/* the wait found the ring lost */
	return ret;
}

int xsc__block(struct xsc *x)
{
	return block_on(x, atomic_load(&x->cseq), -1, false);
}

int xsc__idle_wait(struct xsc *x, uint32_t seen, int64_t timeout_ns)
{
	if (x->npending)
		xsc_flush(x);
	if (xsc__reap(x))
		return 0;
	return block_on(x, seen, timeout_ns, true);
}

XSC_EXPORT int xsc_poll(struct xsc *x)
{
	if (xsc__foreign(x))
		return -EBADFD;
	xsc__reap(x);
	return (int)x->ndone;
}

XSC_EXPORT int xsc_wait(struct xsc *x, unsigned min_done)
{
	uint64_t start = x->st.completed;

	if (xsc__foreign(x))
		return -EBADFD;
	if (x->npending)
		xsc_flush(x);
	for (;;) {
		xsc__reap(x);
		unsigned have = x->cfg.done_cb ? (unsigned)(x->st.completed - start)
					       : x->ndone;
		if (have >= min_done || !(x->inflight_uring + x->inflight_worker))
			return (int)have;
		int ret = xsc__block(x);
		if (ret < 0)
			return ret;
	}
}

/* Waits for entry id; -EINTR if a signal interrupted the wait. */
static int wait_entry(struct xsc *x, int id)
{
	if (xsc__foreign(x))
		return -EBADFD;
	if (st_get(&x->ent[id]) == XSC_SUBMITTED)
		xsc_flush(x);
	while (!x->slot[id].noted) {
		if (xsc__reap(x))
			continue;
		int ret = xsc__block(x);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* ---- results ---------------------------------------------------------- */

/* The owner counts an entry as done once it has reaped it: a worker sets
 * DONE a moment before it hands the id back. */
static bool done(struct xsc *x, int id)
{
	if (st_get(&x->ent[id]) != XSC_DONE)
		return false;
	if (!x->slot[id].noted)
		xsc__reap(x);
	return x->slot[id].noted;
}

XSC_EXPORT int xsc_result(struct xsc *x, int id, long *ret)
{
	if (!xsc__valid(x, id))
		return -EINVAL;
	if (done(x, id)) {
		if (ret)
			*ret = (long)x->ent[id].ret;
		return 0;
	}
	return st_get(&x->ent[id]) == XSC_FREE ? -EINVAL : -EINPROGRESS;
}

static void unlink_pending(struct xsc *x, int id)
{
	for (unsigned k = 0; k < x->npending; k++) {
		if (x->pend_ids[xsc__pend_pos(x, k)] != id)
			continue;
		for (; k + 1 < x->npending; k++)	/* keep the order */
			x->pend_ids[xsc__pend_pos(x, k)] = x->pend_ids[xsc__pend_pos(x, k + 1)];
		x->npending--;
		return;
	}
}

static int release_slow(struct xsc *x, int id);

XSC_EXPORT int xsc_release(struct xsc *x, int id)
{
	if (xsc__valid(x, id) && st_get(&x->ent[id]) == XSC_DONE &&
	    x->slot[id].noted) {
		/* the common case: done and accounted */
		x->ndone--;
		xsc__free_entry(x, id);
		return 0;
	}
	return release_slow(x, id);	/* a tail call: no frame here */
}

static __attribute__((noinline)) int release_slow(struct xsc *x, int id)
{
	if (!xsc__valid(x, id))
		return -EINVAL;
	if (done(x, id)) {
		x->ndone--;
		xsc__free_entry(x, id);
		return 0;
	}
	switch (st_get(&x->ent[id])) {
	case XSC_SUBMITTED:
		unlink_pending(x, id);
		xsc__free_entry(x, id);
		return 0;
	case XSC_BUSY:
	case XSC_DONE:
		return -EBUSY;
	default:
		return -EINVAL;
	}
}

void xsc__drop_pending(struct xsc *x)
{
	while (x->npending) {
		int id = x->pend_ids[x->pend_head];
		unlink_pending(x, id);
		xsc__complete(x, id, -ECANCELED);
	}
}

XSC_EXPORT int xsc_cancel(struct xsc *x, int id)
{
	int err;

	if (!xsc__valid(x, id))
		return -EINVAL;
	if (xsc__foreign(x))
		return -EBADFD;
	switch (st_get(&x->ent[id])) {
	case XSC_SUBMITTED:
		unlink_pending(x, id);
		x->slot[id].backend = XSC_BACKEND_INLINE;
		xsc__complete(x, id, -ECANCELED);
		return 0;
	case XSC_BUSY:
		if (x->slot[id].backend == XSC_BACKEND_WORKER)
			return xsc__worker_cancel(x, id);
		err = xsc__uring_cancel(x, id);
		xsc__reroute(x);	/* its submission found the ring lost */
		return err;
	case XSC_DONE:
		return -EALREADY;
	default:
		return -EINVAL;
	}
}

XSC_EXPORT int xsc_take(struct xsc *x, int id, long *ret)
{
	int err;

	if (!xsc__valid(x, id) || st_get(&x->ent[id]) == XSC_FREE)
		return -EINVAL;
	err = wait_entry(x, id);
	if (err < 0)
		return err;
	if (ret)
		*ret = (long)x->ent[id].ret;
	return xsc_release(x, id);
}

/* Waits for entry id as a synchronous call would, then frees it. */
long xsc__call_wait(struct xsc *x, int id)
{
	bool interrupted = false;
	long ret;

	int err;

	while ((err = wait_entry(x, id)) < 0) {
		if (err != -EINTR)
			return err;	/* never the entry's old result */
		/* like a synchronous call interrupted by a signal: stop it
		 * if it has not run yet; its result tells */
		if (!interrupted && xsc_cancel(x, id) == 0)
			interrupted = true;
	}
	ret = (long)x->ent[id].ret;
	xsc_release(x, id);
	return interrupted && ret == -ECANCELED ? -EINTR : ret;
}
