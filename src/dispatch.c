/*
 * dispatch.c - the dispatcher: posting into the syscall pages, flushing
 * them to the executors, and re-routing what an executor hands back.
 *
 * Entries live in page-aligned "syscall pages" of 64 entries x 64 bytes
 * (FlexSC 3.1).  The owner thread claims free entries from a stack of ids
 * (no atomic read-modify-write: single producer), fills them with plain
 * stores and publishes each with a release store of SUBMITTED.  A flush
 * walks the pending ring and gives each entry to the executor its route
 * names: the io_uring translation (which may decline one entry, sending it
 * to the row's fallback), the syscall threads, or the caller itself.  One
 * io_uring_enter then submits the whole batch.
 *
 * An executor never re-routes an entry: one the ring gives up later (a
 * retry in the synchronous form, a lost ring) comes back with a verdict
 * (internal.h), and xsc__reroute, here, gives it to the row's fallback.
 * Collecting completions and waiting for them is wait.c's; the handle's
 * life, handle.c's.
 */
#include "dispatch.h"
#include "done.h"
#include "exec.h"
#include "handle.h"
#include "probe.h"
#include "uring.h"
#include "usdt.h"
#include "worker.h"

#include <assert.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

/* ---- posting ---------------------------------------------------------- */

static int claim_slow(struct xsc *x)
{
	while (!x->nfree) {
		int ret;
		if (x->cfg.flags & XSC_NONBLOCK)
			return -EAGAIN;
		if (!x->cfg.done_cb)
			return -ENOBUFS;
		xsc_flush(x);
		x->st.full_waits++;
		if (!xsc__reap(x) && (ret = xsc__block(x)) < 0)
			return ret;
	}
	return x->free_ids[--x->nfree];
}

/* post copies a struct xsc_head over an entry's head word */
_Static_assert(sizeof(struct xsc_head) == sizeof(((struct xsc_entry *)0)->head) &&
	       offsetof(struct xsc_head, nargs) == offsetof(struct xsc_entry, nargs) &&
	       offsetof(struct xsc_head, route) == offsetof(struct xsc_entry, route),
	       "struct xsc_head must match the head of struct xsc_entry");

static int post_full(struct xsc *x, long nr, long a0, long a1, long a2,
		     long a3, long a4, long a5, uint64_t tag);
static int post_flush(struct xsc *x, int id);

/* The hot path of every call: a free entry, eight stores into it, a
 * link in the pending FIFO.  Inlined into the posting functions.  Its
 * slow cases are tail calls: a call in the middle made every post save
 * and restore six registers, a quarter of its instructions. */
static inline __attribute__((always_inline)) int
post(struct xsc *x, long nr, long a0, long a1, long a2, long a3, long a4,
     long a5, uint64_t tag)
{
	struct xsc_entry *e;
	struct xsc_slot *s;
	int id;

	if ((unsigned long)nr >= XSC_NR_MAX)
		return -ENOSYS;
	if (xsc__foreign_thread(x))
		return -EBADFD;
	if (__builtin_expect(!x->nfree, 0))
		return post_full(x, nr, a0, a1, a2, a3, a4, a5, tag);
	id = x->free_ids[--x->nfree];
	e = &x->ent[id];
	s = &x->slot[id];
	memcpy(&e->head, &x->head[nr], sizeof(e->head));	/* one store */
	/* one by one from registers: a copy through a stack array made
	 * 16-byte loads of 8-byte stores, a store-forwarding stall per call */
	e->args[0] = a0;
	e->args[1] = a1;
	e->args[2] = a2;
	e->args[3] = a3;
	e->args[4] = a4;
	e->args[5] = a5;
	/* not reset: ret (valid once DONE) and uptr (set by the translations
	 * that use it) */
	s->tag = tag;
	s->state = 0;	/* parts, backend, noted, mode */
	atomic_store_explicit(&s->canceled, 0, memory_order_relaxed);
	st_set(e, XSC_SUBMITTED);
	x->pend_ids[xsc__pend_pos(x, x->npending)] = id;
	x->npending++;
	x->st.posted++;
	XSC_PROBE3(post, nr, id, x);	/* page id / 64, slot id % 64 */
	if (__builtin_expect(x->npending >= x->flush_at, 0))
		return post_flush(x, id);
	return id;
}

/* No free entry: wait for one (claim_slow), then post into it. */
static __attribute__((noinline)) int
post_full(struct xsc *x, long nr, long a0, long a1, long a2, long a3, long a4,
	  long a5, uint64_t tag)
{
	int id = claim_slow(x);

	if (id < 0)
		return id;
	x->free_ids[x->nfree++] = id;
	return post(x, nr, a0, a1, a2, a3, a4, a5, tag);
}

/* The batching threshold is reached: flush, the entry is id. */
static __attribute__((noinline)) int post_flush(struct xsc *x, int id)
{
	xsc_flush(x);
	return id;
}

