/*
 * handlers.c - transparent mode: the trampoline every handler the
 * program installs runs through (tp_sig_tramp), and handlers deferred
 * out of the runtime's locks.  The trampoline passes a signal on to the
 * thread it belongs to where it can (handover.c), preempts (preempt.c),
 * and runs the rest with the thread's TLS and the selector at BLOCK.
 *
 * Rules: a handler's calls trap and never switch fibers; a handler never
 * runs while its kernel thread holds a runtime spinlock, unless the
 * signal is a fault of the instruction itself.
 */
#include "signals.h"
#include "cancel.h"

/* ---- handlers deferred out of the runtime's locks ------------------------------- */

/* A signal that lands while this kernel thread holds a runtime spinlock
 * (nlocks, runtime.c) would run the program's handler inside the
 * runtime's critical section; a handler that calls into the runtime
 * (sem_post: a futex wake readies a fiber under the run queue's lock)
 * then waits for a lock its own thread holds, for good (tp_sigpost).
 * Natively the handler runs when the system call returns; here it runs
 * when the last lock is released (tp_run_deferred), with the signal's
 * own siginfo.  Until then the kernel thread blocks the signal, so that
 * another instance stays pending in the kernel (queued, if real-time)
 * or goes to a thread that accepts it.  Not deferred: a fault the
 * kernel raises for the instruction itself (it would fault again). */
static bool fault(int sig, const siginfo_t *si)
{
	switch (sig) {
	case SIGSEGV: case SIGBUS: case SIGILL: case SIGFPE: case SIGTRAP:
	case SIGSYS:
		return si->si_code > 0;
	default:
		return false;
	}
}

static void defer(struct xsc_vcpu *v, int sig, const siginfo_t *si, ucontext_t *uc)
{
	atomic_fetch_add_explicit(&tp.ndeferred, 1, memory_order_relaxed);
	if (!(v->deferred & SIGBIT(sig)))
		TP(v)->dsi[sig - 1] = *si;
	v->deferred |= SIGBIT(sig);
	/* blocked from the handler's sigreturn on; TP(v)->sigmask follows, so
	 * that the next fiber's mask is set in full (run(), runtime.c) */
	*(uint64_t *)&uc->uc_sigmask |= SIGBIT(sig);
	TP(v)->sigmask = ~0ULL;
}

/* From xsc__spin_unlock at nlocks 0: each deferred handler runs now, as
 * the kernel would have run it, with the handler's mask added for its
 * duration and the mask before it put back after, without defer's
 * block. */
void tp_run_deferred(struct xsc_vcpu *v)
{
	uint64_t bits;

	while ((bits = v->deferred) != 0) {
		int sig = __builtin_ctzll(bits) + 1;
		struct kact *k = &tp.act[sig];
		siginfo_t si = TP(v)->dsi[sig - 1];
		uint64_t cur, hm;
		ucontext_t uc;

		v->deferred &= ~SIGBIT(sig);
		if (xsc__sys4(SYS_rt_sigprocmask, SIG_BLOCK, 0, (long)&cur, 8) < 0)
			continue;
		/* defer's block is still there unless a mask was set since
		 * (a fiber switched in: its own mask, in full) */
		if (TP(v)->sigmask == ~0ULL)
			cur &= ~SIGBIT(sig);
		memset(&uc, 0, sizeof(uc));
		*(uint64_t *)&uc.uc_sigmask = cur;
		uc.uc_stack.ss_flags = SS_DISABLE;
		hm = cur | k->mask;
		if (!(k->flags & SA_NODEFER))
			hm |= SIGBIT(sig);
		hm &= ~TP_NEVER_BLOCKED;
		xsc__sys4(SYS_rt_sigprocmask, SIG_SETMASK, (long)&hm, 0, 8);
		tp_sig_tramp(sig, &si, &uc);
		cur = *(uint64_t *)&uc.uc_sigmask & ~TP_NEVER_BLOCKED;
		xsc__sys4(SYS_rt_sigprocmask, SIG_SETMASK, (long)&cur, 0, 8);
		TP(v)->sigmask = cur;
	}
}

/* ---- the trampoline ------------------------------------------------------------ */

/* The thread pointer a handler runs with: that of the thread it runs on,
 * v->cur's, or the vcpu's own between fibers, whatever the kernel thread
 * had loaded when the signal came.  The two differ around each switch
 * (runtime.c, tls_in), and where a load is an arch_prctl the kernel
 * delivers signals at its return, inside that window.  Returns the
 * pointer to load again after the handler, 0 if it was the right one
 * already.  Not while tp_setxid() runs a handler as another thread: it
 * blocks every signal but faults. */
static uint64_t handler_tls(struct xsc_vcpu *v, uint16_t *was_sel)
{
	struct xsc_fiber *c = v->cur;
	uint64_t want = c ? c->fs : v->own_fs, was = rdfsbase();

	if (!want || was == want || TP(v)->setxid)
		return 0;
	__asm__ __volatile__("mov %%fs, %0" : "=r"(*was_sel));
	set_fs(want, c ? c->fs_sel : v->own_sel);
	return was;
}

