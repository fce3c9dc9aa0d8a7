/*
 * syscalls.c - blocking system calls for fibers.
 *
 * xsc_syscall() posts the call into the current vcpu's syscall pages,
 * tagged with the fiber, and parks; the vcpu's scheduler flushes the batch
 * when nothing else is runnable and the completion callback readies the
 * fiber with the result.  Calls the route table sends inline (getpid,
 * mmap, thread-bound calls, ...) run directly: a hand-off would only add
 * cost.  Outside a fiber, calls go through a handle private to the
 * calling thread (xsc_call), closed when the thread exits.
 */
#include "sched.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "cancel.h"
#include "fdkind.h"
#include "hostprof.h"
#include "internal.h"
#include "rawsys.h"

static pthread_key_t thread_key;
static pthread_once_t thread_once = PTHREAD_ONCE_INIT;
static __thread struct xsc *thread_x;

static void close_thread_handle(void *x)
{
	xsc_close(x);
}

static void make_key(void)
{
	pthread_key_create(&thread_key, close_thread_handle);
}

static long outside(long nr, const long *a)
{
	if (thread_x && xsc__foreign(thread_x))
		thread_x = NULL;	/* a forked child's copy: the parent's */
	if (!thread_x) {
		struct xsc_config cfg;
		xsc_config_init(&cfg);
		cfg.npages = 1;
		cfg.flags = XSC_QUIET;
		if (xsc_open(&thread_x, &cfg) < 0)
			return xsc__call_here(nr, (const int64_t *)a);
		pthread_once(&thread_once, make_key);
		pthread_setspecific(thread_key, thread_x);
	}
	return xsc_call(thread_x, nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/* A call the vcpu's route runs in the caller's kernel thread. */
static long call_inline(struct xsc_vcpu *v, long nr, const long *a)
{
	long r;

	if (__builtin_expect(xsc__rt_sandboxing(nr, a), 0))
		return xsc__rt_sandbox_call(v, nr, a);
	if (nr == SYS_io_uring_enter)
		return xsc__ring_wait(a);
	if (xsc__may_block(&xsc__sys[nr]))
		xsc__rt_may_block(v);
	r = xsc__call_here(nr, (const int64_t *)a);
	if (nr == SYS_io_uring_setup && r >= 0)
		xsc__ring_made(r, a);
	return r;
}

/* Fiber f of an extension (a program's thread) posted call `id`: a
 * signal may cancel it. */
static void cancellable(struct xsc_fiber *f, long nr, const long *a, int id)
{
	if (xsc__ext->call_begin)
		xsc__ext->call_begin(f, nr, a);
	/* a full barrier, then a look at the signals sent to it: a sender
	 * that set one before it saw no call to interrupt; the vcpu cancels
	 * it before the next fiber (ops->scan) */
	__atomic_store_n(&f->call_id, id + 1, __ATOMIC_SEQ_CST);
	if (xsc__signal_pending(f) && xsc__ext->call_posted)
		xsc__ext->call_posted(f);
}

/* Posts f's call and parks until its completion resumes f. */
static long call_posted(struct xsc_vcpu *v, struct xsc_fiber *f, long nr, const long *a)
{
	struct xsc_fdq *q;
	long ret;
	int id;

again:
	/* a call that may wait for another party takes its descriptor's
	 * turn first (fdq.c): one fiber in the kernel per descriptor and
	 * direction, the others queued without an entry */
	q = xsc__fdq_enter(v, nr, a);
	id = xsc__post_fiber(nr, a, (uint64_t)(uintptr_t)f);
	if (id < 0) {
		if (q)
			xsc__fdq_leave(q, nr, a, id);
		return id;
	}
	if (nr == SYS_accept4 || nr == SYS_accept) {
		/* A new connection is new work: hand the accept over now
		 * rather than at the end of the round.  io_uring tries it at
		 * once, so with a backlog the result is there when the enter
		 * returns; an accept loop then drains the backlog in a burst
		 * instead of one connection per round (which, with N
		 * connections active, made the last of N new ones wait
		 * O(N^2) work). */
		v = xsc__vcpu();
		xsc_flush(v->x);
		xsc_poll(v->x);	/* a result reaped here is kept for the suspend */
	}
	if (f->fs)
		cancellable(f, nr, a, id);
	XSC_PROBE3(park, f, f->vtid, nr);
	ret = xsc__suspend(NULL);	/* the completion resumes us */
	f->call_id = 0;
	if (q)
		xsc__fdq_leave(q, nr, a, ret);
	if (__builtin_expect(f->sigpipe, 0)) {
		/* write(2) sends it to the caller before it returns */
		f->sigpipe = false;
		xsc__sys3(SYS_tgkill, xsc__sys0(SYS_getpid), xsc__sys0(SYS_gettid), SIGPIPE);
	}
	if (__builtin_expect(atomic_load(&f->intr) != 0, 0) && xsc__ext->call_end) {
		ret = xsc__ext->call_end(f, nr, ret);
		if (ret != XSC_CALL_RESTART)
			return ret;
		v = xsc__vcpu();
		goto again;
	}
	return ret;
}

/* v's calls in flight: on the ring, readiness waits, syscall threads */
static unsigned inflight(const struct xsc *x)
{
	return x->inflight_uring + x->inflight_waits + x->inflight_worker;
}

static void count(struct xsc_vcpu *v, struct xsc_fiber *f, enum xsc_way w)
{
	v->way[w]++;
	f->way[w]++;
}

/* Posting gains nothing: nothing else on the vcpu is runnable, no call is
 * posted waiting for a flush (completions come in first: the fibers they
 * ready would make calls of their own), and the host profile says a call
 * made here costs less than one posted alone. */
static bool alone(struct xsc_vcpu *v)
{
	struct xsc *x = v->x;

	if (!x->here_alone || x->npending || atomic_load(&v->rq_len))
		return false;
	if (inflight(x)) {
		if (!xsc__reap_idle(x))
			xsc_poll(x);
		return !atomic_load(&v->rq_len) && !x->npending;
	}
	return true;
}

/* A call that waits for a peer on its descriptor, which cannot wait:
 * the descriptor is non-blocking (a socket, a pipe... that the program
 * made so: sched/fdkind.c), or MSG_DONTWAIT is among its flags. */
static bool cannot_wait(const struct xsc_sysdef *d, const long *a)
{
	if (!d->turn.dir)
		return false;
	if (d->turn.msg && (xsc__sys_arg((const int64_t *)a, d->turn.msg) & MSG_DONTWAIT))
		return true;
	return a[0] >= 0 && a[0] <= INT_MAX && xsc__fdkind_nowait((int)a[0]);
}

/* A call that waits for nothing but the disk: the stat family (.cheap),
 * or a call on a descriptor the program found to be a regular file or a
 * block device (.disk; sched/fdkind.c: a close has marked it closing
 * already, and the closing fiber keeps what it was).  AUTO only: a forced
 * backend posts them in io_uring's form. */
static bool disk_only(const struct xsc *x, const struct xsc_fiber *f,
		      const struct xsc_sysdef *d, const long *a)
{
	if (x->cfg.backend != XSC_BACKEND_AUTO)
		return false;
	if (d->cheap)
		return true;
	if (!d->disk)
		return false;
	long fd = a[d->disk - 1];
	if (fd < 0 || fd > INT_MAX)
		return false;
	if (d->fdkind == XSC_FDKIND_CLOSE)
		return f->closing_disk == fd + 1;
	return xsc__fdkind_get((int)fd) == 1;
}

/* Nothing can become runnable on v while its fiber f waits in the
 * kernel, and f's own signals can end the wait: f is not in a handler
 * that holds them blocked (f->masked), none of its calls is in flight,
 * and either no other fiber lives
 * there (a wake from another vcpu would find it waiting behind the call;
 * a new fiber placed on it is taken by an idle vcpu: xsc__rt_may_block),
 * or the extension says its signals cannot ready one without ending the
 * wait (f takes every signal another thread takes), and either v is the
 * only vcpu, so that no other fiber runs to wake one, or a fiber readied
 * on v stops the wait (ops->stop_held), whose rest is then posted (a
 * call of the first form is posted whole).  The
 * others then wait on locks, conditions or joins: redis-server's three
 * background threads in their condition waits, one of them beside the
 * main thread in about half the starts, made each of its epoll_waits a
 * look and a post (683-702 calls in 5 s idle, against 196 natively).
 * until NULL: the first form
 * alone, for a wait with no end (another fiber's timed wait on the only
 * vcpu could end meanwhile, which sole_wait's bound allows for; with
 * other fibers on v, only where a readied one stops it).  For a
 * wait sole_wait bounds (until set), the calls in flight may be sleeps
 * whose end is known (another fiber's timed wait, a sleeping thread:
 * redis's housekeeping thread), at least a millisecond away: *until is
 * then the earliest end, which the wait stops before, else -1.  Any
 * calls may be in flight on a ring whose completions stop the call
 * (ringwatch.c): memcached -t 1's worker beside its listener's wait. */
#define SLICE_MIN_NS 1000000	/* a bound is whole milliseconds */

/* The time, read once: *now, or 0 before. */
static int64_t now_once(int64_t *now)
{
	return *now ? *now : (*now = xsc__now());
}

static bool sole(const struct xsc_vcpu *v, struct xsc_fiber *f, int64_t *until, int64_t *now)
{
	struct xsc *x = v->x;

	if (f->masked)
		return false;
	if (until)
		*until = -1;
	if (inflight(x)) {
		int64_t end = until ? xsc__timers_end(x) : -1;
		bool slice = end >= 0 && end - now_once(now) >= SLICE_MIN_NS;

		/* the ring's completions stop the wait (ringwatch.c; call_held
		 * arms it), else only sleeps with a known end may be in flight */
		if (!xsc__ringwatch_may(v) &&
		    (!until || x->inflight_waits || x->inflight_worker || !slice))
			return false;
		if (slice)
			*until = end;
	}
	return atomic_load_explicit(&v->nhomed, memory_order_relaxed) == 1 ||
	       (xsc__ext && xsc__ext->may_wait &&
		(xsc__ext->stop_held || (until && xsc__rt.n == 1)) && xsc__ext->may_wait(f));
}

/* Call nr with arguments a in f's kernel thread, where a signal for f
 * must end it (call_sole, sole_wait): meanwhile v is held (no new fiber
 * is placed there; one placed just before is taken by an idle vcpu:
 * xsc__rt_may_block), which the watchdog counts as waiting (it may
 * sleep: preload/signals/preempt.c), and f->here_v lets the extension stop the
 * call (tp_interrupt, cancel.h), as a fiber readied on v does
 * (ops->stop_held).  Not made when a signal for f is pending, or a
 * fiber is runnable on v.  *stopped: it was not made, or the extension
 * stopped it (-ECANCELED before it began, -EINTR in its wait); else the
 * result is the call's. */
static long call_held(struct xsc_vcpu *v, struct xsc_fiber *f, long nr, const long *a,
		      bool *stopped)
{
	bool ext = xsc__ext && xsc__ext->here_stopped;
	bool watch = inflight(v->x) && xsc__ringwatch_may(v);
	long r = -ECANCELED;

	/* cleared before held is set: a fiber readied on v sees held, then
	 * sets the flag (stop_held), or v sees it in its run queue below */
	atomic_store(&v->here_stop, 0);
	atomic_store(&v->held, 1);
	xsc__rt_may_block(v);
	atomic_store(&f->here_v, v);	/* then a look at what is pending */
	*stopped = true;
	if (!atomic_load(&v->rq_len) && !(ext && xsc__signal_pending(f)) &&
	    (!watch || xsc__ringwatch_arm(v))) {
		r = xsc__syscall_cp(&v->here_stop, nr, (const int64_t *)a);
		/* -EINTR: the extension's signal has a handler of the
		 * program's without SA_RESTART */
		*stopped = (r == -ECANCELED || r == -EINTR) && atomic_load(&v->here_stop);
		if (watch)
			xsc__ringwatch_done(v, *stopped);
	}
	atomic_store(&f->here_v, NULL);
	atomic_store(&v->held, 0);
	xsc__rt_busy(v);
	return r;
}

/* The wait, in the caller, whole: until its events, its timeout, or a
 * signal for f.  A signal taken by its kernel thread ends it with EINTR;
 * one whose handler ran elsewhere (a process signal the extension hands
 * to the thread the kernel would have chosen) was not this thread's, and
 * the wait goes on.  A signal sent to the thread as a fiber (pthread_kill:
 * recorded for it, not sent to this kernel thread) stops it as it stops
 * call_sole's (call_held): the extension runs its handler and
 * says whether the wait ends with EINTR or goes on (ops->call_end, as for
 * a posted call a signal canceled).  Without an extension that stops
 * such calls (the xsc threads API) no signal is recorded for a fiber.
 * Sleeps in flight (sole(): *until) bound it: it stops before the
 * earliest one ends, in whole milliseconds, and goes on, or, when
 * something became runnable on the vcpu meanwhile, the rest is posted
 * (false, with b the wait to post).  Its ends return nothing to the
 * program but the kernel's: its wait ends as natively, with events, at
 * its timeout, or interrupted.  It went in 10 ms slices, which woke an
 * idle server's vcpu 100 times a second (tp_sole). */
static bool sole_wait(struct xsc_fiber *f, long nr, const long *a, int at, long *r,
		      long *b, int64_t until, int64_t now)
{
	int64_t ms = (int)a[at], end = ms > 0 ? now_once(&now) + ms * 1000000 : 0;
	int64_t left = ms > 0 ? ms * 1000000 : -1;	/* ns, -1: no end */
	/* handlers run for f since its call began: one that ran in user
	 * space between two parts of the wait interrupted neither, but the
	 * program's wait all the same (a process signal 30 ms into a 5 s
	 * epoll_wait, run there, left the wait to its timeout about once in
	 * 100 runs under load) */
	uint32_t nsig = f->nsig;

	for (;;) {
		struct xsc_vcpu *v = xsc__vcpu();	/* a handler's wait may move it */
		bool stopped;

		b[at] = left >= 0 ? (left + 999999) / 1000000 : ms;
		if (until >= 0 && (left < 0 || until - now_once(&now) < left))
			b[at] = (long)((until - now_once(&now)) / SLICE_MIN_NS);	/* may be 0 */
		*r = call_held(v, f, nr, b, &stopped);
		if (!stopped && *r != -EINTR && *r != 0)
			return true;	/* 0: a sleep's bound, or its timeout */
		if (f->nsig != nsig) {
			*r = -EINTR;	/* a .probe wait is never restarted */
			return true;
		}
		if ((__atomic_load_n(&f->sig_pending, __ATOMIC_ACQUIRE) & ~f->sigmask) &&
		    xsc__ext && xsc__ext->call_end) {
			*r = xsc__ext->call_end(f, nr, -EINTR);
			if (*r != XSC_CALL_RESTART)
				return true;
		}
		now = 0;
		if (ms > 0 && (left = end - now_once(&now)) <= 0) {
			*r = 0;
			return true;
		}
		v = xsc__vcpu();
		/* alone() reaps what a stop by the ring's watcher left */
		if (!alone(v) || !sole(v, f, &until, &now)) {
			b[at] = ms > 0 ? (left + 999999) / 1000000 : ms;
			return false;
		}
	}
}

/* A call a sole fiber makes in its kernel thread though it may wait
 * there (an open of a FIFO; the vcpu's only fiber, or the others parked
 * on locks, nothing in flight: nothing waits behind it on its vcpu).
 * True with the result in *r; false: a fiber readied on v stopped it
 * before it began or in its wait (ops->stop_held; nothing was opened or
 * moved then), and it is to be posted, so that v runs that fiber.
 * A signal the kernel gives this thread interrupts it as natively, its
 * handler run in place.  One sent to the thread as a fiber (recorded for
 * it, not sent to this kernel thread) ends it too: the extension sets
 * v->here_stop and signals this kernel thread, whose handler stops the
 * call exactly (cancel.h): -ECANCELED if it had not begun, -EINTR if the
 * kernel interrupted its wait.  The handlers then run on f
 * (ops->here_stopped), and the call is made again, or, for a wait whose
 * handlers did not all have SA_RESTART, returns EINTR, as the kernel's
 * open of a FIFO does (ERESTARTSYS: the calls made so). */
static bool call_sole(struct xsc_fiber *f, long nr, const long *a, long *r)
{
	bool ext = xsc__ext && xsc__ext->here_stopped;

	for (;;) {
		struct xsc_vcpu *v = xsc__vcpu();
		bool stopped;

		*r = call_held(v, f, nr, a, &stopped);
		if (!stopped)
			return true;
		if (ext && xsc__signal_pending(f) && !xsc__ext->here_stopped(f) &&
		    *r == -EINTR)
			return true;
		if (!alone(v) || !sole(v, f, NULL, NULL))
			return false;	/* alone() reaps: see sole_wait */
	}
}

/* Do no harm: a call posted alone costs a flush, a park and a resume
 * where the caller would make one system call, and a fiber with nothing
 * to batch with (an event loop's thread) makes its calls as it would
 * natively:
 *   - a call that cannot wait (on a non-blocking descriptor, or with
 *     MSG_DONTWAIT), or waits for nothing but the disk (disk_only);
 *   - a wait (.probe: its timeout), whole, when nothing can become
 *     runnable on its vcpu meanwhile (sole()); else it first looks with
 *     timeout 0, and events ready then are the wait's answer (a wait
 *     returns at once when it finds them); none, and it is posted.
 * As soon as others are runnable, or calls wait for a flush, its calls go
 * to the batch again.  True with the result in *r when the call was made
 * here; false: the call to post is *post, a's arguments or, for a wait
 * begun here, what is left of it (in b). */
static bool made_here(struct xsc_vcpu *v, struct xsc_fiber *f, long nr, const long *a,
		      long *r, long *b, const long **post)
{
	const struct xsc_sysdef *d = &xsc__sys[nr];
	int64_t until, now = 0;

	*post = a;
	if (cannot_wait(d, a) || disk_only(v->x, f, d, a)) {
		if (!alone(v)) {
			count(v, f, XSC_WAY_BATCHED);
			return false;
		}
		count(v, f, XSC_WAY_ALONE);
		*r = xsc__call_here(nr, (const int64_t *)a);
		return true;
	}
	if (d->turn.dir && d->intr == XSC_INTR_RESTART) {
		/* a transfer that may wait for a peer (a blocking descriptor,
		 * or one whose kind is not known), by a program's thread that
		 * is the only fiber of its vcpu: its wait harms no one, and a
		 * signal for it ends the wait as natively, with the open's
		 * rule (call_sole).  AUTO only: a forced backend, or one
		 * asked for and refused, posts them to its executor; an xsc
		 * thread (library mode, no f->fs) posts them as FlexSC-Threads
		 * does */
		if (f->fs && v->x->cfg.backend == XSC_BACKEND_AUTO && !v->x->refused &&
		    alone(v) && sole(v, f, NULL, NULL) && call_sole(f, nr, a, r)) {
			count(v, f, XSC_WAY_SOLE);
			return true;
		}
		count(v, f, XSC_WAY_POSTED);
		xsc__ringwatch_passed(v);
		return false;
	}
	if (!d->probe || !a[d->probe - 1] || !alone(v)) {
		count(v, f, XSC_WAY_POSTED);
		return false;
	}
	memcpy(b, a, 6 * sizeof(*b));
	if (sole(v, f, &until, &now)) {
		count(v, f, XSC_WAY_SOLE);
		*post = b;
		return sole_wait(f, nr, a, d->probe - 1, r, b, until, now);
	}
	b[d->probe - 1] = 0;
	*r = xsc__call_here(nr, (const int64_t *)b);
	count(v, f, *r ? XSC_WAY_LOOKED : XSC_WAY_LOOKED_POSTED);
	xsc__ringwatch_passed(v);
	return *r != 0;
}

/* Cheaper in the caller for these arguments (.cheap_if: an open), with
 * no park at all: made by a sole fiber, which may wait in it, without a
 * look at its path (call_sole); by a fiber alone on its vcpu, against
 * the call posted alone; else against the call posted in a batch, where
 * a ring takes it.  True with the result in *r when it was made here.
 * Sole in sole()'s first form only: the open's wait has no end. */
static bool here_if(struct xsc_vcpu *v, struct xsc_fiber *f, long nr, const long *a,
		    long *r)
{
	const struct xsc_sysdef *d = &xsc__sys[nr];
	unsigned route = v->x->head[nr].route;
	bool al = alone(v);
	bool s = al && sole(v, f, NULL, NULL);

	if (!al && (!v->x->have_ring ||
		    (route != XSC_BACKEND_URING && route != XSC_BACKEND_SQPOLL)))
		return false;
	if (!xsc__cheap_here(v->x, d, (const int64_t *)a,
			     s ? XSC_HERE_SOLE : al ? XSC_HERE_ALONE : XSC_HERE_BATCH))
		return false;
	if (s) {
		if (!call_sole(f, nr, a, r))
			return false;	/* stopped: posted */
		count(v, f, XSC_WAY_SOLE);
		return true;
	}
	count(v, f, al ? XSC_WAY_ALONE : XSC_WAY_CALLER);
	*r = xsc__call_here(nr, (const int64_t *)a);
	return true;
}

static long route_call(struct xsc_vcpu *v, struct xsc_fiber *f, long nr, const long *a)
{
	const long *post;
	long r, b[6];

	if (__builtin_expect(nr == SYS_close || nr == SYS_dup2 || nr == SYS_dup3, 0))
		xsc__fdq_closed((int)a[nr == SYS_close ? 0 : 1]);
	if (xsc__rt_creds_behind(v))	/* before any call of the program */
		xsc__rt_creds_catch_up(v);
	if (v->x->head[nr].route == XSC_BACKEND_INLINE) {
		count(v, f, XSC_WAY_CALLER);
		return call_inline(v, nr, a);
	}
	if (__builtin_expect(xsc__sys[nr].cheap_if != NULL, 0) && here_if(v, f, nr, a, &r))
		return r;
	if (made_here(v, f, nr, a, &r, b, &post))
		return r;
	return call_posted(v, f, nr, post);
}

/* A system call is a scheduling point.  A fiber whose calls never park
 * (made in the caller: .cheap rows, calls that cannot wait, a loop of
 * fstat) kept its vcpu: the completions of the others' calls waited in
 * the ring or on the syscall threads' stack, and the fibers they would
 * ready waited behind it, one call per watchdog tick (10 ms).
 * tp_fdkind's racing threads, one in an fstat loop, took over 30 s on
 * the syscall-thread fallback.  Every 64 calls without a switch, what is
 * posted goes out, what has completed comes in, and if that readied
 * anyone the fiber yields.  Transparent mode ticks in its dispatch too,
 * which makes the calls its rows say run directly without coming here. */
void xsc__rt_call_tick(struct xsc_vcpu *v)
{
	struct xsc *x = v->x;

	v->calls_run = 0;
	if (x->npending)
		xsc_flush(x);
	if (inflight(x))
		xsc_poll(x);
	if (atomic_load(&v->rq_len))
		xsc_yield();
}

static long fiber_call(long nr, const long *a)
{
	struct xsc_vcpu *v = xsc__vcpu();
	struct xsc_fiber *f = v ? v->cur : NULL;
	long r;

	if (!f)
		return outside(nr, a);
	if (nr < 0 || nr >= XSC_NR_MAX)
		return -ENOSYS;
	/* once per call of the program's: not again for the calls that
	 * transparent mode's dispatch (which ticks itself) posts here */
	if (!f->in_call && __builtin_expect(++v->calls_run >= 64, 0)) {
		xsc__rt_call_tick(v);
		v = xsc__vcpu();
	}
	/* what a debugger shows the fiber in (sched.h): the outermost
	 * call, a program's own when `xsc run` emulates it with others */
	if (f->in_call)
		return route_call(v, f, nr, a);
	f->in_args = a;
	f->in_call = nr + 1;
	r = route_call(v, f, nr, a);
	f->in_call = 0;
	return r;
}

long xsc__fiber_call(long nr, const long *a)
{
	return fiber_call(nr, a);
}

/* Pages full: wait for a completion to free an entry, here or on
 * whichever vcpu runs us next.  Apart, so that the posting path stays
 * small enough for gcc to inline (it weighs the probe's asm by its text). */
static __attribute__((noinline, cold)) void wait_entry(struct xsc_vcpu *v)
{
	xsc__wq_push(&v->ewait, v->cur);
	XSC_PROBE3(park, v->cur, v->cur->vtid, XSC_PARK_ENTRY);
	xsc__suspend(NULL);
}

int xsc__post_fiber(long nr, const long *a, uint64_t tag)
{
	for (;;) {
		struct xsc_vcpu *v = xsc__vcpu();	/* may change after a park */
		int id = xsc_post_args(v->x, nr, a, tag);
		if (id != -EAGAIN)
			return id;
		wait_entry(v);
	}
}

XSC_EXPORT long xsc_syscall(long nr, ...)
{
	long a[6];
	va_list ap;

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	return fiber_call(nr, a);
}

#define CALL(nr, ...) fiber_call(nr, (const long[6]){ __VA_ARGS__ })

XSC_EXPORT long xsc_read(int fd, void *buf, size_t n)
{
	return CALL(SYS_read, fd, (long)buf, (long)n);
}

XSC_EXPORT long xsc_write(int fd, const void *buf, size_t n)
{
	return CALL(SYS_write, fd, (long)buf, (long)n);
}

XSC_EXPORT long xsc_readv(int fd, const struct iovec *iov, int cnt)
{
	return CALL(SYS_readv, fd, (long)iov, cnt);
}

XSC_EXPORT long xsc_writev(int fd, const struct iovec *iov, int cnt)
{
	return CALL(SYS_writev, fd, (long)iov, cnt);
}

XSC_EXPORT long xsc_pread(int fd, void *buf, size_t n, long off)
{
	return CALL(SYS_pread64, fd, (long)buf, (long)n, off);
}

XSC_EXPORT long xsc_pwrite(int fd, const void *buf, size_t n, long off)
{
	return CALL(SYS_pwrite64, fd, (long)buf, (long)n, off);
}

XSC_EXPORT long xsc_openat(int dirfd, const char *path, int flags, unsigned mode)
{
	return CALL(SYS_openat, dirfd, (long)path, flags, mode);
}

XSC_EXPORT long xsc_close_fd(int fd)
{
	return CALL(SYS_close, fd);
}

XSC_EXPORT long xsc_fstat(int fd, struct stat *st)
{
	return CALL(SYS_fstat, fd, (long)st);
}

XSC_EXPORT long xsc_accept4(int fd, struct sockaddr *addr, unsigned *len, int flags)
{
	return CALL(SYS_accept4, fd, (long)addr, (long)len, flags);
}

XSC_EXPORT long xsc_connect(int fd, const struct sockaddr *addr, unsigned len)
{
	return CALL(SYS_connect, fd, (long)addr, len);
}

XSC_EXPORT long xsc_recv(int fd, void *buf, size_t n, int flags)
{
	return CALL(SYS_recvfrom, fd, (long)buf, (long)n, flags, 0, 0);
}

XSC_EXPORT long xsc_send(int fd, const void *buf, size_t n, int flags)
{
	return CALL(SYS_sendto, fd, (long)buf, (long)n, flags, 0, 0);
}

XSC_EXPORT long xsc_poll1(int fd, short events, int timeout_ms)
{
	struct pollfd p = { fd, events, 0 };
	long r = CALL(SYS_poll, (long)&p, 1, timeout_ms);
	return r < 0 ? r : r == 0 ? 0 : p.revents;
}

XSC_EXPORT int xsc_usleep(unsigned long usec)
{
	struct timespec ts = { (time_t)(usec / 1000000), (long)(usec % 1000000) * 1000 };
	return (int)CALL(SYS_nanosleep, (long)&ts, 0);
}

XSC_EXPORT int xsc_sleep(unsigned sec)
{
	struct timespec ts = { sec, 0 };
	return (int)CALL(SYS_nanosleep, (long)&ts, 0);
}