XSC_EXPORT int xsc_post_args(struct xsc *x, long nr, const long args[6],
			     uint64_t tag)
{
	if (!args)
		return post(x, nr, 0, 0, 0, 0, 0, 0, tag);
	return post(x, nr, args[0], args[1], args[2], args[3], args[4], args[5], tag);
}

XSC_EXPORT int xsc_post6(struct xsc *x, long nr, long a0, long a1, long a2,
			 long a3, long a4, long a5)
{
	return post(x, nr, a0, a1, a2, a3, a4, a5, 0);
}

/* Parenthesised: xsc.h's macro of the same name would expand here. */
XSC_EXPORT int (xsc_post)(struct xsc *x, long nr, ...)
{
	long a0, a1, a2, a3, a4, a5;
	va_list ap;

	va_start(ap, nr);	/* six, as syscall(2) reads */
	a0 = va_arg(ap, long);
	a1 = va_arg(ap, long);
	a2 = va_arg(ap, long);
	a3 = va_arg(ap, long);
	a4 = va_arg(ap, long);
	a5 = va_arg(ap, long);
	va_end(ap);
	return post(x, nr, a0, a1, a2, a3, a4, a5, 0);
}

XSC_EXPORT long xsc_call(struct xsc *x, long nr, ...)
{
	long a[6];
	va_list ap;
	int id;

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (x->cfg.done_cb)
		return -EINVAL;	/* the callback would take the result */
	id = post(x, nr, a[0], a[1], a[2], a[3], a[4], a[5], 0);
	if (id < 0)
		return id;
	return xsc__call_wait(x, id);
}

long xsc__call_own(struct xsc *x, long nr, long a0, long a1, long a2)
{
	int id = post(x, nr, a0, a1, a2, 0, 0, 0, XSC_TAG_OWN);

	return id < 0 ? id : xsc__call_wait(x, id);
}

/* ---- flushing --------------------------------------------------------- */

static int start_worker(struct xsc *x, int id)
{
	/* in transparent mode the pool starts with the vcpu (preload/start.c) or not
	 * at all: starting it here would malloc under a fiber */
	if (!x->wk && (xsc__raw_workers || xsc__workers_start(x) < 0))
		return -1;
	x->slot[id].backend = XSC_BACKEND_WORKER;
	st_set(&x->ent[id], XSC_BUSY);	/* before a worker can see it */
	xsc__worker_queue(x, id);
	return 0;
}

static void run_inline(struct xsc *x, int id)
{
	struct xsc_entry *e = &x->ent[id];
	const char *why;

	/* The reaper never issues a call that may block (docs/design.md):
	 * reroute_one sends those to a syscall thread, and comes here with
	 * one only when no syscall thread can be started. */
	assert(!x->reaping || !xsc__may_block(xsc__sysdef(e->sysno)) ||
	       !x->wk);

	x->slot[id].backend = XSC_BACKEND_INLINE;
	st_set(e, XSC_BUSY);
	if (e->sysno != XSC_NR_NOP)
		x->st.crossings++;
	long ret = xsc__exec_sync(e);
	if (__builtin_expect(ret >= 0, 1) && __builtin_expect(xsc__row_bound(xsc__sysdef(e->sysno)), 0) &&
	    (why = xsc__sandboxing(e->sysno, e->args)) != NULL)
		xsc__sandboxed(x, why, XSC_BACKEND_INLINE);
	xsc__complete(x, id, ret);
}

/* An entry the ring path declined, or routed elsewhere: worker or inline.
 * Returns true if a syscall thread needs a kick. */
static __attribute__((noinline)) bool dispatch_other(struct xsc *x, int id,
						      int b)
{
	if (xsc__bound(xsc__sysdef(x->ent[id].sysno), x->ent[id].args)) {
		run_inline(x, id);	/* its arguments tie it to this thread */
		return false;
	}
	if (b == XSC_BACKEND_URING || b == XSC_BACKEND_SQPOLL) {
		x->st.declined++;
		b = xsc__fallback_route(x, x->ent[id].sysno);
	}
	/* a close the SQPOLL ring declined (its NOP found no room): after
	 * the poller let go (once per flush: every CQE this flush's calls
	 * follow was seen before) */
	if (__builtin_expect(x->sqpoll, 0) && xsc__sys[x->ent[id].sysno].uring.no_sqpoll &&
	    x->barrier_flush != x->st.flushes + 1) {
		xsc__sqpoll_barrier(x);
		x->barrier_flush = x->st.flushes + 1;
		xsc__reroute(x);	/* the ring lost in it: those first */
	}
	if (b == XSC_BACKEND_WORKER && start_worker(x, id) == 0)
		return true;
	run_inline(x, id);
	return false;
}

/* An entry an executor handed back (BUSY, off its books; v is
 * XSC_V_RETRY_SYNC or XSC_V_RING_LOST) goes to the row's fallback
 * executor: a syscall thread for calls that may block, the caller only
 * for calls that cannot (or when no syscall thread can be started), so
 * a reaper never blocks here. */
