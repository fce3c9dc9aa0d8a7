/*
 * handle.c - the dispatcher: syscall pages, posting, flushing, waiting,
 * results, cancel and close.
 *
 * Entries live in page-aligned "syscall pages" of 64 entries x 64 bytes
 * (FlexSC 3.1).  The owner thread claims free entries from a stack of ids
 * (no atomic read-modify-write: single producer), fills them with plain
 * stores and publishes each with a release store of SUBMITTED.  A flush
 * walks the pending ring and gives each entry to the executor its route
 * names: the io_uring translation (which may decline one entry, sending it
 * to the row's fallback), the syscall threads, or the caller itself.  One
 * io_uring_enter then submits the whole batch.
 *
 * Completions are collected only by the owner (xsc_poll/xsc_wait reap the
 * CQ and the worker completion stack), so all bookkeeping is
 * single-threaded; its functions, which the executors call too, are in
 * done.c, below this file, and every inline call goes through exec.c.
 */
#include "handle.h"
#include "creds.h"
#include "dispatch.h"
#include "done.h"
#include "exec.h"
#include "fdwait.h"
#include "probe.h"
#include "rawio.h"
#include "uring.h"
#include "worker.h"

#include <assert.h>
#include <limits.h>
#include <linux/futex.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <time.h>
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

static bool valid(struct xsc *x, int id)
{
	return id >= 0 && (unsigned)id < x->n;
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
	x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->hp = hp;
	if (cfg) {
		struct xsc_config d;
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
	} else {
		xsc_config_init(&x->cfg);
	}
	if (x->cfg.npages > MAX_PAGES || x->cfg.backend < 0 ||
	    x->cfg.backend > XSC_BACKEND_INLINE || !syscall_cpu_ok(x->cfg.syscall_cpu)) {
		free(x);
		return -EINVAL;
	}
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
	x->back = (uint32_t *)(x->free_ids + x->n + x->pend_mask);
	x->pend_mask--;
	if (!x->ent || !x->slot || !x->aux || !x->free_ids) {
		free(x->ent);
		free(x->slot);
		free(x->aux);
		free(x->free_ids);
		free(x);
		return -ENOMEM;
	}
	x->pend_ids = x->free_ids + x->n;
	memset(x->ent, 0, x->n * sizeof(struct xsc_entry));
	memset(x->slot, 0, x->n * sizeof(struct xsc_slot));
	for (unsigned i = 0; i < x->n; i++)	/* pops 0, 1, 2, ... */
		x->free_ids[i] = (int)(x->n - 1 - i);
	x->nfree = x->n;
	x->pend_head = 0;
	pthread_once(&atfork_once, atfork_init);
	x->owner = &xsc__owner_mark;
	x->owner_tid = (int)xsc__sys0(SYS_gettid);
	x->gen = atomic_load(&xsc__fork_gen);
	atomic_init(&x->creds_gen, atomic_load(&xsc__creds_gen));
	x->flush_at = x->cfg.batch_threshold ? x->cfg.batch_threshold : UINT_MAX;
	xsc__probe(x);
	xsc__route_all(x);
	if (x->cfg.done_cb && !x->have_ring)
		xsc__fdwait_start(x);	/* without it, waits take a syscall thread */
	*xp = x;
	return 0;
}

static void drop_pending(struct xsc *x);
static int reap(struct xsc *x);
static int block(struct xsc *x);

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
	drop_pending(x);
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
		if (!reap(x))
			block(x);
	}
	if (x->mc)	/* a multi-call's state: its module's to free */
		xsc__mc()->close(x);
	xsc__uring_teardown(x);
	xsc__workers_stop(x);
	xsc__fdwait_stop(x);	/* waits still parked are abandoned */
	free_handle(x);
	return 0;
}

/* ---- posting ---------------------------------------------------------- */

static int claim_slow(struct xsc *x)
{
	while (!x->nfree) {
		int ret;
		if (x->cfg.flags & XSC_NONBLOCK)
			return -EAGAIN;
		if (!x->cfg.done_cb)
			return -ENOBUFS;
		xsc_flush(x);
		x->st.full_waits++;
		if (!reap(x) && (ret = block(x)) < 0)
			return ret;
	}
	return x->free_ids[--x->nfree];
}

