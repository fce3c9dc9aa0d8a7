/*
 * sigwait.c - transparent mode: sigwaitinfo, sigtimedwait, sigsuspend and
 * pause park the fiber, not its vcpu (a daemon's signal thread waiting in
 * the kernel would hold a vcpu for good).  A wait ends on a signal sent to
 * the thread (kept in the fiber: tp_tid_post writes the wait's eventfd) or
 * pending for the process (a signalfd for the set polls readable; vcpus
 * with no fiber to run block what no thread accepts, so such a signal
 * stays pending for the waiter: mask.c).
 *
 * Rules: while it waits, a fiber takes the signals it waits for for
 * itself (TP(f)->takes): a vcpu that takes one anyway hands it over
 * (tp_hand_to_waiter) instead of running its handler elsewhere.
 */
#include "signals.h"

/* The lowest signal of set sent to fiber f, taken (one instance of a
 * real-time one); 0 if none. */
static int take_own(struct xsc_fiber *f, uint64_t set)
{
	uint64_t p;
	int s = 0;

	xsc__spin_lock(&tp.lock);
	if ((p = __atomic_load_n(&f->sig_pending, __ATOMIC_ACQUIRE) & set) != 0) {
		s = __builtin_ctzll(p) + 1;
		if (is_rt(s) && TP(f)->rtq[s - RTFIRST] > 1)
			TP(f)->rtq[s - RTFIRST]--;	/* more queued: stays pending */
		else {
			if (is_rt(s))
				TP(f)->rtq[s - RTFIRST] = 0;
			__atomic_fetch_and(&f->sig_pending, ~SIGBIT(s), __ATOMIC_ACQ_REL);
		}
	}
	xsc__spin_unlock(&tp.lock);
	return s;
}

/* Parks fiber f until a signal of set may be pending for it or the
 * process, or until deadline (xsc__now() ns; -1: none).  0: look again;
 * -ETIMEDOUT; or the error that kept it from waiting. */
