/*
 * uring.c - the io_uring executor: ring setup and probing, SQE allocation,
 * one io_uring_enter per flush, completion reaping, waiting, cancel.
 *
 * user_data of an SQE is (entry id << 2 | part): an entry may use two SQEs
 * (stat: statx + buffer check; poll: poll + linked timeout) and completes
 * when both CQEs are in.  Two user_data values are reserved: UD_FUTEX, the
 * FUTEX_WAIT on the worker completion counter that lets one io_uring_enter
 * wait for both executors at once, and UD_CANCEL, async-cancel requests
 * whose own CQEs carry nothing we need.
 *
 * Sizing: io_uring charges a ring's memory to the locked-memory limit of
 * the user who made it (RLIMIT_MEMLOCK, 8 MiB by default, one budget for
 * all of that user's processes; not for CAP_IPC_LOCK).  An SQ of 2 SQEs
 * per entry took 1.1 MiB per kernel thread of xsc threads, and a third
 * non-root process under `xsc run` got no ring.  So the SQ holds a batch,
 * at most SQ_MAX SQEs, and whoever queues SQEs first makes room for all
 * of an entry's parts (xsc__sq_room: a submission, or with SQPOLL a wait
 * for the poller), so a linked pair is never split between two
 * submissions.  The CQ holds the CQEs of every entry in flight, so they
 * fit without the kernel's overflow list: back-pressure lives in
 * the pages (3 per entry: a cancel's own CQE too).  Readiness waits are
 * not bounded by the entries; CQEs past the CQ wait in the kernel's
 * overflow list until the reaper enters.
 */
#include "uring_prep.h"
#include "done.h"
#include "fdkind.h"
#include "handle.h"
#include "rawio.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "hostprof.h"
#include "rawsys.h"

#define UD_FUTEX (~0ULL)
#define UD_CANCEL (~1ULL)
#define UD_BARRIER (~2ULL)	/* xsc__sqpoll_barrier's NOP */

static unsigned pow2(unsigned v)
{
	unsigned p = 1;
	while (p < v)
		p <<= 1;
	return p;
}

#define SQ_MAX 512	/* 32 KiB of SQEs: a batch, not every entry */

static int ring_init(struct xsc *x, bool sqpoll)
{
	struct io_uring_params p = { 0 };
	unsigned cq = pow2(3 * x->n + 8);
	unsigned sq = cq < SQ_MAX ? cq : SQ_MAX;

	/* SUBMIT_ALL: an SQE that fails before it is issued does not stop
	 * the submission (xsc__uring_submit goes on without it, 5.18) */
	p.flags = IORING_SETUP_CQSIZE | IORING_SETUP_SUBMIT_ALL;
	p.cq_entries = cq;
	if (sqpoll) {
		p.flags |= IORING_SETUP_SQPOLL;
		p.sq_thread_idle = x->cfg.sq_idle_ms;
		if (x->cfg.syscall_cpu >= 0) {
			p.flags |= IORING_SETUP_SQ_AFF;
			p.sq_thread_cpu = (unsigned)x->cfg.syscall_cpu;
		}
	} else if (x->cfg.flags & XSC_DEFER_TASKRUN) {
		/* Completions wait until the one issuer enters (6.1): no
		 * wakeup or task-work signal per completion, the work runs
		 * in a batch inside the next io_uring_enter.  TASKRUN_FLAG
		 * says in the SQ flags when some is pending, so reaping can
		 * tell when to enter. */
		p.flags |= IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN |
			   IORING_SETUP_TASKRUN_FLAG;
	} else {
		/* one issuer, completions run when it enters the kernel */
		p.flags |= IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_COOP_TASKRUN;
	}
	struct io_uring_params asked = p;
	int ret = io_uring_queue_init_params(sq, &x->ring, &p);
	if (ret == -EINVAL) {	/* before 5.18 */
		p = asked;
		p.flags &= ~IORING_SETUP_SUBMIT_ALL;
		asked = p;
		ret = io_uring_queue_init_params(sq, &x->ring, &p);
	}
	if (ret == -EINVAL && (asked.flags & IORING_SETUP_DEFER_TASKRUN)) {
		/* before 6.1: the default mode, completions run on any
		 * return to user space */
		p = asked;
		p.flags &= ~(IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_TASKRUN_FLAG);
		p.flags |= IORING_SETUP_COOP_TASKRUN;
		ret = io_uring_queue_init_params(sq, &x->ring, &p);
	}
	x->defer_tw = ret == 0 && (p.flags & IORING_SETUP_DEFER_TASKRUN);
	return ret;
}

