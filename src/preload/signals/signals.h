/*
 * signals.h - what the files of src/preload/signals/ share and nothing
 * else calls.  Their entry points for the rest of the preload library
 * are declared in shim.h.
 *
 *   mask.c       which signals some thread accepts: the idle vcpus' mask
 *   interrupt.c  signals that interrupt blocked calls (EINTR, SA_RESTART)
 *   pending.c    signals sent to one thread: recorded, then raised on it
 *   handover.c   process signals a vcpu or the watchdog took, handed to
 *                a thread of the program's
 *   preempt.c    the watchdog: preemption of fibers that never make a call
 *   handlers.c   the trampoline every handler runs through; deferred ones
 *   longjmp.c    handlers left by a jump
 *   action.c     sigaction, sigprocmask, kill and raise
 *   sigwait.c    sigwaitinfo, sigtimedwait, sigsuspend, pause
 *
 * "_locked" functions want tp.lock held.
 */
#ifndef XSC_PRELOAD_SIGNALS_H
#define XSC_PRELOAD_SIGNALS_H

#include "../shim.h"

/* Real-time signals (32..64) queue: every instance sent to a thread is
 * delivered once, as the kernel does; the others merge in the pending
 * mask.  The counts change under tp.lock. */
#define RTFIRST 32

static inline bool is_rt(int s)
{
	return s >= RTFIRST && s <= 64;
}

/* interrupt.c */
int tp_interruptible(long nr);
void tp_interrupt(struct xsc_fiber *f);
bool tp_in_call(struct xsc_fiber *f);

/* pending.c */
void tp_pend_locked(struct xsc_fiber *f, int sig);
bool tp_wake_wait_locked(struct xsc_fiber *f, int sig);

/* Whether a thread or vcpu with signal mask m blocks nothing that another
 * thread of the program takes (sleeping vcpus block the rest: mask.c). */
static inline bool tp_takes_all(uint64_t m)
{
	return !(m & ~atomic_load(&xsc__tp_idlemask) & ~TP_NEVER_BLOCKED);
}

/* handover.c */
/* 1: handed (or merged with one handed), 0: no living thread takes it,
 * -1: no slot */
int tp_hand_to_thread(int sig, const siginfo_t *si);
bool tp_hand_to_main(int sig, const siginfo_t *si, struct xsc_fiber *cur);
bool tp_hand_to_waiter(int sig);
void tp_hand_pending(void);

/* preempt.c */
bool tp_preempt(struct xsc_vcpu *v, siginfo_t *si, ucontext_t *uc);

/* longjmp.c */
void tp_hframe_push(struct tp_hframe *h, uintptr_t sp, unsigned char sel,
		    const ucontext_t *uc);

#endif
