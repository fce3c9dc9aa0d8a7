/*
 * handle.c - the handle: its configuration, whose it is, open and close,
 * the switch to other executors when the caller's sandbox or credentials
 * change, and what can be read of it (routes, probe, statistics).
 *
 * The dispatcher that works on it is dispatch.c (posting, flushing,
 * re-routing what an executor hands back) and wait.c (reaping, waiting,
 * results, release, cancel).  Completions are collected only by the
 * owner, so all bookkeeping is single-threaded; its functions, which the
 * executors call too, are in done.c, below these files, and every inline
 * call goes through exec.c.
 */
#include "handle.h"
#include "creds.h"
#include "dispatch.h"
#include "done.h"
#include "fdwait.h"
#include "probe.h"
#include "usdt.h"
#include "rawio.h"
#include "uring.h"
#include "worker.h"

#include <limits.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "hostprof.h"
#include "rawsys.h"

#define MAX_PAGES 255	/* 16320 entries: 2 CQEs each fit a 32K CQ */

XSC_EXPORT void xsc_config_init(struct xsc_config *cfg)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	memset(cfg, 0, sizeof(*cfg));
	cfg->npages = XSC_DEFAULT_PAGES;
	cfg->syscall_cpu = -1;
	cfg->max_workers = 16;
	/* spinning only pays when the executor runs on another core, and
	 * for as long as the wake-up that ends a sleep costs (hostprof.c) */
	cfg->spin_ns = ncpu > 1 ? xsc__hostprof_spin_ns(xsc__hostprof(NULL)) : 0;
	cfg->sq_idle_ms = 1000;
}

/* ---- ownership ----------------------------------------------------------
 *
 * A handle belongs to the thread that opened it: the ring is a single-
 * issuer ring registered to that task, and the bookkeeping is unlocked.
 * Used from another thread, or in a forked child (whose ring belongs to
 * the parent and which has none of the syscall threads), every entry point
 * that would run or wait for something answers -EBADFD and touches
 * nothing; xsc_close frees what is the caller's to free.  The check is
 * the address of a TLS mark (each thread has its own) and a generation a
 * pthread_atfork child handler bumps. */
__thread char xsc__owner_mark __attribute__((tls_model("initial-exec")));
_Atomic unsigned xsc__fork_gen;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void on_fork_child(void)
{
	atomic_fetch_add(&xsc__fork_gen, 1);
}

static void atfork_init(void)
{
	pthread_atfork(NULL, NULL, on_fork_child);
}

void xsc__handle_shared(struct xsc *x)
{
	x->shared = true;
}

/* ---- open and close ------------------------------------------------- */

/* A syscall core must be one the caller may run on (as xsc_main's): the
 * kernel refuses an SQPOLL poller elsewhere, and a syscall thread pinned
 * there would fail to pin and run anywhere. */
static bool syscall_cpu_ok(int cpu)
{
	cpu_set_t s;

	if (cpu < 0)
		return true;
	if (cpu >= CPU_SETSIZE || sched_getaffinity(0, sizeof(s), &s) != 0)
		return false;
	return CPU_ISSET(cpu, &s);
}

/* The caller's configuration, its zeros (unset fields) the defaults. */
static void config_set(struct xsc *x, const struct xsc_config *cfg)
{
	struct xsc_config d;

	if (!cfg) {
		xsc_config_init(&x->cfg);
		return;
	}
	xsc_config_init(&d);
	x->cfg = *cfg;
	if (!x->cfg.npages)
		x->cfg.npages = d.npages;
	if (!x->cfg.max_workers)
		x->cfg.max_workers = d.max_workers;
	if (!x->cfg.sq_idle_ms)
		x->cfg.sq_idle_ms = d.sq_idle_ms;
	if (x->cfg.spin_ns == XSC_SPIN_DEFAULT)	/* 0 is "never" */
		x->cfg.spin_ns = d.spin_ns;
}

/* The pages, their slots and the owner's id rings; false: no memory
 * (nothing left allocated but x itself). */
static bool pages_alloc(struct xsc *x)
{
	x->n = x->cfg.npages * XSC_ENTRIES_PER_PAGE;
	x->ent = aligned_alloc(4096, x->n * sizeof(struct xsc_entry));
	x->slot = aligned_alloc(64, x->n * sizeof(struct xsc_slot));
	x->aux = calloc(x->n, sizeof(union xsc_aux));
	/* the pending ring is a power of two: a mask, not a wrap test */
	for (x->pend_mask = 1; x->pend_mask < x->n; x->pend_mask <<= 1)
		;
	/* one allocation: the free stack (n), the pending ring and the ring
	 * of entries handed back (pend_mask + 1 each) */
	x->free_ids = calloc(x->n + 2 * (size_t)x->pend_mask, sizeof(int));
	if (!x->ent || !x->slot || !x->aux || !x->free_ids) {
		free(x->ent);
		free(x->slot);
		free(x->aux);
		free(x->free_ids);
		return false;
	}
	x->pend_ids = x->free_ids + x->n;
	x->back = (uint32_t *)(x->pend_ids + x->pend_mask);
	x->pend_mask--;
	memset(x->ent, 0, x->n * sizeof(struct xsc_entry));
	memset(x->slot, 0, x->n * sizeof(struct xsc_slot));
	for (unsigned i = 0; i < x->n; i++)	/* pops 0, 1, 2, ... */
		x->free_ids[i] = (int)(x->n - 1 - i);
	x->nfree = x->n;
	x->pend_head = 0;
	return true;
}

