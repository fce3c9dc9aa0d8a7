/*
 * uring_reap.c - the io_uring executor's completions: every CQE there is
 * reaped without a system call, an entry's last one finishes it (its
 * done function may ask for the blocking form, queue the rest of a
 * transfer, or give the entry back to the dispatcher: XSC_V_RETRY_SYNC),
 * and the owner waits on the ring, the syscall threads and its wake word
 * at once with one io_uring_enter.
 */
#include "uring_prep.h"
#include "dispatch.h"
#include "done.h"

#include <linux/futex.h>

static enum xsc_verdict finish_slow(struct xsc *x, int id);

/* A worker's call that a cancel interrupted in its wait (an open of a
 * FIFO) can complete with the kernel's own restart codes, which never
 * reach a program (ERESTARTSYS 512 .. ERESTART_RESTARTBLOCK 516): its
 * answer is EINTR, which the signal path then restarts or not, as the
 * kernel would have. */
static inline int user_res(int r)
{
	return __builtin_expect((unsigned)(r + 516) <= 4, 0) ? -EINTR : r;
}

/* An entry's last CQE arrived: its result, unless the translation needs
 * a say (done function) -- then finish_slow, whose verdict may hand the
 * entry back to the dispatcher. */
static inline void finish(struct xsc *x, int id)
{
	const struct xsc_sysdef *d = &xsc__sys[x->ent[id].sysno];
	enum xsc_verdict v;

	if (__builtin_expect(d->uring.done != NULL, 0)) {
		if ((v = finish_slow(x, id)) != XSC_V_DONE)
			xsc__hand_back(x, id, v);
		return;
	}
	x->inflight_uring--;
	xsc__complete_inl(x, id, slot_of(x, id)->res[0]);
}

/* The done function's say: XSC_V_DONE (a result, or a new SQE in
 * flight), or XSC_V_RETRY_SYNC (taken off the ring's books). */
static enum xsc_verdict finish_slow(struct xsc *x, int id)
{
	struct xsc_entry *e = &x->ent[id];
	struct xsc_slot *s = slot_of(x, id);
	const struct xsc_sysdef *d = &xsc__sys[e->sysno];
	long ret = (s->mode & XSC_M_REST) ? xsc__rest_done(x, id) :
		   (s->mode & XSC_M_KIND) ? xsc__kind_done(x, id) : d->uring.done(x, id);

	if (ret == XSC_PENDING)
		return XSC_V_DONE;	/* a new SQE is queued: still in flight */
	if (ret == XSC_RESUBMIT && atomic_load(&s->canceled))
		ret = -ECANCELED;	/* canceled before it ran */
	if (ret == XSC_RESUBMIT && !x->have_ring)
		ret = XSC_RETRY_SYNC;	/* the ring was lost: nothing ran yet */
	if (ret == XSC_RESUBMIT) {
		s->mode = XSC_M_BLOCK | (s->mode & (XSC_M_AGAIN | XSC_M_IOWQ));
		int parts = xsc__sq_room(x, XSC_MAX_PARTS) ? d->uring.prep(x, id) : 0;
		if (parts > 0) {
			s->parts = (uint8_t)parts;
			return XSC_V_DONE;	/* still in flight, now blocking */
		}
		ret = XSC_RETRY_SYNC;	/* nothing ran yet */
	}
	x->inflight_uring--;
	if (ret == XSC_RETRY_SYNC)
		return XSC_V_RETRY_SYNC;	/* the kernel's own answer, from
						   the row's fallback */
	xsc__complete(x, id, ret);
	return XSC_V_DONE;
}

/* Reaps every CQE available; no system call. */
int xsc__uring_reap(struct xsc *x)
{
	struct io_uring_cq *cq = &x->ring.cq;
	unsigned head, tail, seen;
	int done = 0;

	x->reaping = true;
	head = *cq->khead;
	/* Deferred completions are posted only inside io_uring_enter: with
	 * none to reap and some pending, enter for them.  (Not when CQEs
	 * are there: the flag outlives the work after a submit-and-wait.) */
	/* ... and CQEs the full CQ could not take (readiness waits are not
	 * bounded by the entries) wait in the kernel until we enter */
	if (head == io_uring_smp_load_acquire(cq->ktail) && xsc__ring_held(x)) {
		x->st.crossings++;
		if (io_uring_get_events(&x->ring) < 0 && !x->have_ring)
			x->drain = false;
	}

	/* the tail is read once, not per CQE as io_uring_for_each_cqe does;
	 * CQEs posted meanwhile wait for the next reap */
	tail = io_uring_smp_load_acquire(cq->ktail);
	seen = tail - head;
	for (; head != tail; head++) {
		struct io_uring_cqe *cqe = &cq->cqes[head & cq->ring_mask];
		uint64_t ud = cqe->user_data;
		if (__builtin_expect(ud >> 62, 0)) {	/* all reserved */
			if (ud == XSC_UD_FUTEX)
				x->futex_armed = false;
			else if (!(ud & XSC_UD_MC)) {
				xsc__wait_done(x, ud & ~XSC_UD_WAIT, cqe->res);
				done++;
			} else if (ud != XSC_UD_CANCEL && ud != XSC_UD_BARRIER) {
				const struct xsc_mc_ops *mc = xsc__mc();
				if (mc)	/* set: only multi-calls make such SQEs */
					mc->cqe(x, ud, cqe->res, cqe->flags);
			}
			continue;
		}
		int id = (int)(ud >> 2);
		struct xsc_slot *s = slot_of(x, id);
		if (s->parts == 1 && !(ud & 3) && x->quick[x->ent[id].sysno]) {
			/* its only CQE is the result (probe.c's quick): no
			 * part bookkeeping, no done function to look up; not
			 * a fence's NOP (uring.h xsc__fence), part 1 */
			s->parts = 0;
			x->inflight_uring--;
			xsc__complete_inl(x, id, user_res(cqe->res));
			done++;
			continue;
		}
		s->res[ud & 3] = user_res(cqe->res);
		if (--s->parts == 0) {
			finish(x, id);
			done++;
		}
	}
	if (seen)
		io_uring_cq_advance(&x->ring, seen);
	x->reaping = false;
	return done;
}

