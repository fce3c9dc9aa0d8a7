/*
 * state.h - transparent mode's own state in the runtime's fibers and
 * vcpus (struct xsc_fiber's and struct xsc_vcpu's member `tp`): owned and
 * written by the preload library (src/preload/), read by the runtime only
 * where it hands a fiber over (sched/runtime.c, sched/syscalls.c,
 * sched/sandbox.c).  Every field is zero for a program that does not run
 * under `xsc run`.
 */
#ifndef XSC_PRELOAD_STATE_H
#define XSC_PRELOAD_STATE_H

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct xsc_fiber;
struct xsc_vcpu;

/* A thread of an unmodified program. */
struct xsc_tp_fiber {
	void *regs;			/* registers a cloned thread starts with */
	struct xsc_fiber *link;		/* thread id table chain */
	uint64_t pending;		/* signals sent to it by other threads */
	uint16_t rtq[33];		/* of those, real-time ones (32..64):
					   instances queued, as the kernel queues */
	uint64_t wait_set;		/* signals a sigwait/sigsuspend waits for */
	uint64_t takes;			/* signals it takes for itself for the whole
					   of a sigwait/sigsuspend/pause (tp.lock) */
	int wait_fd;			/* that wait's eventfd + 1 (0: none) */
	uint32_t nsig;			/* handlers run on it (sigsuspend) */
	int call;			/* entry id + 1 of the call it waits in */
	long call_nr;			/* that call's number */
	const long *call_args;		/* a sleep's arguments, and ... */
	int64_t call_t0;		/* ... when it began (xsc__now()) */
	_Atomic int intr;		/* a signal asked to interrupt it: 1, 2 canceled */
	bool setxid;			/* its next set*id is glibc's, process-wide */
	long setxid_ret;		/* what the handlers' set*id got */
	uintptr_t stack_lo, stack_hi;	/* its stack as clone3 gave it (0: not
					   known): mapped while it runs */
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
	int in_handler;			/* program signal handlers running: the
					   depth of hf[] (signals/longjmp.c) */
	struct tp_hframe {		/* one running handler (tp_sig_tramp) */
		uintptr_t sp;		/* the trampoline's frame: the handler's
					   stack is below it */
		uintptr_t lo, hi;	/* the alternate stack it runs on, if any */
		unsigned char sel;	/* the selector to go back to */
	} hf[TP_HFRAMES];
	bool vfork;			/* the stub re-executes a vfork */
	bool repin;			/* unpinned for a process clone */
	bool setxid;			/* running glibc's setxid handler */
	_Atomic int intr;		/* some fiber here is to be interrupted */
	uint64_t fs;			/* this kernel thread's own thread pointer */
	uint64_t sigmask;		/* the kernel thread's current mask */
	int ktid;			/* this kernel thread's real id */
	uint64_t ntrap, nfast;		/* calls seen through SIGSYS / by symbol */
	uint64_t nsite;			/* calls through rewritten sites */
	_Atomic int want_yield;		/* the watchdog saw one fiber run a whole
					   tick: yield at its next call */
	volatile uint64_t deferred;	/* signals taken while the runtime held a
					   lock here, their handlers not run yet */
	siginfo_t dsi[64];		/* ... and what each came with */
	uintptr_t okpage[16];		/* pages a futex word was read on (preload.c,
					   tp_readable), valid while ... */
	uint64_t okepoch;		/* ... tp_map_epoch is this */
};

#endif
