/*
 * interrupt.c - transparent mode: a signal sent to a thread blocked in a
 * call interrupts the call, as the kernel's would.  The sender only asks
 * (tp_interrupt); the vcpu that owns the call cancels it in its scheduler
 * (tp_scan); the thread, back with the call's result, runs its handlers
 * and returns EINTR or restarts (tp_interrupted).
 *
 * Rules: tp_interrupt wants tp.lock held; only the vcpu that owns an
 * entry cancels it; a call that completed before the cancel keeps its
 * result.
 */
#include "signals.h"

/* A signal sent to a thread blocked in a call interrupts the call, as the
 * kernel's would: the entry is canceled (by the vcpu that owns it, in its
 * scheduler: tp_scan), the handler runs on the thread, and the call returns
 * EINTR or, when every handler run had SA_RESTART and the call is one the
 * kernel restarts, is issued again (signal(7)).  A call that completed
 * before the cancel keeps its result; a canceled sleep reports the time
 * left (sleep_left).  Which calls, and which restart: the rows' .intr;
 * calls without one (connect) are not interrupted. */
int tp_interruptible(long nr)	/* 2: and restarted with SA_RESTART; 3: XSC_INTR_WAIT */
{
	if (nr < 0 || nr >= XSC_NR_MAX)
		return 0;
	switch (xsc__sys[nr].intr) {
	case XSC_INTR_WAIT:
		return 3;
	case XSC_INTR_RESTART:
		return 2;
	case XSC_INTR_EINTR:
		return 1;
	default:
		return 0;
	}
}

/* Whether the kernel restarts call nr with arguments a after handlers
 * that all had SA_RESTART: the rows' .intr, and .intr_timeout, a timeout
 * that, given, makes it fail with EINTR (-ERESTART_RESTARTBLOCK). */
static bool restarts(long nr, const long *a)
{
	const struct xsc_sysdef *d = &xsc__sys[nr];

	return tp_interruptible(nr) >= 2 && !(d->intr_timeout && (!a || a[d->intr_timeout - 1]));
}

/* f makes a call in its vcpu's kernel thread that a signal for it must
 * end (sched/syscalls.c call_sole): the vcpu, or NULL.  Its signal was
 * recorded first, and the fiber looks at what is pending after it set
 * here_v: one of the two sees the other. */
static struct xsc_vcpu *here_v(struct xsc_fiber *f)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return atomic_load(&f->here_v);
}

/* Stops such a call on vcpu v (for a signal to its thread, or a fiber
 * readied on v: ops->stop_held): the flag, then the watchdog's signal
 * with another cookie, whose handler moves the thread out of the call if
 * it is still there (tp_preempt, cancel.h).  One that came too late finds the flag
 * and nothing to stop; the vcpu clears the flag before its next such
 * call (one later still stops that call, which is made again or, for a
 * wait, posted: sched/syscalls.c). */
void tp_stop_held(struct xsc_vcpu *v)
{
	siginfo_t si;

	atomic_store(&v->here_stop, 1);
	memset(&si, 0, sizeof(si));
	si.si_signo = PREEMPT_SIG;
	si.si_code = SI_QUEUE;
	si.si_pid = (pid_t)xsc__sys0(SYS_getpid);
	si.si_value.sival_int = tp.here_cookie;
	xsc__sys4(SYS_rt_tgsigqueueinfo, si.si_pid, TP(v)->ktid, PREEMPT_SIG, &si);
}

/* Whether f waits in a call a signal for it interrupts: a posted one
 * (.intr) or one made in its kernel thread (call_sole). */
bool tp_in_call(struct xsc_fiber *f)
{
	return (f->call_id && f->home && tp_interruptible(TP(f)->call_nr)) || here_v(f);
}

/* Under tp.lock: asks f's vcpu to cancel the call f waits in (a posted
 * one), or stops the one it makes in its kernel thread. */
void tp_interrupt(struct xsc_fiber *f)
{
	struct xsc_vcpu *v;
	int no = 0;

	if ((v = here_v(f)) != NULL) {
		tp_stop_held(v);
		return;
	}
	if (!f->call_id || !f->home || !tp_interruptible(TP(f)->call_nr))
		return;
	if (atomic_compare_exchange_strong(&f->intr, &no, 1)) {
		atomic_store(&f->home->scan, 1);
		xsc__kick(f->home->x);
	}
}

/* Fiber f's call is in flight, and a signal was sent to it before its
 * sender could see the call (ops->call_posted, sched/syscalls.c): the call
 * is interrupted as the sender would have had it. */
void tp_posted(struct xsc_fiber *f)
{
	xsc__spin_lock(&tp.lock);
	tp_interrupt(f);
	xsc__spin_unlock(&tp.lock);
}

/* The vcpu's scheduler: cancels what was asked of it.  A signal whose
 * handler ran outside any thread (a vcpu between fibers took it)
 * interrupts one thread that accepts it and waits in a call the kernel
 * would not just restart. */
