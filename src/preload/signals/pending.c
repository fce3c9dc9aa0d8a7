/*
 * pending.c - transparent mode: signals sent to one thread of the
 * program (tgkill, or handed to it: handover.c) wait in its fiber, in
 * its pending set, and are raised on whichever kernel thread runs it,
 * right before it returns to program code (xsc__tp_deliver).
 *
 * Rules: the pending set and the real-time counts change under tp.lock;
 * signals are taken under the lock and raised after it, because a
 * handler runs inside the raise and may send signals itself.
 */
#include "signals.h"

/* Records signal sig as pending for fiber f (tp.lock held). */
void tp_pend_locked(struct xsc_fiber *f, int sig)
{
	if (is_rt(sig) && TP(f)->rtq[sig - RTFIRST] < UINT16_MAX)
		TP(f)->rtq[sig - RTFIRST]++;
	__atomic_or_fetch(&f->sig_pending, SIGBIT(sig), __ATOMIC_RELEASE);
}

/* Wakes fiber f if it waits for sig in park_for (sigwait.c; tp.lock
 * held): true if it did. */
bool tp_wake_wait_locked(struct xsc_fiber *f, int sig)
{
	if (!TP(f)->wait_fd || !(TP(f)->wait_set & SIGBIT(sig)))
		return false;
	xsc__sys3(SYS_write, TP(f)->wait_fd - 1, (long)&(uint64_t){ 1 }, 8);
	return true;
}

/* Whether sig, as the program has it now, does nothing when delivered:
 * ignored, or its default action is to ignore it.  It interrupts no call
 * (natively the kernel restarts the call without a word). */
static bool ignored(int sig)
{
	void *h = tp.act[sig].handler;

	if (h == SIG_IGN)
		return true;
	if (h != SIG_DFL)
		return false;
	return sig == SIGCHLD || sig == SIGCONT || sig == SIGURG || sig == SIGWINCH;
}

/* A signal for another fiber waits in the fiber and is raised on whichever
 * kernel thread runs it, right before it returns to program code; a call
 * or a futex wait it is blocked in is interrupted.  1 if vtid names a
 * fiber, 0 if not, -EINVAL for a bad signal. */
int tp_tid_post(int vtid, int sig)
{
	int found = 0;

	if (sig < 0 || sig > 64)
		return -EINVAL;
	xsc__spin_lock(&tp.lock);
	for (struct xsc_fiber *f = tp.tids[(unsigned)vtid % NTID]; f; f = TP(f)->link) {
		if (f->vtid == vtid) {
			/* natively an ignored signal that is not blocked is
			 * dropped as it is sent: it interrupts nothing */
			if (sig && !(ignored(sig) && !(f->sigmask & SIGBIT(sig)))) {
				tp_pend_locked(f, sig);
				if (!tp_wake_wait_locked(f, sig) && !(f->sigmask & SIGBIT(sig))) {
					if (f->call_id || tp_in_call(f))
						tp_interrupt(f);
					else	/* EINTR, as natively */
						xsc__futex_interrupt(f);
				}
			}
			found = 1;
			break;
		}
	}
	xsc__spin_unlock(&tp.lock);
	return found;
}

/* Takes a handed signal of set for fiber f (tp.lock held): its signal
 * number, its siginfo in *si; 0 if none. */
static int take_handed_locked(struct xsc_fiber *f, uint64_t set, siginfo_t *si)
{
	for (int i = 0; i < TP_NHANDED; i++)
		if (tp.handed[i].f == f && (set & SIGBIT(tp.handed[i].si.si_signo))) {
			*si = tp.handed[i].si;
			tp.handed[i].f = NULL;
			return si->si_signo;
		}
	return 0;
}

/* Whether signal sig is handed to fiber f (tp.lock held). */
static bool handed_locked(const struct xsc_fiber *f, int sig)
{
	for (int i = 0; i < TP_NHANDED; i++)
		if (tp.handed[i].f == f && tp.handed[i].si.si_signo == sig)
			return true;
	return false;
}

/* Fiber f is gone (its thread exited) or never was (a forked child's copy
 * of the table, f NULL: all): what was handed to it is dropped, as a
 * thread's pending signals are when it exits.  A thread raises what it
 * was handed before its call returns to program code, so an exiting one
 * has none left; this keeps a reused record from raising a stale one. */
void tp_handed_forget(struct xsc_fiber *f)
{
	for (int i = 0; i < TP_NHANDED; i++)
		if (!f || tp.handed[i].f == f)
			tp.handed[i].f = NULL;
}

/* Raises the signals sent or handed to the running fiber: those another
 * thread sent with tgkill (tp_tid_post) as tgkill does, a handed one
 * (tp_hand_to_thread) with the siginfo it came with. */
void xsc__tp_deliver(struct xsc_fiber *f)
{
	int ktid = TP(xsc__vcpu())->ktid;
	long pid = xsc__sys0(SYS_getpid);

	for (;;) {
		uint16_t n[33];
		uint64_t p;
		siginfo_t si;
		int hs;

		/* taken under the lock, raised after it: a handler runs
		 * inside the raise below and may send signals itself */
		xsc__spin_lock(&tp.lock);
		p = __atomic_load_n(&f->sig_pending, __ATOMIC_ACQUIRE) & ~f->sigmask;
		if ((hs = take_handed_locked(f, p, &si)) != 0) {
			/* one at a time: the bit stays while more are there */
			if (!handed_locked(f, hs) && !(is_rt(hs) && TP(f)->rtq[hs - RTFIRST]))
				__atomic_fetch_and(&f->sig_pending, ~SIGBIT(hs),
						   __ATOMIC_ACQ_REL);
			xsc__spin_unlock(&tp.lock);
			xsc__sys4(SYS_rt_tgsigqueueinfo, pid, ktid, hs, (long)&si);
			continue;
		}
		/* blocked ones stay pending */
		__atomic_fetch_and(&f->sig_pending, ~p, __ATOMIC_ACQ_REL);
		for (int s = RTFIRST; s <= 64; s++) {
			n[s - RTFIRST] = TP(f)->rtq[s - RTFIRST];
			if (p & SIGBIT(s))
				TP(f)->rtq[s - RTFIRST] = 0;
		}
		xsc__spin_unlock(&tp.lock);
		for (int s = 1; s <= 64; s++) {
			if (!(p & SIGBIT(s)))
				continue;
			int k = is_rt(s) && n[s - RTFIRST] ? n[s - RTFIRST] : 1;
			while (k--)
				xsc__sys3(SYS_tgkill, pid, ktid, s);
		}
		return;
	}
}
