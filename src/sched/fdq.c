/*
 * fdq.c - fibers that wait on one descriptor take turns.
 *
 * Each (descriptor, direction) has a turn, a record in a table indexed by
 * fd (fdtab.c; never moved or freed, so a pointer stays good without a
 * lock).  A call that may wait for another party (the row's .turn) takes
 * the turn when nobody holds it and posts its call: one submission, the
 * kernel waits.  Others wait in user space on the record's own futex
 * queue, holding no entry.  At most one readiness wait per record is
 * armed, when it has waiters and no holder; its completion grants the
 * turn to one waiter: one arrival wakes about one fiber, as the kernel's
 * exclusive waits do (docs/design.md, "Many blocked fibers").
 *
 * Rules: a grant counts as a holder from the grant, not from when the
 * fiber runs (else a newcomer arms a second wait in between); O_NONBLOCK
 * descriptors, MSG_DONTWAIT and MSG_WAITALL receives, and anything but a
 * pipe, a socket or an anonymous inode (an eventfd...) take no turn; a
 * queued fiber is a futex waiter, so a signal takes it off with -EINTR
 * (ext.h: ops->call_posted then interrupts the call it posts).
 */
#include "sched.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "rawsys.h"

struct xsc_fdq {
	xsc_cond_t wq;		/* the fibers queued (futex.c's private queue) */
	uint32_t lock;
	uint32_t seq;		/* the futex word waiters sleep on */
	/* HOLDERS: fibers whose call on it is in flight, and turns granted
	 * to queued ones; WAITING: fibers queued for the turn.  One word,
	 * so that a turn nobody else wants is taken and given back with one
	 * atomic each and no lock; changed under the lock otherwise. */
	_Atomic uint64_t st;
	int granted;		/* turns handed to queued fibers, not taken yet */
	bool armed;		/* a readiness wait for the queue is in flight */
	_Atomic uint8_t kind;	/* KIND_*: what the fd is, learned once */
} __attribute__((aligned(64)));

#define ONE_HOLDER 1ull
#define ONE_WAITER (1ull << 32)
#define HOLDERS(st) ((uint32_t)(st))
#define WAITING(st) ((uint32_t)((st) >> 32))

static uint64_t st_add(struct xsc_fdq *q, uint64_t d)
{
	return atomic_fetch_add_explicit(&q->st, d, memory_order_acq_rel) + d;
}

static uint64_t st_sub(struct xsc_fdq *q, uint64_t d)
{
	return atomic_fetch_sub_explicit(&q->st, d, memory_order_acq_rel) - d;
}

/* Turns are for the descriptors where many fibers wait for a peer: a
 * pipe or FIFO, a socket, an anonymous inode (an eventfd, a timerfd).  A
 * regular file or a block device never waits for another party, and a
 * character device's calls (/dev/null, a tty) take no turn either: two
 * threads appending to one log, or 32 writing to /dev/null, would
 * otherwise take turns through a round trip each (32 writes to /dev/null
 * from 32 fibers: 245-270 ns a write without turns, 9,000-11,600 with
 * them).  Learned with one statx the first time a turn is contended, and
 * forgotten when the program closes or replaces the fd through the
 * runtime (xsc__fdq_closed).  A kind left stale by a close made some
 * other way costs speed, never a result: a pipe taken for a file posts
 * its calls without a turn, a file taken for a pipe waits for a
 * readiness that is always there. */
enum { KIND_UNKNOWN, KIND_WAITS, KIND_FREE };	/* tag bits 0-5 clear (loop.c on_done) */

/* two records per fd: reading, writing */
static struct xsc_fdtab recs = { .size = 2 * sizeof(struct xsc_fdq), .per = 4096 };

static struct xsc_fdq *record(int fd, int dir)
{
	struct xsc_fdq *p = xsc__fdtab_at(&recs, fd, true);

	return p ? p + dir : NULL;
}

/* The direction call nr waits in (0 readable, 1 writable), or -1 for a
 * call that never waits here (see the top): the row's .turn. */
static int direction(long nr, const long *a)
{
	const struct xsc_sysdef *d = &xsc__sys[nr];
	long never = d->turn.dir == XSC_TURN_READ ? MSG_DONTWAIT | MSG_WAITALL : MSG_DONTWAIT;

	if (d->turn.dir == XSC_TURN_NONE)
		return -1;
	if (d->turn.msg && (xsc__sys_arg((const int64_t *)a, d->turn.msg) & never))
		return -1;
	return d->turn.dir == XSC_TURN_READ ? 0 : 1;
}

/* The resource blocked calls hold is scarce on v: entries with a ring
 * (half of them in use), syscall threads without.  Those are counted by
 * the turns v's fibers hold, not by what is in flight: calls posted in
 * one round reach the syscall threads only at the flush, and a round of
 * thousands of new fibers took every thread with reads whose writers
 * then found none (the worker executor stalled at 20,000 fibers).  On a
 * ring a call holds its entry from the post: no count is kept there
 * (two atomics a call). */
static bool scarce(struct xsc_vcpu *v)
{
	const struct xsc *x = v->x;

	if (x->have_ring)
		return x->nfree * 2 < x->n;
	return atomic_load_explicit(&v->holding, memory_order_relaxed) * 2 >=
	       (int)x->cfg.max_workers;
}

/* The running fiber holds q's turn, counted in HOLDERS already; without
 * a ring, counted on its vcpu too (scarce). */
