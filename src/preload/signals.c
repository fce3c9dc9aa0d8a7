/*
 * signals.c - transparent mode: signals as the program's threads see them
 * natively.  Which signals some thread accepts (the idle vcpus' mask);
 * signals sent to a thread blocked in a call interrupt it (EINTR or
 * SA_RESTART); every handler runs through a trampoline; each fiber has its
 * own mask and pending set; preemption of fibers that never make a call;
 * sigwaitinfo, sigtimedwait, sigsuspend and pause park the fiber, not its
 * vcpu.  See docs/transparent.md.
 */
#include "shim.h"

#include <setjmp.h>

/* Which signals some thread of the program accepts (leaves unblocked).
 * A vcpu with no fiber to run blocks the others, as the program's threads
 * do: a process-directed signal every thread blocks stays pending for the
 * thread that waits for it in sigwait (below), instead of being taken,
 * with its default action, by an idle kernel thread.  was/now: a
 * thread's mask before and after (~0: the thread does not exist). */
_Atomic int tp_accepting[65];
uint32_t tp_mask_lock;

void tp_account(uint64_t was, uint64_t now)
{
	uint64_t blocked = ~was & now, unblocked = was & ~now;
	bool tighter = false, changed = false;

	for (int s = 1; s <= 64; s++) {
		if ((blocked >> (s - 1)) & 1)
			tighter |= atomic_fetch_sub(&tp_accepting[s], 1) == 1;
		else if ((unblocked >> (s - 1)) & 1)
			changed |= atomic_fetch_add(&tp_accepting[s], 1) == 0;
	}
	if (tighter || changed)
		tp_idle_mask(tighter);
}

/* Recomputes the idle vcpus' mask from the counts; tighter: kick them. */
void tp_idle_mask(bool tighter)
{
	xsc__spin_lock(&tp_mask_lock);
	uint64_t m = 0;
	for (int s = 1; s <= 64; s++)
		if (!atomic_load(&tp_accepting[s]))
			m |= SIGBIT(s);
	atomic_store(&xsc__tp_idlemask, m & ~TP_NEVER_BLOCKED);
	xsc__spin_unlock(&tp_mask_lock);
	if (tighter)	/* sleeping vcpus take the new mask */
		for (int i = 0; i < xsc__rt.n; i++)
			if (atomic_load(&xsc__rt.v[i].idle) && xsc__rt.v[i].x)
				xsc__kick(xsc__rt.v[i].x);
}


/* ---- signals that interrupt blocked calls ------------------------------------------ */

/* A signal sent to a thread blocked in a call interrupts the call, as the
 * kernel's would: the entry is canceled (by the vcpu that owns it, in its
 * scheduler: tp_scan), the handler runs on the thread, and the call returns
 * EINTR or, when every handler run had SA_RESTART and the call is one the
 * kernel restarts, is issued again (signal(7)).  A call that completed
 * before the cancel keeps its result; a canceled sleep reports the time
 * left (sleep_left).  Calls not listed here (connect) are not
 * tp_interrupted. */
static int interruptible(long nr)	/* 2: and restarted with SA_RESTART */
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
static void interrupt(struct xsc_fiber *f)
{
	int no = 0;

	if (!f->call_id || !f->home || !interruptible(TP(f)->call_nr))
		return;
	if (atomic_compare_exchange_strong(&f->intr, &no, 1)) {
		atomic_store(&f->home->scan, 1);
		xsc__kick(f->home->x);
	}
}

/* Fiber f's call is in flight, and a signal was sent to it before its
 * sender could see the call (xsc__tp_posted, sched/syscalls.c): the call
 * is interrupted as the sender would have had it. */