/* Index in the pending ring of the k-th posted entry. */
static inline unsigned pend_pos(const struct xsc *x, unsigned k)
{
	return (x->pend_head + k) & x->pend_mask;
}

/* post copies a struct xsc_head over an entry's head word */
_Static_assert(sizeof(struct xsc_head) == sizeof(((struct xsc_entry *)0)->head) &&
	       offsetof(struct xsc_head, nargs) == offsetof(struct xsc_entry, nargs) &&
	       offsetof(struct xsc_head, route) == offsetof(struct xsc_entry, route),
	       "struct xsc_head must match the head of struct xsc_entry");

static int post_full(struct xsc *x, long nr, long a0, long a1, long a2,
		     long a3, long a4, long a5, uint64_t tag);
static int post_flush(struct xsc *x, int id);

/* The hot path of every call: a free entry, eight stores into it, a
 * link in the pending FIFO.  Inlined into the posting functions.  Its
 * slow cases are tail calls: a call in the middle made every post save
 * and restore six registers, a quarter of its instructions. */
static inline __attribute__((always_inline)) int
post(struct xsc *x, long nr, long a0, long a1, long a2, long a3, long a4,
     long a5, uint64_t tag)
{
	struct xsc_entry *e;
	struct xsc_slot *s;
	int id;

	if ((unsigned long)nr >= XSC_NR_MAX)
		return -ENOSYS;
	if (xsc__foreign_thread(x))
		return -EBADFD;
	if (__builtin_expect(!x->nfree, 0))
		return post_full(x, nr, a0, a1, a2, a3, a4, a5, tag);
	id = x->free_ids[--x->nfree];
	e = &x->ent[id];
	s = &x->slot[id];
	memcpy(&e->head, &x->head[nr], sizeof(e->head));	/* one store */
	/* one by one from registers: a copy through a stack array made
	 * 16-byte loads of 8-byte stores, a store-forwarding stall per call */
	e->args[0] = a0;
	e->args[1] = a1;
	e->args[2] = a2;
	e->args[3] = a3;
	e->args[4] = a4;
	e->args[5] = a5;
	/* not reset: ret (valid once DONE) and uptr (set by the translations
	 * that use it) */
	s->tag = tag;
	s->state = 0;	/* parts, backend, noted, mode */
	atomic_store_explicit(&s->canceled, 0, memory_order_relaxed);
	st_set(e, XSC_SUBMITTED);
	x->pend_ids[pend_pos(x, x->npending)] = id;
	x->npending++;
	x->st.posted++;
	if (__builtin_expect(x->npending >= x->flush_at, 0))
		return post_flush(x, id);
	return id;
}

/* No free entry: wait for one (claim_slow), then post into it. */
static __attribute__((noinline)) int
post_full(struct xsc *x, long nr, long a0, long a1, long a2, long a3, long a4,
	  long a5, uint64_t tag)
{
	int id = claim_slow(x);

	if (id < 0)
		return id;
	x->free_ids[x->nfree++] = id;
	return post(x, nr, a0, a1, a2, a3, a4, a5, tag);
}

/* The batching threshold is reached: flush, the entry is id. */
static __attribute__((noinline)) int post_flush(struct xsc *x, int id)
{
	xsc_flush(x);
	return id;
}

XSC_EXPORT int xsc_post_args(struct xsc *x, long nr, const long args[6],
			     uint64_t tag)
{
	if (!args)
		return post(x, nr, 0, 0, 0, 0, 0, 0, tag);
	return post(x, nr, args[0], args[1], args[2], args[3], args[4], args[5], tag);
}

XSC_EXPORT int xsc_post6(struct xsc *x, long nr, long a0, long a1, long a2,
			 long a3, long a4, long a5)
{
	return post(x, nr, a0, a1, a2, a3, a4, a5, 0);
}

/* Parenthesised: xsc.h's macro of the same name would expand here. */
XSC_EXPORT int (xsc_post)(struct xsc *x, long nr, ...)
{
	long a0, a1, a2, a3, a4, a5;
	va_list ap;

	va_start(ap, nr);	/* six, as syscall(2) reads */
	a0 = va_arg(ap, long);
	a1 = va_arg(ap, long);
	a2 = va_arg(ap, long);
	a3 = va_arg(ap, long);
	a4 = va_arg(ap, long);
	a5 = va_arg(ap, long);
	va_end(ap);
	return post(x, nr, a0, a1, a2, a3, a4, a5, 0);
}

