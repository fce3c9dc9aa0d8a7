/*
 * start.c - transparent mode: start-up (one vcpu per allowed core,
 * syscall user dispatch, the calling thread turned into a fiber, the
 * original kernel thread parked) at the program's second thread (a
 * process with one thread runs natively), and forked children of a
 * process with a runtime, which get one of their own.
 */
#include "shim.h"

#include <threads.h>

#include "hostprof.h"

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
	TP(v)->self = v;
	xsc__sys2(SYS_arch_prctl, ARCH_SET_GS, v);
	v->own_fs = rdfsbase();
	v->own_sel = xsc__tls_slot(v->own_fs);
	TP(v)->ktid = (int)xsc__sys0(SYS_gettid);
	TP(v)->sel = TP_SEL_ALLOW;
	xsc__sys4(SYS_rt_sigprocmask, SIG_SETMASK, 0, &TP(v)->sigmask, 8);
	r = xsc__sys6(SYS_prctl, PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_ON,
		      (long)tp.text_lo, (long)(tp.text_hi - tp.text_lo),
		      (long)&TP(v)->sel, 0);
	if (r < 0) {	/* probed before: only a kernel change gets here */
		xsc__say("xsc run: syscall user dispatch failed on a vcpu (%ld)\n", r);
		abort();
	}
	/* the pool's bookkeeping comes from malloc: allocate it now, before
	 * any fiber runs, not later from a fiber or the scheduler */
	r = v->x->cfg.backend == XSC_BACKEND_INLINE ? 0 : xsc__workers_start(v->x);
	if (r < 0)	/* its calls then run inline (dispatch.c start_worker) */
		xsc__say("xsc run: no syscall thread on a vcpu (%s)\n", strerror((int)-r));
}

/* v's kernel thread takes signal mask m, unless it has it already. */
static void kernel_mask(struct xsc_vcpu *v, uint64_t m)
{
	if (TP(v)->sigmask != m) {
		xsc__sys6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&m, 0, 8, 0, 0);
		TP(v)->sigmask = m;
	}
}

/* A program's thread is switched in on v: the kernel thread takes its
 * signal mask. */
static void switch_in(struct xsc_vcpu *v, struct xsc_fiber *f)
{
	kernel_mask(v, f->sigmask);
}

/* v sleeps with no thread to run.  The last thread's mask (glibc blocks
 * every signal before a thread exits) must not keep process signals out
 * while it sleeps, and a signal every thread blocks (one a sigwait thread
 * waits for) must not be taken here: it takes the mask of signals no
 * thread accepts (signals/mask.c, tp_idle_mask). */
_Atomic uint64_t xsc__tp_idlemask;

static void idle(struct xsc_vcpu *v)
{
	kernel_mask(v, atomic_load(&xsc__tp_idlemask));
}

/* f is about to post call nr, which a signal may cancel (signals/interrupt.c,
 * tp_scan): what a canceled sleep needs to report the time left, on the
 * sleep's own clock, as the kernel counts it. */
static void call_begin(struct xsc_fiber *f, long nr, const long *a)
{
	TP(f)->call_nr = nr;
	TP(f)->call_args = a;	/* whether it restarts; a sleep's time left */
	if (nr == SYS_nanosleep || nr == SYS_clock_nanosleep) {
		struct timespec now = { 0, 0 };
		long clk = nr == SYS_nanosleep ? CLOCK_MONOTONIC : a[0];
		/* the vDSO's clocks without a kernel entry (one a posted sleep) */
		if (clk == CLOCK_MONOTONIC || clk == CLOCK_REALTIME || clk == CLOCK_BOOTTIME)
			clock_gettime((clockid_t)clk, &now);
		else
			xsc__sys2(SYS_clock_gettime, clk, (long)&now);
		TP(f)->call_t0 = now.tv_sec * 1000000000LL + now.tv_nsec;
	}
}

