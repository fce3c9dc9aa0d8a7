/*
 * ringwatch.c - a call made whole beside calls in flight on the ring,
 * stopped when one of them completes (docs/design.md, "Do no harm").
 *
 * Each vcpu's ring (DEFER_TASKRUN) has the watcher's eventfd registered,
 * notifications off (IORING_CQ_EVENTFD_DISABLED, a flag of the shared CQ
 * ring).  arm turns them on, then looks for work queued before (the
 * kernel sets IORING_SQ_TASKRUN, then reads the flag: full barriers both
 * ways); the watcher, a thread of xsc's own, reads the eventfd through a
 * ring of its own (a fixed file: the program may close the descriptor)
 * and stops each armed call as a readied fiber does (ops->stop_held).
 * A stop costs about four entries more than the look and post it spares
 * (the watcher's io_uring_enter and tgsigqueueinfo, the handler's
 * rt_sigreturn, the vcpu's reap), a call that ends by itself one less:
 * each stop takes 4 from v->watch_score, each such call adds 1 (at most
 * 16); below 0 waits are looked at and posted, each look adding 1.
 */
#include "rq.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/prctl.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>

#include "internal.h"
#include "dispatch.h"
#include "ownthreads.h"
#include "rawio.h"
#include "rawsys.h"
#include "uring.h"

static struct {
	int efd;		/* -1: no watch (then no ring either) */
	struct io_uring ring;
	pthread_t th;
	_Atomic int tid;	/* the watcher's, once it runs */
	_Atomic bool on;	/* the watcher runs: arms may rely on it */
} rw = { .efd = -1 };

int xsc__ringwatch_init(void)
{
	struct io_uring_params p = { 0 };
	int fd;

	if (!xsc__ext || !xsc__ext->stop_held || rw.efd >= 0 ||
	    xsc__rt.cfg.backend == XSC_BACKEND_WORKER || xsc__rt.cfg.backend == XSC_BACKEND_INLINE)
		return 0;	/* no ring to watch */
	/* a seccomp filter already: the vcpus make no ring (probe.c), and
	 * one that kills on io_uring_setup would kill the process here */
	if (xsc__status_field("Seccomp") > 0)
		return 0;
	fd = (int)xsc__sys2(SYS_eventfd2, 0, EFD_CLOEXEC);
	if (fd < 0)
		return 0;	/* no watch: such waits are looked at and posted */
	fd = xsc__fd_aside(fd);
	if (io_uring_queue_init_params(4, &rw.ring, &p) < 0) {
		xsc__sys1(SYS_close, fd);
		return 0;
	}
	if (io_uring_register_files(&rw.ring, &fd, 1) < 0) {
		io_uring_queue_exit(&rw.ring);
		xsc__sys1(SYS_close, fd);
		return 0;
	}
	/* registered (enter by index) by the watcher: the index is its own */
	rw.ring.ring_fd = rw.ring.enter_ring_fd = xsc__fd_aside(rw.ring.ring_fd);
	rw.efd = fd;
	return 0;
}

bool xsc__ringwatch_wanted(void)
{
	return rw.efd >= 0;
}

/* v's ring takes the eventfd, notifications off, when it defers its
 * completions to its issuer (a SQPOLL ring posts them from its poller,
 * after which its flag is read with no barrier against ours). */
void xsc__ringwatch_add(struct xsc_vcpu *v)
{
	struct xsc *x = v->x;
	int fd = rw.efd;

	v->ring_watch = false;
	if (fd < 0 || !x || !x->have_ring || !x->defer_tw || !x->ring.cq.kflags)
		return;
	__atomic_or_fetch(x->ring.cq.kflags, IORING_CQ_EVENTFD_DISABLED, __ATOMIC_SEQ_CST);
	if (xsc__uring_register(x, IORING_REGISTER_EVENTFD, &fd, 1) == 0)
		v->ring_watch = true;
}

/* Completion work waits on x's ring, or CQEs (read from the watcher:
 * loads of the shared ring only). */
static bool ring_has_work(const struct xsc *x)
{
	return (IO_URING_READ_ONCE(*x->ring.sq.kflags) &
		(IORING_SQ_TASKRUN | IORING_SQ_CQ_OVERFLOW)) ||
	       io_uring_cq_ready(&x->ring);
}

