/*
 * preload.c - transparent mode: unmodified pthread programs on xsc threads
 * (libxsc-preload.so, by LD_PRELOAD or `xsc run -- prog`; docs/transparent.md).
 * This file: the entry from libc and the dispatch.  Every way a program's
 * call reaches the library (a SIGSYS from syscall user dispatch, an
 * interposed function in wrap.c, a rewritten libc site in rewrite.c) ends
 * in xsc__tp_call(), which takes its policy from the syscall table's
 * .shim (post, direct or emulate) and runs the emulators of this file.
 * signals/, threads.c, setxid.c and start.c hold the rest (shim.h lists
 * them).
 *
 * Rules:
 *  - runtime code runs with the dispatch selector at ALLOW, program code
 *    on a fiber at BLOCK; a handler runs at ALLOW (its calls are direct,
 *    no fiber switch inside a handler); SIGSYS is never blocked;
 *  - the library never calls a libc function it intercepts (raw system
 *    calls, rawsys.h) and never takes a glibc lock a fiber can hold;
 *  - emulators[] must be exactly the table's EMULATE rows (checked at
 *    start-up).
 */
#include "shim.h"

struct tp_state tp;

/* ---- dispatch ------------------------------------------------------------------- */

/* What the shim does with a call is the table's .shim (src/table.h): post
 * it through the runtime, make it directly, or answer it here.  The
 * answers are the emulators below, one per XSC_SHIM_EMULATE row (checked
 * at start-up, tp_check_emulators); an emulator returns RAW when this call,
 * with these arguments or from where it came, is made directly after all
 * (uc is NULL for a call from an interposed function, not a trap). */
#define RAW (LONG_MIN + 1)

typedef long (*emulator)(long nr, const long *a, ucontext_t *uc);

/* ---- the program's memory, as the kernel would reach it -------------------
 * An emulator that loads from or stores to a pointer the program passed
 * must fail with -EFAULT where the kernel would, not crash: the kernel is
 * asked first, one page at a time, with calls every sandbox allows
 * (xsc__uprobe, ucopy.c).  (Memory unmapped by another thread between the
 * probe and the copy is not covered.) */
#define PAGE 4096UL

/* 0, or -EFAULT where the kernel's copy_from_user would fail */
int tp_copy_in(void *dst, const void *usrc, size_t len)
{
	if (xsc__uprobe((uintptr_t)usrc, len, false))
		return -EFAULT;
	memcpy(dst, usrc, len);
	return 0;
}

/* 0, or -EFAULT where the kernel's copy_to_user would fail */
int tp_copy_out(void *udst, const void *src, size_t len)
{
	if (xsc__uprobe((uintptr_t)udst, len, true))
		return -EFAULT;
	memcpy(udst, src, len);
	return 0;
}

/* A futex word: read on every wait and compare-requeue, where a probe
 * each time would cost a system call on the path that exists to avoid
 * them (a semaphore ping-pong between two threads took 1.3-1.7 us a round
 * instead of 0.9-1.0).  So a vcpu remembers the pages it found readable
 * until the program next makes a call that can take memory away
 * (tp_maps_call): 0, or -EFAULT. */
static _Atomic uint64_t tp_map_epoch = 1;

int tp_readable(struct xsc_vcpu *v, const uint32_t *u)
{
	uintptr_t pg = (uintptr_t)u & ~(PAGE - 1);
	uintptr_t *slot = &TP(v)->okpage[(pg / PAGE) % 16];
	uint64_t e = atomic_load(&tp_map_epoch);

	if (TP(v)->okepoch != e) {
		memset(TP(v)->okpage, 0, sizeof(TP(v)->okpage));
		TP(v)->okepoch = e;
	}
	if (*slot == pg && pg)
		return 0;
	if (xsc__uprobe((uintptr_t)u, sizeof(*u), false))
		return -EFAULT;
	*slot = pg;
	return 0;
}

/* Before each call of the program (its threads and its handlers): one that
 * can unmap or protect memory forgets every vcpu's readable pages. */
