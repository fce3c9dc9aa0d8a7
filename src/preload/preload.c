/*
 * preload.c - transparent mode: unmodified pthread programs on xsc threads.
 *
 * libxsc-preload.so (LD_PRELOAD, or `xsc run -- prog`) takes over at
 * __libc_start_main: it starts one vcpu per core, turns the main thread's
 * execution into a fiber and parks the original kernel thread.  From then
 * on the program's threads are fibers.
 *
 * Interception works at the system call level, below libc, so calls libc
 * makes internally (stdio, malloc's and pthread's futexes, the clone3 of
 * pthread_create) are seen as well as the program's own:
 *   - syscall user dispatch (Linux 5.11+, PR_SET_SYSCALL_USER_DISPATCH):
 *     on each vcpu, while a fiber runs program code the selector byte says
 *     BLOCK and every system call outside this library's text raises
 *     SIGSYS; the handler executes it (below) and returns its result in
 *     rax.  Runtime code runs with the selector at ALLOW.
 *   - the hot libc wrappers (read, write, accept4, ...: wrap.c) are also
 *     interposed by symbol, which skips the ~1-2 us signal round trip;
 *   - libc's own system call sites are rewritten into jumps to the
 *     runtime after their first trap (rewrite.c), for the calls libc
 *     makes inside itself.
 * All paths end in xsc__tp_call(), which takes its policy from the syscall
 * table's .shim (dispatch, below).
 *
 * Per-fiber identity: glibc's own pthread_create runs unchanged (its stack,
 * its TLS block, its struct pthread) up to the clone3 system call, which is
 * emulated: instead of a kernel thread, a fiber that starts with the
 * parent's registers, rax = 0, the new stack, and the new thread pointer,
 * loaded with wrfsbase whenever the fiber runs (FSGSBASE).  So __thread
 * variables, errno, stdio's lock owners and malloc's arenas are per
 * thread exactly as natively.  The vcpu itself is found through the GS
 * base.  Thread ids are virtual (gettid, CLONE_PARENT_SETTID) and the
 * CLONE_CHILD_CLEARTID word is cleared and woken when a fiber is gone from
 * its stack, which is what pthread_join and glibc's stack cache wait for.
 *
 * Futexes are emulated in user space (sched/futex.c): a waiting fiber
 * parks and its vcpu runs others.
 *
 * Calls that cannot be asynchronous: fork runs natively and the child
 * continues without the runtime (syscall user dispatch is not inherited);
 * vfork and process clones with a new stack re-execute at the program's
 * own call site (xsc__tp_native_stub); execve switches dispatch off first.
 * Signals: handlers are wrapped so they run with the selector at ALLOW
 * (their calls run directly: no fiber switch inside a handler); SIGSYS is
 * never blocked; each fiber has its own signal mask.  See
 * docs/transparent.md for the full list and the limits.
 */
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
#define SIGCANCEL 32		/* glibc's internal cancellation signal */
#define SIGSETXID 33		/* glibc's: every thread makes a set*id call */

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

_Static_assert(offsetof(struct xsc_vcpu, tp.ret) == 0, "stub reads %gs:0");
_Static_assert(offsetof(struct xsc_vcpu, tp.sel) == 8, "stub writes %gs:8");
_Static_assert(offsetof(struct xsc_vcpu, tp.self) == 16, "gs_vcpu reads %gs:16");

/* The vcpu, through the GS base every vcpu thread sets: right also while
 * FS holds another thread's TLS (setxid(), below).  Only on a vcpu. */
static inline struct xsc_vcpu *gs_vcpu(void)
{
	struct xsc_vcpu *v;
	__asm__ __volatile__("mov %%gs:16, %0" : "=r"(v));
	return v;
}

static struct {
	int (*main)(int, char **, char **);
	uintptr_t text_lo, text_hi;
	_Atomic int next_vtid;
	_Atomic long nthreads;		/* fibers created by clone */
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
	struct xsc_runtime_config cfg;	/* as the runtime was started */
	bool fork_native;		/* XSC_FORK=native: children run natively */
	/* a forked child, until libc's fork has reset its own state and
	 * runs the child handlers (rearm): the thread that forked, on which
	 * vcpu, and the child's pid */
	struct xsc_fiber *child;
	struct xsc_vcpu *child_v;
	long child_pid;
	/* preemption (watchdog): the tick, and the cookie its signals carry */
	long preempt_ns;
	int preempt_cookie;
	_Atomic long npreempt;
	_Atomic int wd_tid;		/* the watchdog thread (setxid) */
	pthread_t wd_th;
} tp;

/* ---- small helpers ----------------------------------------------------------- */

/* The thread pointer: glibc's TCB starts with a pointer to itself, so
 * one FS-relative load reads it without FSGSBASE instructions. */
static inline uint64_t rdfsbase(void)
{
	uint64_t v;
	__asm__ __volatile__("mov %%fs:0, %0" : "=r"(v));
	return v;
}

static void set_fs(uint64_t v)
{
	if (xsc__fsgsbase)
		__asm__ __volatile__("wrfsbase %0" :: "r"(v) : "memory");
	else
		xsc__sys2(SYS_arch_prctl, ARCH_SET_FS, (long)v);
}

static void warn_once(_Atomic int *flag, const char *msg)
{
	if (!atomic_exchange(flag, 1))
		xsc__say("xsc run: %s\n", msg);
}

static struct xsc_fiber *cur_fiber(void)
{
	struct xsc_vcpu *v = xsc__vcpu();
	return v ? v->cur : NULL;
}

static void tid_add(struct xsc_fiber *f)
{
	struct xsc_fiber **h = &tp.tids[(unsigned)f->vtid % NTID];

	xsc__spin_lock(&tp.lock);
	f->tp.link = *h;
	*h = f;
	xsc__spin_unlock(&tp.lock);
}

static void tid_del(struct xsc_fiber *f)
{
	xsc__spin_lock(&tp.lock);
	for (struct xsc_fiber **p = &tp.tids[(unsigned)f->vtid % NTID]; *p;
	     p = &(*p)->tp.link) {
		if (*p == f) {
			*p = f->tp.link;
			break;
		}
	}
	xsc__spin_unlock(&tp.lock);
}

/* Which signals some thread of the program accepts (leaves unblocked).
 * A vcpu with no fiber to run blocks the others, as the program's threads
 * do: a process-directed signal every thread blocks stays pending for the
 * thread that waits for it in sigwait (below), instead of being taken,
 * with its default action, by an idle kernel thread.  was/now: a
 * thread's mask before and after (~0: the thread does not exist). */
static _Atomic int accepting[65];
static uint32_t mask_lock;
static void idle_mask(bool tighter);

static void account(uint64_t was, uint64_t now)
{
	uint64_t blocked = ~was & now, unblocked = was & ~now;
	bool tighter = false, changed = false;

	for (int s = 1; s <= 64; s++) {
		if ((blocked >> (s - 1)) & 1)
			tighter |= atomic_fetch_sub(&accepting[s], 1) == 1;
		else if ((unblocked >> (s - 1)) & 1)
			changed |= atomic_fetch_add(&accepting[s], 1) == 0;
	}
	if (tighter || changed)
		idle_mask(tighter);
}

/* Recomputes the idle vcpus' mask from the counts; tighter: kick them. */
static void idle_mask(bool tighter)
{
	xsc__spin_lock(&mask_lock);
	uint64_t m = 0;
	for (int s = 1; s <= 64; s++)
		if (!atomic_load(&accepting[s]))
			m |= SIGBIT(s);
	atomic_store(&xsc__tp_idlemask, m & ~(SIGBIT(SIGSYS) | SIGBIT(SIGKILL) | SIGBIT(SIGSTOP)));
	xsc__spin_unlock(&mask_lock);
	if (tighter)	/* sleeping vcpus take the new mask */
		for (int i = 0; i < xsc__rt.n; i++)
			if (atomic_load(&xsc__rt.v[i].idle) && xsc__rt.v[i].x)
				xsc__kick(xsc__rt.v[i].x);
}

