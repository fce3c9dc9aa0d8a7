/*
 * worker.c - the syscall-thread executor (FlexSC 3.5 on a stock kernel).
 *
 * Syscall threads of this process, optionally pinned to a syscall core,
 * run any syscall number from the pages.  They share the caller's memory,
 * files and credentials but not its per-thread state, so the table's
 * thread-bound calls (table.h) are routed inline and refused here.  In
 * transparent mode a worker is a raw clone that never takes a libc lock
 * (xsc__raw_workers).
 *
 * Hand-off: a bounded queue of entry ids, the owner its only producer;
 * workers spin cfg.spin_ns, then sleep on qseq.  Completion: ret, then
 * status DONE (release), then a push on a lock-free stack the owner pops
 * whole.  The pool grows while work waits and no worker is idle, up to
 * cfg.max_workers.  Cancel is exact: the canceller signals a thread only
 * after claiming its run word, and every call goes through
 * xsc__syscall_cp (cancel.S).  Why each piece and the memory ordering:
 * docs/design.md, "Syscall threads" and "Memory-ordering contract".
 */
#include "worker.h"
#include "cancel.h"
#include "creds.h"
#include "done.h"
#include "exec.h"
#include "ownthreads.h"
#include "rawio.h"

#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/ucontext.h>
#include <time.h>
#include <unistd.h>

#include "rawsys.h"

#define MAX_WORKERS 256
#define XSC_CANCEL_SIGNAL (SIGRTMAX - 1)
#define RAW_STACK (64 * 1024)
#define RAW_TLS (16 * 1024)	/* below the guard page; the TCB at its top */
#define RAW_MAP (RAW_TLS + 4096 + RAW_STACK)

/* The run word (see "Cancel" above): RUN(id) while a thread runs entry
 * id, plus the canceller's bits. */
#define RUN(id)	(((uint32_t)(id) + 1) << 2)
#define R_CLAIM	1u	/* a canceller signals this run */
#define R_SENT	2u	/* ... and the signal is queued */
#define R_BITS	(R_CLAIM | R_SENT)

bool xsc__raw_workers;

long xsc__clone_thread(unsigned long flags, void *stack_top, int *ptid,
		       int *ctid, unsigned long tls, void (*fn)(void *),
		       void *arg);

/* One syscall thread: a pthread, or a raw clone (w->raw). */
struct wthread {
	union {
		pthread_t th;
		struct {
			char *map;	/* [tls][guard][stack], RAW_MAP bytes */
			_Atomic int ctid; /* cleared by the kernel when gone */
		} raw;
	};
	struct xsc_workers *w;
	int k;			/* index in w->t; slot.worker is k + 1 */
	int tid;		/* stored by the thread before its first run */
	unsigned creds;		/* credential changes taken (creds.c) */
	unsigned own;		/* ... and of its owner's own (creds.c) */
	_Atomic uint32_t run;	/* RUN(id) | R_*, or 0; leave()'s futex */
} __attribute__((aligned(64)));	/* the owner CASes run: no sharing */

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
	bool cancel_sig;	/* XSC_CANCEL_SIGNAL is ours */
	int pid;		/* for tgkill */
	struct wthread t[MAX_WORKERS];
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

/* Entry e (slot s) on this thread: the call, or -ECANCELED if the entry
 * is canceled before the call starts (the stub tests the flag). */
static long exec(const struct xsc_entry *e, struct xsc_slot *s)
{
	const struct xsc_sysdef *d = xsc__sysdef(e->sysno);

	bool bound = xsc__bound(d, e->args);

	if (!bound && !d->refuse &&
	    e->sysno != XSC_NR_NOP && e->sysno != XSC_NR_MC)
		return xsc__syscall_cp(&s->canceled, e->sysno, e->args);
	if (atomic_load(&s->canceled))
		return -ECANCELED;
	if (bound)
		return -EINVAL;	/* its meaning depends on the calling thread */
	return xsc__exec_sync(e);	/* a chain, NOP or refused number */
}

/* The thread is done with run `me`.  If a canceller claimed it, the
 * signal must land before the thread takes another entry: wait until it
 * is queued (R_SENT), then make one system call, whose return to user
 * space runs the handler for it.  A canceller may claim the run again
 * meanwhile (xsc_close repeats its cancels): the CAS then fails, and the
 * loop waits for that signal too. */
