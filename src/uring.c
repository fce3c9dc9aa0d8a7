/*
 * uring.c - the io_uring executor's submission side: room in the SQ, one
 * io_uring_enter per flush, a ring that cannot be entered any more, the
 * non-blocking-first protocol its translations share, cancel.  The ring
 * is made in uring_setup.c; completions are reaped and waited for in
 * uring_reap.c.
 *
 * user_data of an SQE is (entry id << 2 | part): an entry may use two SQEs
 * (stat: statx + buffer check; poll: poll + linked timeout) and completes
 * when both CQEs are in.  A few values are reserved (uring.h): XSC_UD_FUTEX,
 * the FUTEX_WAIT on the worker completion counter that lets one
 * io_uring_enter wait for both executors, XSC_UD_CANCEL, async-cancel
 * requests whose CQEs carry nothing, XSC_UD_BARRIER, xsc__sqpoll_barrier's.
 *
 * Sizing: the SQ holds a batch, not every entry, and whoever queues SQEs
 * first makes room for all of an entry's parts (xsc__sq_room), so a linked
 * pair is never split between two submissions.  The CQ holds the CQEs of
 * every entry in flight: back-pressure lives in the pages.  Why:
 * docs/design.md, "A ring's memory".
 */
#include "uring_prep.h"
#include "done.h"
#include "fdkind.h"
#include "rawio.h"
#include "usdt.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "hostprof.h"
#include "rawsys.h"

int xsc__prep_nop(struct xsc *x, int id)
{
	io_uring_prep_nop(xsc__sqe(x, id, 0));
	return 1;
}

bool xsc__sq_room_slow(struct xsc *x, unsigned k)
{
	int64_t give_up = 0;

	for (;;) {
		if (!x->have_ring)
			return false;	/* and nothing may be queued in it */
		x->sq_head = io_uring_smp_load_acquire(x->ring.sq.khead);
		if (xsc__sq_has_room(x, k))
			return true;
		/* Without SQPOLL the enter takes every queued SQE before it
		 * returns (xsc__uring_submit); it fails for good (the ring is
		 * lost) or for a moment (-EAGAIN: no memory for requests).
		 * An SQPOLL poller takes them on its own: wake it if it
		 * sleeps, and give it the core.  It needs nothing from this
		 * thread, so this is not a wait the reaper is forbidden
		 * (docs/design.md).  Still no room after a second: the caller
		 * takes its fallback, and nothing of its entry was queued. */
		int64_t now = xsc__now();
		if (!give_up)
			give_up = now + 1000000000;
		else if (now > give_up)
			return false;
		if (!x->sqpoll) {
			if (xsc__uring_submit(x) <= 0 && x->have_ring)
				xsc__sys0(SYS_sched_yield);
			continue;
		}
		if (IO_URING_READ_ONCE(*x->ring.sq.kflags) & IORING_SQ_NEED_WAKEUP)
			x->st.crossings++;
		x->sq_ready = 0;
		io_uring_submit(&x->ring);	/* publishes, wakes it */
		xsc__sys0(SYS_sched_yield);
	}
}

/* xsc__sqe's cached head said the SQ may be full: read the kernel's.  The
 * caller made room first (xsc__sq_room), so there is. */
struct io_uring_sqe *xsc__sqe_slow(struct xsc *x, int id, int part)
{
	struct io_uring_sqe *sqe;

	x->sq_head = io_uring_smp_load_acquire(x->ring.sq.khead);
	sqe = io_uring_get_sqe(&x->ring);
	if (!sqe) {	/* a prep took more than XSC_MAX_PARTS SQEs */
		xsc__say("xsc: internal error: no room in the SQ for a part "
			 "of a call (XSC_MAX_PARTS)\n");
		abort();
	}
	io_uring_sqe_set_data64(sqe, ((uint64_t)id << 2) | (unsigned)part);
	x->sq_ready++;
	if (!part)
		x->slot[id].res[1] = 0;	/* see xsc__sqe */
	return sqe;
}

