/*
 * worker.c - the syscall-thread executor (FlexSC 3.5 on a stock kernel).
 *
 * Syscall threads of this process, optionally pinned to a syscall core,
 * execute ANY syscall number from the pages.  They share the process's
 * memory, files and credentials, so user pointers and fds mean the same
 * thing as in the caller; what differs is per-thread state (tid, signal
 * mask, affinity, per-thread credentials), which is why the table routes
 * XSC_F_THREAD calls inline and this executor refuses them (-EINVAL).
 *
 * Hand-off, owner -> workers: a bounded multi-consumer queue of entry ids
 * (the owner is the only producer; consumers claim a slot with a CAS on the
 * 64-bit head, so a slow consumer that read a stale id just retries).
 * Workers spin for cfg.spin_ns, then sleep on the futex qseq; the owner
 * wakes them only when `sleepers` says someone sleeps (SQPOLL's
 * NEED_WAKEUP idea).
 *
 * Completion, workers -> owner: the worker stores ret, then status DONE
 * (release), pushes the id on a lock-free stack (pop-all by the owner, so no
 * ABA), bumps cseq and futex-wakes cseq only when the owner said it waits.
 *
 * A blocked call never stalls the rest: when work is queued and no worker
 * is idle, the owner starts another, up to cfg.max_workers (and counts the
 * times the bound stopped it: xsc_stats.worker_cap_hits).
 *
 * Threads: pthreads, except in transparent mode (xsc__raw_workers), where
 * the program's threads are fibers whose glibc locks are emulated futexes:
 * pthread_create takes malloc's and the stack cache's locks, and a
 * scheduler that slept in the kernel on such a lock held by a fiber, or
 * released one with a real FUTEX_WAKE while a fiber waited in the
 * emulated table, would hang.  There a syscall thread is a raw clone
 * (arch/x86_64/clone.S) on an mmap'd stack, with a private copy of the
 * thread control block, that runs only this file's loop and raw system
 * calls: no libc lock is ever taken.
 *
 * Cancel: a queued entry is skipped (-ECANCELED); a running one gets
 * XSC_CANCEL_SIGNAL, whose empty handler has no SA_RESTART, so the
 * blocking call returns its own -EINTR, as a signal to a synchronous
 * caller would.
 */
#include "internal.h"

#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "rawsys.h"

#define MAX_WORKERS 256
#define XSC_CANCEL_SIGNAL (SIGRTMAX - 1)
#define RAW_STACK (64 * 1024)
#define RAW_TLS (16 * 1024)	/* below the guard page; the TCB at its top */
#define RAW_MAP (RAW_TLS + 4096 + RAW_STACK)

bool xsc__raw_workers;

long xsc__clone_thread(unsigned long flags, void *stack_top, int *ptid,
		       int *ctid, unsigned long tls, void (*fn)(void *),
		       void *arg);

/* One syscall thread: a pthread, or a raw clone (w->raw). */
union wthread {
	pthread_t th;
	struct {
		char *map;		/* [tls][guard][stack], RAW_MAP bytes */
		_Atomic int ctid;	/* cleared by the kernel when it is gone */
	} raw;
};

struct xsc_workers {
	struct xsc *x;
	int *q;			/* queue of entry ids, cap = x->n */
	unsigned cap;
	_Atomic uint64_t qhead;	/* consumers */
	_Atomic uint64_t qtail;	/* the owner */
	_Atomic uint32_t qseq;	/* futex: bumped when work is queued */
	_Atomic int sleepers;
	_Atomic int idle;
	_Atomic int stop;
	_Atomic int cstack;	/* completed ids, linked through slot.cnext */
	int nthreads;
	bool raw;		/* xsc__raw_workers when the pool started */
	union wthread t[MAX_WORKERS];
	bool cancel_sig;	/* XSC_CANCEL_SIGNAL is ours */
};

static long futex(_Atomic uint32_t *a, int op, uint32_t v)
{
	return xsc__sys6(SYS_futex, (long)a, op | FUTEX_PRIVATE_FLAG, v, 0, 0, 0);
}