void tp_maps_call(long nr, const long *a)
{
	if (nr < 0 || nr >= XSC_NR_MAX)
		return;
	switch (xsc__sys[nr].unmaps) {	/* the row's .unmaps */
	case XSC_UNMAPS_FIXED:
		if (!(a[3] & (MAP_FIXED | MAP_FIXED_NOREPLACE)))
			return;
		break;
	case XSC_UNMAPS:
		break;
	default:
		return;
	}
	atomic_fetch_add(&tp_map_epoch, 1);
}

/* A wait the emulation ended for a signal (-EINTR, its handlers still to
 * run) ends as a posted call a signal interrupted does (signals/interrupt.c):
 * made again, the word compared afresh, or EINTR, by the row's rule. */
static long em_futex(long nr, const long *a, ucontext_t *uc)
{
	int cmd = (int)a[1] & FUTEX_CMD_MASK;
	long r;

	while ((r = tp_futex(a)) == -EINTR && (cmd == FUTEX_WAIT || cmd == FUTEX_WAIT_BITSET) &&
	       (r = tp_interrupted_args(xsc__vcpu()->cur, nr, a, r)) == XSC_CALL_RESTART)
		;
	return r;
}

static long em_clone3(long nr, const long *a, ucontext_t *uc)
{
	struct clone_args_k args = { 0 }, *ca = &args;
	size_t size = (size_t)a[1];

	if (!uc)
		return RAW;
	/* the kernel's checks of the argument block, before any use */
	if (size < 64)	/* CLONE_ARGS_SIZE_VER0 */
		return -EINVAL;
	if (size > PAGE)
		return -E2BIG;
	if (size > sizeof(args)) {	/* a newer block: the rest must be zero */
		const unsigned char *rest = (const unsigned char *)a[0] + sizeof(args);
		size_t n = size - sizeof(args);

		if (xsc__uprobe((uintptr_t)rest, n, false))
			return -EFAULT;
		for (size_t i = 0; i < n; i++)	/* in place: no page on the stack */
			if (rest[i])
				return -E2BIG;
	}
	if (tp_copy_in(&args, (const void *)a[0], size < sizeof(args) ? size : sizeof(args)))
		return -EFAULT;
	if (!(ca->flags & CLONE_THREAD))
		return tp_fork_like(nr, a, uc);
	return tp_spawn(ca->flags, ca->stack, ca->stack + ca->stack_size, (int *)ca->parent_tid,
		     (int *)ca->child_tid, ca->tls, uc);
}

static long em_clone(long nr, const long *a, ucontext_t *uc)
{
	if (!uc)
		return RAW;
	if (!(a[0] & CLONE_THREAD))
		return tp_fork_like(nr, a, uc);
	return tp_spawn((uint64_t)a[0], 0, (uint64_t)a[1], (int *)a[2], (int *)a[3],
		     (uint64_t)a[4], uc);
}

static long em_fork(long nr, const long *a, ucontext_t *uc)
{
	return uc ? tp_fork_like(nr, a, uc) : RAW;
}

static long em_exec(long nr, const long *a, ucontext_t *uc)
{
	return tp_exec(nr, a);
}