/* ---- a ring that cannot be entered any more ----------------------------
 *
 * io_uring_enter can start failing for good in the middle of a handle's
 * life: a seccomp filter installed after xsc_open denies it (-EPERM), the
 * ring's registered fd is gone.  Without SQPOLL no SQE still in the SQ
 * will ever be consumed: the kernel takes SQEs only inside io_uring_enter,
 * so everything past the SQ head is still ours.  An SQPOLL poller takes
 * published SQEs without any enter, at any moment; sqpoll_taken() makes
 * the boundary exact first.  Each entry whose SQE the kernel did not take
 * is handed back to the dispatcher (XSC_V_RING_LOST), which gives it to
 * the fallback executor exactly once; the rest of a short write ends with
 * the count written so far, and the dispatcher routes later calls around
 * the ring.  Entries the kernel took complete as before (their CQEs need
 * no enter: task work runs on any system call, an SQPOLL poller posts its
 * own, and waits poll the CQ).  When the error says a sandbox refused
 * (-EPERM, -EACCES), syscall threads that predate it could escape it, so
 * everything runs in the caller from then on: more restrictive than
 * native at worst, never less (docs/security.md). */

/* The first published SQ slot the SQPOLL poller did not take, with the
 * guarantee that it never will.  Reading the SQ head is not enough: the
 * poller may be reading the next slot right now.  So every published
 * slot's SQ array entry is pointed out of range, from the tail back to
 * the head.  The kernel reads each array entry once (one 32-bit load), in
 * increasing order, and drops an out-of-range index without a CQE,
 * counting it in sq_dropped.  Written backwards, the slots it still read
 * intact form a prefix, whose length is the slots consumed minus the
 * slots dropped, read at a moment the poller is not between a drop and
 * committing the head: once the head reached the tail, or when two reads
 * agree while the poller shows IORING_SQ_NEED_WAKEUP (it sets the flag
 * only after committing, and clears it before reading again).  The
 * poller never stays busy, so the wait is short; it needs no system
 * call. */
static unsigned sqpoll_taken(struct xsc *x)
{
	struct io_uring_sq *sq = &x->ring.sq;
	unsigned tail = IO_URING_READ_ONCE(*sq->ktail);	/* we publish it */
	unsigned d0 = io_uring_smp_load_acquire(sq->kdropped);
	unsigned head = io_uring_smp_load_acquire(sq->khead);

	for (unsigned i = tail; i != head;) {
		i--;
		IO_URING_WRITE_ONCE(sq->array[i & sq->ring_mask], ~0u);
	}
	io_uring_smp_mb();
	for (unsigned spins = 0;; spins++) {
		unsigned f1 = io_uring_smp_load_acquire(sq->kflags);
		unsigned d1 = io_uring_smp_load_acquire(sq->kdropped);
		unsigned k1 = io_uring_smp_load_acquire(sq->khead);

		if (k1 == tail)	/* drops are counted before the commit */
			return tail - (io_uring_smp_load_acquire(sq->kdropped) - d0);
		unsigned f2 = io_uring_smp_load_acquire(sq->kflags);
		unsigned d2 = io_uring_smp_load_acquire(sq->kdropped);
		unsigned k2 = io_uring_smp_load_acquire(sq->khead);
		if ((f1 & f2 & IORING_SQ_NEED_WAKEUP) && d1 == d2 && k1 == k2)
			return k1 - (d1 - d0);
		if (spins & 63)
			__builtin_ia32_pause();
		else
			sched_yield();	/* the poller may need this CPU */
	}
}

_Atomic bool xsc__uring_enter_denied;