static void reroute_one(struct xsc *x, int id, enum xsc_verdict v)
{
	(void)v;	/* both: the kernel's own answer, from the fallback */
	if (!xsc__bound(xsc__sysdef(x->ent[id].sysno), x->ent[id].args) &&
	    xsc__fallback_route(x, x->ent[id].sysno) == XSC_BACKEND_WORKER &&
	    start_worker(x, id) == 0) {
		xsc__worker_kick(x);
		return;
	}
	run_inline(x, id);
}

/* In the order they were handed back.  An inline entry's done_cb may
 * flush or reap meanwhile, which comes here too: the ring is consumed
 * from x, one entry at a time. */
void xsc__reroute_slow(struct xsc *x)
{
	if (x->routes_stale) {
		x->routes_stale = false;
		xsc__route_all(x);	/* around the lost ring */
	}
	while (x->nback) {
		uint32_t b = x->back[x->back_head];
		x->back_head = (x->back_head + 1) & x->pend_mask;
		x->nback--;
		reroute_one(x, (int)(b >> 2), (enum xsc_verdict)(b & 3));
	}
}

/* The SQ has no room for another entry's SQEs: submit what it holds
 * (uring.h xsc__sq_room).  A submission that finds the ring lost hands
 * back the entries whose SQEs it did not take; re-routed here, before the
 * entries behind them, their done_cb may post entries: the FIFO cursor
 * goes back to x around it. */
static __attribute__((noinline)) bool flush_room(struct xsc *x, unsigned *h,
						 unsigned *left)
{
	bool ok;

	x->pend_head = *h;
	x->npending = *left;
	ok = xsc__sq_room_slow(x, XSC_MAX_PARTS);
	xsc__reroute(x);
	*h = x->pend_head;
	*left = x->npending;
	return ok;
}

static inline __attribute__((always_inline)) int flush(struct xsc *x)
{
	bool kick = false, full = false;	/* full: the SQ stayed full */
	int n = 0;

	if (xsc__foreign(x))
		return -EBADFD;

	/* One entry at a time off the FIFO: an inline entry's done_cb may
	 * post or release entries meanwhile, so dispatch_other works on x's
	 * own head and count.  The ring translations touch neither: the loop
	 * keeps the two in registers and writes them back once. */
	unsigned h = x->pend_head, left = x->npending;

	while (left) {
		int id = x->pend_ids[h];
		struct xsc_entry *e = &x->ent[id];
		int b = e->route;

		h = (h + 1) & x->pend_mask;
		left--;
		n++;
		/* (a route read at post time: the ring may be gone since) */
		if ((b == XSC_BACKEND_URING || b == XSC_BACKEND_SQPOLL) && x->have_ring) {
			const struct xsc_sysdef *d = &xsc__sys[e->sysno];
			int parts;
			/* arguments that tie it to this thread, or make it
			 * cheaper here (.cheap_if): it runs here */
			if (__builtin_expect((d->bound && d->bound(e->args)) ||
					     xsc__cheap_here(x, d, e->args, XSC_HERE_BATCH), 0))
				b = XSC_BACKEND_INLINE;
			else if ((xsc__sq_has_room(x, XSC_MAX_PARTS) ||
				  (!full && !(full = !flush_room(x, &h, &left)))) &&
				 (parts = d->uring.prep(x, id)) > 0) {
				/* few values live across the call: x's fields
				 * reload cheaper than spilled registers */
				struct xsc_slot *s = &x->slot[id];
				e = &x->ent[id];
				s->parts = (uint8_t)parts;
				s->backend = (uint8_t)e->route;
				x->inflight_uring++;
				st_set(e, XSC_BUSY);
				continue;
			}
		}
		x->pend_head = h;
		x->npending = left;
		kick |= dispatch_other(x, id, b);
		h = x->pend_head;
		left = x->npending;
	}
	x->pend_head = h;
	x->npending = 0;
	if (x->have_ring) {
		xsc__uring_submit(x);
		xsc__reroute(x);
	}
	if (kick)
		xsc__worker_kick(x);
	if (n)
		x->st.flushes++;
	return n;
}

/* The flush probe's crossings are those the flush made: counted only
 * while a tracer listens, in a copy of the flush of its own, so the
 * untraced one pays one test of the semaphore. */
static __attribute__((noinline)) int flush_traced(struct xsc *x)
{
	uint64_t cross0 = x->st.crossings;
	int n = flush(x);

	if (n > 0)	/* entries, crossings */
		XSC_PROBE3(flush, n, x->st.crossings - cross0, x);
	return n;
}

XSC_EXPORT int xsc_flush(struct xsc *x)
{
	if (XSC_PROBE_ENABLED(flush))
		return flush_traced(x);
	return flush(x);
}
