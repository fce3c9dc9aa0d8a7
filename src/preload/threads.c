/*
 * threads.c - transparent mode: a program's threads as fibers.  glibc's
 * clone3 becomes a fiber with the parent's registers, its stack and its
 * thread pointer; exit clears and wakes the CLONE_CHILD_CLEARTID word;
 * fork and vfork-like clones run natively at the program's own call site;
 * execve switches dispatch off first; futexes are emulated in user space
 * (sched/futex.c); virtual thread ids.
 */
#include "shim.h"

#include <cpuid.h>

/* ---- thread ids -------------------------------------------------------- */

void tp_tid_add(struct xsc_fiber *f)
{
	struct xsc_fiber **h = &tp.tids[(unsigned)f->vtid % NTID];

	xsc__spin_lock(&tp.lock);
	TP(f)->link = *h;
	*h = f;
	xsc__spin_unlock(&tp.lock);
}

static void tid_del(struct xsc_fiber *f)
{
	xsc__spin_lock(&tp.lock);
	for (struct xsc_fiber **p = &tp.tids[(unsigned)f->vtid % NTID]; *p;
	     p = &TP(*p)->link) {
		if (*p == f) {
			*p = TP(f)->link;
			break;
		}
	}
	tp_handed_forget(f);
	xsc__spin_unlock(&tp.lock);
}

/* ---- fiber records ------------------------------------------------------------ */

/* Records come from a pool (sched/pool.c), never from malloc: they are
 * freed in the scheduler, which must not touch a malloc arena a parked
 * fiber might be holding. */
#define REC_SIZE ((sizeof(struct xsc_fiber) + sizeof(gregset_t) + 63) & ~(size_t)63)

struct xsc_pool tp_recs = { 0, REC_SIZE, NULL };

struct xsc_fiber *tp_rec_get(void)
{
	return xsc__pool_get(&tp_recs);
}

static void rec_put(struct xsc_fiber *f)
{
	xsc__pool_put(&tp_recs, f);
}

/* ---- threads: clone, exit ----------------------------------------------------- */

static void child_entry(void *arg)
{
	struct xsc_fiber *f = arg;

	TP(xsc__vcpu())->sel = TP_SEL_BLOCK;
	xsc__tp_resume(TP(f)->regs);
}

#define THREAD_FLAGS (CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | \
		      CLONE_THREAD | CLONE_SYSVSEM)
#define THREAD_OK (THREAD_FLAGS | CLONE_SETTLS | CLONE_PARENT_SETTID | \
		   CLONE_CHILD_CLEARTID | CLONE_CHILD_SETTID | CLONE_DETACHED)

/* The program's pthread_create or thrd_create (start.c) is about to make
 * a thread at `site`, its caller (NULL: done): the new thread is listed
 * as made there (tp_spawn), what a debugger shows. */
void tp_spawn_site(void *site)
{
	struct xsc_fiber *me = xsc__tp ? cur_fiber() : NULL;

	if (me)
		TP(me)->spawn_site = site;
}

/* The PKRU the thread had at its trapped call, into *pkru: the signal
 * frame's xsave area (standard form) holds it; the handler itself runs
 * with the kernel's default.  Its init state, not in the frame's
 * XSTATE_BV, is 0.  Left as it is without protection keys or a frame. */
static void frame_pkru(const ucontext_t *uc, uint32_t *pkru)
{
	static unsigned off;
	const unsigned char *fx = (const unsigned char *)uc->uc_mcontext.fpregs;
	uint64_t bv;

	if (!xsc__ctx_pkru || !fx)
		return;
	if (!off) {
		unsigned a, c, d;
		__cpuid_count(0xd, 9, a, off, c, d);	/* PKRU's offset, standard form */
	}
	memcpy(&bv, fx + 512, sizeof(bv));	/* XSTATE_BV */
	if (!(bv & (1u << 9)))
		*pkru = 0;
	else
		memcpy(pkru, fx + off, sizeof(*pkru));
}

/* A new thread of the program becomes a fiber (see the top of the file). */
long tp_spawn(uint64_t flags, uint64_t lo, uint64_t sp, int *ptid, int *ctid,
	      uint64_t tls, ucontext_t *uc)
{
	struct xsc_fiber *f;
	greg_t *g;
	size_t room;
	void *site;
	int ret;

	if ((flags & THREAD_FLAGS) != THREAD_FLAGS || (flags & ~(uint64_t)THREAD_OK) || !sp) {
		warn_once(&tp.warned_clone, "a thread was created with clone flags "
			  "xsc threads do not support; the call fails with EINVAL");
		return -EINVAL;
	}
	f = tp_rec_get();
	if (!f)
		return -EAGAIN;
	g = (greg_t *)(f + 1);
	memcpy(g, uc->uc_mcontext.gregs, sizeof(gregset_t));
	g[REG_RSP] = (greg_t)sp;
	g[REG_RAX] = 0;
	TP(f)->regs = g;
	if (lo && lo < sp) {
		f->tstack_lo = lo;
		f->tstack_hi = sp;
	}
	f->fs = flags & CLONE_SETTLS ? tls : cur_fiber()->fs;
	/* a slot of its own only for a block of its own */
	f->fs_sel = flags & CLONE_SETTLS ? xsc__tls_slot(f->fs) : 0;
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
		xsc__tls_slot_put(f->fs_sel);
		rec_put(f);
		return ret;
	}
	/* its creator's protection keys' rights, as the kernel's clone gives:
	 * those of the call, not the handler's we run in */
	frame_pkru(uc, &f->ctx.pkru);
	tp_tid_add(f);
	/* made by pthread_create (start.c), else by a clone of the
	 * program's own: that call's site */
	site = TP(cur_fiber())->spawn_site;
	xsc__fiber_listed(f, site ? site : (void *)uc->uc_mcontext.gregs[REG_RIP]);
	tp_account(~0ULL, f->sigmask);
	atomic_fetch_add(&tp.nthreads, 1);
	atomic_fetch_add(&tp.live, 1);	/* by a live thread: never from 0 */
	xsc__rt_adopt(f);
	return f->vtid;
}