void xsc__uring_retire(struct xsc *x)
{
	struct io_uring_sq *sq = &x->ring.sq;
	unsigned from = x->sqpoll ? sqpoll_taken(x)
				  : io_uring_smp_load_acquire(sq->khead);

	/* A DEFER_TASKRUN ring posts the completions of what it took only
	 * inside its owner's io_uring_enter (a COOP_TASKRUN one on any
	 * return from the kernel): a thread blocked in a posted read when
	 * the program installed a filter that lets io_uring_enter through
	 * waited for good.  Such a ring is entered for them still, for
	 * nothing else. */
	x->drain = x->defer_tw && x->ring_open && !atomic_load(&xsc__uring_enter_denied);
	x->have_ring = false;
	x->futex_armed = false;
	x->lost_mc_left = 0;
	x->pr.reason = x->reason;
	x->routes_stale = true;	/* the dispatcher routes again */
	for (unsigned i = from; i != sq->sqe_tail; i++) {
		uint64_t ud = sq->sqes[i & sq->ring_mask].user_data;
		int id = (int)(ud >> 2);
		struct xsc_slot *s;

		if (ud == XSC_UD_FUTEX || ud == XSC_UD_CANCEL || ud == XSC_UD_BARRIER)
			continue;	/* reserved: nobody waits for it */
		if (!(ud & XSC_UD_MC) && (ud & XSC_UD_WAIT)) {
			/* a readiness wait the kernel never saw: say ready,
			 * and the call goes out on its fallback route */
			xsc__wait_done(x, ud & ~XSC_UD_WAIT, POLLIN | POLLOUT);
			continue;
		}
		if (ud & XSC_UD_MC) {
			x->lost_mc_left++;	/* a multi-call's: enter() settles */
			continue;
		}
		s = slot_of(x, id);
		if (s->backend > XSC_BACKEND_SQPOLL || !s->parts)
			continue;	/* taken back already (its other part) */
		s->parts = 0;
		x->inflight_uring--;
		if (s->mode & (XSC_M_REST | XSC_M_KIND))
			xsc__complete(x, id, s->acc);	/* what was read */
		else
			xsc__hand_back(x, id, XSC_V_RING_LOST);
	}
	sq->sqe_head = sq->sqe_tail;
	x->sq_ready = 0;
}

void xsc__uring_lost(struct xsc *x, int err)
{
	snprintf(x->reason, sizeof(x->reason), "io_uring_enter failed: %s%s",
		 strerror(-err), err == -EPERM || err == -EACCES ?
		 " (a sandbox refused it)" : "");
	if (err == -EPERM || err == -EACCES)
		x->cfg.backend = XSC_BACKEND_INLINE;
	XSC_PROBE2(fallback, x->reason, x);
	if (!(x->cfg.flags & XSC_QUIET))
		xsc__say("xsc: %s; calls run on the fallback executors from now on\n",
			 x->reason);
	xsc__uring_retire(x);
	x->drain = false;	/* it cannot be entered */
}

int xsc__uring_submit(struct xsc *x)
{
	int ret;

	if (!x->sq_ready || !x->have_ring)
		return 0;
	if (!x->sqpoll ||
	    (IO_URING_READ_ONCE(*x->ring.sq.kflags) & IORING_SQ_NEED_WAKEUP))
		x->st.crossings++;
	ret = io_uring_submit(&x->ring);
	if (ret < 0 && ret != -EINTR && ret != -EAGAIN && ret != -EBUSY) {
		x->sq_ready = 0;
		xsc__uring_lost(x, ret);
		return ret;
	}
	if (x->sqpoll) {
		x->sq_ready = 0;	/* published: the poller takes them */
		return ret;
	}
	/* Without IORING_SETUP_SUBMIT_ALL (before 5.18) the kernel stops at
	 * an SQE that fails before it is issued (a bad path's getname, a bad
	 * msghdr), and the SQEs behind it stay in the SQ: no CQE would ever
	 * come for them.  Go on while it takes some; what it refused for a
	 * moment (-EAGAIN) stays counted, for the next submission. */
	unsigned left = io_uring_sq_ready(&x->ring);
	while (left && ret > 0) {
		x->st.crossings++;
		ret = io_uring_submit(&x->ring);
		left = io_uring_sq_ready(&x->ring);
	}
	x->sq_ready = left;
	if (ret < 0 && ret != -EINTR && ret != -EAGAIN && ret != -EBUSY)
		xsc__uring_lost(x, ret);
	return ret;
}

/* An SQPOLL poller drops the file references of the requests it has
 * completed after their CQEs: in its task work, at the end of the round
 * that posted them.  A close right after the CQE of a read that had
 * waited (a FIFO's end, a socket) then did not release the file: 24% of
 * 1,000 such closes in a plain liburing program left a FIFO's reader
 * open, and a writer's open that should have waited for a reader went
 * on and met EPIPE (tp_fifo).  Before a close runs on its fallback, a NOP
 * goes through the ring: once the poller has taken it, the round that
 * posted every CQE seen so far is over (0 of 9,000 left open).  Bounded
 * by the poller's next round.  A flush asks once (dispatch.c). */