static int pop(struct xsc_workers *w)
{
	uint64_t h = atomic_load(&w->qhead);

	while (h != atomic_load(&w->qtail)) {
		int id = w->q[h % w->cap];
		if (atomic_compare_exchange_weak(&w->qhead, &h, h + 1))
			return id;
	}
	return -1;
}

static bool queued(struct xsc_workers *w)
{
	return atomic_load(&w->qhead) != atomic_load(&w->qtail);
}

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void run(struct xsc_workers *w, int id, int tid)
{
	struct xsc *x = w->x;
	struct xsc_entry *e = &x->ent[id];
	struct xsc_slot *s = slot_of(x, id);
	const struct xsc_sysdef *d = xsc__sysdef(e->sysno);
	long ret;

	atomic_store(&s->worker, tid);
	if (atomic_load(&s->canceled))
		ret = -ECANCELED;
	else if (d->flags & XSC_F_THREAD)
		ret = -EINVAL;	/* its meaning depends on the calling thread */
	else
		ret = xsc__exec_sync(e);
	atomic_store(&s->worker, 0);
	e->ret = ret;
	st_set(e, XSC_DONE);	/* pairs with st_get() in the owner */

	int top = atomic_load(&w->cstack);
	do
		atomic_store_explicit(&s->cnext, top, memory_order_relaxed);
	while (!atomic_compare_exchange_weak(&w->cstack, &top, id));
	xsc__kick(x);	/* the owner may sleep on x->cseq */
}

static void on_cancel(int sig) { (void)sig; }

static void loop(struct xsc_workers *w)
{
	int tid = (int)xsc__sys0(SYS_gettid);

	while (!atomic_load(&w->stop)) {
		int id = pop(w);
		if (id >= 0) {
			atomic_fetch_sub(&w->idle, 1);
			run(w, id, tid);
			atomic_fetch_add(&w->idle, 1);
			continue;
		}
		int64_t end = now_ns() + w->x->cfg.spin_ns;
		while (!queued(w) && !atomic_load(&w->stop) && now_ns() < end)
			__builtin_ia32_pause();
		if (queued(w))
			continue;
		uint32_t seq = atomic_load(&w->qseq);
		atomic_fetch_add(&w->sleepers, 1);
		if (!queued(w) && !atomic_load(&w->stop))
			futex(&w->qseq, FUTEX_WAIT, seq);
		atomic_fetch_sub(&w->sleepers, 1);
	}
}

static void *pthread_main(void *arg)
{
	struct xsc_workers *w = arg;
	sigset_t set;

	sigfillset(&set);
	if (w->cancel_sig)
		sigdelset(&set, XSC_CANCEL_SIGNAL);
	pthread_sigmask(SIG_SETMASK, &set, NULL);	/* keeps glibc's own */
	loop(w);
	return NULL;
}

static void raw_main(void *arg)
{
	struct xsc_workers *w = arg;
	uint64_t mask = ~0ULL;

	if (w->cancel_sig)
		mask &= ~(1ULL << (XSC_CANCEL_SIGNAL - 1));
	xsc__sys4(SYS_rt_sigprocmask, SIG_SETMASK, &mask, 0, sizeof(mask));
	if (w->x->cfg.syscall_cpu >= 0 && w->x->cfg.syscall_cpu < 1024) {
		uint64_t cpus[16] = { 0 };
		cpus[w->x->cfg.syscall_cpu / 64] = 1ULL << (w->x->cfg.syscall_cpu % 64);
		xsc__sys3(SYS_sched_setaffinity, 0, sizeof(cpus), cpus);
	}
	loop(w);
}

/* A raw clone: [16 KiB TLS | guard page | 64 KiB stack].  The thread
 * pointer sits near the TLS area's top, holding a copy of the caller's
 * thread control block (glibc's tcbhead_t: self pointers, stack guard,
 * pointer guard) with the self pointers redirected, so stack-protector
 * checks read the canary; the area below it catches a stray errno store
 * instead of letting it hit another thread's TLS. */