void tp_scan(struct xsc_vcpu *v)
{
	uint64_t stray = atomic_exchange(&tp.stray, 0);

	xsc__spin_lock(&tp.lock);
	for (int s = 1; stray && s <= 64; s++) {
		bool restart = tp.act[s].flags & SA_RESTART, done = false;
		if (!((stray >> (s - 1)) & 1))
			continue;
		for (int i = 0; i < NTID && !done; i++)
			for (struct xsc_fiber *f = tp.tids[i]; f && !done; f = TP(f)->link) {
				int k = f->call_id ? tp_interruptible(TP(f)->call_nr) : 0;
				/* not an open: most never wait */
				if (k && k != 3 && !(f->sigmask & SIGBIT(s)) &&
				    !(restart && restarts(TP(f)->call_nr, TP(f)->call_args))) {
					tp_interrupt(f);
					done = true;
				}
			}
	}
	for (int i = 0; i < NTID; i++)
		for (struct xsc_fiber *f = tp.tids[i]; f; f = TP(f)->link) {
			int one = 1;
			if (f->home == v && f->call_id &&
			    atomic_compare_exchange_strong(&f->intr, &one, 2))
				xsc_cancel(v->x, f->call_id - 1);
		}
	xsc__spin_unlock(&tp.lock);
}

/* An interrupted sleep canceled before the kernel saw a signal (an
 * io_uring timeout; a syscall thread's nanosleep was interrupted by the
 * kernel, which wrote the time left itself): its answer as the kernel
 * gives it, 0 when no time is left, else -EINTR with the time left in
 * *rem for a relative sleep (-EFAULT if it cannot be written).  The
 * kernel's timer expires at the start plus the request on the sleep's
 * clock, in 64-bit nanoseconds that saturate (`sleep infinity` asks for
 * the largest time_t): the time left is that expiry less now. */
#define KTIME_MAX INT64_MAX

static long sleep_left(const struct xsc_fiber *f, long nr)
{
	const long *a = TP(f)->call_args;
	const void *req = (const void *)(nr == SYS_nanosleep ? a[0] : a[2]);
	void *rem = (void *)(nr == SYS_nanosleep ? a[1] : a[3]);
	struct timespec ts, now = { 0, 0 };
	int64_t want, end, left;

	if (nr == SYS_clock_nanosleep && (a[1] & TIMER_ABSTIME))
		return -EINTR;	/* no time left is reported */
	if (xsc__ucopy_in(&ts, req, sizeof(ts)))
		return -EINTR;	/* read when the call began: cannot fail */
	xsc__sys2(SYS_clock_gettime, nr == SYS_nanosleep ? CLOCK_MONOTONIC : a[0],
		  (long)&now);
	want = ts.tv_sec >= KTIME_MAX / 1000000000 ? KTIME_MAX :
	       ts.tv_sec * 1000000000LL + ts.tv_nsec;
	end = TP(f)->call_t0 > KTIME_MAX - want ? KTIME_MAX : TP(f)->call_t0 + want;
	left = end - (now.tv_sec * 1000000000LL + now.tv_nsec);
	if (left <= 0)
		return 0;
	if (!rem)
		return -EINTR;
	ts.tv_sec = left / 1000000000;
	ts.tv_nsec = left % 1000000000;
	return xsc__ucopy_out(rem, &ts, sizeof(ts)) ? -EFAULT : -EINTR;
}

/* The handlers of p, f's pending signals it does not block, run now on
 * f: whether each had SA_RESTART (read before any runs: a handler may
 * change a disposition). */
static bool run_pending(struct xsc_fiber *f, uint64_t p)
{
	bool restart = true;

	for (int s = 1; s <= 64; s++)
		if (((p >> (s - 1)) & 1) && !(tp.act[s].flags & SA_RESTART))
			restart = false;
	if (p)
		xsc__tp_deliver(f);
	return restart;
}

/* ops->solo: v's kernel thread blocks nothing another thread takes
 * (TP(v)->sigmask: ~0 while a handler's mask is not known). */
bool tp_solo(struct xsc_vcpu *v)
{
	return tp_takes_all(__atomic_load_n(&TP(v)->sigmask, __ATOMIC_RELAXED));
}

/* The fiber whose call in its kernel thread was stopped (ops->here_stopped,
 * sched/syscalls.c call_sole): its handlers run now; whether each had
 * SA_RESTART. */
bool tp_here_stopped(struct xsc_fiber *f)
{
	return run_pending(f, __atomic_load_n(&f->sig_pending, __ATOMIC_ACQUIRE) & ~f->sigmask);
}

/* The interrupted fiber, back on its vcpu with the result r of call nr,
 * made with arguments a. */
long tp_interrupted_args(struct xsc_fiber *f, long nr, const long *a, long r)
{
	uint64_t p = __atomic_load_n(&f->sig_pending, __ATOMIC_ACQUIRE) & ~f->sigmask;
	int k = tp_interruptible(nr);
	bool restart = restarts(nr, a);

	atomic_store(&f->intr, 0);
	if (r != -ECANCELED && r != -EINTR)
		return r;	/* it completed first: the kernel's answer */
	if (r == -ECANCELED && k == 3) {	/* it never began */
		if (p)
			xsc__tp_deliver(f);
		return XSC_CALL_RESTART;
	}
	if (r == -ECANCELED && (nr == SYS_nanosleep || nr == SYS_clock_nanosleep)) {
		long s = sleep_left(f, nr);
		if (p)
			xsc__tp_deliver(f);
		return s;
	}
	if (!p)
		return -EINTR;	/* its handler ran already (tp_scan) */
	/* the handlers run now, on this thread */
	return run_pending(f, p) && restart ? XSC_CALL_RESTART : -EINTR;
}

/* The same for a posted call (ops->call_end): its arguments were kept when
 * it began (call_begin, start.c). */
long tp_interrupted(struct xsc_fiber *f, long nr, long r)
{
	return tp_interrupted_args(f, nr, TP(f)->call_args, r);
}
