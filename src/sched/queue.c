/*
 * queue.c - the runtime's locks, wait queues and run queues, and the
 * switch between a fiber and its vcpu's scheduler (suspend, resume).
 *
 * Work stealing (rather than a global queue): a vcpu only touches another
 * vcpu's queue when it has nothing to do, and it takes half of the fibers
 * that have not started yet, so a burst of new connections spreads over
 * the cores without a shared hot lock.  A started fiber stays on its home
 * vcpu: libc's TLS (errno, and addresses of __thread variables compilers
 * keep across calls) then stays valid in unmodified code, its syscall
 * entries complete where it sleeps, and wake-ups go to its home queue.
 * make_ready() kicks an idle vcpu when a queue holds more than one fiber.
 */

#include "rq.h"

#include <errno.h>
#include <stdio.h>
#include <asm/prctl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "rawsys.h"

void xsc__spin_lock(uint32_t *l)
{
	spin_lock(l);
}

bool xsc__spin_trylock(uint32_t *l)
{
	locks_held(1);
	if (!__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE))
		return true;
	locks_held(-1);
	return false;
}

void xsc__spin_unlock(uint32_t *l)
{
	spin_unlock(l);
}

/* ---- wait queues -------------------------------------------------------- */

void xsc__wq_push(void *q, struct xsc_fiber *f)
{
	struct xsc_wq *w = q;

	f->wnext = NULL;
	if (w->tail)
		((struct xsc_fiber *)w->tail)->wnext = f;
	else
		w->head = f;
	w->tail = f;
}

struct xsc_fiber *xsc__wq_pop(void *q)
{
	struct xsc_wq *w = q;
	struct xsc_fiber *f = w->head;

	if (f) {
		w->head = f->wnext;
		if (!w->head)
			w->tail = NULL;
	}
	return f;
}

bool xsc__wq_remove(void *q, struct xsc_fiber *f)
{
	struct xsc_wq *w = q;
	struct xsc_fiber *p = NULL;

	for (struct xsc_fiber *i = w->head; i; p = i, i = i->wnext) {
		if (i != f)
			continue;
		xsc__wq_unlink(w, p, i);
		return true;
	}
	return false;
}

/* ---- run queues --------------------------------------------------------- */

/* Unlinks up to `max` fibers that have not started from u's queue. */
static struct xsc_fiber *take_unstarted(struct xsc_vcpu *u, int max)
{
	struct xsc_fiber *got = NULL, *f;

	spin_lock(&u->rq_lock);
	while (max-- > 0 && u->nq_head) {
		f = unlink_head(u, true);
		f->rnext = got;
		got = f;
	}
	spin_unlock(&u->rq_lock);
	return got;
}

/* Takes half of another vcpu's queue, of fibers not started yet (one
 * that may be taken from: xsc__stealable). */
struct xsc_fiber *xsc__steal(struct xsc_vcpu *v)
{
	for (int k = 1; k < xsc__rt.n; k++) {
		struct xsc_vcpu *u = &xsc__rt.v[(v->id + k) % xsc__rt.n];
		int n = atomic_load(&u->nq_len);
		struct xsc_fiber *got, *f;

		if (n < 1 || !xsc__stealable(u))
			continue;
		got = take_unstarted(u, (n + 1) / 2);
		if (!got)
			continue;
		while ((f = got->rnext) != NULL) {
			got->rnext = f->rnext;
			xsc__rq_push(v, f);
		}
		return got;
	}
	return NULL;
}

static void kick_idle(struct xsc_vcpu *not)
{
	for (int k = 0; k < xsc__rt.n; k++) {
		struct xsc_vcpu *u = &xsc__rt.v[k];
		if (u != not && atomic_load(&u->idle)) {
			xsc__kick(u->x);
			return;
		}
	}
}

/* The running fiber is about to block v in the kernel (a call run in the
 * caller that may block): its new fibers would wait for v, which may not
 * come back until one of them runs (a pthread_join of a thread just made,
 * after a Landlock change sent every call to the caller).  An idle vcpu
 * is woken to steal them first. */
void xsc__rt_may_block(struct xsc_vcpu *v)
{
	if (atomic_load(&v->nq_len) > 0 && atomic_load(&xsc__rt.nidle) > 0)
		kick_idle(v);
}

/* Makes f runnable on its vcpu (from any vcpu or thread). */
static void make_ready(struct xsc_fiber *f)
{
	struct xsc_vcpu *me = xsc__vcpu();
	struct xsc_vcpu *v = f->home ? f->home : me ? me : &xsc__rt.v[0];

	f->state = F_READY;
	xsc__rq_push(v, f);
	/* seq_cst after the push, as call_held's look at the queue after
	 * held: it sees f, or we see it held */
	if (atomic_load(&v->held)) {	/* its fiber waits in the kernel */
		kick_idle(v);
		if (xsc__ext && xsc__ext->stop_held)
			xsc__ext->stop_held(v);
	}
	if (v != me || atomic_load(&v->idle))
		xsc__kick(v->x);
	else if (atomic_load(&xsc__rt.nidle) > 0 && atomic_load(&v->rq_len) > 1)
		kick_idle(v);	/* let an idle core steal */
}

/* ---- switching ----------------------------------------------------------- */

long xsc__suspend(uint32_t *lock)
{
	struct xsc_vcpu *v = xsc__vcpu();
	struct xsc_fiber *f = v->cur;

	if (f->resume_kept) {	/* resumed before it could switch out */
		f->resume_kept = false;
		if (lock)
			spin_unlock(lock);
		XSC_PROBE3(resume, f, f->vtid, f->resumed);
		return f->resumed;
	}
	f->state = F_BLOCKED;
	v->unlock_after = lock;
	xsc__ctx_switch(&f->ctx, &v->sched);
	/* the park probe fired at the caller, which knows why it waits */
	XSC_PROBE3(resume, f, f->vtid, f->resumed);
	return f->resumed;
}

void xsc__resume(struct xsc_fiber *f, long val)
{
	struct xsc_vcpu *me = xsc__vcpu();

	f->resumed = val;
	if (me && me->cur == f) {	/* still running: nothing to wake */
		f->resume_kept = true;
		return;
	}
	make_ready(f);
}

XSC_EXPORT int xsc_yield(void)
{
	struct xsc_vcpu *v = xsc__vcpu();

	if (!v || !v->cur)
		return sched_yield() ? -errno : 0;
	v->cur->state = F_READY;
	v->yielded = true;	/* requeued by the scheduler */
	xsc__ctx_switch(&v->cur->ctx, &v->sched);
	return 0;
}