static int raw_spawn(struct xsc_workers *w, union wthread *t)
{
	long m = xsc__sys6(SYS_mmap, 0, RAW_MAP, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	unsigned long *tcb, *cur;
	long ret;

	if (m < 0 && m > -4096)
		return (int)m;
	t->raw.map = (char *)m;
	xsc__sys3(SYS_mprotect, t->raw.map + RAW_TLS, 4096, PROT_NONE);
	tcb = (unsigned long *)(t->raw.map + RAW_TLS - 256);
	__asm__("mov %%fs:0x10, %0" : "=r"(cur));	/* the caller's TCB */
	memcpy(tcb, cur, 64);
	tcb[0] = tcb[2] = (unsigned long)tcb;	/* tcb->tcb, tcb->self */
	tcb[1] = 0;				/* no dtv: no dynamic TLS */
	atomic_store(&t->raw.ctid, 1);
	ret = xsc__clone_thread(CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND |
				CLONE_THREAD | CLONE_SYSVSEM | CLONE_SETTLS |
				CLONE_CHILD_CLEARTID,
				t->raw.map + RAW_MAP, NULL, (int *)&t->raw.ctid,
				(unsigned long)tcb, raw_main, w);
	if (ret < 0) {
		xsc__sys2(SYS_munmap, t->raw.map, RAW_MAP);
		t->raw.map = NULL;
		return (int)ret;
	}
	return 0;
}

/* Waits until the kernel has let go of t's stack, then unmaps it. */
static void raw_join(union wthread *t)
{
	int c;

	while ((c = atomic_load(&t->raw.ctid)) != 0)
		xsc__sys6(SYS_futex, (long)&t->raw.ctid, FUTEX_WAIT, c, 0, 0, 0);
	xsc__sys2(SYS_munmap, t->raw.map, RAW_MAP);
	t->raw.map = NULL;
}

static int pthread_spawn(struct xsc_workers *w, pthread_t *th)
{
	pthread_attr_t attr;
	int ret;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	if (w->x->cfg.syscall_cpu >= 0) {
		cpu_set_t cpus;
		CPU_ZERO(&cpus);
		CPU_SET(w->x->cfg.syscall_cpu, &cpus);
		pthread_attr_setaffinity_np(&attr, sizeof(cpus), &cpus);
	}
	ret = -pthread_create(th, &attr, pthread_main, w);
	pthread_attr_destroy(&attr);
	return ret;
}

static int spawn(struct xsc_workers *w)
{
	struct xsc *x = w->x;
	int ret;

	if (w->nthreads >= (int)x->cfg.max_workers || w->nthreads >= MAX_WORKERS) {
		if (x->st.worker_cap_hits++ == 0 && !(x->cfg.flags & XSC_QUIET))
			xsc__say("xsc: worker pool at its bound (%d threads); "
				 "further blocking calls wait for a free one\n",
				 w->nthreads);
		return -EAGAIN;
	}
	atomic_fetch_add(&w->idle, 1);	/* before it can take work */
	ret = w->raw ? raw_spawn(w, &w->t[w->nthreads])
		     : pthread_spawn(w, &w->t[w->nthreads].th);
	if (ret) {
		atomic_fetch_sub(&w->idle, 1);
		return ret;
	}
	w->nthreads++;
	x->st.workers++;
	return 0;
}

static void install_cancel_signal(struct xsc_workers *w)
{
	struct sigaction sa, old;

	if (sigaction(XSC_CANCEL_SIGNAL, NULL, &old) == 0 &&
	    old.sa_handler != SIG_DFL && old.sa_handler != on_cancel)
		return;	/* the program uses it: no signal-based cancel */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_cancel;	/* no SA_RESTART: interrupt the call */
	sigemptyset(&sa.sa_mask);
	w->cancel_sig = sigaction(XSC_CANCEL_SIGNAL, &sa, NULL) == 0;
}

/* Starts the pool with its first thread.  Without one there is no pool:
 * a pool of no threads would take entries that nothing runs. */
int xsc__workers_start(struct xsc *x)
{
	struct xsc_workers *w;
	int ret;

	if (x->wk)
		return 0;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->q = calloc(x->n, sizeof(int));
	if (!w->q) {
		free(w);
		return -ENOMEM;
	}
	w->x = x;
	w->cap = x->n;
	w->raw = xsc__raw_workers;
	atomic_init(&w->cstack, -1);
	install_cancel_signal(w);
	ret = spawn(w);
	if (ret < 0) {
		free(w->q);
		free(w);
		return ret;
	}
	x->wk = w;
	return 0;
}

void xsc__workers_stop(struct xsc *x)
{
	struct xsc_workers *w = x->wk;

	if (!w)
		return;
	atomic_store(&w->stop, 1);
	atomic_fetch_add(&w->qseq, 1);
	futex(&w->qseq, FUTEX_WAKE, INT_MAX);
	for (int i = 0; i < w->nthreads; i++)
		if (w->raw)
			raw_join(&w->t[i]);
		else
			pthread_join(w->t[i].th, NULL);
	free(w->q);
	free(w);
	x->wk = NULL;
}

/* Owner: queue entry id (at most x->n are ever queued at once). */
int xsc__worker_queue(struct xsc *x, int id)
{
	struct xsc_workers *w = x->wk;
	uint64_t t = atomic_load_explicit(&w->qtail, memory_order_relaxed);

	w->q[t % w->cap] = id;
	atomic_store(&w->qtail, t + 1);	/* publishes q[t] to pop() */
	x->inflight_worker++;
	return 0;
}

/* Owner, after queueing a batch: wake sleepers, grow when all are busy. */
void xsc__worker_kick(struct xsc *x)
{
	struct xsc_workers *w = x->wk;
	uint64_t backlog;

	atomic_fetch_add(&w->qseq, 1);
	if (atomic_load(&w->sleepers) > 0) {
		futex(&w->qseq, FUTEX_WAKE, INT_MAX);
		x->st.crossings++;
	}
	/* one thread per queued call that no idle thread can take, up to
	 * the bound: a batch of blocking calls runs in parallel */
	backlog = atomic_load(&w->qtail) - atomic_load(&w->qhead);
	while (backlog > (uint64_t)atomic_load(&w->idle) && spawn(w) == 0)
		;
}

/* Owner: collects what the workers finished; no system call. */
int xsc__worker_reap(struct xsc *x)
{
	struct xsc_workers *w = x->wk;
	int id, n = 0;

	if (!w || atomic_load_explicit(&w->cstack, memory_order_relaxed) < 0)
		return 0;
	id = atomic_exchange(&w->cstack, -1);
	while (id >= 0) {
		int next = atomic_load_explicit(&slot_of(x, id)->cnext,
						memory_order_relaxed);
		x->inflight_worker--;
		xsc__note_done(x, id);
		n++;
		id = next;
	}
	return n;
}

/* Owner: sleeps until a worker completes something (spinning first when
 * the workers run on another core).  Returns 0 or -EINTR. */
int xsc__worker_wait(struct xsc *x, uint32_t seen, int64_t timeout_ns)
{
	struct xsc_workers *w = x->wk;
	int64_t end = now_ns() + x->cfg.spin_ns;
	long ret = 0;

	while (atomic_load(&w->cstack) < 0 && atomic_load(&x->cseq) == seen &&
	       now_ns() < end)
		__builtin_ia32_pause();
	if (atomic_load(&w->cstack) >= 0 || atomic_load(&x->cseq) != seen)
		return 0;
	/* a backlog with every worker blocked: a blocked call must not stall
	 * the rest (FlexSC 3.5) */
	if (queued(w) && atomic_load(&w->idle) == 0)
		spawn(w);
	/* bounded, so a growing backlog is re-checked */
	if (timeout_ns < 0 || timeout_ns > 10 * 1000000)
		timeout_ns = 10 * 1000000;
	ret = xsc__futex_wait_kick(x, seen, timeout_ns);
	return ret == -EINTR ? -EINTR : 0;
}

int xsc__worker_cancel(struct xsc *x, int id)
{
	struct xsc_workers *w = x->wk;
	struct xsc_slot *s = slot_of(x, id);
	int tid;

	atomic_store(&s->canceled, 1);
	tid = atomic_load(&s->worker);
	if (tid && w->cancel_sig) {
		xsc__sys3(SYS_tgkill, getpid(), tid, XSC_CANCEL_SIGNAL);
		x->st.crossings++;
	}
	return tid && !w->cancel_sig ? -ENOTSUP : 0;
}
