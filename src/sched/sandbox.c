/*
 * sandbox.c - a fiber that sandboxes itself, under xsc threads and xsc run.
 *
 * Natively a seccomp filter or a Landlock domain binds the calling thread
 * and the threads it creates later.  A fiber is not a kernel thread: its
 * later calls may run in its vcpu's io_uring (which no seccomp filter
 * sees) or on syscall threads, and the fibers it creates on any vcpu.  So
 * a sandboxing call made by a fiber binds every kernel thread that runs
 * the program's calls:
 *  - a seccomp filter is installed with TSYNC (prctl(PR_SET_SECCOMP) as
 *    the equivalent seccomp(2));
 *  - a Landlock domain is recorded with the credential changes (creds.c):
 *    every vcpu, syscall thread and the parked main thread applies it to
 *    itself before it runs another call;
 *  - then every vcpu routes its calls to syscall threads, never to
 *    io_uring (xsc__sandboxed).
 * The program's other threads get it too: stricter than native, never
 * less.  set*id/capset change one vcpu and its syscall threads (creds.c,
 * "own"), as the raw calls do.  Why: docs/design.md, "Sandboxes (seccomp)".
 */
#include "sched.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/io_uring.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"
#include "rawsys.h"
#include "seccomp_eval.h"
#include "ucopy.h"

#ifndef SECCOMP_FILTER_FLAG_TSYNC_ESRCH
#define SECCOMP_FILTER_FLAG_TSYNC_ESRCH (1UL << 4)
#endif

#define MAX_CHANGES 32

/* Routes every vcpu takes, in order, after a sandbox change (the change
 * itself reaches each kernel thread by TSYNC or the credential log). */
static struct {
	uint32_t lock;
	int backend[MAX_CHANGES];
	const char *why[MAX_CHANGES];
} changes;

bool xsc__rt_sandboxing(long nr, const long *a)
{
	return xsc__sandboxing(nr, (const int64_t *)a) != NULL;	/* handle.c */
}

static void say_once(const char *what)
{
	static _Atomic int said;

	if (!atomic_exchange(&said, 1))
		xsc__say("xsc: %s binds every kernel thread of the runtime: the "
			 "program's other threads get it too (natively only the "
			 "calling thread and the threads it creates)\n", what);
}

/* Records a change every vcpu must apply, and wakes them to do it. */
static void publish(struct xsc_vcpu *v, const char *why, int backend)
{
	unsigned gen;

	xsc__spin_lock(&changes.lock);
	gen = atomic_load(&xsc__rt.sandbox_gen);
	if (gen == MAX_CHANGES) {
		xsc__say("xsc: more than %d sandbox changes; stopping rather "
			 "than run a thread outside its sandbox\n", MAX_CHANGES);
		abort();
	}
	changes.why[gen] = why;
	changes.backend[gen] = backend;
	atomic_store(&xsc__rt.sandbox_gen, gen + 1);
	xsc__spin_unlock(&changes.lock);
	v->sandbox_gen = gen + 1;	/* the call itself applied it here */
	for (int i = 0; i < xsc__rt.n; i++)
		if (&xsc__rt.v[i] != v && xsc__rt.v[i].x)
			xsc__kick(xsc__rt.v[i].x);
}

/* Whether the filter at prog (the program's struct sock_fprog) lets
 * through the io_uring_enter calls xsc's threads make on their own rings
 * once it is in: a vcpu's for the last completions of a retired ring,
 * the ring watcher's for its eventfd (false when it cannot be read). */