/* The opening thread's timer slack, at most 1 s; under a seccomp filter
 * (which might refuse or kill on a prctl the program never made) the
 * kernel's default, 50 us. */
static uint64_t timer_slack(const struct xsc *x)
{
	long slack = x->pr.seccomp ? 50000 : xsc__sys1(SYS_prctl, PR_GET_TIMERSLACK);

	return slack <= 0 ? 0 : slack < 1000000000 ? (uint64_t)slack : 1000000000;
}

XSC_EXPORT int xsc_open(struct xsc **xp, const struct xsc_config *cfg)
{
	const struct xsc_hostprof *hp;
	const char *err;
	struct xsc *x;

	if (!xp)
		return -EINVAL;
	/* the routes' costs; a forced profile that cannot be used is an
	 * error, never a silent default (also under XSC_QUIET) */
	if (!(hp = xsc__hostprof(&err))) {
		xsc__say("xsc: %s\n", err);
		return -EINVAL;
	}
	/* on a cache line's start: the fields a direct call reads share one
	 * (internal.h) */
	x = aligned_alloc(64, (sizeof(*x) + 63) & ~(size_t)63);
	if (!x)
		return -ENOMEM;
	memset(x, 0, sizeof(*x));
	x->hp = hp;
	x->here_alone = hp->here_alone;
	config_set(x, cfg);
	if (x->cfg.npages > MAX_PAGES || x->cfg.backend < 0 ||
	    x->cfg.backend > XSC_BACKEND_INLINE || !syscall_cpu_ok(x->cfg.syscall_cpu)) {
		free(x);
		return -EINVAL;
	}
	if (!pages_alloc(x)) {
		free(x);
		return -ENOMEM;
	}
	pthread_once(&atfork_once, atfork_init);
	x->owner = &xsc__owner_mark;
	x->owner_tid = (int)xsc__sys0(SYS_gettid);
	x->gen = atomic_load(&xsc__fork_gen);
	atomic_init(&x->creds_gen, atomic_load(&xsc__creds_gen));
	x->flush_at = x->cfg.batch_threshold ? x->cfg.batch_threshold : UINT_MAX;
	xsc__probe(x);
	x->slack_ns = timer_slack(x);
	xsc__route_all(x);
	if (x->cfg.done_cb && !x->have_ring)
		xsc__fdwait_start(x);	/* without it, waits take a syscall thread */
	*xp = x;
	return 0;
}

static void free_handle(struct xsc *x)
{
	xsc__creds_own_free(x);
	free(x->ent);
	free(x->slot);
	free(x->aux);
	free(x->free_ids);
	free(x);
}

/* Cancels every entry a syscall thread is running (xsc_close repeats
 * it: a signal can land just before a worker enters its call). */
static void cancel_workers(struct xsc *x)
{
	for (unsigned i = 0; i < x->n; i++)
		if (x->slot[i].backend == XSC_BACKEND_WORKER &&
		    st_get(&x->ent[i]) == XSC_BUSY)
			xsc__worker_cancel(x, (int)i);
}

/* xsc_close from a thread that does not own x.  In a forked child
 * nothing in flight is the child's: unmap the ring (closing the child's
 * copy of its fd) and free the memory, joining no thread.  From another
 * thread of the owner's process: what runs on syscall threads is
 * cancelled and waited for; requests in the ring can be cancelled by its
 * owner alone, so with some in flight and the owner alive the answer is
 * -EBUSY and nothing changes.  Once the owner has exited, the kernel has
 * cancelled them and dropped the ring's registration. */
static int close_foreign(struct xsc *x)
{
	bool forked = x->gen != atomic_load(&xsc__fork_gen);

	/* The ring is single-issuer and its registered fd sits in the
	 * owner's table: no other thread may cancel its requests, and they
	 * live on with the owner.  Freeing the handle under them would let a
	 * read take data nobody gets, into a buffer that may be gone. */
	if (!forked && x->have_ring && x->inflight_uring && xsc__owner_alive(x))
		return -EBUSY;
	x->npending = 0;
	if (!forked && x->wk) {
		while (x->inflight_worker) {
			cancel_workers(x);
			if (!xsc__worker_reap(x))
				xsc__futex_wait_kick(x, atomic_load(&x->cseq), 1000000);
		}
	}
	if (x->mc)	/* a multi-call's state: its module's to free */
		xsc__mc()->close(x);
	xsc__uring_teardown(x);
	if (forked) {
		xsc__workers_forget(x);
		xsc__fdwait_forget(x);	/* its thread is the parent's */
	} else {
		xsc__workers_stop(x);
		xsc__fdwait_stop(x);
	}
	free_handle(x);
	return 0;
}