/* ---- signals that interrupt blocked calls ------------------------------------------ */

/* A signal sent to a thread blocked in a call interrupts the call, as the
 * kernel's would: the entry is canceled (by the vcpu that owns it, in its
 * scheduler: scan), the handler runs on the thread, and the call returns
 * EINTR or, when every handler run had SA_RESTART and the call is one the
 * kernel restarts, is issued again (signal(7)).  A call that completed
 * before the cancel keeps its result.  Calls not listed here (connect,
 * sleeps, whose remaining time is not kept) are not interrupted. */
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
		return 1;
	default:
		return 0;
	}
}

/* Under tp.lock: asks f's vcpu to cancel the call f waits in. */
static void interrupt(struct xsc_fiber *f)
{
	int no = 0;

	if (!f->tp.call || !f->home || !interruptible(f->tp.call_nr))
		return;
	if (atomic_compare_exchange_strong(&f->tp.intr, &no, 1)) {
		atomic_store(&f->home->tp.intr, 1);
		xsc__kick(f->home->x);
	}
}

/* The vcpu's scheduler: cancels what was asked of it.  A signal whose
 * handler ran outside any thread (a vcpu between fibers took it)
 * interrupts one thread that accepts it and waits in a call the kernel
 * would not just restart. */
static void scan(struct xsc_vcpu *v)
{
	uint64_t stray = atomic_exchange(&tp.stray, 0);

	xsc__spin_lock(&tp.lock);
	for (int s = 1; stray && s <= 64; s++) {
		bool restart = tp.act[s].flags & SA_RESTART, done = false;
		if (!((stray >> (s - 1)) & 1))
			continue;
		for (int i = 0; i < NTID && !done; i++)
			for (struct xsc_fiber *f = tp.tids[i]; f && !done; f = f->tp.link) {
				int k = f->tp.call ? interruptible(f->tp.call_nr) : 0;
				if (k && !(f->sigmask & SIGBIT(s)) && !(restart && k == 2)) {
					interrupt(f);
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

/* The interrupted fiber, back on its vcpu with the call's result r. */
static long interrupted(struct xsc_fiber *f, long nr, long r)
{
	uint64_t p = __atomic_load_n(&f->tp.pending, __ATOMIC_ACQUIRE) & ~f->sigmask;
	bool restart = interruptible(nr) == 2;

	atomic_store(&f->tp.intr, 0);
	if (r != -ECANCELED && r != -EINTR)
		return r;	/* it completed first: the kernel's answer */
	if (!p)
		return -EINTR;	/* its handler ran already (scan) */
	for (int s = 1; s <= 64; s++)
		if (((p >> (s - 1)) & 1) && !(tp.act[s].flags & SA_RESTART))
			restart = false;
	if (p)
		xsc__tp_deliver(f);	/* the handlers run now, on this thread */
	return restart ? XSC_TP_RESTART : -EINTR;
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
	if (is_rt(sig) && f->tp.rtq[sig - RTFIRST] < UINT16_MAX)
		f->tp.rtq[sig - RTFIRST]++;
	__atomic_or_fetch(&f->tp.pending, SIGBIT(sig), __ATOMIC_RELEASE);
}

/* A signal for another fiber waits in the fiber and is raised on whichever
 * kernel thread runs it, right before it returns to program code (a call it
 * is blocked in is not interrupted).  1 if vtid names a fiber, 0 if not,
 * -EINVAL for a bad signal. */
static int tid_post(int vtid, int sig)
{
	int found = 0;

	if (sig < 0 || sig > 64)
		return -EINVAL;
	xsc__spin_lock(&tp.lock);
	for (struct xsc_fiber *f = tp.tids[(unsigned)vtid % NTID]; f; f = f->tp.link) {
		if (f->vtid == vtid) {
			if (sig)
				pend_locked(f, sig);
			if (sig && f->tp.wait_fd && (f->tp.wait_set & SIGBIT(sig)))
				xsc__sys3(SYS_write, f->tp.wait_fd - 1, (long)&(uint64_t){ 1 }, 8);
			else if (sig && !(f->sigmask & SIGBIT(sig)))
				interrupt(f);
			found = 1;
			break;
		}
	}
	xsc__spin_unlock(&tp.lock);
	return found;
}

/* Raises the signals other threads sent to the running fiber. */
void xsc__tp_deliver(struct xsc_fiber *f)
{
	int ktid = xsc__vcpu()->tp.ktid;
	long pid = xsc__sys0(SYS_getpid);
	uint16_t n[33];
	uint64_t p;

	/* taken under the lock, raised after it: a handler runs inside the
	 * tgkill below and may send signals itself */
	xsc__spin_lock(&tp.lock);
	p = __atomic_fetch_and(&f->tp.pending, f->sigmask, __ATOMIC_ACQUIRE) &
	    ~f->sigmask;	/* blocked ones stay pending */
	for (int s = RTFIRST; s <= 64; s++) {
		n[s - RTFIRST] = f->tp.rtq[s - RTFIRST];
		if (p & SIGBIT(s))
			f->tp.rtq[s - RTFIRST] = 0;
	}
	xsc__spin_unlock(&tp.lock);
	for (int s = 1; s <= 64; s++) {
		if (!(p & SIGBIT(s)))
			continue;
		int k = is_rt(s) && n[s - RTFIRST] ? n[s - RTFIRST] : 1;
		while (k--)
			xsc__sys3(SYS_tgkill, pid, ktid, s);
	}
}

/* ---- fiber records ------------------------------------------------------------ */

/* Records come from a pool (sched/pool.c), never from malloc: they are
 * freed in the scheduler, which must not touch a malloc arena a parked
 * fiber might be holding. */
#define REC_SIZE ((sizeof(struct xsc_fiber) + sizeof(gregset_t) + 63) & ~(size_t)63)

static struct xsc_pool recs = { 0, REC_SIZE, NULL };

static struct xsc_fiber *rec_get(void)
{
	return xsc__pool_get(&recs);
}

static void rec_put(struct xsc_fiber *f)
{
	xsc__pool_put(&recs, f);
}

/* ---- threads: clone, exit ----------------------------------------------------- */

static void child_entry(void *arg)
{
	struct xsc_fiber *f = arg;

	xsc__vcpu()->tp.sel = TP_SEL_BLOCK;
	xsc__tp_resume(f->tp.regs);
}

#define THREAD_FLAGS (CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | \
		      CLONE_THREAD | CLONE_SYSVSEM)
#define THREAD_OK (THREAD_FLAGS | CLONE_SETTLS | CLONE_PARENT_SETTID | \
		   CLONE_CHILD_CLEARTID | CLONE_CHILD_SETTID | CLONE_DETACHED)

/* A new thread of the program becomes a fiber (see the top of the file). */
static long spawn(uint64_t flags, uint64_t sp, int *ptid, int *ctid,
		  uint64_t tls, ucontext_t *uc)
{
	struct xsc_fiber *f;
	greg_t *g;
	size_t room;
	int ret;

	if ((flags & THREAD_FLAGS) != THREAD_FLAGS || (flags & ~(uint64_t)THREAD_OK) || !sp) {
		warn_once(&tp.warned_clone, "a thread was created with clone flags "
			  "xsc threads do not support; the call fails with EINVAL");
		return -EINVAL;
	}
	f = rec_get();
	if (!f)
		return -EAGAIN;
	g = (greg_t *)(f + 1);
	memcpy(g, uc->uc_mcontext.gregs, sizeof(gregset_t));
	g[REG_RSP] = (greg_t)sp;
	g[REG_RAX] = 0;
	f->tp.regs = g;
	f->fs = flags & CLONE_SETTLS ? tls : cur_fiber()->fs;
	f->sigmask = *(uint64_t *)&uc->uc_sigmask & ~SIGBIT(SIGSYS);
	f->vtid = atomic_fetch_add(&tp.next_vtid, 1);
	if (flags & CLONE_CHILD_CLEARTID)
		f->ctid = (uint32_t *)ctid;
	if (flags & CLONE_PARENT_SETTID)
		*ptid = f->vtid;
	if (flags & CLONE_CHILD_SETTID)
		*ctid = f->vtid;
	/* The fiber's first frames go on its own stack, well below the
	 * top the thread will start from. */
	room = 8192;
	ret = xsc__ctx_make(&f->ctx, (char *)(uintptr_t)sp - room - 512, room,
			    child_entry, f, NULL);
	if (ret < 0) {
		rec_put(f);
		return ret;
	}
	tid_add(f);
	account(~0ULL, f->sigmask);
	atomic_fetch_add(&tp.nthreads, 1);
	xsc__rt_adopt(f);
	return f->vtid;
}

/* The fiber is off its stack (scheduler context): now the stack may be
 * reused, so clear the tid word and wake pthread_join. */
static void reap(struct xsc_fiber *f)
{
	tid_del(f);
	account(f->sigmask, ~0ULL);
	if (f->ctid) {
		__atomic_store_n(f->ctid, 0, __ATOMIC_RELEASE);
		xsc__futex_wake(f->ctid, INT_MAX, ~0u);
	}
	rec_put(f);
}

static void __attribute__((noreturn)) thread_exit(void)
{
	struct xsc_vcpu *v = xsc__vcpu();
	struct xsc_fiber *f = v->cur;

	v->dead = f;
	xsc__ctx_exit(&f->ctx, &v->sched);
	abort();
}

/* vcpus are pinned to one CPU each (the runtime's default); a new process
 * (a forked child, a vfork child, an exec'd image) inherits the affinity
 * of the kernel thread that made it, and must get the process's own mask
 * instead, as it would natively. */
static void unpin(void)
{
	xsc__sys3(SYS_sched_setaffinity, 0, tp.affinity_len, tp.affinity);
}

static void repin(struct xsc_vcpu *v)
{
	unsigned long m[16] = { 0 };

	v->tp.repin = false;
	if (!xsc__rt.cfg.pin || v->cpu < 0 || v->cpu >= (int)(sizeof(m) * 8))
		return;
	m[v->cpu / 64] = 1UL << (v->cpu % 64);
	xsc__sys3(SYS_sched_setaffinity, 0, sizeof(m), m);
}

/* fork, vfork, clone of a process. */
static long fork_like(long nr, const long *a, ucontext_t *uc)
{
	struct xsc_vcpu *v = xsc__vcpu();
	uint64_t flags = 0, stack = 0;
	long r;

	if (nr == SYS_vfork) {
		flags = CLONE_VM | CLONE_VFORK;
	} else if (nr == SYS_clone) {
		flags = (uint64_t)a[0];
		stack = (uint64_t)a[1];
	} else if (nr == SYS_clone3) {
		const struct clone_args_k *ca = (const void *)a[0];
		flags = ca->flags;
		stack = ca->stack;
	}
	if ((flags & CLONE_VM) || stack) {
		/* the child starts at the program's call site on its own
		 * stack: re-execute the call there, from our text; it is
		 * made with the process's affinity, and the vcpu is pinned
		 * again at its next call (dispatch) */
		unpin();
		v->tp.repin = true;
		v->tp.ret = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
		uc->uc_mcontext.gregs[REG_RIP] = (greg_t)xsc__tp_native_stub;
		uc->uc_mcontext.gregs[REG_RAX] = nr;
		v->tp.vfork = true;	/* the selector stays ALLOW (see the stub) */
		return KEEP_REGS;
	}
	r = xsc__sys6(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	if (r == 0) {
		/* the child: one thread, no dispatch; it continues natively
		 * until libc's fork runs the child handlers, where rearm()
		 * starts a runtime of its own (a raw fork system call runs
		 * no handlers: that child stays native) */
		unpin();
		tp.child = v->cur;
		tp.child_v = v;
		tp.child_pid = xsc__sys0(SYS_getpid);
		xsc__tp_rewrite_stop();	/* the stub page is the parent's too */
		xsc__tp = false;
		xsc__self = NULL;	/* no vcpu runs here */
		xsc__sys2(SYS_arch_prctl, ARCH_SET_GS, 0);
	}
	return r;
}

static long exec_(long nr, const long *a)
{
	long r;

	/* dispatch would otherwise follow into the new image, and so
	 * would the vcpu's pinning */
	xsc__sys6(SYS_prctl, PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_OFF, 0, 0, 0, 0);
	unpin();
	r = xsc__sys6(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	repin(xsc__vcpu());
	xsc__sys6(SYS_prctl, PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_ON,
		  (long)tp.text_lo, (long)(tp.text_hi - tp.text_lo),
		  (long)&xsc__vcpu()->tp.sel, 0);
	return r;
}

/* ---- futex ---------------------------------------------------------------------- */

static int to_mono(const struct timespec *ts, bool absolute, bool realtime,
		   struct timespec *out)
{
	struct timespec now;
	int64_t ns;

	if (ts->tv_sec < 0 || ts->tv_nsec < 0 || ts->tv_nsec >= 1000000000)
		return -EINVAL;
	ns = ts->tv_sec * 1000000000LL + ts->tv_nsec;
	if (absolute && realtime) {
		clock_gettime(CLOCK_REALTIME, &now);
		ns -= now.tv_sec * 1000000000LL + now.tv_nsec;
		absolute = false;
	}
	if (!absolute)
		ns += xsc__now();
	out->tv_sec = ns / 1000000000LL;
	out->tv_nsec = ns % 1000000000LL;
	if (out->tv_sec < 0)
		*out = (struct timespec){ 0, 0 };
	return 0;
}

static long futex(const long *a)
{
	uint32_t *u = (uint32_t *)a[0];
	int op = (int)a[1], cmd = op & FUTEX_CMD_MASK;
	bool rt = op & FUTEX_CLOCK_REALTIME;
	const struct timespec *ts = (const void *)a[3];
	struct timespec abs;
	uint32_t val3 = (uint32_t)a[5];
	int ret;

	switch (cmd) {
	case FUTEX_WAIT:
	case FUTEX_WAIT_BITSET:
		if (ts) {
			ret = to_mono(ts, cmd == FUTEX_WAIT_BITSET, rt, &abs);
			if (ret < 0)
				return ret;
		}
		return xsc__futex_wait(u, (uint32_t)a[2], ts ? &abs : NULL,
				       cmd == FUTEX_WAIT ? ~0u : val3);
	case FUTEX_WAKE:
	case FUTEX_WAKE_BITSET:
		ret = (int)xsc__futex_wake(u, (int)a[2], cmd == FUTEX_WAKE ? ~0u : val3);
		/* No fiber waited: a thread outside the emulation (a vcpu's
		 * scheduler, a syscall thread) may sleep in the kernel on the
		 * same word; the runtime avoids that, this makes a slip cost a
		 * system call instead of a hang.  glibc wakes only when the
		 * lock word says someone waits, so this is rare. */
		if (ret == 0 && (int)a[2] > 0) {
			long k = xsc__sys6(SYS_futex, a[0], op, a[2], 0, 0, (long)val3);
			tp.kwakes++;
			if (k > 0) {	/* a slip of the runtime: counted, -v says */
				tp.kwoken += k;
				ret = (int)k;
			}
		}
		return ret;
	case FUTEX_REQUEUE:
		return xsc__futex_requeue(u, (int)a[2], (int)a[3], (uint32_t *)a[4], NULL);
	case FUTEX_CMP_REQUEUE:
		return xsc__futex_requeue(u, (int)a[2], (int)a[3], (uint32_t *)a[4], &val3);
	default:
		warn_once(&tp.warned_futex, "futex operation not emulated "
			  "(PI, WAKE_OP, waitv): the call fails with ENOSYS");
		return -ENOSYS;
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
#define PREEMPT_SIG SIGURG

static bool preempt(struct xsc_vcpu *v, siginfo_t *si, ucontext_t *uc)
{
	uintptr_t ip = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
	struct xsc_fiber *f = v->cur;

	if (si->si_code != SI_QUEUE || si->si_value.sival_int != tp.preempt_cookie)
		return false;	/* the program's own SIGURG */
	/* only program code: not the runtime's (it runs with ALLOW), not a
	 * handler, not a vfork child borrowing the vcpu */
	if (!f || !f->fs || v->tp.sel != TP_SEL_BLOCK || v->tp.in_handler ||
	    v->tp.vfork || (ip >= tp.text_lo && ip < tp.text_hi))
		return true;
	atomic_fetch_add_explicit(&tp.npreempt, 1, memory_order_relaxed);
	v->tp.sel = TP_SEL_ALLOW;
	/* the kernel mask is the handler's until sigreturn: the next fiber
	 * must get its own (run() compares against this) */
	v->tp.sigmask = ~0ULL;
	xsc_yield();
	v = xsc__vcpu();	/* its home vcpu: the same */
	/* sigreturn restores the mask the fiber had when interrupted */
	xsc__sys4(SYS_rt_sigprocmask, SIG_SETMASK, &uc->uc_sigmask, 0, 8);
	v->tp.sigmask = *(uint64_t *)&uc->uc_sigmask;
	v->tp.sel = TP_SEL_BLOCK;
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
				atomic_store(&v->tp.want_yield, 1);
			if (stuck && v->tp.sel == TP_SEL_BLOCK) {
				siginfo_t si;
				memset(&si, 0, sizeof(si));
				si.si_signo = PREEMPT_SIG;
				si.si_code = SI_QUEUE;
				si.si_pid = (pid_t)pid;
				si.si_value.sival_int = tp.preempt_cookie;
				xsc__sys4(SYS_rt_tgsigqueueinfo, pid, v->tp.ktid, PREEMPT_SIG, &si);
			}
			seen[i].switches = sw;
			seen[i].cur = cur;
		}
	}
	return NULL;
}

/* Starts the watchdog (also in a forked child: threads are not inherited). */
static void watch(void)
{
	pthread_attr_t attr;
	sigset_t all;

	atomic_store(&tp.wd_tid, 0);
	if (tp.preempt_ns <= 0)
		return;
	sigfillset(&all);
	pthread_attr_init(&attr);
	pthread_attr_setsigmask_np(&attr, &all);
	pthread_attr_setstacksize(&attr, 65536);
	if (pthread_create(&tp.wd_th, &attr, watchdog, NULL) != 0)
		xsc__say("xsc run: no preemption thread: a fiber that spins without "
			 "system calls keeps its vcpu\n");
	else	/* its id, before any set*id round can look for it (setxid) */
		while (!atomic_load(&tp.wd_tid))
			sched_yield();
	pthread_attr_destroy(&attr);
}

static void sig_tramp(int sig, siginfo_t *si, void *uc)
{
	struct xsc_vcpu *v = xsc__tp ? xsc__vcpu() : NULL;
	struct kact *k = &tp.act[sig];
	void *h = k->handler;
	unsigned long flags = k->flags;
	unsigned char sel = 0;

	if (sig == PREEMPT_SIG && v && preempt(v, si, uc))
		return;
	if (flags & SA_RESETHAND)
		k->handler = SIG_DFL;
	if (v) {
		sel = v->tp.sel;
		if (!v->tp.vfork)	/* a vfork child's calls stay direct */
			v->tp.sel = TP_SEL_BLOCK;
		v->tp.in_handler++;
		if (v->cur)
			v->cur->tp.nsig++;
	}
	if (v && !v->cur && h != SIG_DFL && h != SIG_IGN) {
		/* a process signal taken by a vcpu between fibers: natively
		 * it would have interrupted a thread's call (scan picks one) */
		atomic_fetch_or_explicit(&tp.stray, SIGBIT(sig), memory_order_relaxed);
		atomic_store(&v->tp.intr, 1);
		if (v->x)	/* taken as it went idle: do not sleep now */
			xsc__kick(v->x);
	}
	if (h != SIG_DFL && h != SIG_IGN) {
		if (flags & SA_SIGINFO)
			((void (*)(int, siginfo_t *, void *))h)(sig, si, uc);
		else
			((void (*)(int))h)(sig);
	}
	if (v) {
		v->tp.in_handler--;
		v->tp.sel = sel;
	}
}

static long install(int sig, const struct kact *p)
{
	struct kact k = *p;

	if (sig == PREEMPT_SIG && tp.preempt_ns > 0 &&
	    (k.handler == SIG_DFL || k.handler == SIG_IGN)) {
		/* the watchdog's signal: the program sees its own disposition
		 * (tp.act); the runtime keeps the trampoline */
		k.handler = (void *)sig_tramp;
		k.flags = SA_SIGINFO | SA_RESTART;
	} else if (k.handler != SIG_DFL && k.handler != SIG_IGN) {
		k.handler = (void *)sig_tramp;
		k.flags |= SA_SIGINFO;
	}
	k.flags |= SA_RESTORER;
	k.restorer = (void *)xsc__tp_restorer;
	k.mask &= ~SIGBIT(SIGSYS);
	return xsc__sys4(SYS_rt_sigaction, sig, &k, 0, 8);
}

static long sigaction_(const long *a, bool in_sig)
{
	bool locked = true;
	int sig = (int)a[0];
	const struct kact *act = (const void *)a[1];
	struct kact *old = (void *)a[2], prev;
	long r = 0;

	if (a[3] != 8)
		return -EINVAL;
	if (sig < 1 || sig > 64)
		return -EINVAL;
	if (sig == SIGKILL || sig == SIGSTOP)
		return act ? -EINVAL : (old ? (*old = tp.act[sig], 0) : 0);
	/* in a handler, the code it interrupted may hold the lock */
	if (in_sig)
		locked = !__atomic_exchange_n(&tp.lock, 1, __ATOMIC_ACQUIRE);
	else
		xsc__spin_lock(&tp.lock);
	prev = tp.act[sig];
	if (act) {
		if (sig == SIGSYS)
			warn_once(&tp.warned_sigsys, "the program's SIGSYS handler is "
				  "recorded but not installed (interception uses SIGSYS)");
		else
			r = install(sig, act);
		if (r == 0)
			tp.act[sig] = *act;
	}
	if (locked)
		xsc__spin_unlock(&tp.lock);
	if (r == 0 && old)
		*old = prev;
	return r;
}

static long sigprocmask_(const long *a, ucontext_t *uc)
{
	struct xsc_vcpu *v = xsc__vcpu();
	uint64_t *m = (uint64_t *)&uc->uc_sigmask, cur = *m, nm = cur;
	const uint64_t *set = (const void *)a[1];
	uint64_t *old = (void *)a[2];

	if (a[3] != 8)
		return -EINVAL;
	if (set) {
		switch (a[0]) {
		case SIG_BLOCK: nm = cur | *set; break;
		case SIG_UNBLOCK: nm = cur & ~*set; break;
		case SIG_SETMASK: nm = *set; break;
		default: return -EINVAL;
		}
	}
	if (old)
		*old = cur;
	nm &= ~(SIGBIT(SIGSYS) | SIGBIT(SIGKILL) | SIGBIT(SIGSTOP));
	if (nm != cur) {
		/* in force now and after the handler's sigreturn */
		*m = nm;
		account(cur, nm);
		v->cur->sigmask = nm;
		v->tp.sigmask = nm;
		xsc__sys4(SYS_rt_sigprocmask, SIG_SETMASK, &nm, 0, 8);
	}
	return 0;
}

/* glibc's set*id (setuid(3) and its kin) signals every thread in its list
 * with SIGSETXID and waits, on a futex, until each one's handler has made
 * the call too.  Here those threads are fibers, vcpus and readiness
 * threads: a fiber blocked in a call would not run its handler for long,
 * and a kernel thread's handler wakes the futex in the kernel, where the
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
	unsigned char sel;
	siginfo_t si;

	if (k->handler == SIG_DFL || k->handler == SIG_IGN || !(k->flags & SA_SIGINFO))
		return false;
	xsc__spin_lock(&tp.lock);
	for (struct xsc_fiber *t = tp.tids[(unsigned)tid % NTID]; t; t = t->tp.link)
		if (t->vtid == tid)
			tcb = t->fs;
	xsc__spin_unlock(&tp.lock);
	if (!tcb && tid && tid == atomic_load(&tp.wd_tid))
		tcb = (uint64_t)tp.wd_th;	/* glibc x86-64: a pthread_t is its TCB */
	for (int i = 0; !tcb && i < xsc__rt.n; i++) {
		struct xsc_vcpu *u = &xsc__rt.v[i];
		if (u->tp.ktid == tid)
			tcb = u->tp.fs;
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
	set_fs(tcb);
	v->tp.setxid = true;
	v->tp.in_handler++;
	sel = v->tp.sel;
	v->tp.sel = TP_SEL_BLOCK;	/* its calls trap: in_handler() */
	((void (*)(int, siginfo_t *, void *))k->handler)(SIGSETXID, &si, NULL);
	v->tp.sel = sel;
	v->tp.in_handler--;
	v->tp.setxid = false;
	set_fs(f->fs);
	xsc__sys4(SYS_rt_sigprocmask, SIG_SETMASK, &old, 0, 8);
	return true;
}

static long kill_(long nr, const long *a)
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
		host = xsc__vcpu()->tp.ktid;	/* delivered before we return */
	else if ((host = tid_post(tid, sig)) == 0)
		return xsc__sys6(nr, a[0], a[1], a[2], 0, 0, 0);
	else
		return host > 0 ? 0 : host;	/* delivered when it next runs */
	if (sig < 0 || sig > 64)
		return -EINVAL;
	return sig ? xsc__sys3(SYS_tgkill, xsc__sys0(SYS_getpid), host, sig) : 0;
}

/* ---- waiting for signals ----------------------------------------------------------- */

/* sigwaitinfo, sigtimedwait, sigsuspend and pause park the fiber, not its
 * vcpu: a daemon's signal thread waiting in the kernel held a vcpu for
 * good (with one vcpu, Apache never answered).  A wait ends on a signal
 * sent to the thread (kept in the fiber: tid_post writes the wait's
 * eventfd) or pending for the process (a signalfd for the set polls
 * readable; vcpus with no fiber to run block what no thread accepts, so
 * such a signal stays pending for the waiter: see account()). */

/* The lowest signal of set sent to fiber f, taken (one instance of a
 * real-time one); 0 if none. */
static int take_own(struct xsc_fiber *f, uint64_t set)
{
	uint64_t p;
	int s = 0;

	xsc__spin_lock(&tp.lock);
	if ((p = __atomic_load_n(&f->tp.pending, __ATOMIC_ACQUIRE) & set) != 0) {
		s = __builtin_ctzll(p) + 1;
		if (is_rt(s) && f->tp.rtq[s - RTFIRST] > 1)
			f->tp.rtq[s - RTFIRST]--;	/* more queued: stays pending */
		else {
			if (is_rt(s))
				f->tp.rtq[s - RTFIRST] = 0;
			__atomic_fetch_and(&f->tp.pending, ~SIGBIT(s), __ATOMIC_ACQ_REL);
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
	if (!(f->tp.pending & set)) {
		f->tp.wait_set = set;
		f->tp.wait_fd = (int)efd + 1;
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
		f->tp.wait_fd = 0;
		f->tp.wait_set = 0;
		xsc__spin_unlock(&tp.lock);
		r = r == 0 ? -ETIMEDOUT : (r < 0 && r != -EINTR) ? r : 0;
	}
	xsc__sys1(SYS_close, sfd);
	xsc__sys1(SYS_close, efd);
	return r;
}

static long sigtimedwait_(const long *a)
{
	struct xsc_fiber *f = cur_fiber();
	struct timespec ts;
	int64_t deadline = -1;
	uint64_t set;
	long r;
	int s;

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

/* sigsuspend (a: the mask) and pause (a == NULL): the fiber's mask is
 * replaced while it waits; it returns -EINTR once a handler has run on
 * it.  Pending signals are delivered by setting the mask from the fiber
 * itself, so the handler runs on the thread's own stack and TLS. */
static long sigsuspend_(const long *a)
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
	nm &= ~(SIGBIT(SIGSYS) | SIGBIT(SIGKILL) | SIGBIT(SIGSTOP));
	/* while it waits, the signals it accepts are its own to take: idle
	 * vcpus must not take them for it */
	account(old, ~0ULL);
	for (;;) {
		struct xsc_vcpu *v = xsc__vcpu();	/* may change after a park */
		uint32_t before = f->tp.nsig;

		f->sigmask = nm;
		v->tp.sigmask = nm;
		xsc__sys4(SYS_rt_sigprocmask, SIG_SETMASK, (long)&nm, 0, 8);
		if (f->tp.pending & ~nm)
			xsc__tp_deliver(f);
		f->sigmask = old;
		v->tp.sigmask = old;
		xsc__sys4(SYS_rt_sigprocmask, SIG_SETMASK, (long)&old, 0, 8);
		if (f->tp.nsig != before) {
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
	account(~0ULL, old);
	return r;
}

/* ---- dispatch ------------------------------------------------------------------- */

/* What the shim does with a call is the table's .shim (src/table.h): post
 * it through the runtime, make it directly, or answer it here.  The
 * answers are the emulators below, one per XSC_SHIM_EMULATE row (checked
 * at start-up, check_emulators); an emulator returns RAW when this call,
 * with these arguments or from where it came, is made directly after all
 * (uc is NULL for a call from an interposed function, not a trap). */
#define RAW (LONG_MIN + 1)

typedef long (*emulator)(long nr, const long *a, ucontext_t *uc);

static long em_futex(long nr, const long *a, ucontext_t *uc)
{
	return futex(a);
}

static long em_clone3(long nr, const long *a, ucontext_t *uc)
{
	const struct clone_args_k *ca = (const void *)a[0];

	if (!uc)
		return RAW;
	if (!(ca->flags & CLONE_THREAD))
		return fork_like(nr, a, uc);
	return spawn(ca->flags, ca->stack + ca->stack_size, (int *)ca->parent_tid,
		     (int *)ca->child_tid, ca->tls, uc);
}

static long em_clone(long nr, const long *a, ucontext_t *uc)
{
	if (!uc)
		return RAW;
	if (!(a[0] & CLONE_THREAD))
		return fork_like(nr, a, uc);
	return spawn((uint64_t)a[0], (uint64_t)a[1], (int *)a[2], (int *)a[3],
		     (uint64_t)a[4], uc);
}

static long em_fork(long nr, const long *a, ucontext_t *uc)
{
	return uc ? fork_like(nr, a, uc) : RAW;
}

static long em_exec(long nr, const long *a, ucontext_t *uc)
{
	return exec_(nr, a);
}

static long em_exit(long nr, const long *a, ucontext_t *uc)
{
	thread_exit();
}

static long em_gettid(long nr, const long *a, ucontext_t *uc)
{
	return cur_fiber()->vtid;
}

static long em_set_tid_address(long nr, const long *a, ucontext_t *uc)
{
	struct xsc_fiber *f = cur_fiber();

	f->ctid = (uint32_t *)a[0];
	return f->vtid;
}

static long em_set_robust_list(long nr, const long *a, ucontext_t *uc)
{
	struct xsc_fiber *f = cur_fiber();

	f->robust = (void *)a[0];
	f->robust_len = (size_t)a[1];
	return 0;
}

static long em_get_robust_list(long nr, const long *a, ucontext_t *uc)
{
	struct xsc_fiber *f = cur_fiber();

	if (a[0] && a[0] != f->vtid)
		return -EPERM;
	*(void **)a[1] = f->robust;
	*(size_t *)a[2] = f->robust_len;
	return 0;
}

/* A fiber has no kernel thread of its own to register: say yes (glibc 2.36
 * aborts a thread on failure) and leave the cpu id unknown, so
 * sched_getcpu() asks the kernel. */
static long em_rseq(long nr, const long *a, ucontext_t *uc)
{
	if (a[0] && !(a[2] & 1))
		((volatile int32_t *)a[0])[1] = -2;
	return 0;
}

static long em_sigprocmask(long nr, const long *a, ucontext_t *uc)
{
	return uc ? sigprocmask_(a, uc) : RAW;
}

static long em_sigaction(long nr, const long *a, ucontext_t *uc)
{
	return sigaction_(a, false);
}

static long em_sigtimedwait(long nr, const long *a, ucontext_t *uc)
{
	return sigtimedwait_(a);
}

static long em_sigsuspend(long nr, const long *a, ucontext_t *uc)
{
	return sigsuspend_(nr == SYS_pause ? NULL : a);
}

static long em_kill(long nr, const long *a, ucontext_t *uc)
{
	return kill_(nr, a);
}

static long em_sched_yield(long nr, const long *a, ucontext_t *uc)
{
	xsc_yield();
	return 0;
}

static long em_sigpending(long nr, const long *a, ucontext_t *uc)
{
	long r = xsc__sys6(nr, a[0], a[1], 0, 0, 0, 0);

	if (r == 0 && a[1] == 8)
		*(uint64_t *)a[0] |= cur_fiber()->tp.pending;
	return r;
}

static long em_getaffinity(long nr, const long *a, ucontext_t *uc)
{
	if (a[0] && a[0] != cur_fiber()->vtid)
		return RAW;
	if ((unsigned long)a[1] < (unsigned long)tp.affinity_len)
		return -EINVAL;
	memcpy((void *)a[2], tp.affinity, (size_t)tp.affinity_len);
	return tp.affinity_len;
}

static long em_setaffinity(long nr, const long *a, ucontext_t *uc)
{
	if (a[0] && a[0] != cur_fiber()->vtid && !tid_post((int)a[0], 0))
		return RAW;
	warn_once(&tp.warned_affinity, "thread affinity is ignored "
		  "(threads are fibers; vcpus are pinned)");
	return 0;
}

static const emulator emulators[XSC_NR_MAX] = {
	[SYS_futex] = em_futex,
	[SYS_clone3] = em_clone3,
	[SYS_clone] = em_clone,
	[SYS_fork] = em_fork,
	[SYS_vfork] = em_fork,
	[SYS_execve] = em_exec,
	[SYS_execveat] = em_exec,
	[SYS_exit] = em_exit,
	[SYS_gettid] = em_gettid,
	[SYS_set_tid_address] = em_set_tid_address,
	[SYS_set_robust_list] = em_set_robust_list,
	[SYS_get_robust_list] = em_get_robust_list,
	[SYS_rseq] = em_rseq,
	[SYS_rt_sigprocmask] = em_sigprocmask,
	[SYS_rt_sigaction] = em_sigaction,
	[SYS_rt_sigtimedwait] = em_sigtimedwait,
	[SYS_rt_sigsuspend] = em_sigsuspend,
	[SYS_pause] = em_sigsuspend,
	[SYS_tgkill] = em_kill,
	[SYS_tkill] = em_kill,
	[SYS_sched_yield] = em_sched_yield,
	[SYS_rt_sigpending] = em_sigpending,
	[SYS_sched_getaffinity] = em_getaffinity,
	[SYS_sched_setaffinity] = em_setaffinity,
};

bool xsc__tp_needs_frame(long nr)
{
	return nr == SYS_clone || nr == SYS_clone3 || nr == SYS_fork ||
	       nr == SYS_vfork || nr == SYS_rt_sigprocmask;
}

/* The table's XSC_SHIM_EMULATE rows and the emulators are the same set:
 * a row marked so without an emulator would make its call directly, one
 * with an emulator the row does not mark would never reach it.  Returns
 * the first number where they differ, or -1. */
static long check_emulators(void)
{
	for (long nr = 0; nr < XSC_NR_MAX; nr++)
		if ((xsc__sys[nr].shim == XSC_SHIM_EMULATE) != (emulators[nr] != NULL))
			return nr;
	return -1;
}

static long dispatch(long nr, const long *a, ucontext_t *uc)
{
	const struct xsc_sysdef *d = xsc__sysdef(nr);
	long r = RAW;

	if (__builtin_expect(xsc__vcpu()->tp.repin, 0))
		repin(xsc__vcpu());	/* after a process clone (fork_like) */
	if (__builtin_expect(atomic_load_explicit(&xsc__vcpu()->tp.want_yield,
						  memory_order_relaxed), 0)) {
		/* a whole tick without a switch (watchdog): the others, and the
		 * completions they wait for, get their turn */
		atomic_store(&xsc__vcpu()->tp.want_yield, 0);
		xsc__vcpu()->poll_now = true;
		xsc_yield();
	}
	if (xsc__rt_creds_behind(xsc__vcpu()))	/* before any call, direct too */
		xsc__rt_creds_catch_up(xsc__vcpu());

	switch (d ? xsc__shim_policy(d, a) : XSC_SHIM_DIRECT) {
	case XSC_SHIM_EMULATE:
		r = emulators[nr](nr, a, uc);
		break;
	case XSC_SHIM_POST:
		return xsc_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	default:
		break;
	}
	if (r != RAW)
		return r;
	return xsc__sys6(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

long xsc__tp_call(long nr, const long *a)
{
	return dispatch(nr, a, NULL);
}

/* A call made in a signal handler (see sig_tramp). */
long xsc__tp_handler_call(struct xsc_vcpu *v, long nr, const long *a)
{
	switch (nr) {
	case SYS_rt_sigaction:
		return sigaction_(a, true);
	case SYS_gettid:
		if (v->cur)
			return v->cur->vtid;
		break;
	case SYS_setuid: case SYS_setgid: case SYS_setreuid: case SYS_setregid:
	case SYS_setresuid: case SYS_setresgid: case SYS_setgroups:
		if (v->tp.setxid && v->cur) {
			/* made once, here, for glibc's consistency check;
			 * every kernel thread makes it later (setxid) */
			if (!v->cur->tp.setxid) {
				v->cur->tp.setxid_ret = xsc__sys6(nr, a[0], a[1], a[2], 0, 0, 0);
				v->cur->tp.setxid = true;
			}
			return v->cur->tp.setxid_ret;
		}
		break;
	case SYS_tgkill:
	case SYS_tkill:
		if (v->cur)
			return kill_(nr, a);
		break;
	default:
		break;
	}
	return xsc__sys6(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

static void on_sigsys(int sig, siginfo_t *si, void *uc_)
{
	ucontext_t *uc = uc_;
	greg_t *g = uc->uc_mcontext.gregs;
	struct xsc_vcpu *v = xsc__tp ? gs_vcpu() : NULL;
	int *errp = &errno, saved = *errp;
	long a[6] = { g[REG_RDI], g[REG_RSI], g[REG_RDX], g[REG_R10], g[REG_R8], g[REG_R9] };
	long nr = si->si_syscall, r;

	(void)sig;
	if (v && v->tp.in_handler) {
		v->tp.sel = TP_SEL_ALLOW;
		g[REG_RAX] = xsc__tp_handler_call(v, nr, a);
		*errp = saved;
		v->tp.sel = TP_SEL_BLOCK;
		return;
	}
	if (!v || !v->cur) {	/* not a fiber: cannot happen, but be exact */
		if (v)
			v->tp.sel = TP_SEL_ALLOW;
		g[REG_RAX] = xsc__sys6(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
		return;
	}
	v->tp.sel = TP_SEL_ALLOW;
	v->tp.ntrap++;
	xsc__tp_rewrite_site((uintptr_t)g[REG_RIP], nr);	/* trap once, then jump */
	r = dispatch(nr, a, uc);
	if (r != KEEP_REGS)
		g[REG_RAX] = r;
	*errp = saved;
	if (!xsc__tp)	/* a forked child */
		return;
	v = xsc__vcpu();
	if (v->cur->tp.pending & ~v->cur->sigmask)
		xsc__tp_deliver(v->cur);
	if (v->tp.vfork)
		v->tp.vfork = false;
	else
		v->tp.sel = TP_SEL_BLOCK;
}

/* ---- start-up ------------------------------------------------------------------- */

static int find_text(struct dl_phdr_info *info, size_t size, void *arg)
{
	uintptr_t me = (uintptr_t)arg;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + p->p_vaddr, hi = lo + p->p_memsz;
		if (p->p_type == PT_LOAD && (p->p_flags & PF_X) && me >= lo && me < hi) {
			tp.text_lo = lo;
			tp.text_hi = hi;
			return 1;
		}
	}
	return 0;
}

static void vcpu_start(struct xsc_vcpu *v)
{
	long r;

	/* GS points at the vcpu for the native-call stub (stub_x86_64.S):
	 * %gs-relative loads need no FSGSBASE */
	v->tp.self = v;
	xsc__sys2(SYS_arch_prctl, ARCH_SET_GS, v);
	v->tp.fs = rdfsbase();
	v->tp.ktid = (int)xsc__sys0(SYS_gettid);
	v->tp.sel = TP_SEL_ALLOW;
	xsc__sys4(SYS_rt_sigprocmask, SIG_SETMASK, 0, &v->tp.sigmask, 8);
	r = xsc__sys6(SYS_prctl, PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_ON,
		      (long)tp.text_lo, (long)(tp.text_hi - tp.text_lo),
		      (long)&v->tp.sel, 0);
	if (r < 0) {	/* probed before: only a kernel change gets here */
		xsc__say("xsc run: syscall user dispatch failed on a vcpu (%ld)\n", r);
		abort();
	}
	/* the pool's bookkeeping comes from malloc: allocate it now, before
	 * any fiber runs, not later from a fiber or the scheduler */
	r = v->x->cfg.backend == XSC_BACKEND_INLINE ? 0 : xsc__workers_start(v->x);
	if (r < 0)	/* its calls then run inline (handle.c start_worker) */
		xsc__say("xsc run: no syscall thread on a vcpu (%s)\n", strerror((int)-r));
}

/* The process's main thread (a forked child's: the one that forked) has
 * nothing to run from here on, but it is what /proc shows and what kill(2)
 * checks permissions against: it takes the program's process-wide
 * credential changes (creds.c). */
static void park_forever(void *arg)
{
	uint64_t all = ~0ULL;
	unsigned have = atomic_load(&xsc__creds_gen);	/* before main runs */

	/* this thread shares the main fiber's TLS: no signal may run here */
	xsc__sys4(SYS_rt_sigprocmask, SIG_SETMASK, &all, 0, 8);
	atomic_store(&xsc__creds_parked, have);
	xsc__rt_adopt(arg);
	xsc__creds_park(have);
}

/* Ends the kernel's rseq updates for this kernel thread, whose area is
 * in the TLS block at thread pointer tcb; mark: and says so in the area
 * (sched_getcpu() then asks the kernel). */
static void unregister_rseq(uint64_t tcb, bool mark)
{
	const ptrdiff_t *off = dlsym(RTLD_DEFAULT, "__rseq_offset");
	const unsigned *size = dlsym(RTLD_DEFAULT, "__rseq_size");
	char *area;

	if (!off || !size || !*size)
		return;
	area = (char *)tcb + *off;
	if (xsc__sys4(SYS_rseq, area, *size, 1 /* UNREGISTER */, RSEQ_SIG) == 0 && mark)
		*(volatile int32_t *)(area + 4) = -2;	/* REGISTRATION_FAILED */
}

/* ---- forked children -------------------------------------------------------------- */

/* libc's fork, in the child, once libc has reset its own state (malloc,
 * stdio, its thread list: the one thread left is the one that forked):
 * the child gets a runtime of its own as the parent has one (vcpus,
 * rings, syscall threads, dispatch) and the thread that forked goes on
 * as its one fiber.  Everything else of the parent's runtime is not the
 * child's: its other fibers are gone as threads are natively, the locks
 * their vcpus may have held and their wait queues are reset, their
 * records abandoned; the rings are shared with the parent, so only the
 * child's copies of their fds are closed.  This kernel thread, a vcpu of
 * the parent's, then sleeps as the original main thread does. */
static void rearm(void)
{
	struct xsc_fiber *f = tp.child;
	struct xsc_vcpu *old = tp.child_v;
	struct xsc_ctx park;
	void *pstack;
	int ret;

	if (!f || xsc__sys0(SYS_getpid) != tp.child_pid)
		return;	/* not the child of a fiber's fork */
	tp.child = NULL;
	if (tp.fork_native)
		return;
	pstack = mmap(NULL, 65536, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (pstack == MAP_FAILED) {
		xsc__say("xsc run: a forked child runs natively: out of memory\n");
		return;
	}
	/* this thread's rseq area is in the parent's vcpu thread's TLS,
	 * which libc has just put back in its stack cache */
	unregister_rseq(old->tp.fs, false);
	tp.lock = 0;
	mask_lock = 0;
	recs.lock = 0;
	memset(tp.tids, 0, sizeof(tp.tids));
	for (int s = 0; s <= 64; s++)
		atomic_store(&accepting[s], 0);
	atomic_store(&tp.stray, 0);
	atomic_store(&tp.nthreads, 0);
	f->vtid = (int)tp.child_pid;	/* gettid() == getpid(), as natively */
	f->tp.link = NULL;
	f->home = NULL;
	f->state = F_RUNNING;
	f->tp.pending = 0;	/* a child starts with no signal pending */
	memset(f->tp.rtq, 0, sizeof(f->tp.rtq));
	f->tp.wait_set = 0;
	f->tp.wait_fd = 0;
	f->tp.call = 0;
	atomic_store(&f->tp.intr, 0);
	tid_add(f);
	account(~0ULL, f->sigmask);
	idle_mask(false);
	xsc__rt_forget();
	xsc__tp = true;
	ret = xsc__rt_start(&tp.cfg);
	if (ret < 0) {
		/* natively the child would go on: so it does, without xsc
		 * (vcpus that started stop without running anything) */
		atomic_store(&xsc__rt.stop, 1);
		for (int i = 0; i < xsc__rt.n; i++)
			if (atomic_load(&xsc__rt.v[i].inited) > 0)
				xsc__kick(xsc__rt.v[i].x);
		xsc__tp = false;
		xsc__say("xsc run: a forked child runs natively: cannot start "
			 "its vcpus (%s)\n", strerror(-ret));
		munmap(pstack, 65536);
		return;
	}
	watch();
	if (tp.verbose)
		xsc__say("xsc run: forked child %ld: %d vcpus\n", tp.child_pid, xsc__rt.n);
	if (xsc__ctx_make(&park, pstack, 65536, park_forever, f, NULL) < 0)
		abort();
	xsc__ctx_switch(&f->ctx, &park);
	/* f, on a vcpu of the child's runtime */
	xsc__vcpu()->tp.sel = TP_SEL_BLOCK;
}

static const char *why_not(void)
{
	unsigned char sel = 0;

	if (xsc__sys6(SYS_prctl, PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_ON,
		      (long)tp.text_lo, 1, (long)&sel, 0) < 0)
		return "the kernel lacks syscall user dispatch (Linux >= 5.11)";
	xsc__sys6(SYS_prctl, PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_OFF, 0, 0, 0, 0);
	return NULL;
}

/* A signal one thread sends another and the receiver takes with sigwait
 * carries the si_code of tgkill; what that is (SI_TKILL, or SI_USER on
 * newer kernels) is asked of the kernel once, with SIGUSR1 blocked for
 * the moment and any pending one left alone. */
static int tkill_code(void)
{
	uint64_t one = SIGBIT(SIGUSR1), old, pend = 0;
	static const struct timespec zero;
	siginfo_t si;
	int code = SI_TKILL;

	xsc__sys4(SYS_rt_sigprocmask, SIG_BLOCK, &one, &old, 8);
	xsc__sys2(SYS_rt_sigpending, &pend, 8);
	if (!(pend & one) &&
	    xsc__sys3(SYS_tgkill, xsc__sys0(SYS_getpid), xsc__sys0(SYS_gettid), SIGUSR1) == 0 &&
	    xsc__sys4(SYS_rt_sigtimedwait, &one, &si, &zero, 8) == SIGUSR1)
		code = si.si_code;
	xsc__sys4(SYS_rt_sigprocmask, SIG_SETMASK, &old, 0, 8);
	return code;
}

static int start(void)
{
	struct xsc_runtime_config cfg;
	struct kact k = { (void *)on_sigsys,
			  SA_SIGINFO | SA_NODEFER | SA_RESTORER,
			  (void *)xsc__tp_restorer, 0 };
	struct xsc_fiber *mainf;
	struct xsc_ctx park;
	const char *why, *env;
	void *pstack;
	uint64_t mask;
	long nr;

	if ((nr = check_emulators()) >= 0) {
		/* a defect of this build, not of the program: stop loudly */
		xsc__say("xsc run: the syscall table and the shim disagree on %s "
			 "(.shim = XSC_SHIM_EMULATE and preload.c's emulators[])\n",
			 xsc_syscall_name(nr));
		abort();
	}
	dl_iterate_phdr(find_text, (void *)(uintptr_t)start);
	if (!tp.text_lo)
		why = "cannot find the library's own text";
	else
		why = why_not();
	if (why) {
		xsc__say("xsc run: %s; running the program natively\n", why);
		return -1;
	}
	tp.verbose = getenv("XSC_VERBOSE") != NULL;
	xsc__tp_rewrite_init();
	xsc__fsgsbase = (getauxval(AT_HWCAP2) & HWCAP2_FSGSBASE) != 0;
	if (!xsc__fsgsbase && tp.verbose)
		xsc__say("xsc run: no FSGSBASE from user space: each switch to a "
			 "thread's TLS costs an arch_prctl system call\n");
	xsc_runtime_config_init(&cfg);
	if ((env = getenv("XSC_THREADS")) != NULL && atoi(env) > 0)
		cfg.nthreads = (unsigned)atoi(env);
	if ((env = getenv("XSC_NPAGES")) != NULL && atoi(env) > 0)
		cfg.npages = (unsigned)atoi(env);
	tp.affinity_len = xsc__sys3(SYS_sched_getaffinity, 0, sizeof(tp.affinity),
				    tp.affinity);
	for (int s = 1; s <= 64; s++)
		if (s != SIGKILL && s != SIGSTOP)
			xsc__sys4(SYS_rt_sigaction, s, 0, &tp.act[s], 8);
	/* signals the program already handles (inherited SIG_IGN needs
	 * nothing) go through the trampoline too */
	for (int s = 1; s <= 64; s++)
		if (s != SIGKILL && s != SIGSTOP && s != SIGSYS &&
		    tp.act[s].handler != SIG_DFL && tp.act[s].handler != SIG_IGN)
			install(s, &tp.act[s]);
	if (xsc__sys4(SYS_rt_sigaction, SIGSYS, &k, 0, 8) < 0) {
		xsc__say("xsc run: cannot install the SIGSYS handler; running natively\n");
		return -1;
	}
	mainf = rec_get();
	pstack = mmap(NULL, 65536, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (!mainf || pstack == MAP_FAILED) {
		xsc__say("xsc run: out of memory at start; running natively\n");
		return -1;
	}
	atomic_store(&tp.next_vtid, 0x40000000);	/* above any pid_max */
	mainf->vtid = (int)xsc__sys0(SYS_getpid);
	mainf->fs = rdfsbase();
	xsc__sys4(SYS_rt_sigprocmask, SIG_SETMASK, 0, &mask, 8);
	mainf->sigmask = mask & ~SIGBIT(SIGSYS);
	account(~0ULL, mainf->sigmask);
	tp.tkill_code = tkill_code();
	/* the kernel would keep updating the area for this (soon parked)
	 * thread, not for whichever vcpu runs main: make sched_getcpu() ask */
	unregister_rseq(rdfsbase(), true);
	xsc__tp = true;
	xsc__raw_workers = true;	/* no glibc locks in syscall threads */
	xsc__tp_vcpu_start = vcpu_start;
	xsc__tp_reap = reap;
	xsc__tp_scan = scan;
	xsc__tp_interrupted = interrupted;
	tp.cfg = cfg;
	tp.fork_native = (env = getenv("XSC_FORK")) != NULL && strcmp(env, "native") == 0;
	tp.preempt_ns = 10 * 1000000L;
	if ((env = getenv("XSC_PREEMPT_MS")) != NULL)
		tp.preempt_ns = atol(env) * 1000000L;
	tp.preempt_cookie = (int)(xsc__now() ^ (xsc__sys0(SYS_getpid) << 16)) | 1;
	if (tp.preempt_ns > 0)
		install(PREEMPT_SIG, &tp.act[PREEMPT_SIG]);
	if (xsc__rt_start(&cfg) < 0) {
		xsc__say("xsc run: cannot start the vcpus\n");
		abort();	/* threads may already run with dispatch on */
	}
	/* glibc installs its SIGSETXID handler at the first pthread_create,
	 * the runtime's own: setxid() runs it, and through the trampoline
	 * its calls trap into in_handler() wherever it runs.  (SIGCANCEL's,
	 * installed then too, stays as glibc made it: asynchronous
	 * cancellation unwinds out of its handler, past the trampoline's
	 * epilogue.) */
	{
		struct kact now;
		if (xsc__sys4(SYS_rt_sigaction, SIGSETXID, 0, &now, 8) == 0 &&
		    now.handler != SIG_DFL && now.handler != SIG_IGN &&
		    now.handler != (void *)sig_tramp) {
			tp.act[SIGSETXID] = now;
			install(SIGSETXID, &now);
		}
	}
	/* after the runtime's own child handlers (handle.c: the parent's
	 * handles are foreign in the child), which its start registered */
	pthread_atfork(NULL, NULL, rearm);
	watch();
	tid_add(mainf);
	if (tp.verbose)
		xsc__say("xsc run: %d vcpus, dispatch region %#lx-%#lx\n", xsc__rt.n,
		    (unsigned long)tp.text_lo, (unsigned long)tp.text_hi);
	/* From here main() runs as a fiber on a vcpu; this kernel thread
	 * sleeps for good on a small stack of its own. */
	if (xsc__ctx_make(&park, pstack, 65536, park_forever, mainf, NULL) < 0)
		abort();
	xsc__ctx_switch(&mainf->ctx, &park);
	return 0;
}

/* XSC_VERBOSE: one line of counts when the program exits. */
static void __attribute__((destructor)) report(void)
{
	uint64_t trap = 0, fast = 0;

	if (!xsc__tp || !tp.verbose)
		return;
	for (int i = 0; i < xsc__rt.n; i++) {
		trap += xsc__rt.v[i].tp.ntrap;
		fast += xsc__rt.v[i].tp.nfast;
	}
	xsc__say("xsc run: %ld threads as fibers, %lu calls trapped (SIGSYS), "
		 "%lu through interposed functions, %ld futex wakes passed to "
		 "the kernel (%ld kernel waiters woken), %ld preemptions\n",
		 atomic_load(&tp.nthreads), (unsigned long)trap,
		 (unsigned long)fast, atomic_load(&tp.kwakes),
		 atomic_load(&tp.kwoken), atomic_load(&tp.npreempt));
	xsc__tp_rewrite_report();
}

static int wrap_main(int argc, char **argv, char **envp)
{
	const char *off = getenv("XSC_TRANSPARENT");

	if (!(off && strcmp(off, "0") == 0) && start() == 0)
		xsc__vcpu()->tp.sel = TP_SEL_BLOCK;
	return tp.main(argc, argv, envp);
}

XSC_EXPORT int __libc_start_main(int (*main)(int, char **, char **), int argc,
				 char **argv, void (*init)(void), void (*fini)(void),
				 void (*rtld_fini)(void), void *stack_end)
{
	int (*real)(int (*)(int, char **, char **), int, char **, void (*)(void),
		    void (*)(void), void (*)(void), void *);

	real = dlsym(RTLD_NEXT, "__libc_start_main");
	if (!real) {
		xsc__say("xsc run: cannot find libc's __libc_start_main\n");
		abort();
	}
	tp.main = main;
	return real(wrap_main, argc, argv, init, fini, rtld_fini, stack_end);
}