/* ---- flushing --------------------------------------------------------- */

static int start_worker(struct xsc *x, int id)
{
	/* in transparent mode the pool starts with the vcpu (preload/start.c) or not
	 * at all: starting it here would malloc under a fiber */
	if (!x->wk && (xsc__raw_workers || xsc__workers_start(x) < 0))
		return -1;
	x->slot[id].backend = XSC_BACKEND_WORKER;
	st_set(&x->ent[id], XSC_BUSY);	/* before a worker can see it */
	xsc__worker_queue(x, id);
	return 0;
}

/* Calls that sandbox the caller or change its credentials: once one
 * succeeds, io_uring (which no seccomp filter sees) and syscall threads
 * (which predate the change) would act with less than the caller may. */
const char *xsc__sandboxing(long nr, const int64_t a[6])
{
	switch (nr) {
	case SYS_seccomp:
		return a[0] == SECCOMP_SET_MODE_FILTER ||
		       a[0] == SECCOMP_SET_MODE_STRICT ? "seccomp filter" : NULL;
	case SYS_prctl:
		return a[0] == PR_SET_SECCOMP ? "seccomp filter" : NULL;
	case SYS_landlock_restrict_self:
		return "Landlock";
	case SYS_setuid: case SYS_setgid: case SYS_setreuid: case SYS_setregid:
	case SYS_setresuid: case SYS_setresgid: case SYS_setgroups:
	case SYS_setfsuid: case SYS_setfsgid: case SYS_capset:
		return "credentials changed";
	default:
		return NULL;
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

static void run_inline(struct xsc *x, int id)
{
	struct xsc_entry *e = &x->ent[id];
	const char *why;

	/* The reaper never issues a call that may block (docs/design.md):
	 * reroute_one sends those to a syscall thread, and comes here with
	 * one only when no syscall thread can be started. */
	assert(!x->reaping || !xsc__may_block(xsc__sysdef(e->sysno)) ||
	       !x->wk);

	x->slot[id].backend = XSC_BACKEND_INLINE;
	st_set(e, XSC_BUSY);
	if (e->sysno != XSC_NR_NOP)
		x->st.crossings++;
	long ret = xsc__exec_sync(e);
	if (__builtin_expect(ret >= 0, 1) && __builtin_expect(xsc__row_bound(xsc__sysdef(e->sysno)), 0) &&
	    (why = xsc__sandboxing(e->sysno, e->args)) != NULL)
		xsc__sandboxed(x, why, XSC_BACKEND_INLINE);
	xsc__complete(x, id, ret);
}

/* An entry the ring path declined, or routed elsewhere: worker or inline.
 * Returns true if a syscall thread needs a kick. */
static __attribute__((noinline)) bool dispatch_other(struct xsc *x, int id,
						      int b)
{
	if (xsc__bound(xsc__sysdef(x->ent[id].sysno), x->ent[id].args)) {
		run_inline(x, id);	/* its arguments tie it to this thread */
		return false;
	}
	if (b == XSC_BACKEND_URING || b == XSC_BACKEND_SQPOLL) {
		x->st.declined++;
		b = xsc__fallback_route(x, x->ent[id].sysno);
	}
	/* a close kept off the SQPOLL ring: after the poller let go (once
	 * per flush: every CQE this flush's calls follow was seen before) */
	if (__builtin_expect(x->sqpoll, 0) && xsc__sys[x->ent[id].sysno].uring.no_sqpoll &&
	    x->barrier_flush != x->st.flushes + 1) {
		xsc__sqpoll_barrier(x);
		x->barrier_flush = x->st.flushes + 1;
		xsc__reroute(x);	/* the ring lost in it: those first */
	}
	if (b == XSC_BACKEND_WORKER && start_worker(x, id) == 0)
		return true;
	run_inline(x, id);
	return false;
}

/* An entry an executor handed back (BUSY, off its books; v is
 * XSC_V_RETRY_SYNC or XSC_V_RING_LOST) goes to the row's fallback
 * executor: a syscall thread for calls that may block, the caller only
 * for calls that cannot (or when no syscall thread can be started), so
 * a reaper never blocks here. */
static void reroute_one(struct xsc *x, int id, enum xsc_verdict v)
{
	(void)v;	/* both: the kernel's own answer, from the fallback */
	if (!xsc__bound(xsc__sysdef(x->ent[id].sysno), x->ent[id].args) &&
	    xsc__fallback_route(x, x->ent[id].sysno) == XSC_BACKEND_WORKER &&
	    start_worker(x, id) == 0) {
		xsc__worker_kick(x);
		return;
	}
	run_inline(x, id);
}

/* In the order they were handed back.  An inline entry's done_cb may
 * flush or reap meanwhile, which comes here too: the ring is consumed
 * from x, one entry at a time. */
void xsc__reroute_slow(struct xsc *x)
{
	if (x->routes_stale) {
		x->routes_stale = false;
		xsc__route_all(x);	/* around the lost ring */
	}
	while (x->nback) {
		uint32_t b = x->back[x->back_head];
		x->back_head = (x->back_head + 1) & x->pend_mask;
		x->nback--;
		reroute_one(x, (int)(b >> 2), (enum xsc_verdict)(b & 3));
	}
}

/* The SQ has no room for another entry's SQEs: submit what it holds
 * (uring.c xsc__sq_room).  A submission that finds the ring lost sends
 * the SQEs it did not take to their fallback, whose done_cb may post
 * entries: the FIFO cursor goes back to x around it. */
static __attribute__((noinline)) bool flush_room(struct xsc *x, unsigned *h,
						 unsigned *left)
{
	bool ok;

	x->pend_head = *h;
	x->npending = *left;
	ok = xsc__sq_room_slow(x, XSC_MAX_PARTS);
	xsc__reroute(x);	/* before the entries behind them */
	*h = x->pend_head;
	*left = x->npending;
	return ok;
}

XSC_EXPORT int xsc_flush(struct xsc *x)
{
	bool kick = false, full = false;	/* full: the SQ stayed full */
	int n = 0;

	if (xsc__foreign(x))
		return -EBADFD;

	/* One entry at a time off the FIFO: an inline entry's done_cb may
	 * post or release entries meanwhile, so dispatch_other works on x's
	 * own head and count.  The ring translations touch neither: the loop
	 * keeps the two in registers and writes them back once. */
	unsigned h = x->pend_head, left = x->npending;

	while (left) {
		int id = x->pend_ids[h];
		struct xsc_entry *e = &x->ent[id];
		int b = e->route;

		h = (h + 1) & x->pend_mask;
		left--;
		n++;
		/* (a route read at post time: the ring may be gone since) */
		if ((b == XSC_BACKEND_URING || b == XSC_BACKEND_SQPOLL) && x->have_ring) {
			const struct xsc_sysdef *d = &xsc__sys[e->sysno];
			int parts;
			/* arguments that tie it to this thread, or make it
			 * cheaper here (.cheap_if): it runs here */
			if (__builtin_expect((d->bound && d->bound(e->args)) ||
					     xsc__cheap_here(x, d, e->args), 0))
				b = XSC_BACKEND_INLINE;
			else if ((xsc__sq_has_room(x, XSC_MAX_PARTS) ||
				  (!full && !(full = !flush_room(x, &h, &left)))) &&
				 (parts = d->uring.prep(x, id)) > 0) {
				/* few values live across the call: x's fields
				 * reload cheaper than spilled registers */
				struct xsc_slot *s = &x->slot[id];
				e = &x->ent[id];
				s->parts = (uint8_t)parts;
				s->backend = (uint8_t)e->route;
				x->inflight_uring++;
				st_set(e, XSC_BUSY);
				continue;
			}
		}
		x->pend_head = h;
		x->npending = left;
		kick |= dispatch_other(x, id, b);
		h = x->pend_head;
		left = x->npending;
	}
	x->pend_head = h;
	x->npending = 0;
	if (x->have_ring) {
		xsc__uring_submit(x);
		xsc__reroute(x);
	}
	if (kick)
		xsc__worker_kick(x);
	if (n)
		x->st.flushes++;
	return n;
}

/* ---- waiting ---------------------------------------------------------- */

int xsc__wait_fd(struct xsc *x, int fd, unsigned events, uint64_t tag)
{
	if (x->have_ring) {
		/* making room may find the ring lost: its entries go on */
		int ret = xsc__uring_wait_fd(x, fd, events, tag);
		xsc__reroute(x);
		return ret;
	}
	if (x->fdw)
		return xsc__fdwait_add(x, fd, events, tag);
	return -ENOTSUP;
}

static int reap(struct xsc *x)
{
	int n = 0;

	if (x->inflight_uring || (x->inflight_waits && x->ring_open)) {
		n += xsc__uring_reap(x);
		if (x->sq_ready)	/* blocking forms of non-blocking attempts */
			xsc__uring_submit(x);
		if (x->nback || x->routes_stale) {
			/* still the reaper: nothing that may block runs here */
			bool was = x->reaping;
			x->reaping = true;
			xsc__reroute_slow(x);
			x->reaping = was;
		}
	}
	if (x->inflight_worker)
		n += xsc__worker_reap(x);
	if (x->fdw && x->inflight_waits)
		n += xsc__fdwait_reap(x);
	return n;
}

/* Sleeps until some executor completes something, a kick after `seen`
 * (with kick), or timeout_ns (< 0: none).  0 or -EINTR. */
static int block_on(struct xsc *x, uint32_t seen, int64_t timeout_ns, bool kick)
{
	bool u = x->inflight_uring > 0 || (x->inflight_waits > 0 && x->ring_open);
	bool w = x->inflight_worker > 0;

	kick |= x->fdw && x->inflight_waits;	/* its thread kicks us */
	int ret = 0;

	if (u)
		ret = xsc__uring_wait(x, w || kick, seen, timeout_ns);
	else if (w)
		ret = xsc__worker_wait(x, seen, timeout_ns);
	else if (kick)
		ret = xsc__futex_wait_kick(x, seen, timeout_ns) == -EINTR ? -EINTR : 0;
	if (!x->futex_armed)
		atomic_store(&x->owner_waiting, 0);
	xsc__reroute(x);	/* the wait found the ring lost */
	return ret;
}

static int block(struct xsc *x)
{
	return block_on(x, atomic_load(&x->cseq), -1, false);
}

int xsc__idle_wait(struct xsc *x, uint32_t seen, int64_t timeout_ns)
{
	if (x->npending)
		xsc_flush(x);
	if (reap(x))
		return 0;
	return block_on(x, seen, timeout_ns, true);
}

XSC_EXPORT int xsc_poll(struct xsc *x)
{
	if (xsc__foreign(x))
		return -EBADFD;
	reap(x);
	return (int)x->ndone;
}

XSC_EXPORT int xsc_wait(struct xsc *x, unsigned min_done)
{
	uint64_t start = x->st.completed;

	if (xsc__foreign(x))
		return -EBADFD;
	if (x->npending)
		xsc_flush(x);
	for (;;) {
		reap(x);
		unsigned have = x->cfg.done_cb ? (unsigned)(x->st.completed - start)
					       : x->ndone;
		if (have >= min_done || !(x->inflight_uring + x->inflight_worker))
			return (int)have;
		int ret = block(x);
		if (ret < 0)
			return ret;
	}
}

/* Waits for entry id; -EINTR if a signal interrupted the wait. */
static int wait_entry(struct xsc *x, int id)
{
	if (xsc__foreign(x))
		return -EBADFD;
	if (st_get(&x->ent[id]) == XSC_SUBMITTED)
		xsc_flush(x);
	while (!x->slot[id].noted) {
		if (reap(x))
			continue;
		int ret = block(x);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* ---- results ---------------------------------------------------------- */

/* The owner counts an entry as done once it has reaped it: a worker sets
 * DONE a moment before it hands the id back. */
static bool done(struct xsc *x, int id)
{
	if (st_get(&x->ent[id]) != XSC_DONE)
		return false;
	if (!x->slot[id].noted)
		reap(x);
	return x->slot[id].noted;
}

XSC_EXPORT int xsc_result(struct xsc *x, int id, long *ret)
{
	if (!valid(x, id))
		return -EINVAL;
	if (done(x, id)) {
		if (ret)
			*ret = (long)x->ent[id].ret;
		return 0;
	}
	return st_get(&x->ent[id]) == XSC_FREE ? -EINVAL : -EINPROGRESS;
}

static void unlink_pending(struct xsc *x, int id)
{
	for (unsigned k = 0; k < x->npending; k++) {
		if (x->pend_ids[pend_pos(x, k)] != id)
			continue;
		for (; k + 1 < x->npending; k++)	/* keep the order */
			x->pend_ids[pend_pos(x, k)] = x->pend_ids[pend_pos(x, k + 1)];
		x->npending--;
		return;
	}
}

static int release_slow(struct xsc *x, int id);

XSC_EXPORT int xsc_release(struct xsc *x, int id)
{
	if (valid(x, id) && st_get(&x->ent[id]) == XSC_DONE &&
	    x->slot[id].noted) {
		/* the common case: done and accounted */
		x->ndone--;
		xsc__free_entry(x, id);
		return 0;
	}
	return release_slow(x, id);	/* a tail call: no frame here */
}

static __attribute__((noinline)) int release_slow(struct xsc *x, int id)
{
	if (!valid(x, id))
		return -EINVAL;
	if (done(x, id)) {
		x->ndone--;
		xsc__free_entry(x, id);
		return 0;
	}
	switch (st_get(&x->ent[id])) {
	case XSC_SUBMITTED:
		unlink_pending(x, id);
		xsc__free_entry(x, id);
		return 0;
	case XSC_BUSY:
	case XSC_DONE:
		return -EBUSY;
	default:
		return -EINVAL;
	}
}

static void drop_pending(struct xsc *x)
{
	while (x->npending) {
		int id = x->pend_ids[x->pend_head];
		unlink_pending(x, id);
		xsc__complete(x, id, -ECANCELED);
	}
}

XSC_EXPORT int xsc_cancel(struct xsc *x, int id)
{
	int err;

	if (!valid(x, id))
		return -EINVAL;
	if (xsc__foreign(x))
		return -EBADFD;
	switch (st_get(&x->ent[id])) {
	case XSC_SUBMITTED:
		unlink_pending(x, id);
		x->slot[id].backend = XSC_BACKEND_INLINE;
		xsc__complete(x, id, -ECANCELED);
		return 0;
	case XSC_BUSY:
		if (x->slot[id].backend == XSC_BACKEND_WORKER)
			return xsc__worker_cancel(x, id);
		err = xsc__uring_cancel(x, id);
		xsc__reroute(x);	/* its submission found the ring lost */
		return err;
	case XSC_DONE:
		return -EALREADY;
	default:
		return -EINVAL;
	}
}

XSC_EXPORT int xsc_take(struct xsc *x, int id, long *ret)
{
	int err;

	if (!valid(x, id) || st_get(&x->ent[id]) == XSC_FREE)
		return -EINVAL;
	err = wait_entry(x, id);
	if (err < 0)
		return err;
	if (ret)
		*ret = (long)x->ent[id].ret;
	return xsc_release(x, id);
}

/* Waits for entry id as a synchronous call would, then frees it. */
static long call_wait(struct xsc *x, int id)
{
	bool interrupted = false;
	long ret;

	int err;

	while ((err = wait_entry(x, id)) < 0) {
		if (err != -EINTR)
			return err;	/* never the entry's old result */
		/* like a synchronous call interrupted by a signal: stop it
		 * if it has not run yet; its result tells */
		if (!interrupted && xsc_cancel(x, id) == 0)
			interrupted = true;
	}
	ret = (long)x->ent[id].ret;
	xsc_release(x, id);
	return interrupted && ret == -ECANCELED ? -EINTR : ret;
}

XSC_EXPORT long xsc_call(struct xsc *x, long nr, ...)
{
	long a[6];
	va_list ap;
	int id;

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (x->cfg.done_cb)
		return -EINVAL;	/* the callback would take the result */
	id = post(x, nr, a[0], a[1], a[2], a[3], a[4], a[5], 0);
	if (id < 0)
		return id;
	return call_wait(x, id);
}

long xsc__call_own(struct xsc *x, long nr, long a0, long a1, long a2)
{
	int id = post(x, nr, a0, a1, a2, 0, 0, 0, XSC_TAG_OWN);

	return id < 0 ? id : call_wait(x, id);
}

/* ---- introspection ---------------------------------------------------- */

XSC_EXPORT uint64_t xsc_tag(struct xsc *x, int id)
{
	return valid(x, id) ? x->slot[id].tag : 0;
}

XSC_EXPORT const struct xsc_entry *xsc_entry(struct xsc *x, int id)
{
	return valid(x, id) ? &x->ent[id] : NULL;
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