static void describe(char *buf, size_t len, const char *what, int err)
{
	char v[16], lock[160] = "";
	int dis = -1;
	struct rlimit rl;

	if (xsc__read_small("/proc/sys/kernel/io_uring_disabled", v, sizeof(v)) > 0)
		dis = atoi(v);
	/* the user's locked memory is used up: say which limit, and how
	 * to raise it (see the top) */
	if (err == -ENOMEM && xsc__sys4(SYS_prlimit64, 0, RLIMIT_MEMLOCK, 0, &rl) == 0 &&
	    rl.rlim_cur != RLIM_INFINITY)
		snprintf(lock, sizeof(lock), " (io_uring counts rings against "
			 "RLIMIT_MEMLOCK, %lu KiB for all of this user's "
			 "processes; ulimit -l raises it)",
			 (unsigned long)(rl.rlim_cur >> 10));
	snprintf(buf, len, "%s: %s%s%s", what, strerror(-err), lock,
		 dis == 2 ? " (kernel.io_uring_disabled=2)" :
		 dis == 1 && err == -EPERM ? " (kernel.io_uring_disabled=1)" :
		 err == -EPERM ? " (seccomp or container policy?)" : "");
}

/* Creates the ring the configuration asks for; records why not.  Called
 * with the backend already resolved by probe.c. */
int xsc__uring_setup(struct xsc *x)
{
	bool want_sqpoll = x->cfg.backend == XSC_BACKEND_SQPOLL;
	int ret;

	ret = ring_init(x, want_sqpoll);
	if (ret < 0 && want_sqpoll) {
		describe(x->sq_reason, sizeof(x->sq_reason), "SQPOLL ring", ret);
		x->pr.sqpoll_reason = x->sq_reason;
		ret = ring_init(x, false);
		want_sqpoll = false;
	}
	if (ret < 0) {
		describe(x->reason, sizeof(x->reason), "io_uring_setup", ret);
		x->pr.reason = x->reason;
		return ret;
	}
	/* a registered ring fd spares every io_uring_enter an fget/fput, and
	 * keeps the ring usable if the program closes its fd (close_range) */
	x->ring_registered = io_uring_register_ring_fd(&x->ring) == 1;
	x->have_ring = true;
	x->ring_open = true;
	x->sqpoll = want_sqpoll;
	x->pr.uring = 1;
	x->pr.sqpoll = want_sqpoll;
	x->probe = io_uring_get_probe_ring(&x->ring);
	x->pr.nops = x->probe ? x->probe->last_op + 1 : 0;
	/* The program's descriptor numbers are its own: natively its first
	 * open gets 3 and its last the one below RLIMIT_NOFILE.  A registered
	 * ring needs no fd from 6.3 on (enter and register by index), so the
	 * fd is closed; before that it is moved above the soft limit. */
	if (x->ring_registered && (x->ring.features & XSC_FEAT_REG_REG_RING)) {
		xsc__sys1(SYS_close, x->ring.ring_fd);
		x->ring.ring_fd = -1;
	} else {
		x->ring.ring_fd = xsc__fd_aside(x->ring.ring_fd);
	}
	struct stat st;
	if (xsc__sys2(SYS_fstat, x->ring.ring_fd, &st) == 0) {
		x->ring_dev = st.st_dev;
		x->ring_ino = st.st_ino;
	}
	return 0;
}

long xsc__uring_register(struct xsc *x, unsigned op, void *arg, unsigned nr)
{
	struct io_uring *r = &x->ring;

	if (r->ring_fd >= 0)
		return xsc__sys4(SYS_io_uring_register, r->ring_fd, op, arg, nr);
	if (!x->ring_registered)
		return -EBADF;
	return xsc__sys4(SYS_io_uring_register, r->enter_ring_fd,
			 op | XSC_REGISTER_USE_REGISTERED_RING, arg, nr);
}

/* liburing's own flag (its int_flags.h, not installed): the ring fd is
 * registered, and io_uring_queue_exit unregisters it */
#define XSC_LIBURING_INT_FLAG_REG_RING 1

/* The ring's fd was closed at setup (6.3+), or the program may have
 * closed it (daemons run close_range) and reused its number: close it
 * only if it is still the ring; else drop the registered ring through
 * its index, unmap, and close nothing.
 *
 * The registered index is one of the owner thread's table: the same
 * number in another thread's (or a forked child's) table names another
 * ring, which unregistering would destroy (xsc_close of a handle opened
 * by another thread cost the caller its own second handle's ring,
 * t_owner).  Only the owner unregisters; elsewhere the registration
 * lives on until the owner exits or closes nothing of its own. */
static void ring_exit(struct xsc *x)
{
	struct io_uring *r = &x->ring;
	bool mine = x->gen == atomic_load(&xsc__fork_gen) &&
		    x->owner_tid == (int)xsc__sys0(SYS_gettid);
	struct stat st;

	if (!mine)
		r->int_flags &= (__u8)~XSC_LIBURING_INT_FLAG_REG_RING;
	if (r->ring_fd >= 0 && xsc__sys2(SYS_fstat, r->ring_fd, &st) == 0 &&
	    (uint64_t)st.st_dev == x->ring_dev && (uint64_t)st.st_ino == x->ring_ino) {
		io_uring_queue_exit(r);
		return;
	}
	if (x->ring_registered && mine) {
		struct io_uring_rsrc_update up = { .offset = (unsigned)r->enter_ring_fd };
		xsc__sys4(SYS_io_uring_register, r->enter_ring_fd,
			  IORING_UNREGISTER_RING_FDS | XSC_REGISTER_USE_REGISTERED_RING,
			  &up, 1);
	}
	/* queue_exit's own unregister and close(-1) then touch nothing */
	r->ring_fd = -1;
	io_uring_queue_exit(r);
}