void tp_posted(struct xsc_fiber *f)
{
	xsc__spin_lock(&tp.lock);
	interrupt(f);
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
				int k = f->call_id ? interruptible(TP(f)->call_nr) : 0;
				if (k && !(f->sigmask & SIGBIT(s)) && !(restart && k == 2)) {
					interrupt(f);
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

/* The tp_interrupted fiber, back on its vcpu with the call's result r. */
long tp_interrupted(struct xsc_fiber *f, long nr, long r)
{
	uint64_t p = __atomic_load_n(&f->sig_pending, __ATOMIC_ACQUIRE) & ~f->sigmask;
	bool restart = interruptible(nr) == 2;

	atomic_store(&f->intr, 0);
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
	return restart ? XSC_CALL_RESTART : -EINTR;
}

/* Real-time signals (32..64) queue: every instance sent to a thread is
 * delivered once, as the kernel does; the others merge in the pending
 * mask.  The counts change under tp.lock. */
#define RTFIRST 32

static inline bool is_rt(int s)
{
	return s >= RTFIRST && s <= 64;
}

/* Records signal sig as pending for fiber f (tp.lock held). */
static void pend_locked(struct xsc_fiber *f, int sig)
{
	if (is_rt(sig) && TP(f)->rtq[sig - RTFIRST] < UINT16_MAX)
		TP(f)->rtq[sig - RTFIRST]++;
	__atomic_or_fetch(&f->sig_pending, SIGBIT(sig), __ATOMIC_RELEASE);
}

/* Wakes fiber f if it waits for sig in park_for (tp.lock held): true if
 * it did. */
static bool wake_wait_locked(struct xsc_fiber *f, int sig)
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
				pend_locked(f, sig);
				if (!wake_wait_locked(f, sig) && !(f->sigmask & SIGBIT(sig))) {
					if (f->call_id)
						interrupt(f);
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

/* ---- process signals taken by a vcpu between fibers -------------------------------- */

/* A vcpu with no fiber to run is the kernel thread that takes most
 * process-directed signals (kill, alarm, a child's SIGCHLD): the program's
 * threads wait in calls the runtime runs, not in the kernel.  Its handler
 * ran there, on no thread of the program's: gettid() gave the vcpu's
 * kernel thread id, thread-local variables were the vcpu's, and the EINTR
 * that followed (tp_scan) went to a thread whose handler never ran
 * (tp_sigthread: every one of 500 handlers, 2026-11-26).  The kernel would
 * have delivered it to one of the program's threads that does not block
 * it; so does the vcpu now: it hands the signal, with its siginfo, to such
 * a thread that waits in a call a signal interrupts, or else on a futex
 * (a lock, a condition variable, a join), and interrupts the wait.  That
 * thread raises it on its own kernel thread (rt_tgsigqueueinfo, the
 * siginfo as it came) before its call returns (tp_interrupted, or the
 * futex wait's EINTR): the handler runs on it, then the call fails with
 * EINTR or restarts, as natively.  A standard signal already handed and
 * not yet raised merges with it, as a pending one does in the kernel.
 * When no such thread waits (every one runs program code), or
 * TP_NHANDED are already
 * waiting to be raised, the handler still runs on the vcpu (tp.nunhanded
 * counts it; XSC_VERBOSE prints it).  Thread-directed signals (tgkill)
 * are the vcpu's own and never handed. */
enum { MERGED = -1, NO_SLOT = -2 };

/* A free slot for sig in tp.handed (tp.lock held); MERGED when sig is a
 * standard signal handed already, NO_SLOT when every slot is taken. */
static int hand_slot_locked(int sig)
{
	int slot = NO_SLOT;

	for (int i = 0; i < TP_NHANDED; i++) {
		struct xsc_fiber *f = tp.handed[i].f;
		if (!f)
			slot = slot < 0 ? i : slot;
		else if (!is_rt(sig) && tp.handed[i].si.si_signo == sig)
			return MERGED;
	}
	return slot;
}

/* Whether fiber f, a thread of the program, may take sig: it does not
 * block it, and does not wait for signals itself (sigwait, sigsuspend:
 * those have their own way, hand_to_waiter). */
static bool may_take(const struct xsc_fiber *f, int sig)
{
	return !(f->sigmask & SIGBIT(sig)) && !TP(f)->takes && !TP(f)->wait_fd;
}

/* Whether fiber f may take sig and seems to wait on a futex (a lock, a
 * condition variable, a join: no call of its own in flight). */
static bool in_futex(const struct xsc_fiber *f, int sig)
{
	return !f->call_id && f->state == F_BLOCKED && f->fs &&
	       __atomic_load_n(&f->fx_addr, __ATOMIC_RELAXED) && may_take(f, sig);
}

/* Records sig (siginfo si) in slot as handed to fiber f (tp.lock held);
 * returns whether sig was pending for f before. */
static bool record_locked(struct xsc_fiber *f, int slot, const siginfo_t *si)
{
	tp.handed[slot].f = f;
	tp.handed[slot].si = *si;
	return __atomic_fetch_or(&f->sig_pending, SIGBIT(si->si_signo),
				 __ATOMIC_RELEASE) & SIGBIT(si->si_signo);
}

static void unrecord_locked(struct xsc_fiber *f, int slot, bool was)
{
	tp.handed[slot].f = NULL;
	if (!was)
		__atomic_fetch_and(&f->sig_pending, ~SIGBIT(tp.handed[slot].si.si_signo),
				   __ATOMIC_ACQ_REL);
}

/* One signal being handed over (hand_locked): its siginfo, or NULL while
 * it is still pending in the kernel, where take() takes it (into got)
 * once a thread is found. */
struct handing {
	int sig, slot;
	const siginfo_t *si;
	siginfo_t got;
	bool (*take)(int, siginfo_t *);
	struct xsc_fiber *first;	/* a futex waiter that woke meanwhile */
};

enum { HAND_NO, HAND_DONE, HAND_GONE };

/* Hands h's signal to fiber f if f waits where a signal reaches it at
 * once (tp.lock held): in a call a signal interrupts, which is canceled
 * (interrupt()), or on a futex, which it is taken off and readied with
 * EINTR (xsc__futex_interrupt).  The record comes first: the thread may
 * run at once, and raises what it finds before its call returns.
 * HAND_GONE: the signal was not in the kernel any more. */
static int hand_one_locked(struct xsc_fiber *f, struct handing *h)
{
	bool call = f->call_id && f->home && interruptible(TP(f)->call_nr) &&
		    may_take(f, h->sig);
	bool was;

	if (!call && !in_futex(f, h->sig))
		return HAND_NO;
	if (!h->si) {
		if (!h->take(h->sig, &h->got))
			return HAND_GONE;
		h->si = &h->got;
	}
	was = record_locked(f, h->slot, h->si);
	if (call)
		interrupt(f);
	else if (!xsc__futex_interrupt(f)) {
		unrecord_locked(f, h->slot, was);
		h->first = h->first ? h->first : f;
		return HAND_NO;
	}
	atomic_fetch_add_explicit(&tp.nhanded, 1, memory_order_relaxed);
	return HAND_DONE;
}

/* The program's main thread (its id is the process id), or NULL. */
static struct xsc_fiber *main_locked(void)
{
	int pid = (int)xsc__sys0(SYS_getpid);

	for (struct xsc_fiber *f = tp.tids[(unsigned)pid % NTID]; f; f = TP(f)->link)
		if (f->vtid == pid)
			return f;
	return NULL;
}

/* A signal a vcpu took between fibers when no thread that takes it waits
 * where a signal reaches it at once: every such thread runs, is ready to,
 * or is in a call a signal does not interrupt.  The first that does not
 * block it gets it, as a signal another thread sent it with tgkill: it
 * raises it before its next call returns to program code (or when it is
 * preempted).  Before, the handler ran on the vcpu, with no thread's id
 * and the vcpu's TLS (tp_sigtls: about 1 handler in 200 while four
 * threads ping-pong).  NULL when no thread takes it now (the vcpu's mask
 * was that of a thread that blocked it since): it runs on the vcpu. */
static struct xsc_fiber *hand_running_locked(struct handing *h)
{
	for (int i = 0; i < NTID; i++)
		for (struct xsc_fiber *f = tp.tids[i]; f; f = TP(f)->link)
			if (f->fs && may_take(f, h->sig)) {
				record_locked(f, h->slot, h->si);
				/* it may have begun to wait since it was looked
				 * at, past its own look at what is pending: the
				 * record (a locked RMW) comes first, then its call
				 * or futex wait is interrupted, as tp_tid_post
				 * does (tp_intr_race lost a signal 1 run in 10) */
				if (__atomic_load_n(&f->call_id, __ATOMIC_SEQ_CST))
					interrupt(f);
				else
					xsc__futex_interrupt(f);
				atomic_fetch_add_explicit(&tp.nhanded, 1,
							  memory_order_relaxed);
				return f;
			}
	return NULL;
}

/* Hands h's signal to a thread (tp.lock held), as the kernel picks one
 * for a process signal: the main thread if it takes it, else another
 * (one whose call is not being interrupted yet first).  Returns the
 * thread, or NULL (*why: MERGED, NO_SLOT or 0: no thread can take it at
 * once). */
static struct xsc_fiber *hand_locked(struct handing *h, int *why)
{
	struct xsc_fiber *m = main_locked();
	int r;

	h->slot = hand_slot_locked(h->sig);
	*why = h->slot < 0 ? h->slot : 0;
	if (h->slot < 0)
		return NULL;
	if (m && (r = hand_one_locked(m, h)) != HAND_NO)
		return r == HAND_DONE ? m : NULL;
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < NTID; i++)
			for (struct xsc_fiber *f = tp.tids[i]; f; f = TP(f)->link) {
				bool busy = f->call_id && atomic_load(&f->intr);
				if (f == m || busy != (pass == 1))
					continue;
				if ((r = hand_one_locked(f, h)) != HAND_NO)
					return r == HAND_DONE ? f : NULL;
			}
	if (h->first && h->si == &h->got) {
		/* taken from the kernel, and every waiter woke meanwhile: the
		 * first raises it when its wait returns */
		record_locked(h->first, h->slot, h->si);
		atomic_fetch_add_explicit(&tp.nhanded, 1, memory_order_relaxed);
		return h->first;
	}
	return h->take ? NULL : hand_running_locked(h);
}

static bool hand_to_thread(int sig, const siginfo_t *si)
{
	struct handing h = { .sig = sig, .si = si };
	struct xsc_fiber *to;
	int why;

	xsc__spin_lock(&tp.lock);
	to = hand_locked(&h, &why);
	xsc__spin_unlock(&tp.lock);
	if (!to && why != MERGED)
		atomic_fetch_add_explicit(&tp.nunhanded, 1, memory_order_relaxed);
	return to || why == MERGED;
}

/* A process signal taken by a vcpu running thread cur: the kernel would
 * have given it to the main thread if that one takes it (Python relies on
 * it: its main thread waiting in a join must see the SIGINT another
 * thread sends), so it goes there when the main thread waits where a
 * signal reaches it at once; else it is cur's, as before. */
static bool hand_to_main(int sig, const siginfo_t *si, struct xsc_fiber *cur)
{
	struct handing h = { .sig = sig, .si = si };
	struct xsc_fiber *m;
	bool done = false;

	xsc__spin_lock(&tp.lock);
	m = main_locked();
	h.slot = hand_slot_locked(sig);
	if (h.slot == MERGED)
		done = true;
	else if (m && m != cur && h.slot >= 0)
		done = hand_one_locked(m, &h) == HAND_DONE;
	xsc__spin_unlock(&tp.lock);
	return done;
}

/* The watchdog's part in handing signals over (hand_to_thread).  A
 * process signal stays pending in the kernel while every vcpu runs a
 * fiber that blocks it, though another thread of the program accepts it
 * and waits: natively that thread would take it at once.  With one vcpu
 * and a thread that spins with sched_yield until the signal was handled,
 * it waited for good (tp_sigbusy, 2026-11-26).  Each tick the watchdog
 * (every signal blocked: sigpending shows the process's) takes such a
 * signal with its siginfo and hands it to that thread. */
static bool take_pending(int sig, siginfo_t *si)
{
	static const struct timespec zero;
	uint64_t one = SIGBIT(sig);

	return xsc__sys4(SYS_rt_sigtimedwait, (long)&one, (long)si, (long)&zero, 8) == sig;
}

static void hand_pending(void)
{
	uint64_t pend;

	if (xsc__sys2(SYS_rt_sigpending, (long)&pend, 8) < 0)
		return;
	pend &= ~(TP_NEVER_BLOCKED | SIGBIT(PREEMPT_SIG) | SIGBIT(SIGSETXID) |
		  SIGBIT(SIGCANCEL));
	for (int s = 1; pend && s <= 64; s++) {
		int why;

		if (!(pend & SIGBIT(s)) || !atomic_load(&tp_accepting[s]) ||
		    tp.act[s].handler == SIG_DFL || tp.act[s].handler == SIG_IGN)
			continue;
		struct handing h = { .sig = s, .take = take_pending };
		xsc__spin_lock(&tp.lock);
		hand_locked(&h, &why);
		xsc__spin_unlock(&tp.lock);
	}
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
 * (hand_to_thread) with the siginfo it came with. */
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

/* ---- signals -------------------------------------------------------------------- */

/* Every handler the program installs runs through here.  Its calls never
 * switch fibers: they trap (the selector stays BLOCK) into in_handler(),
 * which answers the ones that are the runtime's to answer (installing a
 * handler, thread ids and signals) and makes the rest directly.  With the
 * selector at ALLOW a handler's sigaction went straight to the kernel,
 * installing the program's handler without the trampoline and with libc's
 * restorer: that handler then ran with the selector at BLOCK, its
 * rt_sigreturn trapped and returned into garbage (Apache's SIGTERM under
 * xsc run ended in SIGSEGV). */
/* ---- preemption -------------------------------------------------------------------- */

/* A fiber that runs program code without a system call never gives its
 * vcpu back: a spin-wait for another fiber (InnoDB's group commit waits so
 * for an I/O completion another thread handles) then spins for good on one
 * vcpu, where the kernel would have preempted the thread.  A watchdog
 * thread looks at every vcpu each tick (XSC_PREEMPT_MS, default 10; 0:
 * off); one that has run the same fiber in program code for a whole tick
 * gets SIGURG, queued with a cookie (rt_tgsigqueueinfo), and its handler
 * (preempt) switches the fiber out from inside the signal frame: the
 * fiber goes to the back of its vcpu's queue and, when it runs again,
 * returns from the handler to where it was.  SIGURG, whose default action
 * is to ignore it, goes to the program's own handler when it is not ours.
 * A fiber that makes system calls without ever switching (a thread
 * polling with getppid, clock reads the vDSO cannot do, non-blocking
 * reads: all run inline) is in the runtime, not in program code, most of
 * the time the watchdog looks: it is told to yield at its next call
 * instead (want_yield, dispatch), or it starved the others on its vcpu
 * for good (a thread that waits for it to finish never ran again). */
static bool preempt(struct xsc_vcpu *v, siginfo_t *si, ucontext_t *uc)
{
	uintptr_t ip = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
	struct xsc_fiber *f = v->cur;

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
	/* sigreturn restores the mask the fiber had when tp_interrupted */
	xsc__sys4(SYS_rt_sigprocmask, SIG_SETMASK, &uc->uc_sigmask, 0, 8);
	TP(v)->sigmask = *(uint64_t *)&uc->uc_sigmask;
	/* what was sent or handed to it meanwhile, before its code goes on
	 * (hand_running_locked) */
	if (f->sig_pending & ~f->sigmask)
		xsc__tp_deliver(f);
	TP(v)->sel = TP_SEL_BLOCK;
	return true;
}

static void *watchdog(void *arg)
{
	struct { uint64_t switches; struct xsc_fiber *cur; } seen[256] = { { 0, NULL } };
	struct timespec tick = { tp.preempt_ns / 1000000000L, tp.preempt_ns % 1000000000L };
	long pid = xsc__sys0(SYS_getpid);

	(void)arg;
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
		hand_pending();
	}
	return NULL;
}

/* Starts the watchdog (also in a forked child: threads are not inherited). */
void tp_watch(void)
{
	pthread_attr_t attr;

	atomic_store(&tp.wd_tid, 0);
	if (tp.preempt_ns <= 0)
		return;
	xsc__attr_blocked(&attr);
	pthread_attr_setstacksize(&attr, 65536);
	if (pthread_create(&tp.wd_th, &attr, watchdog, NULL) != 0)
		xsc__say("xsc run: no preemption thread: a fiber that spins without "
			 "system calls keeps its vcpu\n");
	else {	/* it runs for good (xsc__own_thread_end never due) */
		xsc__own_thread_start();	/* not a thread of the program's */
		/* its id, before any set*id round can look for it (setxid) */
		while (!atomic_load(&tp.wd_tid))
			sched_yield();
	}
	pthread_attr_destroy(&attr);
}

/* A process signal a vcpu took between fibers goes to a fiber waiting
 * for it in sigsuspend, pause or sigwait*, as the kernel would have given
 * it to that thread: pending there, its wait woken, the handler run on it
 * (or the signal taken by its sigwait).  The vcpu let it in because the
 * mask it set when it went to sleep predates the wait (a fiber's wait
 * takes its signals for itself: tp_sigsuspend's tp_account).  Before,
 * the handler ran on the vcpu and the waiter slept on: tp_sigwait's
 * pause() hung about once in 300 runs under load.  Only with tp.lock
 * free: the vcpu may have taken the signal inside tp_scan, which holds
 * it; then the handler runs here as before. */
static bool hand_to_waiter(int sig)
{
	bool done = false;

	if (!xsc__spin_trylock(&tp.lock))
		return false;
	for (int i = 0; i < NTID && !done; i++)
		for (struct xsc_fiber *f = tp.tids[i]; f && !done; f = TP(f)->link)
			if (TP(f)->takes & SIGBIT(sig)) {
				pend_locked(f, sig);	/* park_for looks first */
				wake_wait_locked(f, sig);
				done = true;
			}
	xsc__spin_unlock(&tp.lock);
	return done;
}

static void hframe_push(struct tp_hframe *h, uintptr_t sp, unsigned char sel,
			const ucontext_t *uc);

/* ---- handlers deferred out of the runtime's locks ------------------------------------ */

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

/* The thread pointer a handler runs with: that of the thread it runs on,
 * v->cur's, or the vcpu's own between fibers, whatever the kernel thread
 * had loaded when the signal came.  The two differ around each switch
 * (runtime.c, tls_in), and where a load is an arch_prctl the kernel
 * delivers signals at its return, inside that window.  Returns the
 * pointer to load again after the handler, 0 if it was the right one
 * already.  Not while setxid() runs a handler as another thread: it
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

void tp_sig_tramp(int sig, siginfo_t *si, void *uc)
{
	struct xsc_vcpu *v = xsc__tp ? xsc__vcpu() : NULL;
	struct kact *k = &tp.act[sig];
	void *h = k->handler;
	unsigned long flags = k->flags;
	unsigned char sel = 0;
	int depth = 0;

	if (sig == PREEMPT_SIG && v && preempt(v, si, uc))
		return;
	if (v && v->nlocks > 0 && !fault(sig, si)) {
		defer(v, sig, si, uc);
		return;
	}
	/* the kernel's SIGPIPE for a write a runtime thread ran (send_sig:
	 * SI_USER from this process): the caller raises its own (preload.c
	 * dispatch), on the right thread; this copy would run the handler
	 * on whichever fiber the vcpu runs and interrupt its call.  Not in
	 * a handler of the program's: its calls run directly, on this
	 * thread, and the signal is theirs */
	if (sig == SIGPIPE && v && !TP(v)->in_handler && si->si_code == SI_USER &&
	    si->si_pid == (pid_t)xsc__sys0(SYS_getpid))
		return;
	if (v && !v->cur && h != SIG_DFL && h != SIG_IGN && sig != PREEMPT_SIG &&
	    hand_to_waiter(sig))
		return;
	if (v && h != SIG_DFL && h != SIG_IGN && sig != PREEMPT_SIG &&
	    sig != SIGSETXID && si->si_code != tp.tkill_code && !fault(sig, si) &&
	    (v->cur ? sig != SIGPIPE && sig != SIGXFSZ &&	/* the caller's */
		      hand_to_main(sig, si, v->cur) :
		      hand_to_thread(sig, si)))
		return;
	if (flags & SA_RESETHAND)
		k->handler = SIG_DFL;
	if (v) {
		sel = TP(v)->sel;
		if (!TP(v)->vfork)	/* a vfork child's calls stay direct */
			TP(v)->sel = TP_SEL_BLOCK;
		depth = TP(v)->in_handler++;
		if (depth < TP_HFRAMES)
			hframe_push(&TP(v)->hf[depth],
				    (uintptr_t)__builtin_frame_address(0), sel, uc);
		if (v->cur)
			TP(v->cur)->nsig++;
	}
	if (v && !v->cur && h != SIG_DFL && h != SIG_IGN) {
		/* a process signal taken by a vcpu between fibers: natively
		 * it would have tp_interrupted a thread's call (tp_scan picks one) */
		atomic_fetch_or_explicit(&tp.stray, SIGBIT(sig), memory_order_relaxed);
		atomic_store(&v->scan, 1);
		if (v->x)	/* taken as it went idle: do not sleep now */
			xsc__kick(v->x);
	}
	if (h != SIG_DFL && h != SIG_IGN) {
		uint16_t was_sel = 0;
		uint64_t was = v ? handler_tls(v, &was_sel) : 0;
		if (flags & SA_SIGINFO)
			((void (*)(int, siginfo_t *, void *))h)(sig, si, uc);
		else
			((void (*)(int))h)(sig);
		if (was)	/* as the interrupted code had it */
			set_fs(was, was_sel);
	}
	if (v) {	/* and any handler above it that was left by a jump */
		TP(v)->in_handler = depth;
		TP(v)->sel = sel;
	}
}

/* ---- handlers left by a jump ------------------------------------------------------ */

/* A handler that siglongjmps out never returns through the trampoline,
 * which counted it (in_handler): the thread's calls then all ran directly
 * on the vcpu, as a handler's do, and the first blocking one held it
 * (with one vcpu, the thread that was to answer never ran: tp_sigjmp).
 * Each running handler is recorded with the trampoline's frame and the
 * alternate stack it runs on; the jump functions (below) look where a
 * jump lands, and the handlers it leaves are closed. */
static void hframe_push(struct tp_hframe *h, uintptr_t sp, unsigned char sel,
			const ucontext_t *uc)
{
	uintptr_t lo = (uintptr_t)uc->uc_stack.ss_sp;

	h->sp = sp;
	h->sel = sel;
	h->lo = h->hi = 0;
	if (!(uc->uc_stack.ss_flags & SS_DISABLE) && sp >= lo &&
	    sp - lo < uc->uc_stack.ss_size) {
		h->lo = lo;
		h->hi = lo + uc->uc_stack.ss_size;
	}
}

/* Whether a jump to stack pointer sp stays inside handler h: on the stack
 * h runs on, below its trampoline. */
static bool hframe_holds(const struct tp_hframe *h, uintptr_t sp)
{
	if (h->lo)
		return sp >= h->lo && sp < h->hi && sp < h->sp;
	return sp < h->sp;
}

/* A jump to stack pointer sp from program code on vcpu v's fiber; mask:
 * the signal mask the jump restores, NULL if none.  Closes the handlers
 * the jump leaves.  true: it leaves them all and lands in thread code;
 * the mask is then set here, as the fiber's (the caller jumps without
 * setting it again). */
static bool handler_jump(struct xsc_vcpu *v, uintptr_t sp, const uint64_t *mask)
{
	struct xsc_fiber *f = v->cur;
	int d = TP(v)->in_handler, keep = d;
	unsigned char sel;
	uint64_t nm;

	while (keep > 0 && (keep > TP_HFRAMES || !hframe_holds(&TP(v)->hf[keep - 1], sp)))
		keep--;
	if (keep > 0 || !f) {
		TP(v)->in_handler = keep;	/* into an outer handler */
		return false;
	}
	sel = TP(v)->hf[0].sel;
	/* the mask: the one saved, or the handler's, which natively stays */
	if (mask)
		nm = *mask;
	else if (xsc__sys4(SYS_rt_sigprocmask, SIG_BLOCK, 0, (long)&nm, 8) < 0)
		nm = f->sigmask;
	nm &= ~TP_NEVER_BLOCKED;
	if (nm != f->sigmask)
		tp_account(f->sigmask, nm);
	f->sigmask = nm;
	TP(v)->sigmask = nm;
	xsc__sys4(SYS_rt_sigprocmask, SIG_SETMASK, (long)&nm, 0, 8);
	TP(v)->in_handler = 0;
	/* program code: its calls go to the runtime again (a vfork child
	 * borrowing the vcpu keeps making them directly) */
	TP(v)->sel = TP(v)->vfork ? sel : TP_SEL_BLOCK;
	return true;
}

/* The jump functions, interposed by symbol (the program's calls; glibc's
 * own, for its cancellation, never leave a program's handler).  All four
 * are glibc's siglongjmp underneath: the mask is restored if sigsetjmp
 * saved it, then the registers.  When the jump leaves every handler, the
 * mask is set by handler_jump (as the fiber's, not only the kernel
 * thread's) and the jump is made by a copy of the buffer that saved
 * none: from there to the landing no system call is made. */
typedef void (*jump_fn)(struct __jmp_buf_tag *, int);
static jump_fn real_siglongjmp, real_longjmp, real_ulongjmp, real_longjmp_chk;

void tp_jumps_init(void)	/* before main(): dlsym is not for handlers */
{
	real_siglongjmp = (jump_fn)dlsym(RTLD_NEXT, "siglongjmp");
	real_longjmp = (jump_fn)dlsym(RTLD_NEXT, "longjmp");
	real_ulongjmp = (jump_fn)dlsym(RTLD_NEXT, "_longjmp");
	real_longjmp_chk = (jump_fn)dlsym(RTLD_NEXT, "__longjmp_chk");
}

/* The stack pointer a jump buffer lands on: glibc x86-64 keeps it at
 * JB_RSP (6), mangled with the thread's pointer guard (%fs:0x30) and
 * rotated left by 17 (PTR_MANGLE). */
static uintptr_t jmp_sp(const struct __jmp_buf_tag *env)
{
	uintptr_t m = (uintptr_t)env->__jmpbuf[6], guard;

	__asm__("movq %%fs:0x30, %0" : "=r"(guard));
	return ((m >> 17) | (m << 47)) ^ guard;
}

static _Noreturn void jump(struct __jmp_buf_tag *env, int val, jump_fn *real,
			   const char *name)
{
	struct xsc_vcpu *v;

	if (xsc__tp && (v = xsc__vcpu()) != NULL && v->cur && TP(v)->in_handler &&
	    real_siglongjmp) {
		const uint64_t *mask = env->__mask_was_saved ?
				       (const uint64_t *)&env->__saved_mask : NULL;
		if (handler_jump(v, jmp_sp(env), mask)) {
			struct __jmp_buf_tag copy = *env;
			copy.__mask_was_saved = 0;
			real_siglongjmp(&copy, val);
		}
	}
	if (!*real)	/* called before main(), from a constructor */
		*real = (jump_fn)dlsym(RTLD_NEXT, name);
	(*real)(env, val);
	__builtin_unreachable();
}

XSC_EXPORT void siglongjmp(sigjmp_buf env, int val)
{
	jump(env, val, &real_siglongjmp, "siglongjmp");
}

XSC_EXPORT void longjmp(jmp_buf env, int val)
{
	jump(env, val, &real_longjmp, "longjmp");
}

XSC_EXPORT void _longjmp(jmp_buf env, int val)
{
	jump(env, val, &real_ulongjmp, "_longjmp");
}

XSC_EXPORT void __longjmp_chk(jmp_buf env, int val)
{
	jump(env, val, &real_longjmp_chk, "__longjmp_chk");
}

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

	if (sig == PREEMPT_SIG && tp.preempt_ns > 0 &&
	    (k.handler == SIG_DFL || k.handler == SIG_IGN)) {
		/* the watchdog's signal: the program sees its own disposition
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
	/* in a handler, the code it tp_interrupted may hold the lock */
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
	TP(v)->sigmask = nm;
	return r;
}

/* glibc's set*id (setuid(3) and its kin) signals every thread in its list
 * with SIGSETXID and waits, on a tp_futex, until each one's handler has made
 * the call too.  Here those threads are fibers, vcpus and readiness
 * threads: a fiber blocked in a call would not run its handler for long,
 * and a kernel thread's handler wakes the tp_futex in the kernel, where the
 * fiber does not wait.  So the handler runs at once, here, as the target
 * (its thread pointer loaded), its set*id call made once on this kernel
 * thread whichever thread it is for, with the same result for each
 * (in_handler; glibc aborts on results that differ): the initiator's own
 * call that follows is recorded as process-wide, and every kernel thread
 * of the runtime makes it (creds.c).  false: tid is none of those
 * threads. */
static bool setxid(int tid)
{
	struct xsc_vcpu *v = xsc__vcpu();
	struct xsc_fiber *f = v->cur;
	struct kact *k = &tp.act[SIGSETXID];
	uint64_t tcb = 0, all = ~SIGBIT(SIGSYS), old;
	uint16_t tsel = 0;
	unsigned char sel;
	siginfo_t si;

	if (k->handler == SIG_DFL || k->handler == SIG_IGN || !(k->flags & SA_SIGINFO))
		return false;
	xsc__spin_lock(&tp.lock);
	for (struct xsc_fiber *t = tp.tids[(unsigned)tid % NTID]; t; t = TP(t)->link)
		if (t->vtid == tid) {
			tcb = t->fs;
			tsel = t->fs_sel;
		}
	xsc__spin_unlock(&tp.lock);
	if (!tcb && tid && tid == atomic_load(&tp.wd_tid))
		tcb = (uint64_t)tp.wd_th;	/* glibc x86-64: a pthread_t is its TCB */
	for (int i = 0; !tcb && i < xsc__rt.n; i++) {
		struct xsc_vcpu *u = &xsc__rt.v[i];
		if (TP(u)->ktid == tid) {
			tcb = u->own_fs;
			tsel = u->own_sel;
		}
		else if (u->x)
			xsc__fdwait_thread(u->x, tid, &tcb);
	}
	if (!tcb)
		return false;
	memset(&si, 0, sizeof(si));
	si.si_signo = SIGSETXID;
	si.si_code = SI_TKILL;
	si.si_pid = (pid_t)xsc__sys0(SYS_getpid);
	si.si_uid = (uid_t)xsc__sys0(SYS_getuid);
	xsc__sys4(SYS_rt_sigprocmask, SIG_SETMASK, &all, &old, 8);
	set_fs(tcb, tsel);
	TP(v)->setxid = true;
	sel = TP(v)->sel;
	if (TP(v)->in_handler < TP_HFRAMES)
		TP(v)->hf[TP(v)->in_handler] = (struct tp_hframe){
			.sp = (uintptr_t)__builtin_frame_address(0), .sel = sel };
	TP(v)->in_handler++;
	TP(v)->sel = TP_SEL_BLOCK;	/* its calls trap: in_handler() */
	((void (*)(int, siginfo_t *, void *))k->handler)(SIGSETXID, &si, NULL);
	TP(v)->sel = sel;
	TP(v)->in_handler--;
	TP(v)->setxid = false;
	set_fs(f->fs, f->fs_sel);
	xsc__sys4(SYS_rt_sigprocmask, SIG_SETMASK, &old, 0, 8);
	return true;
}

long tp_kill(long nr, const long *a)
{
	int tid = (int)(nr == SYS_tgkill ? a[1] : a[0]);
	int sig = (int)(nr == SYS_tgkill ? a[2] : a[1]);
	struct xsc_fiber *f = cur_fiber();
	int host;

	if (sig == SIGSETXID && f && nr == SYS_tgkill && a[0] == xsc__sys0(SYS_getpid) &&
	    setxid(tid))
		return 0;
	if (f && tid == f->vtid && sig > 0 && sig <= 64 && (f->sigmask & SIGBIT(sig))) {
		/* blocked: pending for this thread, not for the kernel thread
		 * that other fibers share */
		xsc__spin_lock(&tp.lock);
		pend_locked(f, sig);
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

/* ---- waiting for signals ----------------------------------------------------------- */

/* sigwaitinfo, sigtimedwait, sigsuspend and pause park the fiber, not its
 * vcpu: a daemon's signal thread waiting in the kernel held a vcpu for
 * good (with one vcpu, Apache never answered).  A wait ends on a signal
 * sent to the thread (kept in the fiber: tp_tid_post writes the wait's
 * eventfd) or pending for the process (a signalfd for the set polls
 * readable; vcpus with no fiber to run block what no thread accepts, so
 * such a signal stays pending for the waiter: see tp_account()). */

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

/* The signals fiber f takes for itself while it waits (hand_to_waiter). */
static void takes(struct xsc_fiber *f, uint64_t set)
{
	xsc__spin_lock(&tp.lock);
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
	 * predates this) hands it over (hand_to_waiter) */
	takes(f, ~nm & ~SIGBIT(SIGSYS));
	tp_account(old, ~0ULL);
	for (;;) {
		struct xsc_vcpu *v = xsc__vcpu();	/* may change after a park */
		uint32_t before = TP(f)->nsig;

		f->sigmask = nm;
		TP(v)->sigmask = nm;
		xsc__sys4(SYS_rt_sigprocmask, SIG_SETMASK, (long)&nm, 0, 8);
		if (f->sig_pending & ~nm)
			xsc__tp_deliver(f);
		f->sigmask = old;
		TP(v)->sigmask = old;
		xsc__sys4(SYS_rt_sigprocmask, SIG_SETMASK, (long)&old, 0, 8);
		if (TP(f)->nsig != before) {
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