/* Waits for at least one CQE, or timeout_ns (< 0: none).  With also_kick,
 * a FUTEX_WAIT on the handle's wake word rides in the same ring, armed
 * with `seen`, so one io_uring_enter sleeps on the ring, the syscall
 * threads and xsc__kick() at once.  Returns 0 or -EINTR. */
int xsc__uring_wait(struct xsc *x, bool also_kick, uint32_t seen,
		    int64_t timeout_ns)
{
	struct io_uring_cqe *cqe;
	struct __kernel_timespec ts;
	int ret;

	if (!x->have_ring) {
		/* the ring cannot be entered (xsc__uring_lost): its last requests
		 * post their CQEs on any system call; look every 1 ms */
		if (!io_uring_cq_ready(&x->ring))
			ret = (int)xsc__futex_wait_kick(x, seen, timeout_ns >= 0 &&
							timeout_ns < 1000000 ?
							timeout_ns : 1000000);
		else
			ret = 0;
		return ret == -EINTR ? -EINTR : 0;
	}
	if (x->sqpoll && x->cfg.spin_ns) {
		/* the poller completes without us entering: watch the CQ */
		int64_t end = xsc__now() + x->cfg.spin_ns;
		do {
			if (io_uring_cq_ready(&x->ring) ||
			    (also_kick && atomic_load(&x->cseq) != seen))
				return 0;
			__builtin_ia32_pause();
		} while (xsc__now() < end);
	}
	if (also_kick && !x->futex_armed) {
		bool room = xsc__uring_has(x, XSC_OP_FUTEX_WAIT) && xsc__sq_room(x, 1);
		if (!x->have_ring)
			return 0;	/* lost making room: the caller looks again */
		if (room) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&x->ring);
			atomic_store(&x->owner_waiting, 1);
			io_uring_prep_rw(XSC_OP_FUTEX_WAIT, sqe,
					 FUTEX2_SIZE_U32 | FUTEX2_PRIVATE,
					 (void *)&x->cseq, 0, 0);
			sqe->addr2 = seen;	/* a kick after `seen` ends it */
			sqe->addr3 = XSC_FUTEX_BITSET_ANY;
			io_uring_sqe_set_data64(sqe, XSC_UD_FUTEX);
			x->futex_armed = true;
			x->armed_val = seen;
			x->sq_ready++;
		} else if (timeout_ns < 0 || timeout_ns > 200000) {
			/* no FUTEX_WAIT op (or no room for it): look every 200 us */
			timeout_ns = 200000;
		}
	}
	/* Submit and wait in separate calls: an io_uring_enter that submits
	 * something returns the submitted count even when a signal cut its
	 * wait short, and the -EINTR would be lost (seen with SQPOLL, whose
	 * SQEs stay "unsubmitted" until the poller wakes up). */
	xsc__uring_submit(x);
	if (io_uring_cq_ready(&x->ring))
		return 0;
	x->st.crossings++;
	if (timeout_ns >= 0) {
		ts.tv_sec = timeout_ns / 1000000000;
		ts.tv_nsec = timeout_ns % 1000000000;
		ret = io_uring_wait_cqe_timeout(&x->ring, &cqe, &ts);
		if (ret == -ETIME)
			ret = 0;
	} else {
		ret = io_uring_wait_cqe(&x->ring, &cqe);
	}
	if (ret < 0 && ret != -EINTR && ret != -EAGAIN && ret != -EBUSY) {
		xsc__uring_lost(x, ret);
		return 0;	/* the caller looks again, on the new routes */
	}
	return ret < 0 ? ret : 0;
}