void xsc__uring_teardown(struct xsc *x)
{
	if (x->probe)
		io_uring_free_probe(x->probe);
	if (x->ring_open)
		ring_exit(x);
	x->probe = NULL;
	x->have_ring = false;
	x->ring_open = false;
}

bool xsc__uring_has(struct xsc *x, unsigned op)
{
	return x->probe && io_uring_opcode_supported(x->probe, (int)op);
}

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

void xsc__uring_retire(struct xsc *x)
{
	struct io_uring_sq *sq = &x->ring.sq;
	unsigned from = x->sqpoll ? sqpoll_taken(x)
				  : io_uring_smp_load_acquire(sq->khead);

	x->have_ring = false;
	x->futex_armed = false;
	x->lost_mc_left = 0;
	x->pr.reason = x->reason;
	x->routes_stale = true;	/* the dispatcher routes again */
	for (unsigned i = from; i != sq->sqe_tail; i++) {
		uint64_t ud = sq->sqes[i & sq->ring_mask].user_data;
		int id = (int)(ud >> 2);
		struct xsc_slot *s;

		if (ud == UD_FUTEX || ud == UD_CANCEL || ud == UD_BARRIER)
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
	if (!(x->cfg.flags & XSC_QUIET))
		xsc__say("xsc: %s; calls run on the fallback executors from now on\n",
			 x->reason);
	xsc__uring_retire(x);
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
	io_uring_sqe_set_data64(sqe, UD_BARRIER);
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

static enum xsc_verdict finish_slow(struct xsc *x, int id);

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
		s->mode = XSC_M_BLOCK | (s->mode & XSC_M_AGAIN);
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
	if (head == io_uring_smp_load_acquire(cq->ktail) && x->have_ring &&
	    (IO_URING_READ_ONCE(*x->ring.sq.kflags) &
	     ((x->defer_tw ? IORING_SQ_TASKRUN : 0) | IORING_SQ_CQ_OVERFLOW))) {
		x->st.crossings++;
		io_uring_get_events(&x->ring);
	}

	/* the tail is read once, not per CQE as io_uring_for_each_cqe does;
	 * CQEs posted meanwhile wait for the next reap */
	tail = io_uring_smp_load_acquire(cq->ktail);
	seen = tail - head;
	for (; head != tail; head++) {
		struct io_uring_cqe *cqe = &cq->cqes[head & cq->ring_mask];
		uint64_t ud = cqe->user_data;
		if (__builtin_expect(ud >> 62, 0)) {	/* all reserved */
			if (ud == UD_FUTEX)
				x->futex_armed = false;
			else if (!(ud & XSC_UD_MC)) {
				xsc__wait_done(x, ud & ~XSC_UD_WAIT, cqe->res);
				done++;
			} else if (ud != UD_CANCEL && ud != UD_BARRIER) {
				const struct xsc_mc_ops *mc = xsc__mc();
				if (mc)	/* set: only multi-calls make such SQEs */
					mc->cqe(x, ud, cqe->res, cqe->flags);
			}
			continue;
		}
		int id = (int)(ud >> 2);
		struct xsc_slot *s = slot_of(x, id);
		if (s->parts == 1 && x->quick[x->ent[id].sysno]) {
			/* its only CQE is the result (probe.c's quick): no
			 * part bookkeeping, no done function to look up */
			s->parts = 0;
			x->inflight_uring--;
			xsc__complete_inl(x, id, cqe->res);
			done++;
			continue;
		}
		s->res[ud & 3] = cqe->res;
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
			io_uring_sqe_set_data64(sqe, UD_FUTEX);
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
int xsc__fd_on_disk(struct xsc *x, int fd)
{
	struct statx stx;
	long r = xsc__sys6(SYS_statx, fd, (long)"",
			   AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_TYPE, (long)&stx, 0);

	x->st.crossings++;
	if (r < 0)
		return (int)r;
	return S_ISREG(stx.stx_mode) || S_ISBLK(stx.stx_mode);
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
	long fl = xsc__sys3(SYS_fcntl, fd, F_GETFL, 0);

	x->st.crossings++;
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
	if (res == -EOPNOTSUPP)
		return XSC_RESUBMIT;	/* the file has no non-blocking mode */
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
		return res;
	}
	if (res != -EAGAIN && !short_write)
		return res;
	int nb = xsc__fd_nonblocking(x, (int)x->ent[id].args[0]);
	if (nb != 0)
		return res;	/* O_NONBLOCK: exactly the synchronous answer */
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
	io_uring_sqe_set_data64(sqe, UD_CANCEL);
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
