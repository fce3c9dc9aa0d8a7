/*
 * mask.c - transparent mode: which signals some thread of the program
 * accepts, counted per signal over every thread's mask, and the mask the
 * idle vcpus take from those counts.
 *
 * Rules: every change of a thread's mask goes through tp_account (with
 * the mask before and after), so that the counts stay exact; the idle
 * mask never holds SIGSYS, SIGKILL or SIGSTOP.
 */
#include "signals.h"

/* Which signals some thread of the program accepts (leaves unblocked).
 * A vcpu with no fiber to run blocks the others, as the program's threads
 * do: a process-directed signal every thread blocks stays pending for the
 * thread that waits for it in sigwait (sigwait.c), instead of being taken,
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
	/* a vcpu the watchdog let be (ops->solo) may block, now, what
	 * another thread takes.  A thread that blocks more changes only
	 * its own vcpu's answer: tp_vcpu_mask, once that mask is stored. */
	if (changed)
		xsc__rt_watch();
}

/* v's kernel thread has taken mask m, from its fiber (the mask in force
 * until the next switch or change).  ops->solo reads it from the
 * watchdog: where m blocks more than before, a watchdog asleep beside v
 * looks again unless v is still alone (xsc__rt_busy).  Before, a thread
 * that blocked more woke it before the store, and a watchdog that looked
 * between the two saw the old mask and slept on. */
void tp_vcpu_mask(struct xsc_vcpu *v, uint64_t m)
{
	uint64_t was = TP(v)->sigmask;

	__atomic_store_n(&TP(v)->sigmask, m, __ATOMIC_SEQ_CST);
	if (m & ~was)
		xsc__rt_busy(v);
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