static long park_for(struct xsc_fiber *f, uint64_t set, int64_t deadline)
{
	struct pollfd p[2];
	struct timespec left, *lp = NULL;
	long sfd, efd, r = 0;

	sfd = xsc__sys4(SYS_signalfd4, -1, (long)&set, 8, SFD_NONBLOCK | SFD_CLOEXEC);
	if (sfd < 0)
		return sfd;
	efd = xsc__sys2(SYS_eventfd2, 0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (efd < 0) {
		xsc__sys1(SYS_close, sfd);
		return efd;
	}
	xsc__spin_lock(&tp.lock);
	if (!(f->sig_pending & set)) {
		TP(f)->wait_set = set;
		TP(f)->wait_fd = (int)efd + 1;
		r = 1;
	}
	xsc__spin_unlock(&tp.lock);
	if (r) {
		p[0] = (struct pollfd){ (int)sfd, POLLIN, 0 };
		p[1] = (struct pollfd){ (int)efd, POLLIN, 0 };
		if (deadline >= 0) {
			int64_t ns = deadline - xsc__now();
			if (ns < 0)
				ns = 0;
			left = (struct timespec){ ns / 1000000000, ns % 1000000000 };
			lp = &left;
		}
		r = xsc_syscall(SYS_ppoll, (long)p, 2, (long)lp, 0, 8, 0);
		xsc__spin_lock(&tp.lock);
		TP(f)->wait_fd = 0;
		TP(f)->wait_set = 0;
		xsc__spin_unlock(&tp.lock);
		r = r == 0 ? -ETIMEDOUT : (r < 0 && r != -EINTR) ? r : 0;
	}
	xsc__sys1(SYS_close, sfd);
	xsc__sys1(SYS_close, efd);
	return r;
}

/* The signals fiber f takes for itself while it waits (tp_hand_to_waiter). */
static void takes(struct xsc_fiber *f, uint64_t set)
{
	xsc__spin_lock(&tp.lock);
	if (!TP(f)->takes != !set)
		atomic_fetch_add(&tp.nsigwait, set ? 1 : -1);
	TP(f)->takes = set;
	xsc__spin_unlock(&tp.lock);
}

/* sigtimedwait's waits, with f taking set for itself (tp_sigtimedwait). */
static long sigtimedwait_loop(struct xsc_fiber *f, uint64_t set, const long *a,
			      int64_t deadline)
{
	long r;
	int s;

	for (;;) {
		if ((s = take_own(f, set)) != 0) {
			siginfo_t si;
			memset(&si, 0, sizeof(si));
			si.si_signo = s;
			si.si_code = tp.tkill_code;
			si.si_pid = (pid_t)xsc__sys0(SYS_getpid);
			si.si_uid = (uid_t)xsc__sys0(SYS_getuid);
			if (a[1] && xsc__ucopy_out((void *)a[1], &si, sizeof(si)))
				return -EFAULT;
			return s;
		}
		static const struct timespec zero;
		r = xsc__sys4(SYS_rt_sigtimedwait, (long)&set, a[1], (long)&zero, 8);
		if (r != -EAGAIN)
			return r;
		if (deadline >= 0 && xsc__now() >= deadline)
			return -EAGAIN;
		r = park_for(f, set, deadline);
		if (r < 0 && r != -ETIMEDOUT)
			return r;
	}
}

long tp_sigtimedwait(const long *a)
{
	struct xsc_fiber *f = cur_fiber();
	struct timespec ts;
	int64_t deadline = -1;
	uint64_t set;
	long r;

	if (a[3] != 8)
		return -EINVAL;
	if (xsc__ucopy_in(&set, (const void *)a[0], sizeof(set)))
		return -EFAULT;
	if (a[2]) {
		if (xsc__ucopy_in(&ts, (const void *)a[2], sizeof(ts)))
			return -EFAULT;
		if (ts.tv_sec < 0 || ts.tv_nsec < 0 || ts.tv_nsec >= 1000000000)
			return -EINVAL;
		deadline = xsc__now() + ts.tv_sec * 1000000000LL + ts.tv_nsec;
	}
	set &= ~(SIGBIT(SIGKILL) | SIGBIT(SIGSTOP));
	takes(f, set);
	r = sigtimedwait_loop(f, set, a, deadline);
	takes(f, 0);
	return r;
}

/* sigsuspend (a: the mask) and pause (a == NULL): the fiber's mask is
 * replaced while it waits; it returns -EINTR once a handler has run on
 * it.  Pending signals are delivered by setting the mask from the fiber
 * itself, so the handler runs on the thread's own stack and TLS. */
long tp_sigsuspend(const long *a)
{
	struct xsc_fiber *f = cur_fiber();
	uint64_t old = f->sigmask, nm = old;
	long r;

	if (a) {
		if (a[1] != 8)
			return -EINVAL;
		if (xsc__ucopy_in(&nm, (const void *)a[0], sizeof(nm)))
			return -EFAULT;
	}
	nm &= ~TP_NEVER_BLOCKED;
	/* while it waits, the signals it accepts are its own to take: idle
	 * vcpus must not take them for it, and one that still does (its mask
	 * predates this) hands it over (tp_hand_to_waiter) */
	takes(f, ~nm & ~SIGBIT(SIGSYS));
	tp_account(old, ~0ULL);
	for (;;) {
		struct xsc_vcpu *v = xsc__vcpu();	/* may change after a park */
		uint32_t before = f->nsig;

		f->sigmask = nm;
		tp_vcpu_mask(v, nm);
		xsc__sys4(SYS_rt_sigprocmask, SIG_SETMASK, (long)&nm, 0, 8);
		if (f->sig_pending & ~nm)
			xsc__tp_deliver(f);
		f->sigmask = old;
		tp_vcpu_mask(v, old);
		xsc__sys4(SYS_rt_sigprocmask, SIG_SETMASK, (long)&old, 0, 8);
		if (f->nsig != before) {
			r = -EINTR;
			break;
		}
		/* parked, it blocks what it waits for: switching to it must
		 * not deliver those in the scheduler (run() sets its mask),
		 * only the unmasking above, on the fiber */
		f->sigmask = old | (~nm & ~SIGBIT(SIGSYS));
		r = park_for(f, ~nm & ~SIGBIT(SIGSYS), -1);
		f->sigmask = old;
		if (r < 0)
			break;
	}
	tp_account(~0ULL, old);
	takes(f, 0);
	return r;
}