/* The watcher: each signal of the eventfd stops the whole waits armed. */
static void *watcher(void *arg)
{
	uint64_t n;
	int res = 0;

	(void)arg;
	xsc__sys2(SYS_prctl, PR_SET_NAME, (long)"xsc-ringwatch");
	atomic_store(&rw.tid, (int)xsc__sys0(SYS_gettid));
	/* from 6.3 a registered ring needs no descriptor, which the program
	 * could then close or replace (close_range, dup2) */
	if (io_uring_register_ring_fd(&rw.ring) == 1 && (rw.ring.features & XSC_FEAT_REG_REG_RING)) {
		xsc__sys1(SYS_close, rw.ring.ring_fd);
		rw.ring.ring_fd = -1;
	}
	for (bool queued = false;;) {
		struct io_uring_cqe *cqe;

		if (atomic_load(&xsc__uring_enter_denied)) {
			res = -EPERM;	/* a seccomp filter refuses its next enter */
			break;
		}
		if (!queued) {	/* one read in flight at a time */
			struct io_uring_sqe *sqe = io_uring_get_sqe(&rw.ring);
			io_uring_prep_read(sqe, 0, &n, sizeof(n), 0);
			sqe->flags |= IOSQE_FIXED_FILE;
			queued = true;
		}
		int sr = io_uring_submit_and_wait(&rw.ring, 1);
		if (sr < 0 && !io_uring_cq_ready(&rw.ring)) {
			if (sr == -EINTR || sr == -EAGAIN || sr == -EBUSY)
				continue;
			res = sr;
			break;
		}
		if (io_uring_peek_cqe(&rw.ring, &cqe) < 0)
			continue;
		res = cqe->res;
		io_uring_cqe_seen(&rw.ring, cqe);
		queued = false;
		if (res < 0 && res != -EINTR && res != -EAGAIN)
			break;
		/* every ring signals the one eventfd: stop the vcpus whose
		 * own ring has work (a kick's FUTEX_WAIT completing too) */
		for (int i = 0; i < xsc__rt.n; i++) {
			struct xsc_vcpu *v = &xsc__rt.v[i];
			if (atomic_load(&v->held) && atomic_load(&v->ring_watched) &&
			    ring_has_work(v->x) && atomic_exchange(&v->ring_watched, 0)) {
				v->watch_stops++;	/* one stop per arm */
				xsc__ext->stop_held(v);
			}
		}
	}
	/* the eventfd cannot be read, or a seccomp filter refuses
	 * io_uring_enter (the vcpus' rings are retired then too): no more
	 * arms, and the armed calls stopped, as a completion would have */
	if (!atomic_load(&xsc__uring_enter_denied))
		xsc__say("xsc run: the ring watcher stopped (%s): waits beside calls in "
			 "flight are posted\n", strerror(-res));
	atomic_store(&rw.on, false);
	for (int i = 0; i < xsc__rt.n; i++)
		if (atomic_load(&xsc__rt.v[i].held))
			xsc__ext->stop_held(&xsc__rt.v[i]);
	xsc__own_thread_end();	/* glibc's count, as it takes it out */
	return NULL;
}

void xsc__ringwatch_start(void)
{
	if (rw.efd < 0 || atomic_load(&rw.on))
		return;
	atomic_store(&rw.on, true);
	if (xsc__own_thread_spawn(&rw.th, 65536, watcher, NULL, &rw.tid) != 0)
		atomic_store(&rw.on, false);
}

bool xsc__ringwatch_thread(int tid, uint64_t *tcb)
{
	if (!tid || !atomic_load(&rw.on) || atomic_load(&rw.tid) != tid)
		return false;
	*tcb = (uint64_t)rw.th;	/* glibc x86-64: a pthread_t is its TCB */
	return true;
}

/* A forked child: the watcher is the parent's; the eventfd, the rings
 * and the watcher's ring are made anew by the child's runtime. */
void xsc__ringwatch_forget(void)
{
	if (rw.efd < 0)
		return;
	xsc__sys1(SYS_close, rw.efd);
	if (rw.ring.ring_fd >= 0)
		xsc__sys1(SYS_close, rw.ring.ring_fd);
	rw.efd = -1;
	atomic_store(&rw.on, false);
}

bool xsc__ringwatch_may(const struct xsc_vcpu *v)
{
	const struct xsc *x = v->x;

	return v->ring_watch && v->watch_score >= 0 && atomic_load(&rw.on) &&
	       x->have_ring && !x->inflight_worker && !(x->inflight_waits && x->fdw);
}

bool xsc__ringwatch_arm(struct xsc_vcpu *v)
{
	struct xsc *x = v->x;
	struct io_uring_cq *cq = &x->ring.cq;

	atomic_store(&v->ring_watched, 1);
	__atomic_and_fetch(cq->kflags, ~IORING_CQ_EVENTFD_DISABLED, __ATOMIC_SEQ_CST);
	/* a watcher that stopped after may() looked: it stops only the
	 * vcpus it sees held (seq_cst both) */
	if (!atomic_load(&rw.on)) {
		xsc__ringwatch_disarm(v);
		return false;
	}
	/* work queued before: posted now, so that the look below sees it
	 * (the TASKRUN flag may also outlive its work) */
	if (!io_uring_cq_ready(&x->ring) && xsc__ring_held(x)) {
		x->st.crossings++;
		io_uring_get_events(&x->ring);
	}
	if (!io_uring_cq_ready(&x->ring) && !x->nback && !x->sq_ready)
		return true;
	xsc__ringwatch_disarm(v);
	return false;
}

/* The armed call ended (stopped: by a stop, maybe the watcher's, which
 * clears v->ring_watched as it stops it). */
void xsc__ringwatch_done(struct xsc_vcpu *v, bool stopped)
{
	bool mine = atomic_exchange(&v->ring_watched, 0);

	xsc__ringwatch_disarm(v);
	v->watch_waits++;
	if (!mine && stopped && !atomic_load(&v->rq_len)) {	/* not a readied fiber's */
		if (v->watch_score > -60)
			v->watch_score -= 4;
	} else if (!stopped && v->watch_score < 16) {
		v->watch_score++;
	}
}

/* A call that may not be watched now (v->watch_score below 0) went the
 * other way: watching is tried again, now and then. */
void xsc__ringwatch_passed(struct xsc_vcpu *v)
{
	if (v->watch_score < 0)
		v->watch_score++;
}

void xsc__ringwatch_disarm(struct xsc_vcpu *v)
{
	__atomic_or_fetch(v->x->ring.cq.kflags, IORING_CQ_EVENTFD_DISABLED, __ATOMIC_SEQ_CST);
	atomic_store(&v->ring_watched, 0);
}