static struct xsc_fdq *took(struct xsc_fdq *q)
{
	struct xsc_vcpu *v = xsc__vcpu();

	v->cur->turn_v = v->x->have_ring ? NULL : v;
	if (!v->x->have_ring)
		atomic_fetch_add_explicit(&v->holding, 1, memory_order_relaxed);
	return q;
}

/* The caller takes q's turn (q->lock held), counted in HOLDERS already or
 * not (counted). */
static struct xsc_fdq *take_locked(struct xsc_fdq *q, bool counted)
{
	if (!counted)
		st_add(q, ONE_HOLDER);
	return took(q);
}

/* Hands the turn to one queued fiber (q->lock held).  It counts as a
 * holder from here on, not from when the fiber runs: in between, a
 * newcomer that found no holder and no wait armed armed a second one,
 * two fibers took turns, and the second one's read blocked on an empty
 * pipe, holding a syscall thread. */
static void grant_locked(struct xsc_fdq *q)
{
	q->granted++;
	st_add(q, ONE_HOLDER);
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
		int t = xsc__fd_type(v->x, fd);
		if (t < 0)
			return true;	/* the call gives the kernel's answer */
		k = t == S_IFIFO || t == S_IFSOCK || t == 0 ? KIND_WAITS : KIND_FREE;
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
	/* the common case: nobody else, a plain post */
	uint64_t none = 0;
	if (!scarce(v) && atomic_compare_exchange_strong_explicit(&q->st, &none, ONE_HOLDER,
								  memory_order_acq_rel,
								  memory_order_relaxed))
		return took(q);
	if (!kind_waits(v, q, fd, dir))
		return NULL;
	/* a descriptor that never waits answers at once, and a wait in the
	 * queue would make EAGAIN a wait (a fault or a closed fd: the call
	 * gives the kernel's answer) */
	if (xsc__fd_nonblocking(v->x, fd) != 0)
		return NULL;
	xsc__spin_lock(&q->lock);
	none = 0;
	if (!scarce(xsc__vcpu()) &&
	    atomic_compare_exchange_strong_explicit(&q->st, &none, ONE_HOLDER,
						    memory_order_acq_rel, memory_order_relaxed)) {
		xsc__spin_unlock(&q->lock);	/* the turn came free meanwhile */
		return took(q);
	}
	st_add(q, ONE_WAITER);
	for (;;) {
		long r;

		if (!HOLDERS(atomic_load(&q->st)) && !q->armed)
			arm_locked(q, fd, dir);
		seen = __atomic_load_n(&q->seq, __ATOMIC_ACQUIRE);
		xsc__spin_unlock(&q->lock);
		/* 0 woken, -EAGAIN the seq moved before we slept, -EINTR a
		 * signal (transparent mode) */
		r = xsc__futex_wait_q(&q->wq, &q->seq, seen);
		xsc__spin_lock(&q->lock);
		if (q->granted) {	/* ours, or another's we take first */
			q->granted--;
			st_sub(q, ONE_WAITER);
			take_locked(q, true);
			break;
		}
		if (r == -EINTR) {
			/* the call is posted for the signal to interrupt it
			 * (see the top), out of turn */
			st_sub(q, ONE_WAITER);
			take_locked(q, false);
			break;
		}
	}
	xsc__spin_unlock(&q->lock);
	return q;
}

/* The holder's call is over with ret.  A call that got what it waited
 * for (ret >= 0: a connection, bytes, the end of the file) may have left
 * more behind, a backlog of connections or the rest of a pipe: the next
 * waiter takes the turn at once and tries, where a readiness wait would
 * cost a round trip through the ring first (a server of 1,000 threads in
 * accept, closing every connection, on SQPOLL with two vcpus: 7,200
 * requests/s with the wait, 9,200-11,500 without, 26,600-26,900
 * natively).  Its call finds nothing at worst, and waits in the kernel
 * as a holder's does: one ring entry.  Not so
 * without a ring, where it would hold a syscall thread until the next
 * byte (100,000 fibers on 4,000 pipes stalled one run in two: the
 * threads all waited in reads, the writers found none), nor where
 * entries are scarce.  A failed call (EAGAIN, EINTR, an error) arms the
 * wait. */
void xsc__fdq_leave(struct xsc_fdq *q, long nr, const long *a, long ret)
{
	struct xsc_fiber *f = xsc__cur();

	if (f->turn_v)
		atomic_fetch_sub_explicit(&f->turn_v->holding, 1, memory_order_relaxed);
	/* Nobody queued when the turn came back: done.  A fiber that queues
	 * after this finds no holder and arms the wait itself (under the
	 * lock, like the look below: one of the two arms it). */
	if (!WAITING(st_sub(q, ONE_HOLDER)))
		return;
	xsc__spin_lock(&q->lock);
	uint64_t st = atomic_load(&q->st);
	if (!HOLDERS(st) && WAITING(st) && !q->armed) {
		if (ret >= 0 && xsc__vcpu()->x->have_ring && !scarce(xsc__vcpu()))
			grant_locked(q);
		else
			arm_locked(q, (int)a[0], direction(nr, a));
	}
	xsc__spin_unlock(&q->lock);
}

void xsc__fdq_ready(struct xsc_fdq *q)
{
	xsc__spin_lock(&q->lock);
	q->armed = false;
	if (WAITING(atomic_load(&q->st)) > (uint32_t)q->granted)
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
