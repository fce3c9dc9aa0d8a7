/*
 * sync.c - mutexes, condition variables, semaphores and once for fibers.
 *
 * Every primitive is a word or two plus a FIFO of parked fibers guarded by
 * a spinlock (held for a few instructions; fibers are never preempted
 * while holding it, kernel threads may be).  Waiting uses the parking
 * protocol of sched.h, so a wake-up from another vcpu is never lost.
 *
 * Mutex: state 0 free, 1 locked, 2 locked with waiters.  Unlock hands the
 * mutex to the first waiter (FIFO, no barging after a wait), which keeps
 * the checked invariants of the tests simple and prevents starvation.
 *
 * Timed condition waits: the fiber parks on the condition's queue and posts
 * an absolute clock_nanosleep into its vcpu's syscall pages (an io_uring
 * timeout: the wait costs no extra crossing).  Whichever comes first, a
 * signal or the timer's completion, claims the wait record with a CAS; the
 * other finds it claimed and does nothing.  The record is freed by the
 * timer's completion, which always comes (early wake-ups cancel it when
 * still on the same vcpu).
 */
#include "sched.h"

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>

#include "internal.h"

/* Outside fibers the primitives still work, by spinning politely. */
static bool in_fiber(void)
{
	return xsc__cur() != NULL;
}

XSC_EXPORT int xsc_mutex_init(xsc_mutex_t *m)
{
	*m = (xsc_mutex_t)XSC_MUTEX_INITIALIZER;
	return 0;
}

XSC_EXPORT int xsc_mutex_destroy(xsc_mutex_t *m)
{
	return __atomic_load_n(&m->state, __ATOMIC_ACQUIRE) ? -EBUSY : 0;
}

XSC_EXPORT int xsc_mutex_trylock(xsc_mutex_t *m)
{
	uint32_t z = 0;
	return __atomic_compare_exchange_n(&m->state, &z, 1, false, __ATOMIC_ACQUIRE,
					   __ATOMIC_RELAXED) ? 0 : -EBUSY;
}

