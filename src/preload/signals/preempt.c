/*
 * preempt.c - transparent mode: the watchdog thread (xsc-watchdog).
 * Each tick it preempts a fiber that ran program code for a whole tick
 * without a call (SIGURG with a cookie, switched out from inside the
 * handler: tp_preempt), asks one that calls without switching to yield,
 * and hands over process signals every vcpu's fiber blocks (handover.c);
 * while every vcpu is idle, or its only fiber waits in the kernel or
 * runs, it sleeps.
 *
 * Rules: only program code is preempted: not the runtime, a handler or
 * a vfork child; a SIGURG without the cookie is the program's own.
 */
#include "signals.h"
#include "cancel.h"

/* A fiber that runs program code without a system call never gives its
 * vcpu back: a spin-wait for another fiber (InnoDB's group commit waits so
 * for an I/O completion another thread handles) then spins for good on one
 * vcpu, where the kernel would have preempted the thread.  A watchdog
 * thread looks at every vcpu each tick (XSC_PREEMPT_MS, default 10; 0:
 * off); one that has run the same fiber in program code for a whole tick
 * gets SIGURG, queued with a cookie (rt_tgsigqueueinfo), and its handler
 * (tp_preempt) switches the fiber out from inside the signal frame: the
 * fiber goes to the back of its vcpu's queue and, when it runs again,
 * returns from the handler to where it was.  SIGURG, whose default action
 * is to ignore it, goes to the program's own handler when it is not ours.
 * A fiber that makes system calls without ever switching (a thread
 * polling with getppid, clock reads the vDSO cannot do, non-blocking
 * reads: all run inline) is in the runtime, not in program code, most of
 * the time the watchdog looks: it is told to yield at its next call
 * instead (want_yield, dispatch), or it starved the others on its vcpu
 * for good (a thread that waits for it to finish never ran again). */
bool tp_preempt(struct xsc_vcpu *v, siginfo_t *si, ucontext_t *uc)
{
	uintptr_t ip = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
	struct xsc_fiber *f = v->cur;

	if (si->si_code == SI_QUEUE && si->si_value.sival_int == tp.here_cookie) {
		(void)xsc__cp_stopped_wait(uc);	/* interrupt.c tp_interrupt */
		return true;
	}
	/* a stop's SIGURG merges with one already pending (a standard
	 * signal): whichever comes looks at the stop's flag */
	(void)xsc__cp_stopped_wait(uc);
	if (si->si_code != SI_QUEUE || si->si_value.sival_int != tp.preempt_cookie)
		return false;	/* the program's own SIGURG */
	/* only program code: not the runtime's (it runs with ALLOW), not a
	 * handler, not a vfork child borrowing the vcpu */
	if (!f || !f->fs || TP(v)->sel != TP_SEL_BLOCK || TP(v)->in_handler ||
	    TP(v)->vfork || (ip >= tp.text_lo && ip < tp.text_hi))
		return true;
	atomic_fetch_add_explicit(&tp.npreempt, 1, memory_order_relaxed);
	TP(v)->sel = TP_SEL_ALLOW;
	/* the kernel mask is the handler's until sigreturn: the next fiber
	 * must get its own (run() compares against this) */
	TP(v)->sigmask = ~0ULL;
	xsc_yield();
	v = xsc__vcpu();	/* its home vcpu: the same */
	/* sigreturn restores the mask the fiber had when interrupted */
	xsc__sys4(SYS_rt_sigprocmask, SIG_SETMASK, &uc->uc_sigmask, 0, 8);
	TP(v)->sigmask = *(uint64_t *)&uc->uc_sigmask;
	/* what was sent or handed to it meanwhile, before its code goes on
	 * (handover.c, hand_running_locked) */
	if (f->sig_pending & ~f->sigmask)
		xsc__tp_deliver(f);
	TP(v)->sel = TP_SEL_BLOCK;
	return true;
}

