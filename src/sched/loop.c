/*
 * loop.c - the scheduler: what each vcpu's kernel thread runs.
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
 */

#include "rq.h"

#include <errno.h>
#include <stdio.h>
#include <asm/prctl.h>
#include <linux/futex.h>
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

/* ---- the scheduler ---------------------------------------------------------- */

static void on_done(void *arg, int id, long ret, uint64_t tag);

static void after_switch(struct xsc_vcpu *v, struct xsc_fiber *f)
{
	if (!f->fs) {
		int *err = &errno;
		f->err = *err;
	}
	if (v->unlock_after) {
		spin_unlock(v->unlock_after);
		v->unlock_after = NULL;
	}
	/* Not f->state: once the lock above is released, another vcpu may
	 * already have readied a parked f, and pushing it again would run
	 * it twice. */
	if (v->dead) {
		xsc__reap_dead(v, v->dead);
		v->dead = NULL;
	} else if (v->yielded) {
		v->yielded = false;
		xsc__rq_push(v, f);
	}
}

/* A program's thread (f->fs, ext.h) runs with its own thread pointer,
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
 * extension's handler trampoline gives it that thread's TLS, or the
 * vcpu's.  So v->cur names the fiber only while its
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
	if (!f->home) {
		f->home = v;	/* it stays here from now on */
		/* a second fiber here: v is not alone any more, and the
		 * watchdog may have seen it so between the pop and now */
		if (atomic_fetch_add(&v->nhomed, 1) > 0)
			xsc__rt_busy(v);
	}
	if (f->fs) {
		/* a program's thread: its own signal mask, and its own TLS */
		if (xsc__ext->switch_in)
			xsc__ext->switch_in(v, f);
		tls_in(v, f);
	} else {
		errno = f->err;
	}
	f->state = F_RUNNING;
	v->switches++;
	v->calls_run = 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (atomic_load_explicit(&v->nhomed, memory_order_relaxed) > 1 && xsc__ext &&
	    xsc__ext->solo) {
		/* v runs one fiber, and others may be pushed meanwhile: a
		 * push that saw none running did not wake the watchdog
		 * (xsc__rt_alone); seq_cst with its look at v->cur */
		__atomic_store_n(&v->cur, f, __ATOMIC_SEQ_CST);
		xsc__rt_busy(v);
	} else {
		v->cur = f;	/* last before the switch: see tls_in */
	}
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	xsc__ctx_switch(&v->sched, &f->ctx);
	v->cur = NULL;	/* first after it */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (f->fs) {
		f->err = *xsc__errno_now();
		if (v->dead == f) {	/* see tls_in */
			xsc__tls_load(v->own_fs, v->own_sel, &v->tls_sys);
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
	if (atomic_load_explicit(&v->scan, memory_order_relaxed) ||
	    atomic_load_explicit(&xsc__rt.sandbox_gen, memory_order_acquire) !=
		    v->sandbox_gen ||
	    xsc__rt_creds_behind(v))
		return true;
	for (int k = 1; k < xsc__rt.n; k++) {
		struct xsc_vcpu *u = &xsc__rt.v[(v->id + k) % xsc__rt.n];
		if (atomic_load(&u->nq_len) > 0 && xsc__stealable(u))
			return true;
	}
	return false;
}

static void idle(struct xsc_vcpu *v)
{
	uint32_t seen = xsc__kick_seen(v->x);

	if (xsc__ext && xsc__ext->idle)
		xsc__ext->idle(v);	/* e.g. the mask a sleeping vcpu takes */
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
	xsc__rt_busy(v);
}

/* Whether another vcpu may want v's CPU: one pinned to the same CPU (any
 * one, unpinned) that is neither idle nor held in a whole wait, or has
 * fibers to run (kicked, not yet back from its sleep). */
static bool cpu_wanted(const struct xsc_vcpu *v)
{
	for (int i = 0; i < xsc__rt.n; i++) {
		struct xsc_vcpu *u = &xsc__rt.v[i];
		if (u != v && (!xsc__rt.cfg.pin || u->cpu == v->cpu) &&
		    ((!atomic_load(&u->idle) && !atomic_load(&u->held)) ||
		     atomic_load(&u->rq_len)))
			return true;
	}
	return false;
}

/* The program's sched_yield (preload.c) on vcpu v, none of whose other
 * fibers is ready.  Natively the kernel gives the CPU to another runnable
 * task, if any, and the thread runs again when the scheduler picks it.
 * Here the vcpu's kernel thread carries every fiber homed on it: a kernel
 * sched_yield put the vcpu behind every other task's slice (EEVDF moves
 * a yielding task's deadline on), and a fiber readied on it meanwhile, a
 * thread natively woken at once, waited for all of them.  tp_sigpost
 * beside `stress-ng --cpu 2`, two of its threads yielding in a loop,
 * took 90 s where natively it takes 0.4-1 s: each hand-off of a signal
 * waited about 6 ms (t_yield: a hand-off beside two threads that yield,
 * a median of 4 ms a round against 1 us).  So the vcpu keeps its CPU,
 * which the kernel still shares out by time with every other task (the
 * runtime's syscall threads and SQPOLL poller among them: a yield to
 * them as well changed nothing measured, tp_sigpost and tp_direct), but
 * for another vcpu on the same CPU with work (more vcpus than CPUs,
 * -t): a kernel yield, as between two threads natively.  Without it,
 * two threads that pass a turn with sched_yield on vcpus sharing a CPU
 * took 13.5 s for 2,000 turns, each waiting for a time slice. */
void xsc__rt_yield_cpu(struct xsc_vcpu *v)
{
	xsc_flush(v->x);
	if (cpu_wanted(v)) {
		v->yields[XSC_YIELD_KERNEL]++;
		xsc__sys0(SYS_sched_yield);
	} else {
		v->yields[XSC_YIELD_KEPT]++;
	}
	xsc_poll(v->x);
}

bool xsc__rt_alone(struct xsc_vcpu *v)
{
	if (atomic_load(&v->nhomed) <= 1)
		return !atomic_load(&v->nq_len);
	/* at most one fiber runs or is ready: a fiber readied between two
	 * of its calls, by the completion v reaped, is no second one
	 * (run(): v->cur seq_cst, then this look again) */
	return atomic_load(&v->rq_len) + (__atomic_load_n(&v->cur, __ATOMIC_SEQ_CST) != NULL) <= 1 &&
	       xsc__ext && xsc__ext->solo && xsc__ext->solo(v);
}

void xsc__rt_watch(void)
{
	if (atomic_load(&xsc__rt.wd_asleep) && atomic_exchange(&xsc__rt.wd_asleep, 0))
		xsc__sys6(SYS_futex, (long)&xsc__rt.wd_asleep, FUTEX_WAKE_PRIVATE, 1, 0, 0, 0);
}

/* A vcpu left idle or a whole wait, or got a fiber to run: a sleeping
 * watchdog is woken, unless the vcpu is alone (nothing to preempt).  A
 * server's thread alone on its vcpu woke it at each event, for a tick of
 * its own: redis-server answering 200 PINGs 20 ms apart made 1,653
 * system calls against 799 natively (tp_sparse); 1,816-1,839 where its
 * background threads waited on the same vcpu (`xsc run -t 1`).  seq_cst
 * with the watchdog's: it saw this vcpu busy and not alone, or we see it
 * asleep. */
void xsc__rt_busy(struct xsc_vcpu *v)
{
	if (atomic_load(&xsc__rt.wd_asleep) && !xsc__rt_alone(v))
		xsc__rt_watch();
}

/* Completions freed entries: fibers waiting for one may retry. */
static void release_ewait(struct xsc_vcpu *v)
{
	struct xsc_fiber *f;

	while (v->ewait.head && v->x->nfree &&
	       (f = xsc__wq_pop(&v->ewait)) != NULL)
		xsc__resume(f, 0);
}

void xsc__vcpu_loop(struct xsc_vcpu *v)
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
		if (__builtin_expect(atomic_load_explicit(&v->scan, memory_order_relaxed), 0) &&
		    atomic_exchange(&v->scan, 0) && xsc__ext->scan)
			xsc__ext->scan(v);	/* e.g. signals interrupt calls */
		struct xsc_fiber *f = xsc__rq_pop(v);

		if (!f) {
			xsc_flush(v->x);	/* nothing runnable: hand the batch over */
			xsc_poll(v->x);
			release_ewait(v);
			f = xsc__rq_pop(v);
		}
		if (!f)
			f = xsc__steal(v);
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

int xsc__vcpu_init(struct xsc_vcpu *v)
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
	/* a wait made whole beside calls in flight needs the kernel to say
	 * when one completes: a DEFER_TASKRUN ring signals the watcher's
	 * eventfd as the work is queued, where COOP_TASKRUN posts the
	 * completion only when this thread next leaves the kernel, after
	 * the wait (ringwatch.c) */
	if (xsc__ringwatch_wanted())
		cfg.flags |= XSC_DEFER_TASKRUN;
	ret = xsc_open(&v->x, &cfg);
	if (ret < 0)
		return ret;
	xsc__handle_shared(v->x);	/* fibers have TLS of their own */
	xsc__ringwatch_add(v);
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
	if (__builtin_expect(ret == -EPIPE, 0) && !xsc__ext_has(XSC_EXT_OWN_SIGPIPE))
		f->sigpipe = xsc__sigpipe_lost(((struct xsc_vcpu *)arg)->x, id, ret);
	f->call_id = 0;		/* no longer an entry to cancel */
	xsc__resume(f, ret);	/* kept if the fiber reaped its own call */
}

void *xsc__vcpu_thread(void *arg)
{
	struct xsc_vcpu *v = arg;
	int ret = xsc__vcpu_init(v);

	if (ret == 0 && xsc__ext && xsc__ext->vcpu_start)
		xsc__ext->vcpu_start(v);
	atomic_store(&v->inited, ret < 0 ? ret : 1);
	if (ret < 0) {
		xsc__own_thread_end();
		return NULL;
	}
	xsc__vcpu_loop(v);
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