/* A process signal a vcpu took between fibers that no living thread of
 * the program takes now: the vcpu's mask was a thread's that blocked it
 * since, or exited (the idle vcpus take the new mask when they are
 * kicked).  Natively it stays pending for the process until a thread
 * unblocks it.  Its handler ran here, on no thread, with the vcpu's TLS
 * (tp_sigtls: 1 handler of about 350, in one make test run and in one
 * run beside stress-ng, as the workers exited while the sender's last
 * kill was on its way, 2026-11-29).  So it is sent to
 * the process again, with the same siginfo, and blocked on this kernel
 * thread until the next fiber or idle wait sets its mask in full: a kill
 * from this process (the same si_code, pid and uid), or a sigqueue (si_code
 * < 0: rt_sigqueueinfo takes it).  Others (the kernel's own, another
 * process's kill) still run here; uc: the frame the kernel will restore. */
static bool repend(struct xsc_vcpu *v, int sig, const siginfo_t *si, void *uc)
{
	long pid = xsc__sys0(SYS_getpid), r;

	if (si->si_code == SI_USER && si->si_pid == (pid_t)pid &&
	    si->si_uid == (uid_t)xsc__sys0(SYS_getuid))
		r = xsc__sys2(SYS_kill, pid, sig);
	else if (si->si_code < 0 && si->si_code != SI_TKILL)
		r = xsc__sys3(SYS_rt_sigqueueinfo, pid, sig, (long)si);
	else
		return false;
	if (r < 0)
		return false;
	*(uint64_t *)&((ucontext_t *)uc)->uc_sigmask |= SIGBIT(sig);
	TP(v)->sigmask = ~0ULL;	/* the next fiber's mask is set in full */
	return true;
}

/* Whether signal sig (handler h) is not to run here, on vcpu v: the
 * caller's own SIGPIPE, or a process signal passed on to the thread the
 * kernel would have given it to (handover.c), or left pending for the
 * process (repend). */
static bool passed_on(struct xsc_vcpu *v, int sig, const siginfo_t *si, void *h,
		      void *uc)
{
	/* the kernel's SIGPIPE for a write a runtime thread ran (send_sig:
	 * SI_USER from this process): the caller raises its own (preload.c
	 * dispatch), on the right thread; this copy would run the handler
	 * on whichever fiber the vcpu runs and interrupt its call.  Not in
	 * a handler of the program's: its calls run directly, on this
	 * thread, and the signal is theirs */
	if (sig == SIGPIPE && !TP(v)->in_handler && si->si_code == SI_USER &&
	    si->si_pid == (pid_t)xsc__sys0(SYS_getpid))
		return true;
	if (h == SIG_DFL || h == SIG_IGN || sig == PREEMPT_SIG)
		return false;
	if (!v->cur && tp_hand_to_waiter(sig))
		return true;
	if (sig == SIGSETXID || si->si_code == tp.tkill_code || fault(sig, si))
		return false;
	if (v->cur)
		return sig != SIGPIPE && sig != SIGXFSZ &&	/* the caller's */
		       tp_hand_to_main(sig, si, v->cur);
	switch (tp_hand_to_thread(sig, si)) {
	case 1:
		return true;
	case 0:
		if (repend(v, sig, si, uc))
			return true;
		/* fall through */
	default:
		atomic_fetch_add_explicit(&tp.nunhanded, 1, memory_order_relaxed);
		return false;
	}
}

/* A handler begins on vcpu v: its calls trap (in_handler()) unless a
 * vfork child borrows the vcpu, and its frame is recorded for a jump out
 * of it (sp: the trampoline's frame; longjmp.c).  *sel: the selector to
 * go back to; returns the depth to go back to. */
static int enter(struct xsc_vcpu *v, uintptr_t sp, const ucontext_t *uc,
		 unsigned char *sel)
{
	int depth;

	*sel = TP(v)->sel;
	if (!TP(v)->vfork)	/* a vfork child's calls stay direct */
		TP(v)->sel = TP_SEL_BLOCK;
	depth = TP(v)->in_handler++;
	if (depth < TP_HFRAMES)
		tp_hframe_push(&TP(v)->hf[depth], sp, *sel, uc);
	if (v->cur)
		v->cur->nsig++;
	return depth;
}

/* A process signal taken by a vcpu between fibers: natively it would
 * have interrupted a thread's call (tp_scan picks one). */
static void stray(struct xsc_vcpu *v, int sig)
{
	atomic_fetch_or_explicit(&tp.stray, SIGBIT(sig), memory_order_relaxed);
	atomic_store(&v->scan, 1);
	if (v->x)	/* taken as it went idle: do not sleep now */
		xsc__kick(v->x);
}

/* Calls the program's handler h, with the thread pointer of the thread
 * it runs on (handler_tls; v NULL: off the runtime's vcpus). */