void xsc__sqpoll_barrier(struct xsc *x)
{
	struct io_uring_sq *sq = &x->ring.sq;
	struct io_uring_sqe *sqe;
	unsigned mine;
	int64_t until;

	if (!x->have_ring || !x->sqpoll)
		return;
	if (!xsc__sq_room(x, 1) || !x->have_ring)
		return;
	sqe = io_uring_get_sqe(&x->ring);
	io_uring_prep_nop(sqe);
	io_uring_sqe_set_data64(sqe, XSC_UD_BARRIER);
	x->sq_ready++;
	mine = sq->sqe_tail;
	if (xsc__uring_submit(x) < 0 || !x->have_ring)
		return;
	until = xsc__now() + 1000000000LL;
	for (unsigned spins = 1; (int)(io_uring_smp_load_acquire(sq->khead) - mine) < 0; spins++) {
		if (spins & 63) {
			__builtin_ia32_pause();
			continue;
		}
		xsc__sys0(SYS_sched_yield);	/* the poller may need this CPU */
		if (xsc__now() > until) {
			if (!(x->cfg.flags & XSC_QUIET))
				xsc__say("xsc: the SQPOLL poller took no request for 1 s; "
					 "a close goes on without waiting for it\n");
			return;
		}
	}
}

int xsc__uring_wait_fd(struct xsc *x, int fd, unsigned events, uint64_t tag)
{
	struct io_uring_sqe *sqe;

	if (!x->have_ring || !x->cfg.done_cb)
		return -ENOTSUP;
	if (!xsc__sq_room(x, 1))
		return -EAGAIN;
	sqe = io_uring_get_sqe(&x->ring);
	io_uring_prep_poll_add(sqe, fd, events);
	io_uring_sqe_set_data64(sqe, XSC_UD_WAIT | tag);
	x->sq_ready++;
	x->inflight_waits++;
	return 0;
}

bool xsc__want_nowait(struct xsc *x, int id)
{
	struct xsc_slot *s = slot_of(x, id);

	if (s->mode & XSC_M_BLOCK)
		return false;
	s->mode |= XSC_M_NOWAIT;
	return true;
}

/* 1 if fd is a regular file or a block device (which ignore O_NONBLOCK),
 * 0 if not, -errno if the fd is gone.  The attributes are the cached
 * ones (AT_STATX_DONT_SYNC): the type never changes, and the reaper must
 * not wait for a network file system or a FUSE server, which may be this
 * very process. */
int xsc__fd_type(struct xsc *x, int fd)
{
	struct statx stx;
	long r = xsc__sys6(SYS_statx, fd, (long)"",
			   AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_TYPE, (long)&stx, 0);

	x->st.crossings++;
	if (r < 0)
		return (int)r;
	xsc__sockhint_learn(fd, S_ISSOCK(stx.stx_mode));
	return (int)(stx.stx_mode & S_IFMT);
}

int xsc__fd_on_disk(struct xsc *x, int fd)
{
	int t = xsc__fd_type(x, fd);

	return t < 0 ? t : t == S_IFREG || t == S_IFBLK;
}

/* xsc__fd_on_disk, answered without a system call where transparent
 * mode knows the kind already (sched/fdkind.c), and kept for the next
 * time where it asked. */
static int fd_disk(struct xsc *x, int fd)
{
	int k = xsc__fdkind_get(fd);
	uint32_t seen;

	if (k >= 0)
		return k;
	if (!atomic_load_explicit(&xsc__fdkind_on, memory_order_relaxed))
		return xsc__fd_on_disk(x, fd);
	seen = xsc__fdkind_seen(fd);
	k = xsc__fd_on_disk(x, fd);
	if (k >= 0)
		xsc__fdkind_learn(fd, seen, k > 0);
	return k;
}

int xsc__fd_nonblocking(struct xsc *x, int fd)
{
	/* known exactly in transparent mode (fdkind.c) for descriptors
	 * the program made and shared with nothing since */
	int nb = xsc__fdkind_nb(fd);
	long fl = nb >= 0 ? (nb ? O_NONBLOCK : 0) : xsc__sys3(SYS_fcntl, fd, F_GETFL, 0);

	x->st.crossings += nb < 0;
	if (fl < 0)
		return (int)fl;
	if (!(fl & O_NONBLOCK))
		return 0;
	/* regular files and block devices ignore O_NONBLOCK */
	return xsc__fd_on_disk(x, fd) > 0 ? 0 : 1;
}

