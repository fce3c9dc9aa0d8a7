/*
 * rq.h - the hot paths of the runtime's locks and run queues, inlined in
 * each of the runtime's files that switch fibers (queue.c, loop.c,
 * fiber.c, runtime.c): a switch takes a run queue's lock and pops it, and
 * a call across files there cost about 4 ns a switch.  Other files take
 * the locks through xsc__spin_lock/unlock (queue.c).
 */
#ifndef XSC_SCHED_RQ_H
#define XSC_SCHED_RQ_H

#include "sched.h"

/* The runtime's spinlocks.  A vcpu counts the ones its kernel thread
 * holds (nlocks): a program's signal handler that ran while one was held
 * and called into the runtime itself (sem_post's futex wake readies a
 * fiber: the run queue's lock) spun on it for good.  The extension
 * defers such a handler until the count is back at 0 (v->deferred), and
 * runs it here, when the last lock is released. */

static inline void locks_held(int d)
{
	struct xsc_vcpu *v = xsc__self;

	if (!v)
		return;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	v->nlocks += d;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (d < 0 && v->nlocks == 0 && __builtin_expect(v->deferred != 0, 0) &&
	    xsc__ext->deferred)
		xsc__ext->deferred(v);
}

static inline void spin_lock(uint32_t *l)
{
	locks_held(1);
	while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(l, __ATOMIC_RELAXED))
			__builtin_ia32_pause();
}

static inline void spin_unlock(uint32_t *l)
{
	__atomic_store_n(l, 0, __ATOMIC_RELEASE);
	locks_held(-1);
}

/* ---- run queues --------------------------------------------------------- */

static inline void xsc__rq_push(struct xsc_vcpu *v, struct xsc_fiber *f)
{
	bool fresh = !f->home;
	struct xsc_fiber **head = fresh ? &v->nq_head : &v->rq_head;
	struct xsc_fiber **tail = fresh ? &v->nq_tail : &v->rq_tail;

	f->rnext = NULL;
	spin_lock(&v->rq_lock);
	f->rticket = v->rq_ticket++;
	if (*tail)
		(*tail)->rnext = f;
	else
		*head = f;
	*tail = f;
	atomic_fetch_add(&v->rq_len, 1);
	if (fresh)
		atomic_fetch_add(&v->nq_len, 1);
	spin_unlock(&v->rq_lock);
	/* a fiber waits for v: a watchdog asleep while v's fiber spun must
	 * come and preempt it (tp_sparse's newcomer) */
	xsc__rt_busy(v);
}

/* Another vcpu may take u's new fibers: u runs a fiber, which they wait
 * behind, or has not started.  One that is idle, or in its loop between
 * fibers, was woken for them or looks at its queue before it sleeps, and
 * runs them itself.  A new thread placed on an idle vcpu was taken by
 * the vcpu of its creator as that one went idle, while the other woke:
 * the two shared a vcpu where each could have had one alone, and the
 * server thread of tp_sparse waited with main's calls in flight beside
 * it (14 runs in 20 without this rule). */
static inline bool xsc__stealable(struct xsc_vcpu *u)
{
	return atomic_load(&u->inited) != 1 || __atomic_load_n(&u->cur, __ATOMIC_RELAXED);
}

/* A fiber's stack top (its saved registers, then the frames it returns
 * through) is cold by the time it runs again, and with thousands of
 * fibers its page is out of the TLB as well: the switch into it stalled
 * on that load.  Fetched while the fiber ahead of it runs. */
static inline void prefetch_stack(const struct xsc_fiber *f)
{
	const char *sp = f->ctx.sp;

	__builtin_prefetch(sp);
	__builtin_prefetch(sp + 64);
	__builtin_prefetch(sp + 128);
	__builtin_prefetch(sp + 192);
}

/* Unlinks the head of one of v's lists (rq_lock held). */
static inline struct xsc_fiber *unlink_head(struct xsc_vcpu *v, bool fresh)
{
	struct xsc_fiber **head = fresh ? &v->nq_head : &v->rq_head;
	struct xsc_fiber *f = *head;

	*head = f->rnext;
	if (!*head)
		*(fresh ? &v->nq_tail : &v->rq_tail) = NULL;
	atomic_fetch_sub(&v->rq_len, 1);
	if (fresh)
		atomic_fetch_sub(&v->nq_len, 1);
	return f;
}

/* Which of v's lists holds the older head, the one to run first: one
 * order over both (rq_lock held, at least one list not empty). */
static inline bool fresh_first(const struct xsc_vcpu *v)
{
	const struct xsc_fiber *r = v->rq_head, *n = v->nq_head;

	return !r || (n && n->rticket < r->rticket);
}

static inline struct xsc_fiber *xsc__rq_pop(struct xsc_vcpu *v)
{
	struct xsc_fiber *f = NULL;

	if (!atomic_load_explicit(&v->rq_len, memory_order_relaxed))
		return NULL;
	spin_lock(&v->rq_lock);
	if (v->rq_head || v->nq_head) {
		f = unlink_head(v, fresh_first(v));
		if (v->rq_head || v->nq_head) {	/* the next head runs after f */
			struct xsc_fiber *next = fresh_first(v) ? v->nq_head : v->rq_head;
			prefetch_stack(next);
			__builtin_prefetch(next->rnext);
		}
	}
	spin_unlock(&v->rq_lock);
	return f;
}

#endif
