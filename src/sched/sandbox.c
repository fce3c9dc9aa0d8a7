/*
 * sandbox.c - a fiber that sandboxes itself, under xsc threads and xsc run.
 *
 * Natively a seccomp filter or a Landlock domain binds the calling thread
 * and the threads it creates later.  A fiber is not a kernel thread: the
 * call runs on its vcpu, the fiber's later calls may run in that vcpu's
 * io_uring (which no seccomp filter sees) or on its syscall threads, and
 * the fibers it creates may run on any vcpu.  So a sandboxing call made
 * by a fiber binds every kernel thread that runs the program's calls:
 *  - a seccomp filter is installed with TSYNC (prctl(PR_SET_SECCOMP) as
 *    the equivalent seccomp(2)), so every vcpu and syscall thread has it
 *    when the call returns;
 *  - a Landlock domain is applied by each vcpu to itself (with
 *    no_new_privs) before it runs another fiber, from a duplicate of the
 *    program's ruleset fd;
 *  - then every vcpu runs all later calls in its own thread (the inline
 *    executor: xsc__sandboxed), where the kernel checks them exactly.
 * The program's other threads get the restriction too, where natively
 * they would not: more restrictive than native, never less, said once on
 * stderr.  set*id/capset change one kernel thread's credentials as the raw
 * calls do: that vcpu runs its later calls itself (the fiber stays on its
 * vcpu); the others are other threads, unchanged, as natively.
 */
#include "sched.h"

#include <errno.h>
#include <linux/seccomp.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"
#include "rawsys.h"

#ifndef SECCOMP_FILTER_FLAG_TSYNC_ESRCH
#define SECCOMP_FILTER_FLAG_TSYNC_ESRCH (1UL << 4)
#endif

#define MAX_CHANGES 32

/* Changes every vcpu applies, in order: a Landlock ruleset to restrict
 * itself with (-1: none, the kernel synced it), the route from then on. */
static struct {
	uint32_t lock;
	int fd[MAX_CHANGES];
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
static void publish(struct xsc_vcpu *v, int fd, const char *why, int backend)
{
	unsigned gen;

	xsc__spin_lock(&changes.lock);
	gen = atomic_load(&xsc__rt.sandbox_gen);
	if (gen == MAX_CHANGES) {
		xsc__say("xsc: more than %d sandbox changes; stopping rather "
			 "than run a thread outside its sandbox\n", MAX_CHANGES);
		abort();
	}
	changes.fd[gen] = fd;
	changes.why[gen] = why;
	changes.backend[gen] = backend;
	atomic_store(&xsc__rt.sandbox_gen, gen + 1);
	xsc__spin_unlock(&changes.lock);
	v->sandbox_gen = gen + 1;	/* the call itself applied it here */
	for (int i = 0; i < xsc__rt.n; i++)
		if (&xsc__rt.v[i] != v && xsc__rt.v[i].x)
			xsc__kick(xsc__rt.v[i].x);
}

long xsc__rt_sandbox_call(struct xsc_vcpu *v, long nr, const long *a)
{
	long r;

	switch (nr) {
	case SYS_prctl:		/* PR_SET_SECCOMP, filter: as seccomp(2) */
	case SYS_seccomp: {
		if ((nr == SYS_seccomp ? a[0] != SECCOMP_SET_MODE_FILTER :
					 a[1] != SECCOMP_MODE_FILTER)) {
			/* strict mode: this kernel thread alone, as natively */
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
		r = xsc__sys3(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, prog);
		if (r > 0 && !listener)
			return -EPERM;	/* thread r's filters diverge: no TSYNC */
		if (r < 0)
			return r;
		if (!(a[1] & SECCOMP_FILTER_FLAG_TSYNC) || nr == SYS_prctl)
			say_once("a seccomp filter");
		/* syscall threads have it now (TSYNC), and new ones inherit
		 * it from their vcpu: they stay usable; io_uring does not */
		xsc__sandboxed(v->x, "seccomp filter", XSC_BACKEND_WORKER);
		publish(v, -1, "seccomp filter", XSC_BACKEND_WORKER);
		return r;
	}
	case SYS_landlock_restrict_self: {
		r = xsc__call_here(nr, (const int64_t *)a);
		if (r < 0)
			return r;
		int fd = (int)xsc__sys3(SYS_fcntl, a[0], F_DUPFD_CLOEXEC, 0);
		if (fd < 0) {
			xsc__say("xsc: cannot keep the Landlock ruleset for the other "
				 "kernel threads (%ld); stopping\n", (long)fd);
			abort();
		}
		say_once("Landlock");
		xsc__sandboxed(v->x, "Landlock", XSC_BACKEND_INLINE);
		publish(v, fd, "Landlock", XSC_BACKEND_INLINE);
		return r;
	}
	default:
		if (v->cur && v->cur->tp.setxid && xsc__creds_process_wide(nr)) {
			/* glibc's set*id, which it has asked every thread to
			 * make (preload/signals.c): every kernel thread of the runtime
			 * makes it too, before it runs another call */
			unsigned gen;

			v->cur->tp.setxid = false;
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
			/* the process's main thread (parked) shows in /proc
			 * and is what kill(2) checks permissions against */
			while (atomic_load(&xsc__creds_parked) < gen)
				xsc_yield();
			return r;
		}
		/* credentials: this kernel thread's, as the raw call */
		r = xsc__call_here(nr, (const int64_t *)a);
		if (r >= 0)
			xsc__sandboxed(v->x, "credentials changed", XSC_BACKEND_INLINE);
		return r;
	}
}

/* A forked child's kernel threads are made by the one that forked, and
 * inherit its seccomp filters and Landlock domain: they take the routes
 * of the changes made so far, not the changes again (a Landlock domain
 * applied once more per generation of children would soon reach the
 * kernel's limit of 16 layers). */
void xsc__sandbox_forget(void)
{
	unsigned gen = atomic_load(&xsc__rt.sandbox_gen);

	changes.lock = 0;
	for (unsigned i = 0; i < gen; i++)
		if (changes.fd[i] >= 0) {
			xsc__sys1(SYS_close, changes.fd[i]);
			changes.fd[i] = -1;
		}
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

	for (; v->sandbox_gen < gen; v->sandbox_gen++) {
		int fd = changes.fd[v->sandbox_gen];
		if (fd >= 0 &&
		    (xsc__sys6(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0, 0) < 0 ||
		     xsc__sys2(SYS_landlock_restrict_self, fd, 0) < 0)) {
			xsc__say("xsc: kernel thread %d cannot take the program's "
				 "Landlock domain; stopping\n", v->id);
			abort();
		}
		xsc__sandboxed(v->x, changes.why[v->sandbox_gen],
			       changes.backend[v->sandbox_gen]);
	}
}
