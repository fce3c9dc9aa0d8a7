/*
 * futex.c - futexes emulated for fibers.
 *
 * In transparent mode every lock of an unmodified program (its pthread
 * mutexes, condition variables, semaphores, barriers, joins, and libc's
 * own internal locks) ends in futex(2).  A kernel FUTEX_WAIT would put the
 * whole vcpu to sleep while other fibers are ready, so waits are kept in
 * user space: a fiber that waits parks on a hash bucket (a spinlock and a
 * FIFO of fibers) and its vcpu runs the next one; a wake takes waiters for
 * the same address off the bucket and readies them.  The value check and
 * the enqueue happen under the bucket lock, and wakers take the same lock,
 * so the classic futex guarantee holds: a waiter that saw the old value is
 * on the queue before any waker that changed it can look.
 * Deadlines ride on sync.c's timed waits (an io_uring timeout).
 *
 * Only private futexes come here: a futex without FUTEX_PRIVATE_FLAG may
 * be shared with another process, whose wakes reach only the kernel, so
 * the shim hands those to the kernel (shim_futex, table.c).  PI and
 * robust futexes are not emulated (docs/transparent.md).
 */
#include "sched.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

#define NBUCKETS 256

struct bucket {
	xsc_cond_t q;	/* lock + FIFO of fibers (wnext) */
} __attribute__((aligned(64)));

static struct bucket buckets[NBUCKETS];

static struct bucket *bucket_of(const uint32_t *a)
{
	uintptr_t h = (uintptr_t)a >> 2;

	h ^= h >> 17;
	h *= 0x9e3779b97f4a7c15ULL;
	return &buckets[(h >> 32) % NBUCKETS];
}

/* A forked child: the waiters are the parent's threads, gone here. */
void xsc__futex_forget(void)
{
	memset(buckets, 0, sizeof(buckets));
}

static long wait_on(struct bucket *b, const uint32_t *uaddr, uint32_t val,
		   const struct timespec *abs_mono, uint32_t bits)
{
	struct xsc_fiber *f = xsc__cur();
	struct xsc_timed *t = NULL;
	long ret;

	if (!f)
		return -EPERM;
	if (!bits)
		return -EINVAL;
	if (abs_mono) {
		ret = xsc__timed_arm(&b->q, abs_mono, &t);
		if (ret < 0)
			return ret;
	} else {
		f->timed_q = NULL;
	}
	xsc__spin_lock(&b->q.lock);
	if (__atomic_load_n(uaddr, __ATOMIC_SEQ_CST) != val) {
		xsc__spin_unlock(&b->q.lock);
		if (t)
			xsc__timed_disarm(t);
		return -EAGAIN;
	}
	/* a signal sent to this thread already (transparent mode): the
	 * kernel's futex wait does not sleep then, and fails with EINTR
	 * once the handler ran.  A sender that comes later finds the fiber
	 * queued (xsc__futex_interrupt: the same lock) */
	if (xsc__signal_pending(f)) {
		xsc__spin_unlock(&b->q.lock);
		if (t)
			xsc__timed_disarm(t);
		return -EINTR;
	}
	f->fx_addr = uaddr;
	f->fx_q = &b->q;
	f->fx_bits = bits;
	xsc__wq_push(&b->q.head, f);
	XSC_PROBE3(park, f, f->vtid, XSC_PARK_FUTEX);
	if (t)
		return xsc__timed_park(t);
	return xsc__suspend(&b->q.lock);	/* 0: woken */
}

long xsc__futex_wait(const uint32_t *uaddr, uint32_t val,
		     const struct timespec *abs_mono, uint32_t bits)
{
	return wait_on(bucket_of(uaddr), uaddr, val, abs_mono, bits);
}

long xsc__futex_wait_q(xsc_cond_t *q, const uint32_t *uaddr, uint32_t val)
{
	return wait_on((struct bucket *)q, uaddr, val, NULL, ~0u);
}

/* A signal for fiber f (sent by the extension): if f waits on a futex, it
 * is taken off it and readied with -EINTR, as the kernel's FUTEX_WAIT
 * returns when a handler runs; true if it was.  A requeue may move f to
 * another word meanwhile: its address is looked at again under the lock. */
bool xsc__futex_interrupt(struct xsc_fiber *f)
{
	for (;;) {
		const uint32_t *a = __atomic_load_n(&f->fx_addr, __ATOMIC_ACQUIRE);
		struct bucket *b;
		bool took = false;

		if (!a)
			return false;
		/* its queue: a hash bucket, or a private one (fdq.c) */
		b = (struct bucket *)__atomic_load_n(&f->fx_q, __ATOMIC_ACQUIRE);
		xsc__spin_lock(&b->q.lock);
		if (__atomic_load_n(&f->fx_addr, __ATOMIC_RELAXED) != a ||
		    __atomic_load_n(&f->fx_q, __ATOMIC_RELAXED) != &b->q) {
			xsc__spin_unlock(&b->q.lock);
			continue;
		}
		if (xsc__wq_remove(&b->q.head, f))
			took = xsc__claim(f);	/* false: its timer readies it */
		xsc__spin_unlock(&b->q.lock);
		if (took)
			xsc__resume(f, -EINTR);
		return took;
	}
}