static long em_exit(long nr, const long *a, ucontext_t *uc)
{
	tp_thread_exit((int)a[0]);
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

/* The kernel's call first, for its answer where it has none to give
 * (-EINVAL without CONFIG_CHECKPOINT_RESTORE) and its -EFAULT; then the
 * fiber's word in place of the kernel thread's (table.c, shim_prctl). */
static long em_prctl(long nr, const long *a, ucontext_t *uc)
{
	uint32_t *ctid = cur_fiber()->ctid;
	long r = xsc__sys6(nr, a[0], a[1], a[2], a[3], a[4], 0);

	if (r < 0)
		return r;
	return tp_copy_out((void *)a[1], &ctid, sizeof(ctid));
}

static long em_set_robust_list(long nr, const long *a, ucontext_t *uc)
{
	struct xsc_fiber *f = cur_fiber();

	if ((size_t)a[1] != 3 * sizeof(void *))	/* struct robust_list_head */
		return -EINVAL;
	f->robust = (void *)a[0];
	f->robust_len = (size_t)a[1];
	return 0;
}

static long em_get_robust_list(long nr, const long *a, ucontext_t *uc)
{
	struct xsc_fiber *f = cur_fiber();

	if (a[0] && a[0] != f->vtid)
		return -EPERM;
	/* the kernel writes the length first */
	if (tp_copy_out((void *)a[2], &f->robust_len, sizeof(f->robust_len)))
		return -EFAULT;
	return tp_copy_out((void *)a[1], &f->robust, sizeof(f->robust));
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
	return uc ? tp_sigprocmask(a, uc) : RAW;
}

static long em_sigaction(long nr, const long *a, ucontext_t *uc)
{
	return tp_sigaction(a, false);
}

static long em_sigtimedwait(long nr, const long *a, ucontext_t *uc)
{
	return tp_sigtimedwait(a);
}

static long em_sigsuspend(long nr, const long *a, ucontext_t *uc)
{
	return tp_sigsuspend(nr == SYS_pause ? NULL : a);
}

static long em_kill(long nr, const long *a, ucontext_t *uc)
{
	return tp_kill(nr, a);
}

/* The program's sched_yield: to the other fibers of its vcpu.  With none
 * ready, the calls posted so far go out, and the kernel gets the yield
 * only for another vcpu on the same CPU (xsc__rt_yield_cpu: a yield to
 * every task put the fibers readied on this vcpu behind all of them). */
static long em_sched_yield(long nr, const long *a, ucontext_t *uc)
{
	struct xsc_vcpu *v = xsc__vcpu();

	if (!atomic_load(&v->rq_len))
		xsc__rt_yield_cpu(v);
	xsc_yield();
	return 0;
}

static long em_sigpending(long nr, const long *a, ucontext_t *uc)
{
	long r = xsc__sys6(nr, a[0], a[1], 0, 0, 0, 0);

	if (r == 0 && a[1] == 8)
		*(uint64_t *)a[0] |= cur_fiber()->sig_pending;
	return r;
}

static long em_getaffinity(long nr, const long *a, ucontext_t *uc)
{
	long r;

	if (a[0] && a[0] != cur_fiber()->vtid)
		return RAW;
	/* the kernel's answer, its checks of size and pointer included, for
	 * the vcpu's kernel thread; then the mask is the process's */
	r = xsc__sys3(SYS_sched_getaffinity, 0, a[1], a[2]);
	if (r > 0)
		memcpy((void *)a[2], tp.affinity, (size_t)(r < tp.affinity_len ? r : tp.affinity_len));
	return r;
}

static long em_setaffinity(long nr, const long *a, ucontext_t *uc)
{
	if (a[0] && a[0] != cur_fiber()->vtid && !tp_tid_post((int)a[0], 0))
		return RAW;
	warn_once(&tp.warned_affinity, "thread affinity is ignored "
		  "(threads are fibers; vcpus are pinned)");
	return 0;
}

/* A thread stack (table.c shim_mmap) below 4 GiB, where its TLS block
 * can be loaded by an LDT selector; where that is not used or there is
 * no room, the call as the program made it. */
static long em_mmap(long nr, const long *a, ucontext_t *uc)
{
	long r = xsc__tls_map_low(a);

	return r >= 0 ? r : RAW;
}

static const emulator emulators[XSC_NR_MAX] = {
	[SYS_mmap] = em_mmap,
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
	[SYS_prctl] = em_prctl,
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

static long dispatch_call(long nr, const long *a, ucontext_t *uc);

/* SIGPIPE: whichever kernel thread ran a write that met a closed pipe or
 * socket got the kernel's SIGPIPE (a syscall thread, the SQPOLL poller,
 * io_uring's workers, or a vcpu between fibers, whose copy tp_sig_tramp
 * drops); the thread that made the call gets it here, before the call
 * returns to it, as natively. */
static long dispatch(long nr, const long *a, ucontext_t *uc)
{
	struct xsc_fiber *f = xsc__vcpu()->cur;
	struct tp_kcall k;
	long r;
	bool sends, outer = f && !f->in_call;

	/* what a debugger shows the thread in (sched.h): its own call,
	 * also when it is emulated (a futex wait) or made directly */
	if (outer) {
		f->in_args = a;
		f->in_call = nr + 1;
	}
	tp_kinds_before(nr, a, &k);
	r = dispatch_call(nr, a, uc);
	if (outer)
		f->in_call = 0;
	if (k.what != TP_KC_NONE && r != KEEP_REGS)
		tp_kinds_after(nr, a, &k, r);

	if (__builtin_expect(r == -EPIPE, 0) &&
	    xsc__sigpipe_kind(nr, (const int64_t *)a, &sends))
		tp_raise(SIGPIPE);
	return r;
}

static long dispatch_call(long nr, const long *a, ucontext_t *uc)
{
	const struct xsc_sysdef *d = xsc__sysdef(nr);
	long r = RAW;

	if (__builtin_expect(TP(xsc__vcpu())->repin, 0))
		tp_repin(xsc__vcpu());	/* after a process clone (tp_fork_like) */
	if (__builtin_expect(atomic_load_explicit(&TP(xsc__vcpu())->want_yield,
						  memory_order_relaxed), 0)) {
		/* a whole tick without a switch (watchdog): the others, and the
		 * completions they wait for, get their turn */
		atomic_store(&TP(xsc__vcpu())->want_yield, 0);
		xsc__vcpu()->poll_now = true;
		xsc_yield();
	}
	/* a call is a scheduling point, direct ones too (sched/syscalls.c) */
	if (__builtin_expect(++xsc__vcpu()->calls_run >= 64, 0))
		xsc__rt_call_tick(xsc__vcpu());
	if (xsc__rt_creds_behind(xsc__vcpu()))	/* before any call, direct too */
		xsc__rt_creds_catch_up(xsc__vcpu());
	tp_maps_call(nr, a);

	switch (d ? xsc__shim_policy(d, a) : XSC_SHIM_DIRECT) {
	case XSC_SHIM_EMULATE:
		r = emulators[nr](nr, a, uc);
		break;
	case XSC_SHIM_POST:
		return xsc__fiber_call(nr, a);
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

/* A private futex operation that only wakes or moves waiters. */
static bool futex_wakes(long op)
{
	switch (op & FUTEX_CMD_MASK) {
	case FUTEX_WAKE: case FUTEX_WAKE_BITSET:
	case FUTEX_REQUEUE: case FUTEX_CMP_REQUEUE:
		return op & FUTEX_PRIVATE_FLAG;
	default:
		return false;
	}
}

/* ---- what a signal handler's calls need: the rows' .in_handler ---- */
typedef long (*handler_emulator)(struct xsc_vcpu *v, long nr, const long *a);

static long in_sigaction(struct xsc_vcpu *v, long nr, const long *a)
{
	(void)v; (void)nr;
	return tp_sigaction(a, true);
}

static long in_gettid(struct xsc_vcpu *v, long nr, const long *a)
{
	(void)nr; (void)a;
	return v->cur ? v->cur->vtid : RAW;
}

static long in_kill(struct xsc_vcpu *v, long nr, const long *a)
{
	return v->cur ? tp_kill(nr, a) : RAW;
}

/* A wake (sem_post, async-signal-safe) must reach waiting fibers, whose
 * waits are the runtime's, not the kernel's (handlers never run while
 * this kernel thread holds a lock of the runtime: signals/handlers.c).
 * Waits stay direct: a wake that finds no fiber also wakes the kernel's
 * waiters (tp_futex). */
static long in_futex(struct xsc_vcpu *v, long nr, const long *a)
{
	(void)v; (void)nr;
	return futex_wakes(a[1]) ? tp_futex(a) : RAW;
}

/* pthread_exit in a handler: the thread ends (glibc unwinds into
 * start_thread by its own jump, which handler_jump does not see), its
 * handlers with it; made directly, the exit ended the vcpu's kernel
 * thread and every fiber on it. */
static long in_exit(struct xsc_vcpu *v, long nr, const long *a)
{
	(void)nr;
	if (v->cur && !TP(v)->setxid) {
		TP(v)->in_handler = 0;
		TP(v)->sigmask = ~0ULL;	/* the handler's mask: the next fiber
					   sets its own */
		tp_thread_exit((int)a[0]);
	}
	return RAW;
}

static const handler_emulator in_handler[XSC_NR_MAX] = {
	[SYS_rt_sigaction] = in_sigaction,
	[SYS_gettid] = in_gettid,
	[SYS_tgkill] = in_kill,
	[SYS_tkill] = in_kill,
	[SYS_futex] = in_futex,
	[SYS_exit] = in_exit,
};

/* The table's XSC_SHIM_EMULATE rows and the emulators are the same set,
 * and its .in_handler rows and in_handler[]: a row marked so without an
 * emulator would make its call directly, one with an emulator the row
 * does not mark would never reach it.  Returns the first number where
 * they differ, or -1. */
long tp_check_emulators(void)
{
	for (long nr = 0; nr < XSC_NR_MAX; nr++)
		if ((xsc__sys[nr].shim == XSC_SHIM_EMULATE) != (emulators[nr] != NULL) ||
		    xsc__sys[nr].in_handler != (in_handler[nr] != NULL))
			return nr;
	return -1;
}

static long handler_call(struct xsc_vcpu *v, long nr, const long *a);

/* A call made in a signal handler (see tp_sig_tramp). */
long xsc__tp_handler_call(struct xsc_vcpu *v, long nr, const long *a)
{
	struct tp_kcall k;
	long r;

	tp_kinds_before(nr, a, &k);
	r = handler_call(v, nr, a);
	if (k.what != TP_KC_NONE)
		tp_kinds_after(nr, a, &k, r);
	return r;
}

static long handler_call(struct xsc_vcpu *v, long nr, const long *a)
{
	tp_maps_call(nr, a);
	if (TP(v)->setxid && v->cur && xsc__creds_process_wide(nr)) {
		/* glibc's setxid handler: made once, here, for its
		 * consistency check; every kernel thread makes it later
		 * (setxid) */
		if (!v->cur->creds_wide) {
			TP(v->cur)->setxid_ret = xsc__sys6(nr, a[0], a[1], a[2], 0, 0, 0);
			v->cur->creds_wide = true;
		}
		return TP(v->cur)->setxid_ret;
	}
	if (nr >= 0 && nr < XSC_NR_MAX && in_handler[nr]) {
		long r = in_handler[nr](v, nr, a);
		if (r != RAW)
			return r;
	}
	return xsc__sys6(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

void tp_on_sigsys(int sig, siginfo_t *si, void *uc_)
{
	ucontext_t *uc = uc_;
	greg_t *g = uc->uc_mcontext.gregs;
	struct xsc_vcpu *v = xsc__tp ? gs_vcpu() : NULL;
	int *errp = &errno, saved = *errp;
	long a[6] = { g[REG_RDI], g[REG_RSI], g[REG_RDX], g[REG_R10], g[REG_R8], g[REG_R9] };
	long nr = si->si_syscall, r;
	struct xsc_fiber *f;

	(void)sig;
	if (v && TP(v)->in_handler) {
		TP(v)->sel = TP_SEL_ALLOW;
		g[REG_RAX] = nr == SYS_rt_sigprocmask ? tp_handler_sigprocmask(a, uc) :
			     xsc__tp_handler_call(v, nr, a);
		*errp = saved;
		TP(v)->sel = TP_SEL_BLOCK;
		return;
	}
	if (!v || !v->cur) {	/* not a fiber: cannot happen, but be exact */
		if (v)
			TP(v)->sel = TP_SEL_ALLOW;
		g[REG_RAX] = xsc__sys6(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
		return;
	}
	TP(v)->sel = TP_SEL_ALLOW;
	TP(v)->ntrap++;
	xsc__tp_rewrite_site((uintptr_t)g[REG_RIP], nr);	/* trap once, then jump */
	/* this handler blocks the thread's signals: its call must not wait
	 * in the kernel (sched/syscalls.c sole()) */
	f = v->cur;
	f->masked = true;
	r = dispatch(nr, a, uc);
	f->masked = false;
	if (r != KEEP_REGS)
		g[REG_RAX] = r;
	*errp = saved;
	if (!xsc__tp)	/* a forked child */
		return;
	v = xsc__vcpu();
	if (v->cur->sig_pending & ~v->cur->sigmask)
		xsc__tp_deliver(v->cur);
	if (TP(v)->vfork)
		TP(v)->vfork = false;
	else
		TP(v)->sel = TP_SEL_BLOCK;
}