XSC_EXPORT int xsc_mutex_lock(xsc_mutex_t *m)
{
	if (xsc_mutex_trylock(m) == 0)
		return 0;
	if (!in_fiber()) {
		while (xsc_mutex_trylock(m))
			sched_yield();
		return 0;
	}
	xsc__spin_lock(&m->lock);
	for (;;) {
		uint32_t s = __atomic_load_n(&m->state, __ATOMIC_RELAXED);
		if (s == 0) {
			if (__atomic_compare_exchange_n(&m->state, &s, 1, false,
							__ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
				xsc__spin_unlock(&m->lock);
				return 0;
			}
			continue;
		}
		if (s == 2 || __atomic_compare_exchange_n(&m->state, &s, 2, false,
							  __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			break;
	}
	struct xsc_fiber *f = xsc__cur();
	xsc__wq_push(&m->head, f);
	XSC_PROBE3(park, f, f->vtid, XSC_PARK_MUTEX);
	xsc__suspend(&m->lock);	/* unlock hands us the mutex */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return 0;
}

XSC_EXPORT int xsc_mutex_unlock(xsc_mutex_t *m)
{
	uint32_t one = 1;
	struct xsc_fiber *f;

	if (__atomic_compare_exchange_n(&m->state, &one, 0, false, __ATOMIC_RELEASE,
					__ATOMIC_RELAXED))
		return 0;
	if (one == 0)
		return -EPERM;	/* not locked */
	xsc__spin_lock(&m->lock);
	f = xsc__wq_pop(&m->head);
	__atomic_store_n(&m->state, !f ? 0 : m->head ? 2 : 1, __ATOMIC_RELEASE);
	xsc__spin_unlock(&m->lock);
	if (f)
		xsc__resume(f, 0);
	return 0;
}

/* ---- condition variables ---------------------------------------------------- */

struct xsc_timed {
	_Atomic int state;	/* 0 waiting, 1 signaled, 2 timed out */
	_Atomic int refs;	/* the waiting fiber and the timer entry */
	bool fired;		/* the timer entry completed (vcpu v only) */
	struct xsc_fiber *f;
	xsc_cond_t *c;
	struct timespec when;
	struct xsc_vcpu *v;	/* where the timer entry lives */
	int id;
};

static struct xsc_pool timers = XSC_POOL_INIT(struct xsc_timed);

XSC_EXPORT int xsc_cond_init(xsc_cond_t *c)
{
	*c = (xsc_cond_t)XSC_COND_INITIALIZER;
	return 0;
}

XSC_EXPORT int xsc_cond_destroy(xsc_cond_t *c)
{
	return c->head ? -EBUSY : 0;
}

/* Claims f's wait for a signal; false if its timer already did. */
/* A forked child: a record the parent's threads held stays theirs. */
void xsc__sync_forget(void)
{
	timers.lock = 0;
}

bool xsc__claim(struct xsc_fiber *f)
{
	struct xsc_timed *t = f->timed_q;
	int z = 0;

	return !t || atomic_compare_exchange_strong(&t->state, &z, 1);
}

static int wake(xsc_cond_t *c, bool all)
{
	struct xsc_fiber *list = NULL, *f;

	xsc__spin_lock(&c->lock);
	while ((f = xsc__wq_pop(&c->head)) != NULL) {
		if (!xsc__claim(f))
			continue;	/* timed out; its timer readies it */
		f->rnext = list;	/* rnext is free while parked */
		list = f;
		if (!all)
			break;
	}
	xsc__spin_unlock(&c->lock);
	while ((f = list) != NULL) {
		list = f->rnext;
		xsc__resume(f, 0);
	}
	return 0;
}

XSC_EXPORT int xsc_cond_signal(xsc_cond_t *c)
{
	return wake(c, false);
}

XSC_EXPORT int xsc_cond_broadcast(xsc_cond_t *c)
{
	return wake(c, true);
}

XSC_EXPORT int xsc_cond_wait(xsc_cond_t *c, xsc_mutex_t *m)
{
	struct xsc_fiber *f = xsc__cur();

	if (!f)
		return -EPERM;
	f->timed_q = NULL;
	xsc__spin_lock(&c->lock);
	xsc__wq_push(&c->head, f);
	xsc_mutex_unlock(m);
	XSC_PROBE3(park, f, f->vtid, XSC_PARK_COND);
	xsc__suspend(&c->lock);
	return xsc_mutex_lock(m);
}

/* Completion of a timed wait's clock_nanosleep (vcpu scheduler context). */
void xsc__timed_done(void *rec)
{
	struct xsc_timed *t = rec;
	int z = 0;

	t->fired = true;
	if (atomic_compare_exchange_strong(&t->state, &z, 2)) {
		xsc__spin_lock(&t->c->lock);
		xsc__wq_remove(&t->c->head, t->f);
		xsc__spin_unlock(&t->c->lock);
		xsc__resume(t->f, -ETIMEDOUT);
	}
	if (atomic_fetch_sub(&t->refs, 1) == 1)
		xsc__pool_put(&timers, t);
}

/* Posts the timer of a timed wait on c for the running fiber.  May park
 * while the syscall pages are full, so call it before taking c->lock. */
int xsc__timed_arm(xsc_cond_t *c, const struct timespec *abs_mono,
		   struct xsc_timed **out)
{
	struct xsc_fiber *f = xsc__cur();
	struct xsc_timed *t;
	long a[6] = { CLOCK_MONOTONIC, TIMER_ABSTIME, 0, 0, 0, 0 };

	if (!f)
		return -EPERM;
	if (abs_mono->tv_nsec < 0 || abs_mono->tv_nsec >= 1000000000)
		return -EINVAL;
	t = xsc__pool_get(&timers);	/* freed in the scheduler: no malloc */
	if (!t)
		return -ENOMEM;
	atomic_init(&t->refs, 2);
	t->f = f;
	t->c = c;
	t->when = *abs_mono;
	a[2] = (long)&t->when;
	/* tag: the record with bit 0 set, told apart from fibers in on_done */
	t->id = xsc__post_fiber(SYS_clock_nanosleep, a, (uint64_t)(uintptr_t)t | 1);
	t->v = xsc__vcpu();	/* the post may have waited for an entry */
	if (t->id < 0) {
		int ret = t->id;
		xsc__pool_put(&timers, t);
		return ret;
	}
	f->timed_q = t;
	*out = t;
	return 0;
}

static void timed_put(struct xsc_timed *t)
{
	if (atomic_fetch_sub(&t->refs, 1) == 1)
		xsc__pool_put(&timers, t);
}

/* c->lock is held and the fiber is on c's queue: park until a wake-up or
 * the deadline.  0 or -ETIMEDOUT. */
int xsc__timed_park(struct xsc_timed *t)
{
	struct xsc_fiber *f = t->f;
	int ret;

	/* 0, -ETIMEDOUT, or -EINTR (a signal: xsc__futex_interrupt) */
	ret = (int)xsc__suspend(&t->c->lock);
	/* On t's vcpu its completion cannot run under us: if it has not
	 * fired, the entry is still ours to cancel, freeing it sooner. */
	if (ret != -ETIMEDOUT && xsc__vcpu() == t->v && !t->fired)
		xsc_cancel(t->v->x, t->id);
	f->timed_q = NULL;
	timed_put(t);
	return ret;
}

/* The fiber armed a timer but did not park after all.  No switch happened
 * since xsc__timed_arm, so the completion has not run and the claim
 * succeeds; the completion then only drops its reference. */
void xsc__timed_disarm(struct xsc_timed *t)
{
	int z = 0;

	atomic_compare_exchange_strong(&t->state, &z, 1);
	if (xsc__vcpu() == t->v && !t->fired)
		xsc_cancel(t->v->x, t->id);
	t->f->timed_q = NULL;
	timed_put(t);
}

XSC_EXPORT int xsc_cond_timedwait(xsc_cond_t *c, xsc_mutex_t *m,
				  const struct timespec *abstime)
{
	struct xsc_fiber *f = xsc__cur();
	struct xsc_timed *t;
	int ret;

	if (!f)
		return -EPERM;
	ret = xsc__timed_arm(c, abstime, &t);
	if (ret < 0)
		return ret;
	xsc__spin_lock(&c->lock);
	xsc__wq_push(&c->head, f);
	xsc_mutex_unlock(m);
	XSC_PROBE3(park, f, f->vtid, XSC_PARK_TIMED);
	ret = xsc__timed_park(t);
	xsc_mutex_lock(m);
	return ret;
}

/* ---- semaphores ------------------------------------------------------------- */

XSC_EXPORT int xsc_sem_init(xsc_sem_t *s, long value)
{
	if (value < 0)
		return -EINVAL;
	*s = (xsc_sem_t){ 0, 0, value, 0, 0 };
	return 0;
}

XSC_EXPORT int xsc_sem_destroy(xsc_sem_t *s)
{
	return s->head ? -EBUSY : 0;
}

XSC_EXPORT int xsc_sem_trywait(xsc_sem_t *s)
{
	int ret = -EAGAIN;

	xsc__spin_lock(&s->lock);
	if (s->value > 0) {
		s->value--;
		ret = 0;
	}
	xsc__spin_unlock(&s->lock);
	return ret;
}

XSC_EXPORT int xsc_sem_wait(xsc_sem_t *s)
{
	struct xsc_fiber *f = xsc__cur();

	if (!f) {
		while (xsc_sem_trywait(s))
			sched_yield();
		return 0;
	}
	xsc__spin_lock(&s->lock);
	if (s->value > 0) {
		s->value--;
		xsc__spin_unlock(&s->lock);
		return 0;
	}
	f->timed_q = NULL;
	xsc__wq_push(&s->head, f);
	XSC_PROBE3(park, f, f->vtid, XSC_PARK_SEM);
	xsc__suspend(&s->lock);	/* post hands its unit to us */
	return 0;
}

XSC_EXPORT int xsc_sem_post(xsc_sem_t *s)
{
	struct xsc_fiber *f;

	xsc__spin_lock(&s->lock);
	f = xsc__wq_pop(&s->head);
	if (!f) {
		if (s->value == LONG_MAX) {
			xsc__spin_unlock(&s->lock);
			return -EOVERFLOW;
		}
		s->value++;
	}
	xsc__spin_unlock(&s->lock);
	if (f)
		xsc__resume(f, 0);
	return 0;
}

/* ---- once ----------------------------------------------------------------- */

XSC_EXPORT int xsc_once(xsc_once_t *o, void (*fn)(void))
{
	if (__atomic_load_n(&o->state, __ATOMIC_ACQUIRE) == 2)
		return 0;
	xsc_mutex_lock(&o->m);
	if (o->state != 2) {
		fn();
		__atomic_store_n(&o->state, 2, __ATOMIC_RELEASE);
	}
	xsc_mutex_unlock(&o->m);
	return 0;
}