static void leave(struct wthread *t, uint32_t me)
{
	uint32_t v = me;

	/* seq_cst CAS: pairs with the canceller's CAS and fetch_or */
	while (!atomic_compare_exchange_strong(&t->run, &v, 0)) {
		if (v & R_SENT)
			xsc__sys0(SYS_getppid);	/* delivers what is pending */
		else
			futex(&t->run, FUTEX_WAIT, v);	/* until R_SENT */
	}
}

static void run(struct wthread *t, int id)
{
	struct xsc *x = t->w->x;
	struct xsc_entry *e = &x->ent[id];
	struct xsc_slot *s = slot_of(x, id);
	uint32_t me = RUN(id);
	long ret;

	atomic_fetch_sub(&t->w->idle, 1);	/* busy until its result is out */
	/* Both seq_cst, in this order: a canceller that finds the thread in
	 * the slot finds the run in t->run unless the run is over.  The
	 * second store is this side of the Dekker handshake with
	 * xsc__worker_cancel(): a seq_cst store is a full barrier on x86-64,
	 * so the stub's test of `canceled` cannot pass it. */
	atomic_store(&s->worker, t->k + 1);
	atomic_store(&t->run, me);
	ret = exec(e, s);
	leave(t, me);
	/* a canceller that still reads k + 1 finds no RUN(id) on thread k */
	atomic_store_explicit(&s->worker, 0, memory_order_relaxed);
	e->ret = ret;
	/* idle again before the owner can see the result: its next call,
	 * made at once, finds this thread free rather than spawning another
	 * (t_spin's one worker was two once, in a loaded make test) */
	atomic_fetch_add(&t->w->idle, 1);
	st_set(e, XSC_DONE);	/* pairs with st_get() in the owner */

	struct xsc_workers *w = t->w;
	int top = atomic_load(&w->cstack);
	do
		atomic_store_explicit(&s->cnext, top, memory_order_relaxed);
	while (!atomic_compare_exchange_weak(&w->cstack, &top, id));
	xsc__kick(x);	/* the owner may sleep on x->cseq */
}

/* XSC_CANCEL_SIGNAL.  It lands only inside the run it was sent for
 * (leave() waits for it), so a signal whose rip is in the stub's window
 * is for the call about to start: moved to the stub's cancel path, the
 * call is never made.  rbx holds the entry's `canceled` there; testing it
 * keeps a stray XSC_CANCEL_SIGNAL (kill(1) of the process) from
 * canceling anything. */
static void on_cancel(int sig, siginfo_t *si, void *uctx)
{
	(void)sig;
	(void)si;
	(void)xsc__cp_stopped(uctx);
}