/* What the runtime calls (sched/ext.h). */
static const struct xsc_rt_ops tp_ops = {
	.flags = XSC_EXT_VCPU_BLOCKED | XSC_EXT_OWN_SIGPIPE,
	.vcpu_start = vcpu_start,
	.reap = tp_reap,
	.scan = tp_scan,
	.deferred = tp_run_deferred,
	.call_begin = call_begin,
	.call_posted = tp_posted,
	.call_end = tp_interrupted,
	.here_stopped = tp_here_stopped,
	.switch_in = switch_in,
	.idle = idle,
	.may_wait = tp_may_wait,
	.stop_held = tp_stop_held,
	.solo = tp_solo,
};

bool xsc__tp;

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
	unregister_rseq(old->own_fs, false);
	tp.lock = 0;
	tp_mask_lock = 0;
	tp_recs.lock = 0;
	memset(tp.tids, 0, sizeof(tp.tids));
	tp_handed_forget(NULL);	/* the parent's threads' */
	for (int s = 0; s <= 64; s++)
		atomic_store(&tp_accepting[s], 0);
	atomic_store(&tp.stray, 0);
	atomic_store(&tp.nthreads, 0);
	atomic_store(&tp.live, 1);	/* the thread that forked */
	f->vtid = (int)tp.child_pid;	/* gettid() == getpid(), as natively */
	TP(f)->link = NULL;
	f->home = NULL;
	f->state = F_RUNNING;
	f->sig_pending = 0;	/* a child starts with no signal pending */
	memset(TP(f)->rtq, 0, sizeof(TP(f)->rtq));
	TP(f)->wait_set = 0;
	TP(f)->takes = 0;
	TP(f)->wait_fd = 0;
	f->call_id = 0;
	atomic_store(&f->intr, 0);
	tp_tid_add(f);
	tp_account(~0ULL, f->sigmask);
	tp_idle_mask(false);
	xsc__rt_forget();
	xsc__fiber_listed(f, f->created_at);	/* the child's first */
	xsc__tp = true;
	xsc__tp_rewrite_child();	/* its own stubs, while it has one thread */
	ret = xsc__rt_start(&tp.cfg);
	if (ret < 0) {
		xsc__tp_rewrite_stop();
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
	tp_watch();
	XSC_PROBE2(fork_rearm, tp.child_pid, xsc__rt.n);
	if (tp.verbose)
		xsc__say("xsc run: forked child %ld: %d vcpus\n", tp.child_pid, xsc__rt.n);
	if (xsc__ctx_make(&park, pstack, 65536, park_forever, f, NULL) < 0)
		abort();
	xsc__ctx_switch(&f->ctx, &park);
	/* f, on a vcpu of the child's runtime */
	TP(xsc__vcpu())->sel = TP_SEL_BLOCK;
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

/* The hardware paths: the thread pointer loaded with wrfsbase where the
 * kernel allows FSGSBASE from user space, else by an LDT selector for
 * TLS blocks below 4 GiB, arch_prctl for the rest (sched/tls.c); the
 * extended state of a rewritten site's call saved with xsavec where the
 * CPU has it, else with xsave (rewrite.c); PKRU carried by the fiber
 * switch where the OS enabled protection keys (fiber/ctx.c).
 * XSC_HW=nofsgsbase,noldt,noxsavec,nopku takes the other paths where the
 * machine has them, so that one
 * host tests what another runs (t_transparent.sh runs programs so):
 * hosts without FSGSBASE (hypervisors hide it) take the LDT path, and
 * with noldt the arch_prctl one on every switch. */
static void hw_paths(void)
{
	const char *env = getenv("XSC_HW"), *p = env;
	bool fsgs = (getauxval(AT_HWCAP2) & HWCAP2_FSGSBASE) != 0;
	bool xsavec = xsc__tp_xsavec, ldt = true;
	static char why[96];
	int r;

	while (p && *p) {
		size_t n = strcspn(p, ",");
		if (n == 10 && !strncmp(p, "nofsgsbase", n))
			fsgs = false;
		else if (n == 5 && !strncmp(p, "noldt", n))
			ldt = false;
		else if (n == 8 && !strncmp(p, "noxsavec", n))
			xsavec = false;
		else if (n == 8 && !strncmp(p, "xsaveall", n)) {
			xsc__tp_novec = false;
			xsc__tp_novec_why = "off: XSC_HW=xsaveall";
		} else if (n == 5 && !strncmp(p, "nopku", n)) {
			/* the switch of a host without protection keys; the
			 * whole save then carries PKRU at the sites, as there */
			xsc__ctx_pkru = 0;
			xsc__tp_novec = false;
			xsc__tp_novec_why = "off: XSC_HW=nopku (the switch does not carry PKRU)";
		} else if (n)
			xsc__say("xsc run: XSC_HW: unknown '%.*s' (known: nofsgsbase, "
				 "noldt, noxsavec, xsaveall, nopku)\n", (int)n, p);
		p += n + (p[n] == ',');
	}
	if (fsgs) {
		xsc__tls_how = XSC_TLS_WRFSBASE;
	} else if (!ldt) {
		xsc__tls_how = XSC_TLS_ARCH_PRCTL;
		xsc__tls_why = "XSC_HW=noldt";
	} else if ((r = xsc__tls_ldt_probe()) < 0) {
		xsc__tls_how = XSC_TLS_ARCH_PRCTL;
		snprintf(why, sizeof(why), "modify_ldt: %s", strerror(-r));
		xsc__tls_why = why;
	} else {
		xsc__tls_how = XSC_TLS_LDT;
	}
	xsc__tp_xsavec = xsavec;
	if (tp.verbose)	/* no xsave area: nothing is rewritten (rewrite.c) */
		xsc__say("xsc run: thread pointer by %s%s%s, extended state by %s%s%s\n",
			 xsc__tls_how == XSC_TLS_WRFSBASE ? "wrfsbase" :
			 xsc__tls_how == XSC_TLS_LDT ?
			 "LDT selector (arch_prctl for TLS above 4 GiB)" :
			 "arch_prctl (a system call per switch)",
			 *xsc__tls_why ? ": " : "", xsc__tls_why,
			 !xsc__tp_xsave_size ? "none (no rewriting)" :
			 xsavec ? "xsavec" : "xsave",
			 env && *env ? "; XSC_HW=" : "", env && *env ? env : "");
}

/* Whether this is the process `xsc run` started (XSC_RUN_PID, tools/
 * run.c) rather than one the program started in turn: only the first says
 * why it falls back or runs natively; the others' stderr is the
 * program's output (a test suite compares its children's). */
static bool first_process(void)
{
	const char *env = getenv("XSC_RUN_PID");

	return !env || atol(env) == (long)xsc__sys0(SYS_getpid);
}

/* Whether transparent mode can run here (0), or why not (-1, said). */
static int can_start(void)
{
	const char *why;
	long nr;

	if ((nr = tp_check_emulators()) >= 0) {
		/* a defect of this build, not of the program: stop loudly */
		xsc__say("xsc run: the syscall table and the shim disagree on %s "
			 "(.shim = XSC_SHIM_EMULATE or .in_handler, and preload.c's "
			 "emulators[] or in_handler[])\n",
			 xsc_syscall_name(nr));
		abort();
	}
	dl_iterate_phdr(find_text, (void *)(uintptr_t)can_start);
	if (!tp.text_lo)
		why = "cannot find the library's own text";
	else
		why = why_not();
	if (why) {
		if (first_process() || getenv("XSC_VERBOSE"))
			xsc__say("xsc run: %s; running the program natively\n", why);
		return -1;
	}
	tp.verbose = getenv("XSC_VERBOSE") != NULL;
	/* the routes' costs, from the cache `xsc run` filled before the
	 * exec (hostprof.c): loaded here, before any thread is a fiber */
	const struct xsc_hostprof *hp = xsc__hostprof(&why);
	if (!hp) {
		xsc__say("xsc run: %s; running the program natively\n", why);
		return -1;
	}
	if (tp.verbose) {
		char src[512];
		xsc__hostprof_source(hp, src, sizeof(src));
		xsc__say("xsc run: host profile %s\n", src);
	}
	return 0;
}

/* The program's handlers go through the trampoline, and SIGSYS (a
 * trapped call) is the shim's: 0, or -1 (said). */
static int take_signals(void)
{
	struct kact k = { (void *)tp_on_sigsys,
			  SA_SIGINFO | SA_NODEFER | SA_RESTORER,
			  (void *)xsc__tp_restorer, 0 };

	for (int s = 1; s <= 64; s++)
		if (s != SIGKILL && s != SIGSTOP)
			xsc__sys4(SYS_rt_sigaction, s, 0, &tp.act[s], 8);
	/* signals the program already handles (inherited SIG_IGN needs
	 * nothing) go through the trampoline too */
	for (int s = 1; s <= 64; s++)
		if (s != SIGKILL && s != SIGSTOP && s != SIGSYS &&
		    tp.act[s].handler != SIG_DFL && tp.act[s].handler != SIG_IGN)
			tp_install(s, &tp.act[s]);
	if (xsc__sys4(SYS_rt_sigaction, SIGSYS, &k, 0, 8) < 0) {
		xsc__say("xsc run: cannot install the SIGSYS handler; running natively\n");
		return -1;
	}
	return 0;
}

/* The process's main thread as a fiber: the thread it is, as the
 * program sees it. */
static void main_thread(struct xsc_fiber *mainf)
{
	uint64_t mask;

	atomic_store(&tp.next_vtid, 0x40000000);	/* above any pid_max */
	/* the pid at start-up; the thread's own id when it goes live later
	 * (the one thread left may be another after an exec) */
	mainf->vtid = (int)xsc__sys0(SYS_gettid);
	mainf->fs = rdfsbase();
	xsc__errno_off = (intptr_t)&errno - (intptr_t)mainf->fs;
	mainf->fs_sel = xsc__tls_slot(mainf->fs);
	mainf->err = errno;	/* its errno, written back when it runs */
	/* libc's word for the main thread (set_tid_address at its start,
	 * before the shim's): cleared and woken if main ends with exit
	 * system call, and what PR_GET_TID_ADDRESS says (em_prctl); left
	 * NULL where the kernel cannot tell */
	if (xsc__sys6(SYS_prctl, PR_GET_TID_ADDRESS, (long)&mainf->ctid, 0, 0, 0, 0) < 0)
		mainf->ctid = NULL;
	xsc__sys4(SYS_rt_sigprocmask, SIG_SETMASK, 0, &mask, 8);
	mainf->sigmask = mask & ~SIGBIT(SIGSYS);
	tp_account(~0ULL, mainf->sigmask);
	atomic_store(&tp.live, 1);
}

/* The runtime's settings from the environment. */
static void settings(struct xsc_runtime_config *cfg)
{
	const char *env;

	xsc_runtime_config_init(cfg);
	if ((env = getenv("XSC_THREADS")) != NULL && atoi(env) > 0)
		cfg->nthreads = (unsigned)atoi(env);
	if ((env = getenv("XSC_NPAGES")) != NULL && atoi(env) > 0)
		cfg->npages = (unsigned)atoi(env);
	tp.cfg = *cfg;
	tp.fork_native = (env = getenv("XSC_FORK")) != NULL && strcmp(env, "native") == 0;
	tp.preempt_ns = 10 * 1000000L;
	if ((env = getenv("XSC_PREEMPT_MS")) != NULL)
		tp.preempt_ns = atol(env) * 1000000L;
	tp.preempt_cookie = (int)(xsc__now() ^ (xsc__sys0(SYS_getpid) << 16)) | 1;
	tp.here_cookie = tp.preempt_cookie + 2;
}

/* glibc installs its SIGSETXID handler at the first pthread_create, the
 * runtime's own: setxid() runs it, and through the trampoline its calls
 * trap into in_handler() wherever it runs.  (SIGCANCEL's, installed then
 * too, stays as glibc made it: asynchronous cancellation unwinds out of
 * its handler, past the trampoline's epilogue.) */
static void take_setxid(void)
{
	struct kact now;

	if (xsc__sys4(SYS_rt_sigaction, SIGSETXID, 0, &now, 8) == 0 &&
	    now.handler != SIG_DFL && now.handler != SIG_IGN &&
	    now.handler != (void *)tp_sig_tramp) {
		tp.act[SIGSETXID] = now;
		tp_install(SIGSETXID, &now);
	}
}

static int start(void)
{
	struct xsc_runtime_config cfg;
	struct xsc_fiber *mainf;
	struct xsc_ctx park;
	void *pstack;

	if (can_start() < 0)
		return -1;
	xsc__tp_rewrite_init();
	hw_paths();
	settings(&cfg);
	tp.affinity_len = xsc__sys3(SYS_sched_getaffinity, 0, sizeof(tp.affinity),
				    tp.affinity);
	if (take_signals() < 0)
		return -1;
	mainf = tp_rec_get();
	pstack = mmap(NULL, 65536, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (!mainf || pstack == MAP_FAILED) {
		xsc__say("xsc run: out of memory at start; running natively\n");
		return -1;
	}
	main_thread(mainf);
	tp.tkill_code = tkill_code();
	/* the kernel would keep updating the area for this (soon parked)
	 * thread, not for whichever vcpu runs main: make sched_getcpu() ask */
	unregister_rseq(rdfsbase(), true);
	/* every close of the program's passes the shim from here on
	 * (sched/fdkind.c) */
	tp_kinds_init();
	xsc__tp = true;
	xsc__raw_workers = true;	/* no glibc locks in syscall threads */
	xsc__rt_extend(&tp_ops);
	/* the watchdog's signal, which also stops calls made in a vcpu's
	 * kernel thread (signals/interrupt.c tp_interrupt) */
	tp_install(PREEMPT_SIG, &tp.act[PREEMPT_SIG]);
	if (!first_process() && !tp.verbose)
		xsc__rt.quiet = true;	/* its fallback reasons were said */
	if (xsc__rt_start(&cfg) < 0) {
		xsc__say("xsc run: cannot start the vcpus\n");
		abort();	/* threads may already run with dispatch on */
	}
	if (tp.verbose && !xsc__own_threads_uncounted())
		xsc__say("xsc run: glibc's thread count (__nptl_nthreads) not found: "
			 "a process whose main thread is not its last ends without "
			 "running its atexit handlers\n");
	take_setxid();
	/* after the runtime's own child handlers (handle.c: the parent's
	 * handles are foreign in the child), which its start registered */
	pthread_atfork(NULL, NULL, rearm);
	tp_watch();
	tp_tid_add(mainf);
	xsc__fiber_listed(mainf, NULL);
	if (tp.verbose)
		xsc__say("xsc run: %d vcpus%s, dispatch region %#lx-%#lx\n", xsc__rt.n,
			 xsc__rt.cpu_for_poller ? " (a CPU left to the SQPOLL poller)" : "",
			 (unsigned long)tp.text_lo, (unsigned long)tp.text_hi);
	/* From here main() runs as a fiber on a vcpu; this kernel thread
	 * sleeps for good on a small stack of its own. */
	if (xsc__ctx_make(&park, pstack, 65536, park_forever, mainf, NULL) < 0)
		abort();
	xsc__ctx_switch(&mainf->ctx, &park);
	return 0;
}

/* ---- one thread: natively until the second ------------------------------
 *
 * A process with one thread has nothing to batch: each of its calls must
 * come back before it makes the next, so the ring only adds a round trip
 * to every call, and the runtime's vcpus, rings and syscall threads cost
 * every forked child milliseconds.  PostgreSQL's backends (one thread
 * each, forked per connection) ran at 0.3x of native under `xsc run`.
 * So the runtime starts when the program creates its second thread: its
 * first pthread_create turns the calling thread into the first fiber
 * (start(), exactly as at start-up) and then creates the new thread,
 * which becomes the second.  Until then no vcpu, ring or dispatch exists
 * and every call, interposed or not, is the plain system call; a forked
 * child of such a process is single-threaded too.  A thread made some
 * other way first (glibc's own helpers for SIGEV_THREAD timers and POSIX
 * AIO, a raw clone) is a kernel thread the runtime cannot take in: the
 * process then stays native, and -v says so.  XSC_START=now starts the
 * runtime before main() whatever the program does (the comparisons of
 * xsc bench calls, which measure a trapped call's cost). */

static void go_live(void)
{
	struct kact sys;
	stack_t ss;
	long n;

	tp.solo = false;
	n = xsc__status_field("Threads");
	if (n < 0) {	/* unknown: no thread is taken in blind */
		xsc__say("xsc run: cannot count the program's threads "
			 "(/proc/self/status: %s): it runs natively\n", strerror((int)-n));
		return;
	}
	if (n != 1) {
		if (tp.verbose)
			xsc__say("xsc run: the program made a thread before its first "
				 "pthread_create (glibc's timer or AIO helper, or its "
				 "own clone): it runs natively\n");
		return;
	}
	/* dispatch needs SIGSYS: a handler of the program's own stays */
	if (xsc__sys4(SYS_rt_sigaction, SIGSYS, 0, &sys, 8) == 0 &&
	    sys.handler != SIG_DFL) {
		xsc__say("xsc run: the program handles SIGSYS itself: it runs "
			 "natively\n");
		return;
	}
	/* a signal stack set natively belongs to the kernel thread; fibers
	 * run on the vcpu's (docs/transparent.md, "Call by call") */
	if (xsc__sys2(SYS_sigaltstack, 0, &ss) < 0)
		ss.ss_flags = SS_DISABLE;
	if (start() != 0)
		return;
	if (!(ss.ss_flags & SS_DISABLE))
		xsc__sys2(SYS_sigaltstack, &ss, 0);
	if (tp.verbose)
		xsc__say("xsc run: process %ld: its second thread starts the "
			 "runtime\n", xsc__sys0(SYS_getpid));
	TP(xsc__vcpu())->sel = TP_SEL_BLOCK;
}

XSC_EXPORT int pthread_create(pthread_t *th, const pthread_attr_t *attr,
			      void *(*fn)(void *), void *arg)
{
	static int (*real)(pthread_t *, const pthread_attr_t *,
			   void *(*)(void *), void *);
	__typeof__(real) f = __atomic_load_n(&real, __ATOMIC_RELAXED);
	int ret;

	if (!f) {	/* resolved at the first call, before any fiber */
		if (!(f = dlsym(RTLD_NEXT, "pthread_create")))
			return ENOSYS;
		__atomic_store_n(&real, f, __ATOMIC_RELAXED);
	}
	if (__builtin_expect(tp.solo, 0))
		go_live();	/* the runtime's own threads: not solo any more */
	tp_spawn_site(__builtin_return_address(0));
	ret = f(th, attr, fn, arg);
	tp_spawn_site(NULL);
	return ret;
}

/* C11's thrd_create reaches glibc's pthread_create inside libc, past the
 * symbol above. */
XSC_EXPORT int thrd_create(thrd_t *th, thrd_start_t fn, void *arg)
{
	static int (*real)(thrd_t *, thrd_start_t, void *);
	__typeof__(real) f = __atomic_load_n(&real, __ATOMIC_RELAXED);
	int ret;

	if (!f) {
		if (!(f = dlsym(RTLD_NEXT, "thrd_create")))
			return thrd_error;
		__atomic_store_n(&real, f, __ATOMIC_RELAXED);
	}
	if (__builtin_expect(tp.solo, 0))
		go_live();
	tp_spawn_site(__builtin_return_address(0));
	ret = f(th, fn, arg);
	tp_spawn_site(NULL);
	return ret;
}

static int wrap_main(int argc, char **argv, char **envp)
{
	const char *off = getenv("XSC_TRANSPARENT");
	const char *when = getenv("XSC_START");

	if (off && strcmp(off, "0") == 0)
		return tp.main(argc, argv, envp);
	if (when && strcmp(when, "now") == 0) {
		if (start() == 0)
			TP(xsc__vcpu())->sel = TP_SEL_BLOCK;
	} else {
		tp.verbose = getenv("XSC_VERBOSE") != NULL;
		tp.solo = true;
	}
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
	tp_jumps_init();
	return real(wrap_main, argc, argv, init, fini, rtld_fini, stack_end);
}
