/*
 * shim.h - what the files of the preload library (transparent mode,
 * `xsc run`) share: its state (tp), the kernel's structures it reads, and
 * the functions one file calls in another.
 *
 *   preload.c   entry from libc, the per-call policy (dispatch) and the
 *               emulators of the table's XSC_SHIM_EMULATE rows
 *   signals/    handlers, masks, signals between threads, interrupted
 *               calls, preemption, sigwait and sigsuspend (signals.h
 *               lists its files)
 *   threads.c   clone (threads as fibers), exit, fork and exec, futexes,
 *               thread ids
 *   setxid.c    glibc's set*id round answered for every thread
 *   start.c     start-up (vcpus, dispatch, the main thread as a fiber)
 *               and forked children
 *   wrap.c      the interposed libc functions
 *   rewrite.c   libc's syscall sites rewritten into jumps
 */
#ifndef XSC_PRELOAD_SHIM_H
#define XSC_PRELOAD_SHIM_H

#include "preload.h"


#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stddef.h>
#include <link.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/ucontext.h>
#include <unistd.h>

#include "internal.h"

#ifndef PR_SET_SYSCALL_USER_DISPATCH
#define PR_SET_SYSCALL_USER_DISPATCH 59
#define PR_SYS_DISPATCH_OFF 0
#define PR_SYS_DISPATCH_ON 1
#endif
#ifndef HWCAP2_FSGSBASE
#define HWCAP2_FSGSBASE (1 << 1)
#endif
#define ARCH_SET_GS 0x1001
#define ARCH_SET_FS 0x1002
#ifndef CLONE_CLEAR_SIGHAND
#define CLONE_CLEAR_SIGHAND 0x100000000ULL
#endif
#ifndef SA_RESTORER
#define SA_RESTORER 0x04000000
#endif
#define RSEQ_SIG 0x53053053
#define KEEP_REGS LONG_MIN	/* dispatch result: registers already set */
#define SIGBIT(s) (1ULL << ((s) - 1))
/* never in a thread's mask: SIGKILL and SIGSTOP cannot be blocked, and
 * SIGSYS carries the interception */
#define TP_NEVER_BLOCKED (SIGBIT(SIGSYS) | SIGBIT(SIGKILL) | SIGBIT(SIGSTOP))
#define SIGCANCEL 32		/* glibc's internal cancellation signal */
#define SIGSETXID 33		/* glibc's: every thread makes a set*id call */
#define PREEMPT_SIG SIGURG	/* preemption (signals/preempt.c) */

void xsc__tp_resume(const greg_t *g) __attribute__((noreturn));
void xsc__tp_native_stub(void);
void xsc__tp_restorer(void);

struct kact {		/* the kernel's struct sigaction */
	void *handler;
	unsigned long flags;
	void *restorer;
	uint64_t mask;
};

struct clone_args_k {
	uint64_t flags, pidfd, child_tid, parent_tid, exit_signal;
	uint64_t stack, stack_size, tls, set_tid, set_tid_size, cgroup;
};

#define NTID 1024
#define TP_NHANDED 32	/* process signals handed over, not yet raised */

_Static_assert(offsetof(struct xsc_tp_vcpu, ret) == 0, "stub reads %gs:0");
_Static_assert(offsetof(struct xsc_tp_vcpu, sel) == 8, "stub writes %gs:8");
_Static_assert(offsetof(struct xsc_tp_vcpu, self) == 16, "gs_vcpu reads %gs:16");

struct tp_state {
	int (*main)(int, char **, char **);
	uintptr_t text_lo, text_hi;
	_Atomic int next_vtid;
	_Atomic long nthreads;		/* fibers created by clone */
	_Atomic long live;		/* the program's threads not ended yet */
	uint32_t lock;			/* act[] and the tid table */
	struct kact act[65];		/* handlers as the program sees them */
	struct xsc_fiber *tids[NTID];
	unsigned char affinity[128];	/* the process's mask at start */
	long affinity_len;
	bool verbose;
	_Atomic int warned_sigsys, warned_clone, warned_futex, warned_affinity;
	_Atomic long kwakes, kwoken;	/* futex wakes passed on to the kernel */
	int tkill_code;			/* the si_code this kernel gives tgkill */
	_Atomic uint64_t stray;		/* handled outside any thread (scan) */
	/* process signals a vcpu between fibers took and handed to a thread
	 * (signals/handover.c), until that thread raises them: f is
	 * NULL in a free slot.  Under lock. */
	struct tp_handed {
		struct xsc_fiber *f;
		siginfo_t si;
	} handed[TP_NHANDED];
	_Atomic long nhanded, nunhanded;	/* handed; run on a vcpu instead */
	_Atomic int nsigwait;		/* threads in the sigwait family */
	struct xsc_runtime_config cfg;	/* as the runtime was started */
	bool fork_native;		/* XSC_FORK=native: children run natively */
	bool solo;			/* one thread: native until the second
					   (start.c, go_live) */
	/* a forked child, until libc's fork has reset its own state and
	 * runs the child handlers (rearm): the thread that forked, on which
	 * vcpu, and the child's pid */
	struct xsc_fiber *child;
	struct xsc_vcpu *child_v;
	long child_pid;
	/* preemption (watchdog): the tick, and the cookie its signals carry */
	long preempt_ns;
	int preempt_cookie;
	int here_cookie;	/* its signals that stop a call made in a vcpu's
				   kernel thread (signals/interrupt.c) */
	_Atomic long npreempt;
	_Atomic long ndeferred;	/* handlers deferred out of runtime locks */
	_Atomic int wd_tid;		/* the watchdog thread (setxid) */
	pthread_t wd_th;
};
extern struct tp_state tp;	/* defined in preload.c */

