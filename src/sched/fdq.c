/*
 * fdq.c - fibers that wait on one descriptor take turns.
 *
 * A call that may wait for another party (a read of an empty pipe, an
 * accept, a write to a full socket) used to be posted by every fiber that
 * made it: K fibers reading one pipe held K entries in blocked reads, and
 * each byte that arrived woke all K of them in the kernel.  Past half the
 * entries they waited for readiness instead (a poll each), and one byte
 * then woke all K polls: K-1 of the fibers posted reads that blocked,
 * holding entries again, until the writers that would have fed them found
 * none free.  50,000 pairs of fibers on 4,000 pipe pairs stopped within a
 * second, with no error.
 *
 * So each (descriptor, direction) has a turn: a queue record.  A fiber
 * whose call finds nobody else on it takes the turn (holders 1) and posts
 * its call as before: one submission, the kernel waits.  A fiber that
 * finds the turn taken (or the entries scarce) waits in user space, on
 * the record's futex word, holding no entry; the kernel sees at most one
 * readiness wait per record (armed), made when the record has waiters and
 * no holder.  When that wait fires, one waiter is woken and takes the turn
 * (it posts its call, which finds the data there); when a holder's call
 * returns, the turn passes: the next readiness wait is armed.  One
 * arrival so wakes about one fiber, as the kernel's exclusive waits do,
 * and a record never has more than a holder or two in the kernel.
 *
 * The wait is the emulated futex (futex.c) on the record's own queue, so a signal for a fiber
 * queued here (transparent mode) takes it off with -EINTR like any futex
 * wait; the fiber then posts its call, which the pending signal
 * interrupts as it interrupts any posted call (preload/signals/interrupt.c).
 *
 * Bypassed, because they never wait or must not wait behind another: an
 * O_NONBLOCK descriptor (looked at only when the turn is taken or entries
 * are scarce: one fcntl), MSG_DONTWAIT, and MSG_WAITALL receives (a holder
 * that waits for all it asked would keep a fiber that wants one byte from
 * data that is there).  A holder in a long transfer (a blocking write of
 * a megabyte to a pipe) still delays the next fiber of the same
 * descriptor and direction until it returns: documented in
 * docs/threads.md.
 *
 * Records live in a table indexed by fd (fdtab.c), never moved or freed,
 * so a pointer to one stays good without a lock.
 */
#include "sched.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include "rawsys.h"

struct xsc_fdq {
	xsc_cond_t wq;		/* the fibers queued (futex.c's private queue) */
	uint32_t lock;
	uint32_t seq;		/* the futex word waiters sleep on */
	int holders;		/* fibers whose call on it is in flight, and
				   turns granted to queued ones */
	int waiting;		/* fibers queued for the turn */
	int granted;		/* turns handed to queued fibers, not taken yet */
	bool armed;		/* a readiness wait for the queue is in flight */
	_Atomic uint8_t kind;	/* KIND_*: what the fd is, learned once */
} __attribute__((aligned(64)));

/* A regular file or a block device never waits for another party: its
 * calls take no turn (two threads appending to one log would otherwise
 * take turns through a readiness wait each).  Learned with one statx the
 * first time a turn is contended, and forgotten when the program closes
 * or replaces the fd through the runtime (xsc__fdq_closed).  A kind left
 * stale by a close made some other way costs speed, never a result: a
 * pipe taken for a file posts its calls as before the turns were made,
 * a file taken for a pipe waits for a readiness that is always there. */
enum { KIND_UNKNOWN, KIND_WAITS, KIND_DISK };	/* tag bits 0-5 clear (runtime.c on_done) */

/* two records per fd: reading, writing */
static struct xsc_fdtab recs = { .size = 2 * sizeof(struct xsc_fdq), .per = 4096 };

static struct xsc_fdq *record(int fd, int dir)
{
	struct xsc_fdq *p = xsc__fdtab_at(&recs, fd, true);

	return p ? p + dir : NULL;
}

/* The direction call nr waits in (0 readable, 1 writable), or -1 for a
 * call that never waits here (see the top). */
static int direction(long nr, const long *a)
{
	long flags;

	switch (nr) {
	case SYS_read: case SYS_readv: case SYS_accept: case SYS_accept4:
		return 0;
	case SYS_write: case SYS_writev:
		return 1;
	case SYS_recvfrom: flags = a[3]; break;
	case SYS_recvmsg: flags = a[2]; break;
	case SYS_sendto:
		return a[3] & MSG_DONTWAIT ? -1 : 1;
	case SYS_sendmsg:
		return a[2] & MSG_DONTWAIT ? -1 : 1;
	default:
		return -1;
	}
	return flags & (MSG_DONTWAIT | MSG_WAITALL) ? -1 : 0;
}

/* The resource blocked calls hold is scarce on v: entries with a ring,
 * syscall threads without.  Counted by the turns v's fibers hold, not by
 * what is in flight: calls posted in one round reach the syscall threads
 * only at the flush, and a round of thousands of new fibers took every
 * thread with reads whose writers then found none (the worker executor
 * stalled at 20,000 fibers). */
static bool scarce(struct xsc_vcpu *v)
{
	const struct xsc *x = v->x;
	int cap = x->have_ring ? (int)x->n : (int)x->cfg.max_workers;

	return atomic_load_explicit(&v->holding, memory_order_relaxed) * 2 >= cap ||
	       (x->have_ring && x->nfree * 2 < x->n);
}

/* The caller takes q's turn (q->lock held), counted in q->holders
 * already or not (counted). */
static struct xsc_fdq *take_locked(struct xsc_fdq *q, bool counted)
{
	struct xsc_vcpu *v = xsc__vcpu();
	struct xsc_fiber *f = v->cur;