/* Takes up to n waiters on uaddr matching bits off b (lock held). */
static int take(struct bucket *b, const uint32_t *uaddr, int n, uint32_t bits,
		struct xsc_fiber **list)
{
	struct xsc_wq *w = (struct xsc_wq *)&b->q.head;
	struct xsc_fiber *p = NULL, *i, *next;
	int cnt = 0;

	for (i = w->head; i && cnt < n; i = next) {
		next = i->wnext;
		if (i->fx_addr != uaddr || !(i->fx_bits & bits)) {
			p = i;
			continue;
		}
		xsc__wq_unlink(w, p, i);
		if (!xsc__claim(i))
			continue;	/* timed out: its timer readies it */
		i->rnext = *list;
		*list = i;
		cnt++;
	}
	return cnt;
}

static long wake_on(struct bucket *b, const uint32_t *uaddr, int n, uint32_t bits)
{
	struct xsc_fiber *list = NULL, *f;
	int cnt;

	if (!bits)
		return -EINVAL;
	if (n <= 0)
		return 0;
	xsc__spin_lock(&b->q.lock);
	cnt = take(b, uaddr, n, bits, &list);
	xsc__spin_unlock(&b->q.lock);
	while ((f = list) != NULL) {
		list = f->rnext;
		xsc__resume(f, 0);
	}
	return cnt;
}

long xsc__futex_wake(const uint32_t *uaddr, int n, uint32_t bits)
{
	return wake_on(bucket_of(uaddr), uaddr, n, bits);
}

long xsc__futex_wake_q(xsc_cond_t *q, const uint32_t *uaddr, int n)
{
	return wake_on((struct bucket *)q, uaddr, n, ~0u);
}

/* FUTEX_REQUEUE / FUTEX_CMP_REQUEUE: wake nwake, move up to nmove of the
 * rest to uaddr2 (cmpval: expected value of *uaddr, or NULL). */
long xsc__futex_requeue(const uint32_t *uaddr, int nwake, int nmove,
			const uint32_t *uaddr2, const uint32_t *cmpval)
{
	struct bucket *b1 = bucket_of(uaddr), *b2 = bucket_of(uaddr2);
	struct xsc_fiber *list = NULL, *moved = NULL, *f;
	long cnt;
	int nm = 0;

	if (nwake < 0 || nmove < 0)
		return -EINVAL;
	/* both locks, in address order */
	if (b1 < b2) {
		xsc__spin_lock(&b1->q.lock);
		xsc__spin_lock(&b2->q.lock);
	} else {
		xsc__spin_lock(&b2->q.lock);
		if (b1 != b2)
			xsc__spin_lock(&b1->q.lock);
	}
	if (cmpval && __atomic_load_n(uaddr, __ATOMIC_SEQ_CST) != *cmpval) {
		cnt = -EAGAIN;
		goto out;
	}
	cnt = take(b1, uaddr, nwake, ~0u, &list);
	if (nmove) {
		/* untimed waiters move to uaddr2 in FIFO order; a timed one
		 * is woken instead (futex callers tolerate early wake-ups),
		 * so its timer never has to follow it to another bucket */
		struct xsc_wq *w = (struct xsc_wq *)&b1->q.head;
		struct xsc_fiber *p = NULL, *i, *next, *mt = NULL;
		for (i = w->head; i && nm < nmove; i = next) {
			next = i->wnext;
			if (i->fx_addr != uaddr) {
				p = i;
				continue;
			}
			xsc__wq_unlink(w, p, i);
			nm++;
			if (i->timed_q) {
				if (xsc__claim(i)) {
					i->rnext = list;
					list = i;
				}
				continue;
			}
			i->fx_addr = uaddr2;
			i->fx_q = &b2->q;
			i->rnext = NULL;
			if (mt)
				mt->rnext = i;
			else
				moved = i;
			mt = i;
		}
		while ((f = moved) != NULL) {
			moved = f->rnext;
			xsc__wq_push(&b2->q.head, f);
		}
	}
	cnt += nm;
out:
	if (b1 != b2)
		xsc__spin_unlock(&b1->q.lock);
	xsc__spin_unlock(&b2->q.lock);
	while ((f = list) != NULL) {
		list = f->rnext;
		xsc__resume(f, 0);
	}
	return cnt;
}