static void loop(struct wthread *t)
{
	struct xsc_workers *w = t->w;

	/* read by a canceller only after it has seen a run of ours */
	t->tid = (int)xsc__sys0(SYS_gettid);
	while (!atomic_load(&w->stop)) {
		int id = pop(w);
		if (id >= 0) {
			/* the owner took a process-wide credential change
			 * before it queued this */
			if (__builtin_expect(t->creds != atomic_load(&w->x->creds_gen), 0))
				xsc__creds_apply(&t->creds);
			/* ... or a raw change of its own (a vcpu's) */
			if (__builtin_expect(t->own != atomic_load(&w->x->own_gen), 0))
				xsc__creds_own_apply(w->x, &t->own);
			run(t, id);
			continue;
		}
		int64_t end = xsc__now() + w->x->cfg.spin_ns;
		while (!queued(w) && !atomic_load(&w->stop) && xsc__now() < end)
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
	struct wthread *t = arg;
	struct xsc_workers *w = t->w;
	sigset_t set;

	sigfillset(&set);
	if (w->cancel_sig)
		sigdelset(&set, XSC_CANCEL_SIGNAL);
	pthread_sigmask(SIG_SETMASK, &set, NULL);	/* keeps glibc's own */
	loop(t);
	xsc__own_thread_end();
	return NULL;
}

static void raw_main(void *arg)
{
	struct wthread *t = arg;
	struct xsc_workers *w = t->w;
	uint64_t mask = ~0ULL;

	if (w->cancel_sig)
		mask &= ~(1ULL << (XSC_CANCEL_SIGNAL - 1));
	xsc__sys4(SYS_rt_sigprocmask, SIG_SETMASK, &mask, 0, sizeof(mask));
	if (w->x->cfg.syscall_cpu >= 0 && w->x->cfg.syscall_cpu < 1024) {
		uint64_t cpus[16] = { 0 };
		cpus[w->x->cfg.syscall_cpu / 64] = 1ULL << (w->x->cfg.syscall_cpu % 64);
		xsc__sys3(SYS_sched_setaffinity, 0, sizeof(cpus), cpus);
	}
	loop(t);
}

/* A raw clone: [16 KiB TLS | guard page | 64 KiB stack].  The thread
 * pointer sits near the TLS area's top, holding a copy of the caller's
 * thread control block (glibc's tcbhead_t: self pointers, stack guard,
 * pointer guard) with the self pointers redirected, so stack-protector
 * checks read the canary; the area below it catches a stray errno store
 * instead of letting it hit another thread's TLS. */
static int raw_spawn(struct wthread *t)
{
	long m = xsc__sys6(SYS_mmap, 0, RAW_MAP, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	unsigned long *tcb, *cur;
	uint64_t all = ~0ULL, old;
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
	/* A thread starts with its creator's signal mask, which here may be
	 * a fiber's: a process signal that landed before raw_main blocks
	 * them ran the program's handler on this thread, outside the
	 * runtime (under xsc run its sem_post's futex wake went to the
	 * kernel and the waiting fiber slept for good: tp_sigpost, about
	 * one run in 50 under load).  Blocked from birth instead. */
	xsc__sys4(SYS_rt_sigprocmask, SIG_SETMASK, (long)&all, (long)&old, 8);
	ret = xsc__clone_thread(CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND |
				CLONE_THREAD | CLONE_SYSVSEM | CLONE_SETTLS |
				CLONE_CHILD_CLEARTID,
				t->raw.map + RAW_MAP, NULL, (int *)&t->raw.ctid,
				(unsigned long)tcb, raw_main, t);
	xsc__sys4(SYS_rt_sigprocmask, SIG_SETMASK, (long)&old, 0, 8);
	if (ret < 0) {
		xsc__sys2(SYS_munmap, t->raw.map, RAW_MAP);
		t->raw.map = NULL;
		return (int)ret;
	}
	return 0;
}

/* Waits until the kernel has let go of t's stack, then unmaps it. */
static void raw_join(struct wthread *t)
{
	int c;

	while ((c = atomic_load(&t->raw.ctid)) != 0)
		xsc__sys6(SYS_futex, (long)&t->raw.ctid, FUTEX_WAIT, c, 0, 0, 0);
	xsc__sys2(SYS_munmap, t->raw.map, RAW_MAP);
	t->raw.map = NULL;
}

static int pthread_spawn(struct wthread *t)
{
	struct xsc_workers *w = t->w;
	pthread_attr_t attr;
	int ret;

	/* every signal blocked from birth, as in raw_spawn */
	xsc__attr_blocked(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	if (w->x->cfg.syscall_cpu >= 0) {
		cpu_set_t cpus;
		CPU_ZERO(&cpus);
		CPU_SET(w->x->cfg.syscall_cpu, &cpus);
		pthread_attr_setaffinity_np(&attr, sizeof(cpus), &cpus);
	}
	ret = -pthread_create(&t->th, &attr, pthread_main, t);
	pthread_attr_destroy(&attr);
	if (ret == 0)
		xsc__own_thread_start();	/* not a thread of the program's */
	return ret;
}

static int spawn(struct xsc_workers *w)
{
	struct xsc *x = w->x;
	struct wthread *t;
	int ret;

	if (w->nthreads >= (int)x->cfg.max_workers || w->nthreads >= MAX_WORKERS) {
		if (x->st.worker_cap_hits++ == 0 && !(x->cfg.flags & XSC_QUIET))
			xsc__say("xsc: worker pool at its bound (%d threads); "
				 "further blocking calls wait for a free one\n",
				 w->nthreads);
		return -EAGAIN;
	}
	t = &w->t[w->nthreads];
	t->w = w;
	t->creds = atomic_load(&w->x->creds_gen);	/* what it inherits */
	t->own = atomic_load(&w->x->own_gen);
	t->k = w->nthreads;
	atomic_fetch_add(&w->idle, 1);	/* before it can take work */
	ret = w->raw ? raw_spawn(t) : pthread_spawn(t);
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
	    old.sa_handler != SIG_DFL && old.sa_sigaction != on_cancel)
		return;	/* the program uses it: no signal-based cancel */
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_cancel;
	/* the interrupted context; no SA_RESTART: interrupt the call */
	sa.sa_flags = SA_SIGINFO;
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
	w->pid = (int)xsc__sys0(SYS_getpid);
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

void xsc__workers_forget(struct xsc *x)
{
	struct xsc_workers *w = x->wk;

	if (!w)
		return;
	for (int i = 0; i < w->nthreads; i++)
		if (w->raw && w->t[i].raw.map)
			xsc__sys2(SYS_munmap, w->t[i].raw.map, RAW_MAP);
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
	/* one sleeper per call not taken yet, not all of them: with 30
	 * sleepers and one call, the 29 others woke, found nothing and slept
	 * again (a server of 1,000 threads in accept made 130 futex calls
	 * per connection).  A woken thread takes calls until the queue is
	 * empty; one that was about to sleep sees qseq move and looks again */
	backlog = atomic_load(&w->qtail) - atomic_load(&w->qhead);
	if (backlog && atomic_load(&w->sleepers) > 0) {
		futex(&w->qseq, FUTEX_WAKE, backlog > INT_MAX ? INT_MAX : (uint32_t)backlog);
		x->st.crossings++;
	}
	/* one thread per queued call that no idle thread can take, up to
	 * the bound: a batch of blocking calls runs in parallel */
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
	int64_t end = xsc__now() + x->cfg.spin_ns;
	long ret = 0;

	while (atomic_load(&w->cstack) < 0 && atomic_load(&x->cseq) == seen &&
	       xsc__now() < end)
		__builtin_ia32_pause();
	if (atomic_load(&w->cstack) >= 0 || atomic_load(&x->cseq) != seen)
		return 0;
	/* a backlog with every worker blocked: a blocked call must not stall
	 * the rest (FlexSC 3.5) */
	if (queued(w) && atomic_load(&w->idle) == 0)
		spawn(w);
	/* bounded while calls wait for a worker, so a backlog behind
	 * blocked workers is re-checked; none waiting, none can come while
	 * the owner, who alone queues them, sleeps here (an idle vcpu woke
	 * every 10 ms, tp_idle) */
	if (queued(w) && (timeout_ns < 0 || timeout_ns > 10 * 1000000))
		timeout_ns = 10 * 1000000;
	ret = xsc__futex_wait_kick(x, seen, timeout_ns);
	return ret == -EINTR ? -EINTR : 0;
}

/* Owner.  See "Cancel" at the top of this file. */
int xsc__worker_cancel(struct xsc *x, int id)
{
	struct xsc_workers *w = x->wk;
	struct xsc_slot *s = slot_of(x, id);
	uint32_t me = RUN(id), v;
	struct wthread *t;
	long r;
	int k;

	/* seq_cst, before the loads: the canceller's side of the Dekker
	 * handshake with run() (its store of t->run, then the stub's test) */
	atomic_store(&s->canceled, 1);
	k = atomic_load(&s->worker) - 1;
	if (k < 0)
		return 0;	/* not started (the stub will see the flag) or over */
	t = &w->t[k];
	v = atomic_load(&t->run);
	if ((v & ~R_BITS) != me)
		return 0;	/* not started on k yet (ditto) or over */
	if (!w->cancel_sig)
		return -ENOTSUP;
	/* Claim the run (again, if an earlier signal was sent: xsc_close
	 * repeats itself).  Fails only if the thread has left the entry; from
	 * here on it does not leave before our signal has landed. */
	if (!atomic_compare_exchange_strong(&t->run, &v, me | R_CLAIM))
		return 0;
	r = xsc__sys3(SYS_tgkill, w->pid, t->tid, XSC_CANCEL_SIGNAL);
	/* queued (or refused: then nothing is pending, and the thread's
	 * delivering call in leave() finds nothing) */
	atomic_fetch_or(&t->run, R_SENT);	/* pairs with leave()'s CAS */
	futex(&t->run, FUTEX_WAKE, 1);	/* leave() may sleep on it */
	x->st.crossings += 2;
	return r < 0 ? (int)r : 0;
}
