/*
 * runtime.c - xsc threads: vcpus, fibers, run queues, the scheduler loop.
 *
 * Each vcpu (kernel thread, pinned) loops:
 *   1. run the next ready fiber until it switches back (system call, park,
 *      yield, exit);
 *   2. after the switch: release the parked fiber's queue lock, reclaim a
 *      dead fiber, requeue a yielding one, flush the syscall pages when
 *      `batch` entries are pending, and every 64 switches flush and reap
 *      whatever there is (fibers that never stop running must not hold
 *      back the calls of the others);
 *   3. no ready fiber: flush, reap completions (no syscall), steal half of
 *      another vcpu's queue; still nothing: sleep in one io_uring_enter
 *      (or futex) until a completion or a kick from another vcpu.
 * That is FlexSC-Threads' policy: system calls accumulate while there is
 * user work, and the batch goes to the kernel when nothing is runnable.
 *
 * Work stealing (rather than a global queue): a vcpu only touches another
 * vcpu's queue when it has nothing to do, and it takes half of the fibers
 * that have not started yet, so a burst of new connections spreads over
 * the cores without a shared hot lock.  A started fiber stays on its home
 * vcpu: libc's TLS (errno, and addresses of __thread variables compilers
 * keep across calls) then stays valid in unmodified code, its syscall
 * entries complete where it sleeps, and wake-ups go to its home queue.
 * ready() kicks an idle vcpu when a queue holds more than one fiber.
 */
#include "sched.h"

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

struct xsc_rt xsc__rt;
__thread struct xsc_vcpu *xsc__self __attribute__((tls_model("initial-exec")));
bool xsc__tp;
_Atomic uint64_t xsc__tp_idlemask;
void (*xsc__tp_vcpu_start)(struct xsc_vcpu *v);
void (*xsc__tp_reap)(struct xsc_fiber *f);
void (*xsc__tp_scan)(struct xsc_vcpu *v);
long (*xsc__tp_interrupted)(struct xsc_fiber *f, long nr, long r);
void (*xsc__tp_posted)(struct xsc_fiber *f);

/* Read the current vcpu after a switch: a fiber may resume on another
 * kernel thread, and the compiler must not reuse a value read before. */
static inline struct xsc_vcpu *self(void)
{
	return xsc__vcpu();
}

/* The runtime's spinlocks.  A vcpu counts the ones its kernel thread
 * holds (nlocks): a program's signal handler that ran while one was held
 * and called into the runtime itself (sem_post's futex wake readies a
 * fiber: the run queue's lock) spun on it for good.  Transparent mode
 * defers such a handler until the count is back at 0
 * (preload/signals/handlers.c), here, when the last lock is released. */
void (*xsc__tp_deferred)(struct xsc_vcpu *v);

static inline void locks_held(int d)
{
	struct xsc_vcpu *v = xsc__self;

	if (!v)
		return;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	v->nlocks += d;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (d < 0 && v->nlocks == 0 && __builtin_expect(v->tp.deferred != 0, 0) &&
	    xsc__tp_deferred)
		xsc__tp_deferred(v);
}

void xsc__spin_lock(uint32_t *l)
{
	locks_held(1);
	while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(l, __ATOMIC_RELAXED))
			__builtin_ia32_pause();
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
	__atomic_store_n(l, 0, __ATOMIC_RELEASE);
	locks_held(-1);
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

