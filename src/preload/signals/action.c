/*
 * action.c - transparent mode: sigaction, rt_sigprocmask, kill, tgkill
 * and raise as the program's threads see them.  The program's handlers
 * are recorded in tp.act and installed as the trampoline (tp_install);
 * a thread's mask is its fiber's, and a signal for another thread waits
 * in that thread's fiber (pending.c).
 *
 * Rules: the kernel checks the program's pointers and arguments (its
 * errors, in its order); every mask change is counted (tp_account).
 */
#include "signals.h"

/* The program's rt_sigprocmask(a) made by the kernel, from mask cur: the
 * kernel reads and writes the program's pointers, so a bad one gets its
 * -EFAULT (a change made before the old mask failed to go back stays, as
 * natively) and a bad size or `how` its -EINVAL.  This runs in the SIGSYS
 * handler, whose sigreturn sets the frame's mask: the kernel thread's own
 * mask may be used so.  *nm: the mask after the call, without SIGSYS,
 * SIGKILL and SIGSTOP; the kernel thread's mask is the kernel's result
 * until the trap returns. */
static long kernel_sigprocmask(const long *a, uint64_t cur, uint64_t *nm)
{
	uint64_t after = cur, set;
	long r;

	xsc__sys4(SYS_rt_sigprocmask, SIG_SETMASK, (long)&cur, 0, 8);
	r = xsc__sys4(SYS_rt_sigprocmask, a[0], a[1], a[2], a[3]);
	if (a[1] && r == 0) {
		/* the kernel read the set: so may we (one call fewer) */
		set = *(const uint64_t *)a[1];
		after = a[0] == SIG_BLOCK ? cur | set :
			a[0] == SIG_UNBLOCK ? cur & ~set : set;
	} else if (a[1] && r == -EFAULT) {	/* the set's, or the old mask's */
		xsc__sys4(SYS_rt_sigprocmask, SIG_BLOCK, 0, (long)&after, 8);
	}
	*nm = after & ~TP_NEVER_BLOCKED;
	if (after & SIGBIT(SIGSYS))	/* the kernel keeps SIGKILL, SIGSTOP out */
		xsc__sys4(SYS_rt_sigprocmask, SIG_SETMASK, (long)nm, 0, 8);
	return r;
}

/* rt_sigprocmask made in a handler, trapped (uc: the SIGSYS frame): the
 * mask in force when the trap returns is the frame's; setting the kernel
 * thread's own would be undone by the trap's sigreturn. */
long tp_handler_sigprocmask(const long *a, ucontext_t *uc)
{
	uint64_t *m = (uint64_t *)&uc->uc_sigmask, nm;
	long r = kernel_sigprocmask(a, *m, &nm);

	*m = nm;
	return r;
}

long tp_install(int sig, const struct kact *p)
{
	struct kact k = *p;

	if (sig == PREEMPT_SIG && (k.handler == SIG_DFL || k.handler == SIG_IGN)) {
		/* the watchdog's signal, and the one that stops a call made in
		 * a vcpu's kernel thread: the program sees its own disposition
		 * (tp.act); the runtime keeps the trampoline */
		k.handler = (void *)tp_sig_tramp;
		k.flags = SA_SIGINFO | SA_RESTART;
	} else if (k.handler != SIG_DFL && k.handler != SIG_IGN) {
		k.handler = (void *)tp_sig_tramp;
		k.flags |= SA_SIGINFO;
	}
	k.flags |= SA_RESTORER;
	k.restorer = (void *)xsc__tp_restorer;
	k.mask &= ~SIGBIT(SIGSYS);
	return xsc__sys4(SYS_rt_sigaction, sig, &k, 0, 8);
}

long tp_sigaction(const long *a, bool in_sig)
{
	bool locked = true;
	int sig = (int)a[0];
	const struct kact *act = (const void *)a[1];
	struct kact *old = (void *)a[2], prev, k;
	long r = 0;

	/* the kernel's order: the size, the new action read, the signal,
	 * the change, then the old action written back (-EFAULT after the
	 * change is made) */
	if (a[3] != 8)
		return -EINVAL;
	if (act && tp_copy_in(&k, act, sizeof(k)))
		return -EFAULT;
	if (sig < 1 || sig > 64 || (act && (sig == SIGKILL || sig == SIGSTOP)))
		return -EINVAL;
	/* in a handler, the code it interrupted may hold the lock */
	if (in_sig)
		locked = xsc__spin_trylock(&tp.lock);
	else
		xsc__spin_lock(&tp.lock);
	prev = tp.act[sig];
	if (act) {
		if (sig == SIGSYS)
			warn_once(&tp.warned_sigsys, "the program's SIGSYS handler is "
				  "recorded but not installed (interception uses SIGSYS)");
		else
			r = tp_install(sig, &k);
		if (r == 0)
			tp.act[sig] = k;
	}
	if (locked)
		xsc__spin_unlock(&tp.lock);
	if (r == 0 && old && tp_copy_out(old, &prev, sizeof(prev)))
		return -EFAULT;
	return r;
}

long tp_sigprocmask(const long *a, ucontext_t *uc)
{
	struct xsc_vcpu *v = xsc__vcpu();
	uint64_t *m = (uint64_t *)&uc->uc_sigmask, cur = *m, nm;
	long r = kernel_sigprocmask(a, cur, &nm);

	/* in force now (kernel_sigprocmask) and after the handler's sigreturn */
	if (nm != cur) {
		*m = nm;
		tp_account(cur, nm);
		v->cur->sigmask = nm;
	}
	tp_vcpu_mask(v, nm);
	return r;
}

long tp_kill(long nr, const long *a)
{
	int tid = (int)(nr == SYS_tgkill ? a[1] : a[0]);
	int sig = (int)(nr == SYS_tgkill ? a[2] : a[1]);
	struct xsc_fiber *f = cur_fiber();
	int host;

	if (sig == SIGSETXID && f && nr == SYS_tgkill && a[0] == xsc__sys0(SYS_getpid) &&
	    tp_setxid(tid))
		return 0;
	if (f && tid == f->vtid && sig > 0 && sig <= 64 && (f->sigmask & SIGBIT(sig))) {
		/* blocked: pending for this thread, not for the kernel thread
		 * that other fibers share */
		xsc__spin_lock(&tp.lock);
		tp_pend_locked(f, sig);
		xsc__spin_unlock(&tp.lock);
		return 0;
	}
	if (f && tid == f->vtid)
		host = TP(xsc__vcpu())->ktid;	/* delivered before we return */
	else if ((host = tp_tid_post(tid, sig)) == 0)
		return xsc__sys6(nr, a[0], a[1], a[2], 0, 0, 0);
	else
		return host > 0 ? 0 : host;	/* delivered when it next runs */
	if (sig < 0 || sig > 64)
		return -EINVAL;
	return sig ? xsc__sys3(SYS_tgkill, xsc__sys0(SYS_getpid), host, sig) : 0;
}

/* A signal the calling fiber's own call sent it (SIGPIPE from a write
 * that another kernel thread ran): as tgkill(2) of its own thread id. */
long tp_raise(int sig)
{
	struct xsc_fiber *f = cur_fiber();

	if (!f)
		return -ESRCH;
	return tp_kill(SYS_tgkill, (const long[3]){ xsc__sys0(SYS_getpid), f->vtid, sig });
}