/* Every vcpu idle, in a whole wait, or alone (its only fiber runs, no
 * new one waits for it; or one fiber runs or is ready and the others
 * wait on locks, and its mask takes every signal another thread takes:
 * xsc__rt_alone): nothing to preempt, no fiber starved, and a
 * process signal reaches a sleeping vcpu, whose mask takes what any
 * thread takes (tp_idlemask), or a waiting or running fiber's thread,
 * whose mask is the fiber's own, as natively.  The watchdog then waits
 * until a vcpu leaves idle or its wait not alone, or gets a second fiber
 * (xsc__rt_busy wakes it), or 1 s: an idle server woke it 100 times a
 * second (tp_idle, tp_sole), and a server's thread alone on its vcpu
 * once at each event (tp_sparse).  True if it slept. */
static bool quiet(void)
{
	for (int i = 0; i < xsc__rt.n; i++) {
		struct xsc_vcpu *v = &xsc__rt.v[i];
		if (!atomic_load(&v->idle) && !atomic_load(&v->held) && !xsc__rt_alone(v))
			return false;
	}
	return true;
}

static bool sleep_while_idle(void)
{
	static const struct timespec most = { 1, 0 };

	if (!quiet())
		return false;
	atomic_store(&xsc__rt.wd_asleep, 1);
	/* seq_cst with xsc__rt_busy's: it sees us asleep, or we see it busy */
	if (!quiet()) {
		atomic_store(&xsc__rt.wd_asleep, 0);
		return false;
	}
	xsc__sys6(SYS_futex, (long)&xsc__rt.wd_asleep, FUTEX_WAIT_PRIVATE, 1,
		  (long)&most, 0, 0);
	atomic_store(&xsc__rt.wd_asleep, 0);
	return true;
}

static void *watchdog(void *arg)
{
	struct { uint64_t switches; struct xsc_fiber *cur; } seen[256] = { { 0, NULL } };
	struct timespec tick = { tp.preempt_ns / 1000000000L, tp.preempt_ns % 1000000000L };
	long pid = xsc__sys0(SYS_getpid);

	(void)arg;
	/* named, for top -H and ps -L (and tp_idle) */
	xsc__sys2(SYS_prctl, PR_SET_NAME, (long)"xsc-watchdog");
	atomic_store(&tp.wd_tid, (int)xsc__sys0(SYS_gettid));
	for (;;) {
		xsc__sys4(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &tick, 0);
		for (int i = 0; i < xsc__rt.n && i < 256; i++) {
			struct xsc_vcpu *v = &xsc__rt.v[i];
			uint64_t sw = __atomic_load_n(&v->switches, __ATOMIC_RELAXED);
			struct xsc_fiber *cur = __atomic_load_n(&v->cur, __ATOMIC_RELAXED);
			bool stuck = cur && sw == seen[i].switches && cur == seen[i].cur &&
				     !atomic_load(&v->idle);
			if (stuck)
				atomic_store(&TP(v)->want_yield, 1);
			if (stuck && TP(v)->sel == TP_SEL_BLOCK) {
				siginfo_t si;
				memset(&si, 0, sizeof(si));
				si.si_signo = PREEMPT_SIG;
				si.si_code = SI_QUEUE;
				si.si_pid = (pid_t)pid;
				si.si_value.sival_int = tp.preempt_cookie;
				xsc__sys4(SYS_rt_tgsigqueueinfo, pid, TP(v)->ktid, PREEMPT_SIG, &si);
			}
			seen[i].switches = sw;
			seen[i].cur = cur;
		}
		tp_hand_pending();
		if (sleep_while_idle())	/* a tick's look spans the sleep no more */
			memset(seen, 0, sizeof(seen));
	}
	return NULL;
}

/* Starts the watchdog (also in a forked child: threads are not inherited). */
void tp_watch(void)
{
	atomic_store(&tp.wd_tid, 0);
	if (tp.preempt_ns <= 0)
		return;
	/* it runs for good (xsc__own_thread_end never due) */
	if (xsc__own_thread_spawn(&tp.wd_th, 65536, watchdog, NULL, &tp.wd_tid) != 0)
		xsc__say("xsc run: no preemption thread: a fiber that spins without "
			 "system calls keeps its vcpu\n");
}
