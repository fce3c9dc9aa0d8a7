/*
 * handover.c - transparent mode: process signals the kernel gave to a
 * kernel thread of the runtime (a vcpu between fibers, a vcpu running
 * another thread, or the watchdog taking one every thread blocks) are
 * handed to the thread of the program the kernel would have picked, so
 * that the handler runs on that thread, with its id and its TLS.
 *
 * Rules: the tp.handed slots change under tp.lock; a handed signal is
 * recorded before its thread's wait is interrupted (the thread may run
 * at once); the thread raises it itself (pending.c).
 */
#include "signals.h"

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
 * those have their own way, tp_hand_to_waiter). */
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
 * (tp_interrupt()), or on a futex, which it is taken off and readied with
 * EINTR (xsc__futex_interrupt).  The record comes first: the thread may
 * run at once, and raises what it finds before its call returns.
 * HAND_GONE: the signal was not in the kernel any more. */
static int hand_one_locked(struct xsc_fiber *f, struct handing *h)
{
	bool call = tp_in_call(f) && may_take(f, h->sig);
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
		tp_interrupt(f);
	else if (!xsc__futex_interrupt(f)) {
		unrecord_locked(f, h->slot, was);
		h->first = h->first ? h->first : f;
		return HAND_NO;
	}
	atomic_fetch_add_explicit(&tp.nhanded, 1, memory_order_relaxed);
	XSC_PROBE3(signal_handoff, h->sig, f, f->vtid);
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
				if (__atomic_load_n(&f->call_id, __ATOMIC_SEQ_CST) ||
				    tp_in_call(f))
					tp_interrupt(f);
				else
					xsc__futex_interrupt(f);
				atomic_fetch_add_explicit(&tp.nhanded, 1,
							  memory_order_relaxed);
				XSC_PROBE3(signal_handoff, h->sig, f, f->vtid);
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
		XSC_PROBE3(signal_handoff, h->sig, h->first, h->first->vtid);
		return h->first;
	}
	return h->take ? NULL : hand_running_locked(h);
}

int tp_hand_to_thread(int sig, const siginfo_t *si)
{
	struct handing h = { .sig = sig, .si = si };
	struct xsc_fiber *to;
	int why;

	xsc__spin_lock(&tp.lock);
	to = hand_locked(&h, &why);
	xsc__spin_unlock(&tp.lock);
	return to || why == MERGED ? 1 : why == NO_SLOT ? -1 : 0;
}

/* A process signal taken by a vcpu running thread cur: the kernel would
 * have given it to the main thread if that one takes it (Python relies on
 * it: its main thread waiting in a join must see the SIGINT another
 * thread sends), so it goes there when the main thread waits where a
 * signal reaches it at once; else it is cur's, as before. */
bool tp_hand_to_main(int sig, const siginfo_t *si, struct xsc_fiber *cur)
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

/* ---- process signals every vcpu's fiber blocks ---------------------------------- */

/* The watchdog's part in handing signals over (tp_hand_to_thread).  A
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

void tp_hand_pending(void)
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

/* ---- threads waiting for signals ------------------------------------------------ */

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
bool tp_hand_to_waiter(int sig)
{
	bool done = false;

	if (!xsc__spin_trylock(&tp.lock))
		return false;
	for (int i = 0; i < NTID && !done; i++)
		for (struct xsc_fiber *f = tp.tids[i]; f && !done; f = TP(f)->link)
			if (TP(f)->takes & SIGBIT(sig)) {
				tp_pend_locked(f, sig);	/* park_for looks first */
				tp_wake_wait_locked(f, sig);
				XSC_PROBE3(signal_handoff, sig, f, f->vtid);
				done = true;
			}
	xsc__spin_unlock(&tp.lock);
	return done;
}

/* The runtime's question (ext.h may_wait): may f, with nothing else
 * runnable on its vcpu, wait in the kernel while the program's other
 * threads are parked there?  A signal could ready one of them: one no
 * thread waits for in the sigwait family (they take theirs through the
 * vcpus' wakes, not a signal to the waiting thread), and f accepts every
 * signal some thread accepts, so the kernel gives each to f's kernel
 * thread, which interrupts the wait, or to another vcpu's, whose hand
 * over readies a thread on f's vcpu and so stops the wait
 * (tp_stop_held).  That stop is PREEMPT_SIG: f must not block it (a
 * program that blocks every signal in every thread would have had its
 * stops wait for the call's own end). */
bool tp_may_wait(struct xsc_fiber *f)
{
	return !atomic_load(&tp.nsigwait) && !(f->sigmask & SIGBIT(PREEMPT_SIG)) &&
	       tp_takes_all(f->sigmask);
}
