/*
 * sched.h - internals of xsc threads (the M:N runtime).
 *
 * A vcpu is a kernel thread pinned to a core.  It owns a run queue, a
 * timer heap and an xsc handle (its private syscall pages: single
 * producer, no atomic read-modify-write on the posting path).  Fibers run
 * on vcpus; a fiber that makes a system call posts an entry tagged with
 * itself and switches back to its vcpu's scheduler context; the handle's
 * completion callback makes it ready again with the result.
 *
 * Parking protocol (no lost wake-ups across vcpus): a fiber that must
 * wait puts itself on a wait queue under that queue's spinlock, sets
 * v->unlock_after to the spinlock and switches to the scheduler, which
 * releases the lock only once the fiber's context is saved.  A waker
 * takes the lock, dequeues the fiber, releases the lock and calls
 * xsc__ready(); so a fiber can never be resumed while it is still
 * switching out.
 */
#ifndef XSC_SCHED_H
#define XSC_SCHED_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "fiber/ctx.h"
#include "xsc.h"

#define XSC_MAX_KEYS 64

enum fstate { F_READY, F_RUNNING, F_BLOCKED, F_DONE };

struct xsc_vcpu;

/* Wait queues (head/tail pointers of struct xsc_fiber via wnext). */
struct xsc_wq {
	void *head, *tail;
};

struct xsc_fiber {
	struct xsc_ctx ctx;
	struct xsc_stack *stack;
	struct xsc_fiber *rnext;	/* run queue link */
	struct xsc_fiber *wnext;	/* wait queue link */
	void *(*fn)(void *);
	void *arg;
	void *ret;
	long sysret;			/* result of the last system call */
	int err;			/* the fiber's libc errno while switched out */
	int state;
	struct xsc_vcpu *home;		/* where it runs once started (NULL before) */
	_Atomic int wake;		/* timed waits: 0 waiting, 1 woken, 2 timed out */
	_Atomic int detached;
	_Atomic int joined;		/* a joiner exists or the fiber was detached */
	uint32_t join_lock;
	struct xsc_fiber *joiner;
	int64_t deadline;		/* timed waits */
	void *timed_q;			/* the queue a timed wait sits on */
	uint32_t *timed_lock;
	void *keys[XSC_MAX_KEYS];
};

struct xsc_timer {
	int64_t when;
	struct xsc_fiber *f;
};

struct xsc_vcpu {
	int id, cpu;
	pthread_t th;
	struct xsc *x;			/* this vcpu's syscall pages */
	struct xsc_ctx sched;		/* the scheduler's own context */
	struct xsc_fiber *cur;
	uint32_t *unlock_after;		/* parking protocol (see above) */
	struct xsc_fiber *dead;		/* exited fiber to reclaim */
	bool yielded;			/* the fiber switched out by xsc_yield */
	/* run queue: other vcpus push and steal, so it has a lock */
	uint32_t rq_lock;
	struct xsc_fiber *rq_head, *rq_tail;
	_Atomic int rq_len;
	_Atomic int idle;
	_Atomic int inited;		/* 1 running, -errno failed to start */
	/* fibers waiting for a free syscall entry (vcpu-local, no lock) */
	struct xsc_wq ewait;
	/* timers: owned by this vcpu */
	struct xsc_timer *tm;
	int ntm, captm;
	uint64_t switches;
} __attribute__((aligned(64)));

struct xsc_rt {
	struct xsc_vcpu *v;
	int n;
	_Atomic int stop;
	_Atomic int nidle;
	_Atomic unsigned rr;		/* round robin for new fibers */
	struct xsc_runtime_config cfg;
	int main_ret;
};

extern struct xsc_rt xsc__rt;
extern __thread struct xsc_vcpu *xsc__self;	/* NULL outside a vcpu */

static inline struct xsc_fiber *xsc__cur(void)
{
	return xsc__self ? xsc__self->cur : NULL;
}

void xsc__spin_lock(uint32_t *l);
void xsc__spin_unlock(uint32_t *l);

/* Makes f runnable (from any vcpu or thread). */
void xsc__ready(struct xsc_fiber *f);
/* The running fiber switches out; `lock` (may be NULL) is released by
 * the scheduler once the switch is complete (parking protocol). */
void xsc__park(uint32_t *lock);
/* Parks with a deadline (CLOCK_MONOTONIC ns); returns 1 if woken, 0 if
 * it timed out.  q/lock: the wait queue the fiber sits on, so the timer
 * can take it off. */
int xsc__park_until(uint32_t *lock, int64_t deadline, void *q);
int64_t xsc__now(void);
/* Posts a call from the running fiber into its vcpu's pages; when they
 * are full the fiber waits for a free entry (the vcpu keeps running
 * others).  Returns the entry id or -errno. */
int xsc__post_fiber(long nr, const long *a, uint64_t tag);
/* Completion of a timed condition wait's timer entry (sync.c). */
void xsc__timed_done(void *rec);

void xsc__wq_push(void *q, struct xsc_fiber *f);
struct xsc_fiber *xsc__wq_pop(void *q);
bool xsc__wq_remove(void *q, struct xsc_fiber *f);

#endif