static void call_handler(struct xsc_vcpu *v, void *h, unsigned long flags,
			 int sig, siginfo_t *si, void *uc)
{
	uint16_t was_sel = 0;
	uint64_t was = v ? handler_tls(v, &was_sel) : 0;

	if (flags & SA_SIGINFO)
		((void (*)(int, siginfo_t *, void *))h)(sig, si, uc);
	else
		((void (*)(int))h)(sig);
	if (was)	/* as the interrupted code had it */
		set_fs(was, was_sel);
}

/* glibc's cancellation signal for a fiber: pthread_cancel sends it while
 * the thread has asynchronous cancellation on (glibc's cancellable calls,
 * and the interposed ones: wrap.c), and the fiber raises it when its
 * call is interrupted.  Its handler either returns at once or unwinds
 * the thread out of its call into its cleanup handlers and its exit, and
 * never comes back here.  What runs then is thread code, which takes
 * locks, waits and makes calls as natively: so the handler runs as
 * thread code, not counted as a handler (its calls go to the runtime,
 * the selector at BLOCK), with the fiber's mask as the kernel sets it
 * for the handler (the signal and the action's mask added).  Counted as
 * a handler, the cleanup's calls would be made directly on the vcpu, and
 * one waiting for a mutex another thread on that vcpu holds would wait
 * for good.  The kernel thread's mask is the handler's until the fiber leaves it
 * (TP(v)->sigmask unknown: the next fiber sets its own in full).  false:
 * not this case. */
static bool cancel_as_thread(struct xsc_vcpu *v, int sig, siginfo_t *si, void *uc,
			     const struct kact *k)
{
	struct xsc_fiber *f = v->cur;
	uint64_t mask;
	unsigned char sel;
	bool masked;

	if (sig != SIGCANCEL || !f || TP(v)->in_handler || TP(v)->setxid ||
	    TP(v)->vfork || !(k->flags & SA_SIGINFO) || k->handler == SIG_DFL ||
	    k->handler == SIG_IGN)
		return false;
	mask = f->sigmask;
	sel = TP(v)->sel;
	masked = f->masked;
	if (!(k->flags & SA_NODEFER))
		f->sigmask |= SIGBIT(sig);
	f->sigmask |= k->mask & ~TP_NEVER_BLOCKED;
	f->masked = false;
	TP(v)->sigmask = ~0ULL;
	TP(v)->sel = TP_SEL_BLOCK;
	call_handler(v, k->handler, k->flags, sig, si, uc);
	/* it returned: the thread was not cancelled */
	v = xsc__vcpu();
	f->sigmask = mask;
	f->masked = masked;
	TP(v)->sigmask = ~0ULL;
	TP(v)->sel = sel;
	return true;
}

/* Every handler the program installs runs through here.  Its calls never
 * switch fibers: they trap (the selector stays BLOCK) into in_handler(),
 * which answers the ones that are the runtime's to answer (installing a
 * handler, thread ids and signals) and makes the rest directly.  With the
 * selector at ALLOW a handler's sigaction went straight to the kernel,
 * installing the program's handler without the trampoline and with libc's
 * restorer: that handler then ran with the selector at BLOCK, its
 * rt_sigreturn trapped and returned into garbage (Apache's SIGTERM under
 * xsc run ended in SIGSEGV). */
void tp_sig_tramp(int sig, siginfo_t *si, void *uc)
{
	struct xsc_vcpu *v = xsc__tp ? xsc__vcpu() : NULL;
	struct kact *k = &tp.act[sig];
	void *h = k->handler;
	unsigned long flags = k->flags;
	bool runs = h != SIG_DFL && h != SIG_IGN;
	unsigned char sel = 0;
	int depth = 0;

	if (sig == PREEMPT_SIG && v && tp_preempt(v, si, uc))
		return;
	if (v && v->nlocks > 0 && !fault(sig, si)) {
		defer(v, sig, si, uc);
		return;
	}
	if (v && passed_on(v, sig, si, h, uc))
		return;
	if (v && cancel_as_thread(v, sig, si, uc, k))
		return;
	if (flags & SA_RESETHAND)
		k->handler = SIG_DFL;
	/* the frame of this function, not a helper's: the handler's stack
	 * is below it (longjmp.c, hframe_holds) */
	if (v)
		depth = enter(v, (uintptr_t)__builtin_frame_address(0), uc, &sel);
	if (v && !v->cur && runs)
		stray(v, sig);
	if (runs)
		call_handler(v, h, flags, sig, si, uc);
	/* a stop (the flag, then PREEMPT_SIG) that landed while the handler
	 * ran found it outside the call: the call the handler interrupted,
	 * rewound by the kernel to be made again (SA_RESTART), would pass
	 * the flag's check and wait on; it ends here as the stop's own
	 * handler ends it (-EINTR once made: a signal recorded for the
	 * thread then decides whether it restarts; a handler's sem_post
	 * readying a fiber beside a blocking read of its thread) */
	if (v)
		(void)xsc__cp_stopped_wait(uc);
	if (v) {	/* and any handler above it that was left by a jump */
		TP(v)->in_handler = depth;
		TP(v)->sel = sel;
	}
}