	q->holders += !counted;
	f->turn_v = v;
	atomic_fetch_add_explicit(&v->holding, 1, memory_order_relaxed);
	return q;
}

/* Hands the turn to one queued fiber (q->lock held).  It counts as a
 * holder from here on, not from when the fiber runs: in between, a
 * newcomer that found no holder and no wait armed armed a second one,
 * two fibers took turns, and the second one's read blocked on an empty
 * pipe, holding a syscall thread. */
static void grant_locked(struct xsc_fdq *q)
{
	q->granted++;
	q->holders++;
	/* the seq bump reaches a waiter between its unlock and its sleep
	 * (its wait fails with -EAGAIN): no wake-up is lost */
	__atomic_fetch_add(&q->seq, 1, __ATOMIC_RELEASE);
	xsc__futex_wake_q(&q->wq, &q->seq, 1);
}

/* Arms the queue's readiness wait on the caller's vcpu (q->lock held).
 * When it cannot be armed (no ring and no epoll thread, no room in the
 * submission queue) a waiter takes the turn at once: its call then
 * waits in the kernel, as every call did before. */
static void arm_locked(struct xsc_fdq *q, int fd, int dir)
{
	struct xsc_vcpu *v = xsc__vcpu();

	if (xsc__wait_fd(v->x, fd, dir ? POLLOUT : POLLIN,
			 (uint64_t)(uintptr_t)q | XSC_TAG_FDQ) == 0) {
		q->armed = true;
		return;
	}
	grant_locked(q);
}

/* Whether fd may wait for another party (see KIND_*). */
static bool kind_waits(struct xsc_vcpu *v, struct xsc_fdq *q, int fd, int dir)
{
	int k = atomic_load_explicit(&q->kind, memory_order_relaxed);

	if (k == KIND_UNKNOWN) {
		int r = xsc__fd_on_disk(v->x, fd);
		if (r < 0)
			return true;	/* the call gives the kernel's answer */
		k = r ? KIND_DISK : KIND_WAITS;
		atomic_store_explicit(&q->kind, (uint8_t)k, memory_order_relaxed);
		atomic_store_explicit(&record(fd, !dir)->kind, (uint8_t)k,
				      memory_order_relaxed);
	}
	return k == KIND_WAITS;
}

void xsc__fdq_closed(int fd)
{
	struct xsc_fdq *p = xsc__fdtab_at(&recs, fd, false);

	if (!p)
		return;
	atomic_store_explicit(&p[0].kind, KIND_UNKNOWN, memory_order_relaxed);
	atomic_store_explicit(&p[1].kind, KIND_UNKNOWN, memory_order_relaxed);
}

struct xsc_fdq *xsc__fdq_enter(struct xsc_vcpu *v, long nr, const long *a)
{
	int dir = direction(nr, a), fd = (int)a[0];
	struct xsc_fdq *q;
	uint32_t seen;

	if (dir < 0 || !(q = record(fd, dir)))
		return NULL;
	xsc__spin_lock(&q->lock);
	if (!q->holders && !q->waiting && !scarce(v)) {
		take_locked(q, false);	/* the common case: nobody else, a plain post */
		xsc__spin_unlock(&q->lock);
		return q;
	}
	xsc__spin_unlock(&q->lock);
	if (!kind_waits(v, q, fd, dir))
		return NULL;
	/* a descriptor that never waits answers at once, and a wait in the
	 * queue would make EAGAIN a wait (a fault or a closed fd: the call
	 * gives the kernel's answer) */
	if (xsc__fd_nonblocking(v->x, fd) != 0)
		return NULL;
	xsc__spin_lock(&q->lock);
	if (!q->holders && !q->waiting && !scarce(xsc__vcpu())) {
		take_locked(q, false);	/* the turn came free meanwhile */
		xsc__spin_unlock(&q->lock);
		return q;
	}
	q->waiting++;
	for (;;) {
		long r;

		if (!q->holders && !q->armed)
			arm_locked(q, fd, dir);
		seen = __atomic_load_n(&q->seq, __ATOMIC_ACQUIRE);
		xsc__spin_unlock(&q->lock);
		/* 0 woken, -EAGAIN the seq moved before we slept, -EINTR a
		 * signal (transparent mode) */
		r = xsc__futex_wait_q(&q->wq, &q->seq, seen);
		xsc__spin_lock(&q->lock);
		if (q->granted) {	/* ours, or another's we take first */
			q->granted--;
			q->waiting--;
			take_locked(q, true);
			break;
		}
		if (r == -EINTR) {
			/* the call is posted for the signal to interrupt it
			 * (see the top), out of turn */
			q->waiting--;
			take_locked(q, false);
			break;
		}
	}
	xsc__spin_unlock(&q->lock);
	return q;
}

void xsc__fdq_leave(struct xsc_fdq *q, long nr, const long *a)
{
	struct xsc_fiber *f = xsc__cur();

	atomic_fetch_sub_explicit(&f->turn_v->holding, 1, memory_order_relaxed);
	xsc__spin_lock(&q->lock);
	q->holders--;
	if (!q->holders && q->waiting && !q->armed)
		arm_locked(q, (int)a[0], direction(nr, a));
	xsc__spin_unlock(&q->lock);
}

void xsc__fdq_ready(struct xsc_fdq *q)
{
	xsc__spin_lock(&q->lock);
	q->armed = false;
	if (q->waiting > q->granted)
		grant_locked(q);
	xsc__spin_unlock(&q->lock);
}

void xsc__fdq_forget(void)
{
	for (unsigned c = 0; c < XSC_FDTAB_MAX / recs.per; c++) {
		void *p = xsc__fdtab_chunk(&recs, c, false);
		if (p)
			memset(p, 0, recs.per * recs.size);
	}
	recs.lock = 0;
}