/* ---- small helpers ----------------------------------------------------------- */

/* The thread pointer: glibc's TCB starts with a pointer to itself, so
 * one FS-relative load reads it without FSGSBASE instructions. */
static inline uint64_t rdfsbase(void)
{
	uint64_t v;
	__asm__ __volatile__("mov %%fs:0, %0" : "=r"(v));
	return v;
}

/* Loads thread pointer v, by its LDT selector sel where it has one. */
static inline void set_fs(uint64_t v, uint16_t sel)
{
	struct xsc_vcpu *u = xsc__vcpu();

	xsc__tls_load(v, sel, u ? &u->tls_sys : NULL);
}

static inline void warn_once(_Atomic int *flag, const char *msg)
{
	if (!atomic_exchange(flag, 1))
		xsc__say("xsc run: %s\n", msg);
}

static inline struct xsc_fiber *cur_fiber(void)
{
	struct xsc_vcpu *v = xsc__vcpu();
	return v ? v->cur : NULL;
}

/* preload.c */
long tp_check_emulators(void);
int tp_copy_in(void *dst, const void *usrc, size_t len);

/* kinds.c: descriptor kinds from the program's own calls (sched/fdkind.c) */
enum { TP_KC_NONE, TP_KC_STAT, TP_KC_CLOSE, TP_KC_NEW, TP_KC_SETFL, TP_KC_DUP };
struct tp_kcall {
	int what, first, last;
	uint32_t seen;
	uint64_t marked;
};
void tp_kinds_before(long nr, const long *a, struct tp_kcall *k);
void tp_kinds_after(long nr, const long *a, const struct tp_kcall *k, long r);
void tp_kinds_init(void);

/* ways.c */
void tp_ways_reaped(const struct xsc_fiber *f);
void tp_ways_report(const uint64_t *all);
int tp_copy_out(void *udst, const void *src, size_t len);
int tp_readable(struct xsc_vcpu *v, const uint32_t *u);
void tp_maps_call(long nr, const long *a);
void tp_on_sigsys(int sig, siginfo_t *si, void *uc_);

/* signals/mask.c */
extern _Atomic int tp_accepting[65];
extern uint32_t tp_mask_lock;
void tp_account(uint64_t was, uint64_t now);
void tp_idle_mask(bool tighter);
void tp_vcpu_mask(struct xsc_vcpu *v, uint64_t m);
/* signals/interrupt.c */
void tp_scan(struct xsc_vcpu *v);
long tp_interrupted(struct xsc_fiber *f, long nr, long r);
long tp_interrupted_args(struct xsc_fiber *f, long nr, const long *a, long r);
bool tp_here_stopped(struct xsc_fiber *f);
void tp_stop_held(struct xsc_vcpu *v);
bool tp_solo(struct xsc_vcpu *v);
void tp_posted(struct xsc_fiber *f);
bool tp_may_wait(struct xsc_fiber *f);
/* signals/pending.c */
int tp_tid_post(int vtid, int sig);
void tp_handed_forget(struct xsc_fiber *f);	/* NULL: all */
/* signals/preempt.c */
void tp_watch(void);
/* signals/handlers.c */
void tp_sig_tramp(int sig, siginfo_t *si, void *uc);
void tp_run_deferred(struct xsc_vcpu *v);
/* signals/longjmp.c */
void tp_jumps_init(void);
/* signals/action.c */
long tp_install(int sig, const struct kact *p);
long tp_sigaction(const long *a, bool in_sig);
long tp_sigprocmask(const long *a, ucontext_t *uc);
long tp_handler_sigprocmask(const long *a, ucontext_t *uc);
long tp_kill(long nr, const long *a);
long tp_raise(int sig);
/* signals/sigwait.c */
long tp_sigtimedwait(const long *a);
long tp_sigsuspend(const long *a);

/* start.c */
extern _Atomic uint64_t xsc__tp_idlemask;	/* a sleeping vcpu's mask */

/* threads.c */
extern struct xsc_pool tp_recs;
struct xsc_fiber *tp_rec_get(void);
void tp_spawn_site(void *site);
long tp_spawn(uint64_t flags, uint64_t lo, uint64_t sp, int *ptid, int *ctid,
	     uint64_t tls, ucontext_t *uc);
void tp_reap(struct xsc_fiber *f);
_Noreturn void tp_thread_exit(int code);
void tp_repin(struct xsc_vcpu *v);
long tp_fork_like(long nr, const long *a, ucontext_t *uc);
long tp_exec(long nr, const long *a);
long tp_futex(const long *a);
void tp_tid_add(struct xsc_fiber *f);

/* setxid.c */
bool tp_setxid(int tid);	/* false: tid is no thread it answers for */

#endif
