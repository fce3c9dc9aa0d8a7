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
 * left (sleep_left).  Calls not listed here (connect) are not interrupted. */
int tp_interruptible(long nr)	/* 2: and restarted with SA_RESTART */
{
	switch (nr) {
	case SYS_read: case SYS_readv: case SYS_write: case SYS_writev:
	case SYS_pread64: case SYS_pwrite64: case SYS_recvfrom: case SYS_recvmsg:
	case SYS_sendto: case SYS_sendmsg: case SYS_accept: case SYS_accept4:
	case SYS_wait4: case SYS_waitid: case SYS_flock: case SYS_fcntl:
		return 2;
	case SYS_poll: case SYS_ppoll: case SYS_select: case SYS_pselect6:
	case SYS_epoll_wait: case SYS_epoll_pwait: case SYS_epoll_pwait2:
	case SYS_nanosleep: case SYS_clock_nanosleep:	/* never restarted */
		return 1;
	default:
		return 0;
	}
}

/* Under tp.lock: asks f's vcpu to cancel the call f waits in. */
void tp_interrupt(struct xsc_fiber *f)
{
	int no = 0;

	if (!f->tp.call || !f->home || !tp_interruptible(f->tp.call_nr))
		return;
	if (atomic_compare_exchange_strong(&f->tp.intr, &no, 1)) {
		atomic_store(&f->home->tp.intr, 1);
		xsc__kick(f->home->x);
	}
}

/* Fiber f's call is in flight, and a signal was sent to it before its
 * sender could see the call (xsc__tp_posted, sched/syscalls.c): the call
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
			for (struct xsc_fiber *f = tp.tids[i]; f && !done; f = f->tp.link) {
				int k = f->tp.call ? tp_interruptible(f->tp.call_nr) : 0;
				if (k && !(f->sigmask & SIGBIT(s)) && !(restart && k == 2)) {
					tp_interrupt(f);
					done = true;
				}
			}
	}
	for (int i = 0; i < NTID; i++)
		for (struct xsc_fiber *f = tp.tids[i]; f; f = f->tp.link) {
			int one = 1;
			if (f->home == v && f->tp.call &&
			    atomic_compare_exchange_strong(&f->tp.intr, &one, 2))
				xsc_cancel(v->x, f->tp.call - 1);
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
	const long *a = f->tp.call_args;
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
	end = f->tp.call_t0 > KTIME_MAX - want ? KTIME_MAX : f->tp.call_t0 + want;
	left = end - (now.tv_sec * 1000000000LL + now.tv_nsec);
	if (left <= 0)
		return 0;
	if (!rem)
		return -EINTR;
	ts.tv_sec = left / 1000000000;
	ts.tv_nsec = left % 1000000000;
	return xsc__ucopy_out(rem, &ts, sizeof(ts)) ? -EFAULT : -EINTR;
}

/* The interrupted fiber, back on its vcpu with the call's result r. */
long tp_interrupted(struct xsc_fiber *f, long nr, long r)
{
	uint64_t p = __atomic_load_n(&f->tp.pending, __ATOMIC_ACQUIRE) & ~f->sigmask;
	bool restart = tp_interruptible(nr) == 2;

	atomic_store(&f->tp.intr, 0);
	if (r != -ECANCELED && r != -EINTR)
		return r;	/* it completed first: the kernel's answer */
	if (r == -ECANCELED && (nr == SYS_nanosleep || nr == SYS_clock_nanosleep)) {
		long s = sleep_left(f, nr);
		if (p)
			xsc__tp_deliver(f);
		return s;
	}
	if (!p)
		return -EINTR;	/* its handler ran already (tp_scan) */
	for (int s = 1; s <= 64; s++)
		if (((p >> (s - 1)) & 1) && !(tp.act[s].flags & SA_RESTART))
			restart = false;
	if (p)
		xsc__tp_deliver(f);	/* the handlers run now, on this thread */
	return restart ? XSC_TP_RESTART : -EINTR;
}
