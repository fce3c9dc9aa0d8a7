/*
 * state.h - transparent mode's own state in the runtime's fibers and
 * vcpus: their extension areas (ext[], sched/ext.h), reached with TP(f)
 * and TP(v).  The runtime never reads them; what it reads is its own
 * (sig_pending, intr, call_id, creds_wide, tstack_lo/hi, deferred, scan,
 * own_fs in sched.h), written here through the contract.  Every field is
 * zero for a program that does not run under `xsc run`.
 */
#ifndef XSC_PRELOAD_STATE_H
#define XSC_PRELOAD_STATE_H

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sched/sched.h"

/* A thread of an unmodified program. */
struct xsc_tp_fiber {
	void *regs;			/* registers a cloned thread starts with */
	struct xsc_fiber *link;		/* thread id table chain */
	uint16_t rtq[33];		/* of the signals sent to it
					   (f->sig_pending), real-time ones
					   (32..64): instances queued, as the
					   kernel queues */
	uint64_t wait_set;		/* signals a sigwait/sigsuspend waits for */
	uint64_t takes;			/* signals it takes for itself for the whole
					   of a sigwait/sigsuspend/pause (tp.lock) */
	int wait_fd;			/* that wait's eventfd + 1 (0: none) */
	long call_nr;			/* the posted call's number (f->call_id) */
	const long *call_args;		/* its arguments */
	int64_t call_t0;		/* when a sleep began (xsc__now()) */
	long setxid_ret;		/* what the handlers' set*id got
					   (f->creds_wide) */
	void *spawn_site;		/* the caller of the pthread_create it is
					   in: the new thread's f->created_at */
};

/* A vcpu running such threads.  ret, sel and self are read at fixed
 * offsets through %gs (the stub in stub_x86_64.S, gs_vcpu() in
 * shim.h): the member is first in struct xsc_vcpu, and these three
 * first in it (shim.h asserts the offsets). */
#define TP_HFRAMES 8	/* nested handlers tracked (deeper ones: counted) */

struct xsc_tp_vcpu {
	uint64_t ret;			/* where the stub returns to: %gs:0 */
	volatile unsigned char sel;	/* syscall user dispatch selector: %gs:8 */
	struct xsc_vcpu *self;		/* the vcpu itself: %gs:16 */
	/* ... then, in the same cache line, what every call of the
	 * program's reads: a call that goes to the kernel evicts the
	 * runtime's lines, and each one read again costs a miss */
	int in_handler;			/* program signal handlers running: the
					   depth of hf[] (signals/longjmp.c) */
	_Atomic int want_yield;		/* the watchdog saw one fiber run a whole
					   tick: yield at its next call */
	bool repin;			/* unpinned for a process clone */
	bool vfork;			/* the stub re-executes a vfork */
	bool setxid;			/* running glibc's setxid handler */
	int ktid;			/* this kernel thread's real id */
	uint64_t ntrap, nfast;		/* calls seen through SIGSYS / by symbol */
	uint64_t nsite;			/* calls through rewritten sites */
	struct tp_hframe {		/* one running handler (tp_sig_tramp) */
		uintptr_t sp;		/* the trampoline's frame: the handler's
					   stack is below it */
		uintptr_t lo, hi;	/* the alternate stack it runs on, if any */
		unsigned char sel;	/* the selector to go back to */
	} hf[TP_HFRAMES];
	uint64_t sigmask;		/* the kernel thread's current mask */
	siginfo_t dsi[64];		/* signals taken while the runtime held a
					   lock here, their handlers not run yet
					   (v->deferred): what each came with */
	uintptr_t okpage[16];		/* pages a futex word was read on (preload.c,
					   tp_readable), valid while ... */
	uint64_t okepoch;		/* ... tp_map_epoch is this */
};

_Static_assert(sizeof(struct xsc_tp_fiber) <= XSC_FIBER_EXT, "fiber extension area");
_Static_assert(sizeof(struct xsc_tp_vcpu) <= XSC_VCPU_EXT, "vcpu extension area");
_Static_assert(offsetof(struct xsc_vcpu, ext) == 0, "the vcpu's area is at %gs:0");
_Static_assert(offsetof(struct xsc_tp_vcpu, nsite) + sizeof(uint64_t) <= 64,
	       "what every call reads: one cache line");

/* The extension area of a fiber or a vcpu. */
static inline struct xsc_tp_fiber *tp_of_fiber(const struct xsc_fiber *f)
{
	return (struct xsc_tp_fiber *)(uintptr_t)f->ext;
}
static inline struct xsc_tp_vcpu *tp_of_vcpu(const struct xsc_vcpu *v)
{
	return (struct xsc_tp_vcpu *)(uintptr_t)v->ext;
}
#define TP(p) _Generic((p), \
	struct xsc_fiber *: tp_of_fiber, const struct xsc_fiber *: tp_of_fiber, \
	struct xsc_vcpu *: tp_of_vcpu, const struct xsc_vcpu *: tp_of_vcpu)(p)

#endif