/* The fiber is off its stack (scheduler context): now the stack may be
 * reused, so clear the tid word and wake pthread_join.  As the kernel's
 * CLONE_CHILD_CLEARTID wake is a shared futex wake, glibc's join waits on
 * the word without FUTEX_PRIVATE_FLAG, which the shim hands to the kernel
 * (shim_futex, table.c): the wake goes to the kernel too, as well as to
 * any emulated waiter. */
void tp_reap(struct xsc_fiber *f)
{
	tp_ways_reaped(f);
	tid_del(f);
	xsc__fiber_unlisted(f);
	tp_account(f->sigmask, ~0ULL);
	if (f->ctid) {
		__atomic_store_n(f->ctid, 0, __ATOMIC_RELEASE);
		xsc__futex_wake(f->ctid, INT_MAX, ~0u);
		xsc__sys3(SYS_futex, (long)f->ctid, FUTEX_WAKE, INT_MAX);
	}
	/* no kernel thread has it loaded: the vcpu loaded its own pointer
	 * before the reap (sched/loop.c run) */
	xsc__tls_slot_put(f->fs_sel);
	rec_put(f);
}

/* A thread of the program ends with the exit system call.  The last one
 * to end never gets here through glibc, which calls exit(0) in it instead
 * (src/ownthreads.c): one that does made a bare exit system call of its
 * own (or main did, unseen by glibc's count), or glibc's count was not
 * found.  Natively the kernel then ends the process with that last
 * thread's code (tests/tp/tp_lastthread.c, bare-exit-*), running no
 * atexit handler; here too, or the runtime's threads would keep it
 * alive. */
_Noreturn void tp_thread_exit(int code)
{
	struct xsc_vcpu *v = xsc__vcpu();
	struct xsc_fiber *f = v->cur;

	if (atomic_fetch_sub(&tp.live, 1) == 1)
		xsc__sys1(SYS_exit_group, code);
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

void tp_repin(struct xsc_vcpu *v)
{
	unsigned long m[16] = { 0 };

	TP(v)->repin = false;
	if (!xsc__rt.cfg.pin || v->cpu < 0 || v->cpu >= (int)(sizeof(m) * 8))
		return;
	m[v->cpu / 64] = 1UL << (v->cpu % 64);
	xsc__sys3(SYS_sched_setaffinity, 0, sizeof(m), m);
}

/* fork, vfork, clone of a process. */
long tp_fork_like(long nr, const long *a, ucontext_t *uc)
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
		TP(v)->repin = true;
		TP(v)->ret = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
		uc->uc_mcontext.gregs[REG_RIP] = (greg_t)xsc__tp_native_stub;
		uc->uc_mcontext.gregs[REG_RAX] = nr;
		TP(v)->vfork = true;	/* the selector stays ALLOW (see the stub) */
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

long tp_exec(long nr, const long *a)
{
	long r;

	/* dispatch would otherwise follow into the new image, and so
	 * would the vcpu's pinning */
	xsc__sys6(SYS_prctl, PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_OFF, 0, 0, 0, 0);
	unpin();
	r = xsc__sys6(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	tp_repin(xsc__vcpu());
	xsc__sys6(SYS_prctl, PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_ON,
		  (long)tp.text_lo, (long)(tp.text_hi - tp.text_lo),
		  (long)&TP(xsc__vcpu())->sel, 0);
	return r;
}

/* ---- tp_futex ---------------------------------------------------------------------- */

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

long tp_futex(const long *a)
{
	uint32_t *u = (uint32_t *)a[0];
	int op = (int)a[1], cmd = op & FUTEX_CMD_MASK;
	bool rt = op & FUTEX_CLOCK_REALTIME;
	const struct timespec *uts = (const void *)a[3];
	struct timespec ts, abs;
	uint32_t val3 = (uint32_t)a[5];
	int ret;

	/* the kernel's checks, in its order: the timeout read and checked,
	 * the bitset, the word's alignment, then the word read */
	switch (cmd) {
	case FUTEX_WAIT:
	case FUTEX_WAIT_BITSET:
		if (uts) {
			if (tp_copy_in(&ts, uts, sizeof(ts)))
				return -EFAULT;
			ret = to_mono(&ts, cmd == FUTEX_WAIT_BITSET, rt, &abs);
			if (ret < 0)
				return ret;
		}
		if (cmd == FUTEX_WAIT_BITSET && !val3)
			return -EINVAL;
		if ((uintptr_t)u % sizeof(*u))
			return -EINVAL;
		if (tp_readable(xsc__vcpu(), u))
			return -EFAULT;
		return xsc__futex_wait(u, (uint32_t)a[2], uts ? &abs : NULL,
				       cmd == FUTEX_WAIT ? ~0u : val3);
	default:
		break;
	}
	if ((uintptr_t)u % sizeof(*u))
		return -EINVAL;
	if ((cmd == FUTEX_REQUEUE || cmd == FUTEX_CMP_REQUEUE) && a[4] % sizeof(*u))
		return -EINVAL;
	switch (cmd) {
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
		if (tp_readable(xsc__vcpu(), u))
			return -EFAULT;
		return xsc__futex_requeue(u, (int)a[2], (int)a[3], (uint32_t *)a[4], &val3);
	default:
		warn_once(&tp.warned_futex, "futex operation not emulated "
			  "(PI, WAKE_OP, waitv): the call fails with ENOSYS");
		return -ENOSYS;
	}
}