long xsc__nowait_done(struct xsc *x, int id, long res, long want, bool write,
		      bool *rest)
{
	struct xsc_slot *s = slot_of(x, id);
	bool short_write = write && res >= 0 && res < want;

	*rest = false;
	if (!(s->mode & XSC_M_NOWAIT)) {
		/* The blocking form, resubmitted after -EAGAIN on a blocking
		 * fd: io_uring waits for room in a pipe or socket, then
		 * writes what fits and completes; write(2) goes on. */
		if (short_write && s->mode == (XSC_M_BLOCK | XSC_M_AGAIN))
			*rest = true;
		return res;	/* the caller's own flags or the blocking form */
	}
	if (res == -EOPNOTSUPP) {
		/* the file has no non-blocking mode (a FIFO, a tty): the
		 * blocking form goes to io-wq when poll does not show the
		 * event it waits for (a FIFO's reader at end of file) */
		s->mode |= XSC_M_IOWQ;
		return XSC_RESUBMIT;
	}
	if (!write && res > 0 && res < want) {
		/* A short read.  A pipe or a socket gives what is there, as
		 * read(2) does; but the non-blocking form stops a regular
		 * file's read at the first page not in the page cache, where
		 * read(2) waits for the disk: the rest is read in the blocking
		 * form (an end of file then reads 0 more). */
		int fd = (int)x->ent[id].args[0], k = xsc__fdkind_get(fd);
		/* where a system call costs more than one io_uring runs in
		 * its workers (the host profile), the type is asked in the
		 * ring: no kernel entry of its own */
		if (k < 0 && x->hp && !x->hp->here_async &&
		    xsc__kind_ask(x, id, res) == XSC_PENDING)
			return XSC_PENDING;
		*rest = (k >= 0 ? k : fd_disk(x, fd)) > 0;
		if (*rest)
			s->mode |= XSC_M_IOWQ;	/* a file system's blocking read */
		return res;
	}
	if (res != -EAGAIN && !short_write)
		return res;
	int fd = (int)x->ent[id].args[0];
	int nb = xsc__fd_nonblocking(x, fd);
	if (nb != 0)
		return res;	/* O_NONBLOCK: exactly the synchronous answer */
	/* A regular file's write the non-blocking form refused (ext4's
	 * buffered writes) runs in io-wq; a read is asked of the kind only
	 * where it is known: one that waits for the disk completes from the
	 * page cache's callback on most file systems, and a pipe's or a
	 * socket's wait would pay a statx here. */
	if ((write ? fd_disk(x, fd) : xsc__fdkind_get(fd)) > 0)
		s->mode |= XSC_M_IOWQ;
	if (res == -EAGAIN) {
		s->mode |= XSC_M_AGAIN;
		return XSC_RESUBMIT;
	}
	*rest = true;	/* a blocking write would have kept going */
	return res;
}

long xsc__sock_efault(struct xsc *x, int fd)
{
	int v;
	socklen_t len = sizeof(v);
	long r = xsc__sys6(SYS_getsockopt, fd, SOL_SOCKET, SO_TYPE, (long)&v,
			   (long)&len, 0);

	x->st.crossings++;
	return r < 0 ? r : -EFAULT;
}

int xsc__uring_cancel(struct xsc *x, int id)
{
	struct io_uring_sqe *sqe;

	if (!x->have_ring)
		return -ENOTSUP;	/* cancelling needs an enter */
	atomic_store(&slot_of(x, id)->canceled, 1);	/* no resubmission */
	if (!xsc__sq_room(x, 1))
		return -EAGAIN;
	sqe = io_uring_get_sqe(&x->ring);
	io_uring_prep_cancel64(sqe, (uint64_t)id << 2, 0);
	io_uring_sqe_set_data64(sqe, XSC_UD_CANCEL);
	x->sq_ready++;
	return xsc__uring_submit(x) < 0 ? -EIO : 0;
}

void xsc__uring_cancel_all(struct xsc *x)
{
	for (unsigned i = 0; i < x->n; i++)
		if (x->slot[i].backend <= XSC_BACKEND_SQPOLL &&
		    st_get(&x->ent[i]) == XSC_BUSY)
			xsc__uring_cancel(x, (int)i);
}