static bool filter_lets_enter(long prog)
{
	struct sock_fprog fp;
	struct sock_filter *f;
	size_t len;
	bool ok = true;

	if (xsc__ucopy_in(&fp, (const void *)prog, sizeof(fp)) || !fp.len || fp.len > BPF_MAXINSNS)
		return false;
	len = fp.len * sizeof(*f);
	f = (struct sock_filter *)xsc__sys6(SYS_mmap, 0, len, PROT_READ | PROT_WRITE,
					    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if ((long)f < 0 && (long)f > -4096)
		return false;
	if (xsc__ucopy_in(f, fp.filter, len)) {
		ok = false;
	} else {
		/* getting events (a vcpu's), and submitting one read and
		 * waiting for it (the watcher's), by registered index */
		const unsigned flags[2][3] = {
			{ 0, 0, IORING_ENTER_GETEVENTS | IORING_ENTER_REGISTERED_RING },
			{ 1, 1, IORING_ENTER_GETEVENTS | IORING_ENTER_REGISTERED_RING } };
		for (int i = 0; i < 2 && ok; i++) {
			struct seccomp_data d = { .nr = SYS_io_uring_enter,
						  .arch = AUDIT_ARCH_X86_64,
						  .args = { 0, flags[i][0], flags[i][1], flags[i][2] } };
			ok = xsc__seccomp_allows(f, fp.len, &d);
		}
	}
	xsc__sys2(SYS_munmap, (long)f, len);
	return ok;
}

/* A seccomp filter (seccomp(2), or prctl PR_SET_SECCOMP): strict mode
 * binds this kernel thread alone, as natively; a filter is synchronized
 * to every thread of the process (TSYNC). */
static long seccomp_call(struct xsc_vcpu *v, long nr, const long *a)
{
	long r;

	if ((nr == SYS_seccomp ? a[0] != SECCOMP_SET_MODE_FILTER :
				 a[1] != SECCOMP_MODE_FILTER)) {
		r = xsc__call_here(nr, (const int64_t *)a);
		if (r >= 0)
			xsc__sandboxed(v->x, "seccomp strict mode", XSC_BACKEND_INLINE);
		return r;
	}
	long flags = nr == SYS_seccomp ? a[1] : 0;
	long prog = a[2];	/* both forms */
	bool listener = flags & SECCOMP_FILTER_FLAG_NEW_LISTENER;

	flags |= SECCOMP_FILTER_FLAG_TSYNC;
	if (listener)
		flags |= SECCOMP_FILTER_FLAG_TSYNC_ESRCH;
	/* told before the filter binds xsc's own threads too (TSYNC) */
	bool was = atomic_load(&xsc__uring_enter_denied);
	if (!was && !filter_lets_enter(prog))
		atomic_store(&xsc__uring_enter_denied, true);
	r = xsc__sys3(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, prog);
	if (!was && !(r == 0 || (r > 0 && listener)))
		atomic_store(&xsc__uring_enter_denied, false);	/* not installed */
	if (r > 0 && !listener)
		return -EPERM;	/* thread r's filters diverge: no TSYNC */
	if (r < 0)
		return r;
	if (!(a[1] & SECCOMP_FILTER_FLAG_TSYNC) || nr == SYS_prctl)
		say_once("a seccomp filter");
	/* syscall threads have it now (TSYNC), and new ones inherit it from
	 * their vcpu: they stay usable; io_uring does not */
	xsc__sandboxed(v->x, "seccomp filter", XSC_BACKEND_WORKER);
	publish(v, "seccomp filter", XSC_BACKEND_WORKER);
	return r;
}

/* Landlock: recorded as a credential change (creds.c): every kernel
 * thread of the runtime, syscall threads too, applies it to itself
 * before it runs another call.  The vcpus then keep routing blocking
 * calls to syscall threads: a call that blocked the vcpu itself would
 * stall every fiber on it (a reader waiting for a writer on the same
 * vcpu never woke). */
static long landlock_call(struct xsc_vcpu *v, long nr, const long *a)
{
	unsigned gen;
	long r = xsc__call_here(nr, (const int64_t *)a);

	if (r < 0)
		return r;
	int fd = (int)xsc__sys3(SYS_fcntl, a[0], F_DUPFD_CLOEXEC, 0);
	if (fd < 0) {
		xsc__say("xsc: cannot keep the Landlock ruleset for the other "
			 "kernel threads (%ld); stopping\n", (long)fd);
		abort();
	}
	xsc__creds_record(SYS_prctl, (const long[3]){ PR_SET_NO_NEW_PRIVS, 1, 0 });
	gen = xsc__creds_record(SYS_landlock_restrict_self, (const long[3]){ fd, 0, 0 });
	/* this thread has both: NO_NEW_PRIVS is set once and for all */
	atomic_store(&v->x->creds_gen, gen);
	say_once("Landlock");
	xsc__sandboxed(v->x, "Landlock", XSC_BACKEND_WORKER);
	publish(v, "Landlock", XSC_BACKEND_WORKER);
	return r;
}

/* A set*id made for every thread of the process (f->creds_wide: glibc's,
 * which it asks every thread to make): every kernel thread of the
 * runtime makes it too, before it runs another call. */
static long creds_wide_call(struct xsc_vcpu *v, long nr, const long *a)
{
	unsigned gen;
	long r;

	v->cur->creds_wide = false;
	if (xsc__rt_creds_behind(v))
		xsc__rt_creds_catch_up(v);
	r = xsc__call_here(nr, (const int64_t *)a);
	if (r < 0)
		return r;
	gen = xsc__creds_record(nr, a);
	atomic_store(&v->x->creds_gen, gen);
	if (v->x->have_ring && v->x->sqpoll)
		xsc__rt_creds_catch_up(v);	/* retires the poller */
	for (int i = 0; i < xsc__rt.n; i++)
		if (&xsc__rt.v[i] != v && xsc__rt.v[i].x)
			xsc__kick(xsc__rt.v[i].x);
	/* the process's main thread (parked) shows in /proc and is what
	 * kill(2) checks permissions against */
	while (atomic_load(&xsc__creds_parked) < gen)
		xsc_yield();
	return r;
}

long xsc__rt_sandbox_call(struct xsc_vcpu *v, long nr, const long *a)
{
	long r;

	switch (xsc__sys[nr].sandbox) {
	case XSC_SANDBOX_SECCOMP:	/* prctl PR_SET_SECCOMP too */
		return seccomp_call(v, nr, a);
	case XSC_SANDBOX_LANDLOCK:
		return landlock_call(v, nr, a);
	default:
		if (v->cur && v->cur->creds_wide && xsc__creds_process_wide(nr))
			return creds_wide_call(v, nr, a);
		/* credentials: this kernel thread's, as the raw call; its
		 * syscall threads make the same change (creds.c), so a
		 * blocking call still goes to one of them: run by the vcpu
		 * itself, it stalled every other fiber there */
		r = xsc__call_here(nr, (const int64_t *)a);
		if (r < 0)
			return r;
		if (xsc__creds_own_record(v->x, nr, a) == 0)
			xsc__sandboxed(v->x, "credentials changed", XSC_BACKEND_WORKER);
		else
			xsc__sandboxed(v->x, "credentials changed", XSC_BACKEND_INLINE);
		return r;
	}
}

/* A forked child's kernel threads are made by the one that forked, and
 * inherit its seccomp filters and Landlock domain: they take the routes
 * of the changes made so far, not the changes again. */
void xsc__sandbox_forget(void)
{
	changes.lock = 0;
}

void xsc__rt_creds_catch_up(struct xsc_vcpu *v)
{
	unsigned have = atomic_load(&v->x->creds_gen);

	xsc__creds_apply(&have);
	atomic_store(&v->x->creds_gen, have);	/* its syscall threads follow */
	if (v->x->have_ring && v->x->sqpoll)
		xsc__sandboxed(v->x, "credentials changed (an SQPOLL poller keeps "
			       "its creator's)", XSC_BACKEND_WORKER);
}

void xsc__rt_sandbox_catch_up(struct xsc_vcpu *v)
{
	unsigned gen = atomic_load(&xsc__rt.sandbox_gen);

	for (; v->sandbox_gen < gen; v->sandbox_gen++)
		xsc__sandboxed(v->x, changes.why[v->sandbox_gen],
			       changes.backend[v->sandbox_gen]);
}