bool xsc__owner_alive(const struct xsc *x)
{
	/* signal 0: -ESRCH once the thread has exited (a new thread of the
	 * process with its id would count as alive: the safe side) */
	return x->gen == atomic_load(&xsc__fork_gen) &&
	       xsc__sys3(SYS_tgkill, xsc__sys0(SYS_getpid), x->owner_tid, 0) != -ESRCH;
}

/* A forked child's copy of one of the runtime's own (shared) handles. */
void xsc__handle_forget(struct xsc *x)
{
	x->gen = atomic_load(&xsc__fork_gen) - 1;	/* surely the parent's */
	close_foreign(x);
}

XSC_EXPORT int xsc_close(struct xsc *x)
{
	int rounds = 0;

	if (!x)
		return -EINVAL;
	if (xsc__foreign(x))
		return close_foreign(x);
	xsc__drop_pending(x);
	if (x->have_ring) {
		xsc__uring_cancel_all(x);
		xsc__reroute(x);	/* what a ring lost meanwhile gave back */
	} else if (x->ring_open)
		/* a lost ring cannot be entered to cancel or wait: closing its
		 * fd below cancels what the kernel still has */
		x->inflight_uring = 0;
	while (x->inflight_uring + x->inflight_worker) {
		/* a cancel signal that lands while a multi-call chain is
		 * between two calls interrupts nothing; repeat it until the
		 * entry is over (worker.c: "Cancel") */
		if (x->wk && rounds++ % 8 == 0)
			cancel_workers(x);
		if (!xsc__reap(x))
			xsc__block(x);
	}
	if (x->mc)	/* a multi-call's state: its module's to free */
		xsc__mc()->close(x);
	xsc__uring_teardown(x);
	xsc__workers_stop(x);
	xsc__fdwait_stop(x);	/* waits still parked are abandoned */
	free_handle(x);
	return 0;
}

/* ---- a sandbox or credential change ---------------------------------- */

/* Calls that sandbox the caller or change its credentials (the rows'
 * .sandbox and .creds): once one succeeds, io_uring (which no seccomp
 * filter sees) and syscall threads (which predate the change) would act
 * with less than the caller may. */
const char *xsc__sandboxing(long nr, const int64_t a[6])
{
	const struct xsc_sysdef *d = xsc__sysdef(nr);

	if (!d)
		return NULL;
	switch (d->sandbox) {
	case XSC_SANDBOX_SECCOMP:	/* seccomp(2), or prctl(PR_SET_SECCOMP) */
		if (nr == SYS_prctl)
			return a[0] == PR_SET_SECCOMP ? "seccomp filter" : NULL;
		return a[0] == SECCOMP_SET_MODE_FILTER ||
		       a[0] == SECCOMP_SET_MODE_STRICT ? "seccomp filter" : NULL;
	case XSC_SANDBOX_LANDLOCK:
		return "Landlock";
	default:
		return d->creds ? "credentials changed" : NULL;
	}
}

void xsc__sandboxed(struct xsc *x, const char *why, int backend)
{
	if (x->cfg.backend == XSC_BACKEND_INLINE && !x->have_ring &&
	    !strcmp(x->reason, why))
		return;
	if (x->cfg.backend != XSC_BACKEND_INLINE)	/* never back to more */
		x->cfg.backend = backend;
	snprintf(x->reason, sizeof(x->reason), "%s", why);
	x->pr.reason = x->reason;
	XSC_PROBE2(fallback, x->reason, x);
	if (!(x->cfg.flags & XSC_QUIET))
		xsc__say("xsc: %s; every call runs %s from now on\n", why,
			 x->cfg.backend == XSC_BACKEND_INLINE ? "in the calling thread" :
			 "on syscall threads, which carry it");
	if (x->have_ring)
		xsc__uring_retire(x);	/* hands back what it did not take */
	x->routes_stale = true;
	xsc__reroute(x);
}

XSC_EXPORT int xsc_sandbox_changed(struct xsc *x)
{
	if (xsc__foreign(x))
		return -EBADFD;
	xsc__sandboxed(x, "sandbox changed (xsc_sandbox_changed)", XSC_BACKEND_INLINE);
	return 0;
}

/* ---- introspection ---------------------------------------------------- */

XSC_EXPORT uint64_t xsc_tag(struct xsc *x, int id)
{
	return xsc__valid(x, id) ? x->slot[id].tag : 0;
}

XSC_EXPORT const struct xsc_entry *xsc_entry(struct xsc *x, int id)
{
	return xsc__valid(x, id) ? &x->ent[id] : NULL;
}

XSC_EXPORT int xsc_route(struct xsc *x, long nr, const char **reason)
{
	if (nr < 0 || nr >= XSC_NR_MAX)
		return -ENOSYS;
	if (reason)
		*reason = x->why[nr] ? x->why[nr] : "";
	return x->head[nr].route;
}

XSC_EXPORT int xsc_probe_get(struct xsc *x, struct xsc_probe *p)
{
	*p = x->pr;
	return 0;
}

XSC_EXPORT int xsc_stats_get(struct xsc *x, struct xsc_stats *s)
{
	*s = x->st;
	return 0;
}