static void rq_push(struct xsc_vcpu *v, struct xsc_fiber *f)
{
	bool fresh = !f->home;
	struct xsc_fiber **head = fresh ? &v->nq_head : &v->rq_head;
	struct xsc_fiber **tail = fresh ? &v->nq_tail : &v->rq_tail;

	f->rnext = NULL;
	xsc__spin_lock(&v->rq_lock);
	f->rticket = v->rq_ticket++;
	if (*tail)
		(*tail)->rnext = f;
	else
		*head = f;
	*tail = f;
	atomic_fetch_add(&v->rq_len, 1);
	if (fresh)
		atomic_fetch_add(&v->nq_len, 1);
	xsc__spin_unlock(&v->rq_lock);
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
static struct xsc_fiber *unlink_head(struct xsc_vcpu *v, bool fresh)
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
static bool fresh_first(const struct xsc_vcpu *v)
{
	const struct xsc_fiber *r = v->rq_head, *n = v->nq_head;

	return !r || (n && n->rticket < r->rticket);
}

static struct xsc_fiber *rq_pop(struct xsc_vcpu *v)
{
	struct xsc_fiber *f = NULL;

	if (!atomic_load_explicit(&v->rq_len, memory_order_relaxed))
		return NULL;
	xsc__spin_lock(&v->rq_lock);
	if (v->rq_head || v->nq_head) {
		f = unlink_head(v, fresh_first(v));
		if (v->rq_head || v->nq_head) {	/* the next head runs after f */
			struct xsc_fiber *next = fresh_first(v) ? v->nq_head : v->rq_head;
			prefetch_stack(next);
			__builtin_prefetch(next->rnext);
		}
	}
	xsc__spin_unlock(&v->rq_lock);
	return f;
}

/* Unlinks up to `max` fibers that have not started from u's queue. */
static struct xsc_fiber *take_unstarted(struct xsc_vcpu *u, int max)
{
	struct xsc_fiber *got = NULL, *f;

	xsc__spin_lock(&u->rq_lock);
	while (max-- > 0 && u->nq_head) {
		f = unlink_head(u, true);
		f->rnext = got;
		got = f;
	}
	xsc__spin_unlock(&u->rq_lock);
	return got;
}

/* Takes half of another vcpu's queue, of fibers not started yet. */
static struct xsc_fiber *steal(struct xsc_vcpu *v)
{
	for (int k = 1; k < xsc__rt.n; k++) {
		struct xsc_vcpu *u = &xsc__rt.v[(v->id + k) % xsc__rt.n];
		int n = atomic_load(&u->nq_len);
		struct xsc_fiber *got, *f;

		if (n < 1)
			continue;
		got = take_unstarted(u, (n + 1) / 2);
		if (!got)
			continue;
		while ((f = got->rnext) != NULL) {
			got->rnext = f->rnext;
			rq_push(v, f);
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
 * after a Landlock change sent every call to the caller: tp_sandbox hung
 * about once in 200 runs).  An idle vcpu is woken to steal them first. */
void xsc__rt_may_block(struct xsc_vcpu *v)
{
	if (atomic_load(&v->nq_len) > 0 && atomic_load(&xsc__rt.nidle) > 0)
		kick_idle(v);
}

/* Makes f runnable on its vcpu (from any vcpu or thread). */
static void make_ready(struct xsc_fiber *f)
{
	struct xsc_vcpu *me = self();
	struct xsc_vcpu *v = f->home ? f->home : me ? me : &xsc__rt.v[0];

	f->state = F_READY;
	rq_push(v, f);
	if (v != me || atomic_load(&v->idle))
		xsc__kick(v->x);
	else if (atomic_load(&xsc__rt.nidle) > 0 && atomic_load(&v->rq_len) > 1)
		kick_idle(v);	/* let an idle core steal */
}

/* ---- switching ----------------------------------------------------------- */

long xsc__suspend(uint32_t *lock)
{
	struct xsc_vcpu *v = self();
	struct xsc_fiber *f = v->cur;

	if (f->resume_kept) {	/* resumed before it could switch out */
		f->resume_kept = false;
		if (lock)
			xsc__spin_unlock(lock);
		return f->resumed;
	}
	f->state = F_BLOCKED;
	v->unlock_after = lock;
	xsc__ctx_switch(&f->ctx, &v->sched);
	return f->resumed;
}

void xsc__resume(struct xsc_fiber *f, long val)
{
	struct xsc_vcpu *me = self();

	f->resumed = val;
	if (me && me->cur == f) {	/* still running: nothing to wake */
		f->resume_kept = true;
		return;
	}
	make_ready(f);
}

XSC_EXPORT int xsc_yield(void)
{
	struct xsc_vcpu *v = self();

	if (!v || !v->cur)
		return sched_yield() ? -errno : 0;
	v->cur->state = F_READY;
	v->yielded = true;	/* requeued by the scheduler */
	xsc__ctx_switch(&v->cur->ctx, &v->sched);
	return 0;
}

/* ---- fibers --------------------------------------------------------------- */

static void fiber_main(void *arg)
{
	struct xsc_fiber *f = arg;

	f->ret = f->fn(f->arg);
	xsc_thread_exit(f->ret);
}

static void fiber_exit_hook(struct xsc_ctx *ctx)
{
	(void)ctx;	/* fiber_main never returns into the trampoline */
}

static void run_key_dtors(struct xsc_fiber *f);

XSC_EXPORT void xsc_thread_exit(void *ret)
{
	struct xsc_vcpu *v = self();
	struct xsc_fiber *f = v ? v->cur : NULL;

	if (!f)
		pthread_exit(ret);
	f->ret = ret;
	run_key_dtors(f);
	v = self();	/* destructors may have switched vcpus */
	v->dead = f;
	xsc__ctx_exit(&f->ctx, &v->sched);
}

static void free_fiber(struct xsc_fiber *f)
{
	free(f->kv);
	free(f);
}

/* Scheduler side of an exit: the fiber's stack is no longer in use. */
static void reap_dead(struct xsc_vcpu *v, struct xsc_fiber *f)
{
	struct xsc_fiber *j;
	bool detached;

	if (f->fs) {	/* a program's thread (transparent mode) */
		free(f->kv);
		f->kv = NULL;
		xsc__tp_reap(f);
		return;
	}
	xsc__stack_put(f->stack);
	f->stack = NULL;
	xsc__spin_lock(&f->join_lock);
	f->state = F_DONE;
	j = f->joiner;
	detached = atomic_load(&f->detached);
	xsc__spin_unlock(&f->join_lock);
	(void)v;
	if (detached)
		free_fiber(f);
	else if (j)
		xsc__resume(j, 0);
}

/* A new fiber goes to an idle vcpu if there is one (a vcpu that is busy,
 * or blocked in an inline call, may not look at its queue for a while),
 * else round robin. */
static struct xsc_vcpu *place(void)
{
	unsigned i = atomic_fetch_add(&xsc__rt.rr, 1);

	if (atomic_load(&xsc__rt.nidle) > 0)
		for (int k = 0; k < xsc__rt.n; k++) {
			struct xsc_vcpu *v = &xsc__rt.v[(i + (unsigned)k) % (unsigned)xsc__rt.n];
			if (atomic_load(&v->idle))
				return v;
		}
	return &xsc__rt.v[i % (unsigned)xsc__rt.n];
}

XSC_EXPORT int xsc_thread_create(xsc_thread_t *t, const xsc_thread_attr_t *attr,
				 void *(*fn)(void *), void *arg)
{
	struct xsc_fiber *f;
	size_t size = attr && attr->stack_size ? attr->stack_size :
		      xsc__rt.cfg.stack_size;
	int ret;

	if (!xsc__rt.v)
		return -EPERM;	/* no runtime: call from inside xsc_main */
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	ret = xsc__stack_get(size, &f->stack);
	if (ret < 0) {
		free(f);
		return ret;
	}
	f->fn = fn;
	f->arg = arg;
	atomic_init(&f->detached, attr && attr->detached);
	ret = xsc__ctx_make(&f->ctx, f->stack->lo,
			    (size_t)((char *)f->stack->hi - (char *)f->stack->lo),
			    fiber_main, f, fiber_exit_hook);
	if (ret < 0) {
		xsc__stack_put(f->stack);
		free(f);
		return ret;
	}
	if (t)
		*t = f;
	f->state = F_READY;
	{
		struct xsc_vcpu *v = place(), *me = self();
		rq_push(v, f);
		if (v != me)
			xsc__kick(v->x);
	}
	return 0;
}

XSC_EXPORT int xsc_thread_join(xsc_thread_t f, void **ret)
{
	struct xsc_fiber *me = xsc__cur();

	if (!f || f == me)
		return -EDEADLK;
	if (!me)
		return -EPERM;
	xsc__spin_lock(&f->join_lock);
	if (atomic_load(&f->detached) || f->joiner) {
		xsc__spin_unlock(&f->join_lock);
		return -EINVAL;
	}
	if (f->state != F_DONE) {
		f->joiner = me;
		xsc__suspend(&f->join_lock);	/* reap_dead() resumes us */
	} else {
		xsc__spin_unlock(&f->join_lock);
	}
	if (ret)
		*ret = f->ret;
	free_fiber(f);
	return 0;
}

XSC_EXPORT int xsc_thread_detach(xsc_thread_t f)
{
	bool done;

	if (!f)
		return -ESRCH;
	xsc__spin_lock(&f->join_lock);
	if (atomic_load(&f->detached) || f->joiner) {
		xsc__spin_unlock(&f->join_lock);
		return -EINVAL;
	}
	done = f->state == F_DONE;
	atomic_store(&f->detached, 1);
	xsc__spin_unlock(&f->join_lock);
	if (done)
		free_fiber(f);
	return 0;
}

XSC_EXPORT xsc_thread_t xsc_thread_self(void)
{
	return xsc__cur();
}

/* ---- fiber-local keys ---------------------------------------------------- */

static void (*key_dtor[XSC_MAX_KEYS])(void *);
static _Atomic int key_used[XSC_MAX_KEYS];
/* Each create and delete of key k moves key_gen[k] on: a value set under
 * an earlier generation is not the key's value any more (POSIX: a new
 * key is NULL in all threads; xsc_getspecific once returned the value a
 * fiber had set under a deleted key of the same index). */
static _Atomic uint32_t key_gen[XSC_MAX_KEYS];

XSC_EXPORT int xsc_key_create(xsc_key_t *k, void (*dtor)(void *))
{
	for (int i = 0; i < XSC_MAX_KEYS; i++) {
		int z = 0;
		if (atomic_compare_exchange_strong(&key_used[i], &z, 1)) {
			atomic_fetch_add(&key_gen[i], 1);
			key_dtor[i] = dtor;
			*k = (xsc_key_t)i;
			return 0;
		}
	}
	return -EAGAIN;
}

XSC_EXPORT int xsc_key_delete(xsc_key_t k)
{
	if (k >= XSC_MAX_KEYS || !atomic_load(&key_used[k]))
		return -EINVAL;
	key_dtor[k] = NULL;
	atomic_fetch_add(&key_gen[k], 1);
	atomic_store(&key_used[k], 0);
	return 0;
}

/* f's value of key k, if it was set under the key's current generation */
static void *key_value(const struct xsc_fiber *f, unsigned k)
{
	const struct xsc_keyvals *kv = f->kv;

	if (!kv || kv->gen[k] != atomic_load(&key_gen[k]))
		return NULL;
	return kv->val[k];
}

XSC_EXPORT void *xsc_getspecific(xsc_key_t k)
{
	struct xsc_fiber *f = xsc__cur();
	return f && k < XSC_MAX_KEYS ? key_value(f, k) : NULL;
}

XSC_EXPORT int xsc_setspecific(xsc_key_t k, const void *v)
{
	struct xsc_fiber *f = xsc__cur();

	if (!f)
		return -EPERM;
	if (k >= XSC_MAX_KEYS || !atomic_load(&key_used[k]))
		return -EINVAL;
	if (!f->kv && !(f->kv = calloc(1, sizeof(*f->kv))))
		return -ENOMEM;
	f->kv->gen[k] = atomic_load(&key_gen[k]);
	f->kv->val[k] = (void *)v;
	return 0;
}

/* As pthreads: up to 4 rounds while destructors set values again. */
static void run_key_dtors(struct xsc_fiber *f)
{
	for (int round = 0; f->kv && round < 4; round++) {
		bool again = false;
		for (int i = 0; i < XSC_MAX_KEYS; i++) {
			void *val = key_value(f, (unsigned)i);
			void (*d)(void *) = key_dtor[i];
			if (!val || !d)
				continue;
			f->kv->val[i] = NULL;
			d(val);
			again = true;
		}
		if (!again)
			break;
	}
	free(f->kv);
	f->kv = NULL;
}

/* xsc__umem_ours (ucopy.c): a posted call's buffer in the live part of
 * the parked fiber's own stack, from its saved stack pointer up to the
 * top (the stack it was made with, or in transparent mode the one clone3
 * gave): memory it has run on, above any guard page, mapped while it
 * waits in that very call.  Tags on the runtime's handles are fibers, or
 * carry a low bit (sync.c's timers, fdq.c's turns, XSC_TAG_OWN). */
static bool umem_ours(uint64_t tag, uintptr_t p, size_t len)
{
	const struct xsc_fiber *f = (const struct xsc_fiber *)(uintptr_t)tag;
	uintptr_t hi;

	if (!f || (tag & 3))
		return false;
	if (f->fs)
		hi = f->tp.stack_hi;
	else if (f->ctx.stack_size)
		hi = (uintptr_t)f->ctx.stack_lo + f->ctx.stack_size;
	else
		return false;
	return p >= (uintptr_t)f->ctx.sp && p + len <= hi && p + len > p;
}

/* ---- the scheduler ---------------------------------------------------------- */

static void on_done(void *arg, int id, long ret, uint64_t tag);

static void after_switch(struct xsc_vcpu *v, struct xsc_fiber *f)
{
	if (!f->fs) {
		int *err = &errno;
		f->err = *err;
	}
	if (v->unlock_after) {
		xsc__spin_unlock(v->unlock_after);
		v->unlock_after = NULL;
	}
	/* Not f->state: once the lock above is released, another vcpu may
	 * already have readied a parked f, and pushing it again would run
	 * it twice. */
	if (v->dead) {
		reap_dead(v, v->dead);
		v->dead = NULL;
	} else if (v->yielded) {
		v->yielded = false;
		rq_push(v, f);
	}
}

/* A program's thread (transparent mode) runs with its own thread pointer,
 * loaded only when it is not loaded already: the scheduler's own code
 * runs with whichever one is there (it finds its vcpu through the copy
 * of xsc__self every TLS block has, and uses no other TLS of its own),
 * so a vcpu that resumes the fiber it ran last, or a thread's only fiber,
 * loads nothing, and switching to another thread is one load, not two.
 * Two things the scheduler may still touch in the loaded block are made
 * right around it: errno (kept in f->err while it is switched out, and
 * written back after the load), and the block itself once the thread has
 * exited: the vcpu loads its own pointer before the reap, after which
 * the block may be freed (a joiner's munmap) and its LDT slot reused
 * (tls.c).
 *
 * A signal may come in at any instruction here, and with arch_prctl at
 * the return of each load, where the kernel delivers what is pending:
 * its handler runs as v->cur, or as no thread when that is NULL, and the
 * trampoline gives it that thread's TLS, or the vcpu's (preload/
 * signals/handlers.c, handler_tls).  So v->cur names the fiber only while its
 * context is the one switched in: it is set last before the switch and
 * cleared first after it.  The fiber's copy of xsc__self (sched.h) is
 * stored before its pointer is loaded, through the initial-exec offset,
 * so that a signal taken right after the load finds the vcpu there. */
static void tls_in(struct xsc_vcpu *v, struct xsc_fiber *f)
{
	uintptr_t off = (uintptr_t)&xsc__self - xsc__tls_now();

	*(struct xsc_vcpu **)(f->fs + off) = v;
	if (xsc__tls_now() != f->fs) {
		xsc__tls_load(f->fs, f->fs_sel, &v->tls_sys);
		v->tls_loads++;
	}
	*xsc__errno_now() = f->err;	/* f's own, now that its block is loaded */
}

static void run(struct xsc_vcpu *v, struct xsc_fiber *f)
{
	if (!f->home)
		f->home = v;	/* it stays here from now on */
	if (f->fs) {
		/* a program's thread: its own TLS, and its own signal mask */
		if (f->sigmask != v->tp.sigmask) {
			xsc__sys6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&f->sigmask,
				  0, 8, 0, 0);
			v->tp.sigmask = f->sigmask;
		}
		tls_in(v, f);
	} else {
		errno = f->err;
	}
	f->state = F_RUNNING;
	v->switches++;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	v->cur = f;	/* last before the switch: see tls_in */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	xsc__ctx_switch(&v->sched, &f->ctx);
	v->cur = NULL;	/* first after it */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (f->fs) {
		f->err = *xsc__errno_now();
		if (v->dead == f) {	/* see tls_in */
			xsc__tls_load(v->tp.fs, v->own_sel, &v->tls_sys);
			v->tls_loads++;
		}
	}
	after_switch(v, f);
}

/* Work the loop looks for before it runs a fiber (loop()): a signal's
 * interrupt, a sandbox or credential change to apply here, another
 * vcpu's new fibers to steal.  The last pairs with xsc__rt_may_block():
 * a vcpu about to block pushed its new fiber, then looks for an idle
 * vcpu to wake; this one said it is idle, then looks for new fibers
 * (both seq_cst): one of the two sees the other. */
static bool loop_work(struct xsc_vcpu *v)
{
	if (atomic_load_explicit(&v->tp.intr, memory_order_relaxed) ||
	    atomic_load_explicit(&xsc__rt.sandbox_gen, memory_order_acquire) !=
		    v->sandbox_gen ||
	    xsc__rt_creds_behind(v))
		return true;
	for (int k = 1; k < xsc__rt.n; k++)
		if (atomic_load(&xsc__rt.v[(v->id + k) % xsc__rt.n].nq_len) > 0)
			return true;
	return false;
}

static void idle(struct xsc_vcpu *v)
{
	uint32_t seen = xsc__kick_seen(v->x);

	if (xsc__tp) {
		/* the last fiber's mask (glibc blocks every signal before a
		 * thread exits) must not keep process signals out while the
		 * vcpu sleeps, and a signal every thread blocks (one a
		 * sigwait thread waits for) must not be taken here */
		uint64_t m = atomic_load(&xsc__tp_idlemask);
		if (v->tp.sigmask != m) {
			xsc__sys6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&m, 0, 8, 0, 0);
			v->tp.sigmask = m;
		}
	}
	atomic_store(&v->idle, 1);
	atomic_fetch_add(&xsc__rt.nidle, 1);
	/* Whatever woke us is looked at after `seen` was read: a kick for
	 * loop_work() that came after the loop looked, but before `seen`,
	 * was slept through.  A signal's interrupt of a fiber's blocked
	 * read was lost so, and tp_forkrun's child hung (about one run in
	 * 60 under load). */
	if (!atomic_load(&v->rq_len) && !atomic_load(&xsc__rt.stop) && !loop_work(v))
		xsc__idle_wait(v->x, seen, -1);	/* timeouts are entries too */
	atomic_fetch_sub(&xsc__rt.nidle, 1);
	atomic_store(&v->idle, 0);
}

/* Completions freed entries: fibers waiting for one may retry. */
static void release_ewait(struct xsc_vcpu *v)
{
	struct xsc_fiber *f;

	while (v->ewait.head && v->x->nfree &&
	       (f = xsc__wq_pop(&v->ewait)) != NULL)
		xsc__resume(f, 0);
}

static void loop(struct xsc_vcpu *v)
{
	unsigned batch = xsc__rt.cfg.batch;

	while (!atomic_load(&xsc__rt.stop)) {
		/* a fiber sandboxed itself: bind this kernel thread too
		 * before it runs another fiber (sandbox.c) */
		if (__builtin_expect(atomic_load_explicit(&xsc__rt.sandbox_gen,
				     memory_order_acquire) != v->sandbox_gen, 0))
			xsc__rt_sandbox_catch_up(v);
		if (xsc__rt_creds_behind(v))
			xsc__rt_creds_catch_up(v);
		if (__builtin_expect(atomic_load_explicit(&v->tp.intr, memory_order_relaxed), 0) &&
		    atomic_exchange(&v->tp.intr, 0) && xsc__tp_scan)
			xsc__tp_scan(v);	/* signals interrupt calls (preload/signals/interrupt.c) */
		struct xsc_fiber *f = rq_pop(v);

		if (!f) {
			xsc_flush(v->x);	/* nothing runnable: hand the batch over */
			xsc_poll(v->x);
			release_ewait(v);
			f = rq_pop(v);
		}
		if (!f)
			f = steal(v);
		if (!f) {
			idle(v);
			xsc_poll(v->x);
			release_ewait(v);
			continue;
		}
		run(v, f);
		/* Completions must not starve, nor calls posted while other
		 * fibers keep running (one spinning in xsc_yield is always
		 * runnable): every 64 switches the batch goes out even if it
		 * is small. */
		bool tick = (v->switches & 63) == 0 || v->poll_now;
		v->poll_now = false;
		if (tick || v->ewait.head) {
			if (tick && v->x->npending)
				xsc_flush(v->x);
			xsc_poll(v->x);
			release_ewait(v);
		}
		if (v->x->npending >= batch)
			xsc_flush(v->x);
	}
}

static int vcpu_init(struct xsc_vcpu *v)
{
	struct xsc_config cfg;
	int ret;

	xsc__self = v;
	xsc__stack_thread_init();
	xsc_config_init(&cfg);
	cfg.npages = xsc__rt.cfg.npages;
	cfg.backend = xsc__rt.cfg.backend;
	cfg.done_cb = on_done;
	cfg.done_arg = v;
	cfg.spin_ns = 0;	/* a vcpu sleeps rather than spin */
	cfg.syscall_cpu = xsc__rt.cfg.syscall_cpu;
	/* with the worker backend every blocked fiber holds a syscall thread */
	cfg.max_workers = 256;
	/* full pages park the posting fiber instead of blocking the vcpu;
	 * say fallback reasons once, not per vcpu */
	cfg.flags = XSC_NONBLOCK | (v->id || xsc__rt.quiet ? XSC_QUIET : 0);
	ret = xsc_open(&v->x, &cfg);
	if (ret < 0)
		return ret;
	xsc__handle_shared(v->x);	/* fibers have TLS of their own */
	if (xsc__rt.cfg.pin && v->cpu >= 0) {
		cpu_set_t s;
		CPU_ZERO(&s);
		CPU_SET(v->cpu, &s);
		sched_setaffinity(0, sizeof(s), &s);
	}
	return 0;
}

static void on_done(void *arg, int id, long ret, uint64_t tag)
{
	struct xsc_fiber *f = (struct xsc_fiber *)(uintptr_t)tag;

	(void)arg;
	(void)id;
	if (tag & 1) {	/* a timed wait's timer (sync.c) */
		xsc__timed_done((void *)(uintptr_t)(tag & ~1ULL));
		return;
	}
	if (tag & XSC_TAG_FDQ) {	/* a descriptor's turn (fdq.c) */
		xsc__fdq_ready((struct xsc_fdq *)(uintptr_t)(tag & ~XSC_TAG_FDQ));
		return;
	}
	if (!f)
		return;
	/* (in transparent mode the shim raises it: preload.c dispatch) */
	if (__builtin_expect(ret == -EPIPE, 0) && !xsc__tp)
		f->sigpipe = xsc__sigpipe_lost(((struct xsc_vcpu *)arg)->x, id, ret);
	f->tp.call = 0;		/* no longer an entry to cancel (preload/signals/interrupt.c) */
	xsc__resume(f, ret);	/* kept if the fiber reaped its own call */
}

/* xsc__rt.closing: when xsc_main fails before its first fiber, the
 * vcpus close their own handles as they stop, after its kicks. */
enum { CLOSE_NO, CLOSE_AFTER_KICKS, CLOSE_NOW };

static void *vcpu_thread(void *arg)
{
	struct xsc_vcpu *v = arg;
	int ret = vcpu_init(v);

	if (ret == 0 && xsc__tp_vcpu_start)
		xsc__tp_vcpu_start(v);
	atomic_store(&v->inited, ret < 0 ? ret : 1);
	if (ret < 0) {
		xsc__own_thread_end();
		return NULL;
	}
	loop(v);
	if (atomic_load(&xsc__rt.closing)) {
		/* xsc_main failed to start: this thread closes its own
		 * handle (see there) once xsc_main has done kicking it */
		while (atomic_load(&xsc__rt.closing) == CLOSE_AFTER_KICKS)
			sched_yield();
		xsc_close(v->x);
		v->x = NULL;
	}
	xsc__own_thread_end();
	return NULL;
}

/* ---- xsc_main ---------------------------------------------------------------- */

struct main_args {
	int (*fn)(int, char **);
	int argc;
	char **argv;
};

static void *main_fiber(void *arg)
{
	struct main_args *m = arg;

	xsc__rt.main_ret = m->fn(m->argc, m->argv);
	atomic_store(&xsc__rt.stop, 1);
	for (int i = 0; i < xsc__rt.n; i++)
		xsc__kick(xsc__rt.v[i].x);
	return NULL;
}

_Static_assert(sizeof(struct xsc_stats) % sizeof(uint64_t) == 0,
	       "xsc_runtime_stats sums struct xsc_stats as uint64_t words");

XSC_EXPORT int xsc_runtime_stats(struct xsc_stats *s, uint64_t *waits)
{
	uint64_t *sum = (uint64_t *)s;
	uint64_t w = 0;

	if (!xsc__rt.v || !xsc__rt.n)
		return -ESRCH;
	memset(s, 0, sizeof(*s));
	/* every field a uint64_t (xsc.h); each read as its own atomic word,
	 * since the vcpus go on counting */
	for (int i = 0; i < xsc__rt.n; i++) {
		struct xsc *x = xsc__rt.v[i].x;
		if (!x)
			continue;
		const uint64_t *f = (const uint64_t *)&x->st;
		for (size_t k = 0; k < sizeof(*s) / sizeof(uint64_t); k++)
			sum[k] += __atomic_load_n(&f[k], __ATOMIC_RELAXED);
		w += __atomic_load_n(&x->waits_done, __ATOMIC_RELAXED);
	}
	if (waits)
		*waits = w;
	return 0;
}

XSC_EXPORT void xsc_runtime_config_init(struct xsc_runtime_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->pin = 1;
	cfg->stack_size = XSC_STACK_DEFAULT_SIZE;
	cfg->npages = 64;	/* 4096 calls in flight per kernel thread */
	cfg->syscall_cpu = -1;
	cfg->batch = 64;
}

/* ---- the CPUs the process may use ---------------------------------------
 *
 * The default number of kernel threads and their cores come from the
 * process's affinity mask (taskset, a container's cpuset), capped by a
 * cgroup v2 CPU quota (cpu.max: ceil(quota / period) on the process's
 * cgroup and every ancestor), as the Go and Tokio runtimes do.  Pinning
 * walks the allowed CPUs only; an explicit first_cpu or syscall_cpu
 * outside the mask is an error with a message. */

/* The allowed CPUs, in order, into cpus[]; returns their count (>= 1). */
static int allowed_cpus(int *cpus, int max)
{
	cpu_set_t set;
	int n = 0;

	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		for (int c = 0; c < CPU_SETSIZE && n < max; c++)
			if (CPU_ISSET(c, &set))
				cpus[n++] = c;
	if (!n) {
		long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
		for (; n < (ncpu > 0 ? ncpu : 1) && n < max; n++)
			cpus[n] = n;
	}
	return n;
}

/* The tightest cgroup v2 CPU quota in CPUs (rounded up), or 0 for none. */
static int cgroup_cpus(void)
{
	char cg[512], path[640], val[64];
	int best = 0;

	if (xsc__read_small("/proc/self/cgroup", cg, sizeof(cg)) <= 0 ||
	    strncmp(cg, "0::", 3) != 0)
		return 0;
	char *rel = cg + 3, *nl = strchr(rel, '\n');
	if (nl)
		*nl = 0;
	for (;;) {
		long long quota, period;
		snprintf(path, sizeof(path), "/sys/fs/cgroup%s/cpu.max",
			 strcmp(rel, "/") ? rel : "");
		if (xsc__read_small(path, val, sizeof(val)) > 0 &&
		    sscanf(val, "%lld %lld", &quota, &period) == 2 && period > 0) {
			int c = (int)((quota + period - 1) / period);
			if (c > 0 && (!best || c < best))
				best = c;
		}
		char *slash = strrchr(rel, '/');
		if (!slash || slash == rel)
			break;
		*slash = 0;
	}
	return best;
}

static int cpu_index(const int *cpus, int n, int cpu)
{
	for (int i = 0; i < n; i++)
		if (cpus[i] == cpu)
			return i;
	return -1;
}

static void apply_config(const struct xsc_runtime_config *cfg)
{
	if (cfg)
		xsc__rt.cfg = *cfg;
	else
		xsc_runtime_config_init(&xsc__rt.cfg);
	if (!xsc__rt.cfg.nthreads) {
		int cpus[CPU_SETSIZE], n = allowed_cpus(cpus, CPU_SETSIZE);
		int q = cgroup_cpus();
		xsc__rt.cfg.nthreads = (unsigned)(q > 0 && q < n ? q : n);
	}
	if (!xsc__rt.cfg.stack_size)
		xsc__rt.cfg.stack_size = XSC_STACK_DEFAULT_SIZE;
	if (!xsc__rt.cfg.npages)
		xsc__rt.cfg.npages = 64;
	if (!xsc__rt.cfg.batch)
		xsc__rt.cfg.batch = 64;
}

/* Applies the configuration and allocates the vcpus (not started). */
static int vcpus_alloc(const struct xsc_runtime_config *cfg)
{
	xsc__umem_ours = umem_ours;
	int cpus[CPU_SETSIZE], ncpus = allowed_cpus(cpus, CPU_SETSIZE), first = 0;
	int n;

	if (xsc__rt.v)
		return -EBUSY;
	apply_config(cfg);
	if (xsc__rt.cfg.pin && xsc__rt.cfg.first_cpu != 0 &&
	    (first = cpu_index(cpus, ncpus, xsc__rt.cfg.first_cpu)) < 0) {
		xsc__say("xsc: first_cpu %d is outside the process's CPU affinity "
			 "mask\n", xsc__rt.cfg.first_cpu);
		return -EINVAL;
	}
	if (xsc__rt.cfg.pin && xsc__rt.cfg.first_cpu == 0)
		first = 0;	/* the default: the first allowed CPU */
	if (xsc__rt.cfg.syscall_cpu >= 0 &&
	    cpu_index(cpus, ncpus, xsc__rt.cfg.syscall_cpu) < 0) {
		xsc__say("xsc: syscall_cpu %d is outside the process's CPU "
			 "affinity mask\n", xsc__rt.cfg.syscall_cpu);
		return -EINVAL;
	}
	n = (int)xsc__rt.cfg.nthreads;
	xsc__rt.v = aligned_alloc(64, sizeof(struct xsc_vcpu) * (size_t)n);
	if (!xsc__rt.v)
		return -ENOMEM;
	memset(xsc__rt.v, 0, sizeof(struct xsc_vcpu) * (size_t)n);
	xsc__rt.n = n;
	for (int i = 0; i < n; i++) {
		xsc__rt.v[i].id = i;
		xsc__rt.v[i].cpu = cpus[(first + i) % ncpus];
	}
	return 0;
}

/* Every kernel thread gets the same executors, or the program is told:
 * the handles of kernel threads 1.. are opened quiet (one line, not one
 * per thread), so a ring that kernel thread 0 got and another did not
 * (RLIMIT_MEMLOCK room for one ring) would otherwise go unsaid. */
static void report_routes(void)
{
	struct xsc *x0 = xsc__rt.v[0].x;

	for (int i = 1; i < xsc__rt.n; i++) {
		struct xsc *x = xsc__rt.v[i].x;
		if (!x || (x->have_ring == x0->have_ring && x->sqpoll == x0->sqpoll))
			continue;
		xsc__say("xsc: kernel thread %d: %s, unlike kernel thread 0 (%s)\n", i,
			 !x->have_ring ? x->reason : x->sqpoll ? "SQPOLL ring" : "io_uring ring",
			 !x0->have_ring ? "no io_uring" : x0->sqpoll ? "SQPOLL ring" :
			 "io_uring ring");
	}
}

/* Starts v on a thread of its own: each vcpu opens its own handle (and
 * ring: single issuer) on its own thread; waits until it has.  In
 * transparent mode it starts with every signal blocked: until its first
 * fiber or its first idle wait sets its mask (run(), idle()), a signal
 * it took would run the program's handler with no vcpu to run it on
 * (xsc__self not set yet: natively, on a thread of the runtime's).  With
 * the xsc threads API it has its creator's mask, as a new thread does. */
#define VCPU_STACK (8u << 20)	/* glibc's default (RLIMIT_STACK) */

static int vcpu_spawn(struct xsc_vcpu *v)
{
	pthread_attr_t attr;
	int ret;

	if (xsc__tp)
		xsc__attr_blocked(&attr);
	else
		pthread_attr_init(&attr);
	if (xsc__tp && xsc__tls_how == XSC_TLS_LDT) {
		/* a stack below 4 GiB: its thread pointer then has an LDT
		 * slot too (tls.c), and the loads of it (a reap, a handler
		 * between fibers) enter no kernel.  Never freed: a vcpu
		 * lives as long as the process. */
		const long m[6] = { 0, VCPU_STACK, PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0 };
		long p = xsc__tls_map_low(m);
		if (p >= 0 && !xsc__sys3(SYS_mprotect, p, 4096, PROT_NONE))	/* a guard */
			pthread_attr_setstack(&attr, (char *)p + 4096, VCPU_STACK - 4096);
	}
	ret = -pthread_create(&v->th, &attr, vcpu_thread, v);
	pthread_attr_destroy(&attr);

	if (ret)
		return ret;
	xsc__own_thread_start();	/* not a thread of the program's */
	while (!atomic_load(&v->inited))
		sched_yield();
	ret = atomic_load(&v->inited);
	return ret < 0 ? ret : 0;
}

/* Failure before the first fiber leaves nothing behind: every vcpu's
 * handle is closed and the runtime can start again.  A handle is closed
 * by the thread that opened it, because io_uring's registered ring fd
 * belongs to that thread (liburing unregisters it from the caller's
 * table), and only after xsc_main's last kick, which reads it. */
XSC_EXPORT int xsc_main(int (*fn)(int, char **), int argc, char **argv,
			const struct xsc_runtime_config *cfg)
{
	struct main_args m = { fn, argc, argv };
	bool ran = false;
	cpu_set_t cpus;
	int n, ret;

	ret = vcpus_alloc(cfg);
	if (ret < 0)
		return ret;
	sched_getaffinity(0, sizeof(cpus), &cpus);
	n = xsc__rt.n;
	atomic_store(&xsc__rt.stop, 0);
	ret = vcpu_init(&xsc__rt.v[0]);
	if (ret < 0)
		goto out_free;
	for (int i = 1; i < n; i++) {
		ret = vcpu_spawn(&xsc__rt.v[i]);
		if (ret < 0)
			goto out_stop;
	}
	report_routes();
	ret = xsc_thread_create(NULL, &(xsc_thread_attr_t){ .detached = 1 },
				main_fiber, &m);
	if (ret < 0)
		goto out_stop;
	ran = true;
	loop(&xsc__rt.v[0]);
	ret = xsc__rt.main_ret;
out_stop:
	if (!ran)	/* before stop: a vcpu that sees stop sees this */
		atomic_store(&xsc__rt.closing, CLOSE_AFTER_KICKS);
	atomic_store(&xsc__rt.stop, 1);
	for (int i = 1; i < n; i++) {
		if (!xsc__rt.v[i].th)
			continue;
		while (!atomic_load(&xsc__rt.v[i].inited))
			sched_yield();
		if (xsc__rt.v[i].x)
			xsc__kick(xsc__rt.v[i].x);
	}
	if (!ran)
		atomic_store(&xsc__rt.closing, CLOSE_NOW);
	for (int i = 1; i < n; i++)
		if (xsc__rt.v[i].th)
			pthread_join(xsc__rt.v[i].th, NULL);
	/* Abandoned fibers keep their entries: the handles are not closed
	 * while calls might still write into fiber memory; the process is
	 * expected to exit after xsc_main returns. */
	if (ran) {
		xsc__self = NULL;
		return ret;
	}
	xsc_close(xsc__rt.v[0].x);
out_free:
	xsc__self = NULL;
	sched_setaffinity(0, sizeof(cpus), &cpus);	/* vcpu_init pinned it */
	free(xsc__rt.v);
	xsc__rt.v = NULL;
	xsc__rt.n = 0;
	atomic_store(&xsc__rt.closing, CLOSE_NO);
	return ret;
}

/* ---- transparent mode ---------------------------------------------------------- */

/* Fails with vcpus possibly already running (with dispatch on in
 * transparent mode): the caller cannot go on natively and aborts. */
int xsc__rt_start(const struct xsc_runtime_config *cfg)
{
	int ret = vcpus_alloc(cfg);

	for (int i = 0; ret == 0 && i < xsc__rt.n; i++)
		ret = vcpu_spawn(&xsc__rt.v[i]);
	if (ret == 0)
		report_routes();
	return ret;
}

void xsc__rt_forget(void)
{
	for (int i = 0; i < xsc__rt.n; i++)
		if (xsc__rt.v[i].x)
			xsc__handle_forget(xsc__rt.v[i].x);
	free(xsc__rt.v);
	xsc__rt.v = NULL;
	xsc__rt.n = 0;
	atomic_store(&xsc__rt.stop, 0);
	atomic_store(&xsc__rt.closing, CLOSE_NO);
	atomic_store(&xsc__rt.nidle, 0);
	atomic_store(&xsc__rt.rr, 0);
	xsc__rt.quiet = true;
	xsc__futex_forget();
	xsc__fdq_forget();
	xsc__sync_forget();
	xsc__sandbox_forget();
}

void xsc__rt_adopt(struct xsc_fiber *f)
{
	struct xsc_vcpu *v = place(), *me = self();

	f->state = F_READY;
	rq_push(v, f);
	if (v != me)
		xsc__kick(v->x);
}
