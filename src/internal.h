/*
 * internal.h - libxsc internals shared by the dispatcher, the executors and
 * the syscall table.
 *
 * Memory-ordering contract (see also docs/design.md):
 *  - struct xsc_entry.status is the hand-off word between the owner thread
 *    and the executors.  The side that moves an entry forward writes the
 *    payload (args or ret) first and the status last with release order;
 *    the other side loads status with acquire order before touching the
 *    payload.  Owner: FREE->SUBMITTED (post), SUBMITTED->BUSY (flush),
 *    DONE->FREE (release).  Executor: BUSY->DONE.
 *  - Everything else in struct xsc except the worker queue, the worker
 *    completion stack and the counters marked atomic is owned by the owner
 *    thread and needs no synchronisation.
 */
#ifndef XSC_INTERNAL_H
#define XSC_INTERNAL_H

#include <liburing.h>
#include <linux/stat.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>

#include "xsc.h"
#include "table.h"
#include "uring_ops.h"

/* Everything declared below lives in libxsc and is never exported (the
 * version script says so): declared hidden, the table and the helpers are
 * reached PC-relative instead of through the GOT. */
#pragma GCC visibility push(hidden)

#define XSC_EXPORT __attribute__((visibility("default")))

#define ld_acq(p) atomic_load_explicit((p), memory_order_acquire)
#define st_rel(p, v) atomic_store_explicit((p), (v), memory_order_release)
#define ld_rlx(p) atomic_load_explicit((p), memory_order_relaxed)

/* Entry status: acquire load / release store (the pairing is described at
 * the top of this file). */
static inline uint32_t st_get(const struct xsc_entry *e)
{
	return __atomic_load_n(&e->status, __ATOMIC_ACQUIRE);
}

static inline void st_set(struct xsc_entry *e, uint32_t v)
{
	__atomic_store_n(&e->status, v, __ATOMIC_RELEASE);
}

/* CLOCK_MONOTONIC in ns: every deadline and spin bound in xsc. */
static inline int64_t xsc__now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* ---- the syscall table ---------------------------------------------- */

struct xsc;
struct xsc_slot;

/* A done function (table.h) turns the CQE result(s) into the syscall's
 * result.  It may return XSC_RETRY_SYNC when the kernel's answer through
 * io_uring can differ from the synchronous call's and re-executing
 * synchronously is harmless (for example close() of an fd io_uring refuses
 * to close). */
#define XSC_RETRY_SYNC (-(1L << 40))
/* ... or XSC_RESUBMIT: the non-blocking attempt found nothing to do on a
 * blocking fd; submit the blocking form (slot.mode gets XSC_M_BLOCK). */
#define XSC_RESUBMIT (-(1L << 41))
/* ... or XSC_PENDING: the done function queued a new SQE for the entry
 * (the rest of a short write, uring_rw.c); it stays in flight. */
#define XSC_PENDING (-(1L << 42))

/* slot.mode */
#define XSC_M_NOWAIT 1	/* submitted in its non-blocking form by xsc */
#define XSC_M_BLOCK  2	/* resubmitted in its blocking form */
#define XSC_M_REST   4	/* the rest of a short transfer (slot.acc) */
#define XSC_M_AGAIN  8	/* the non-blocking form said -EAGAIN on a blocking
			   fd (not -EOPNOTSUPP): the blocking form waits for
			   room, then writes what fits */
#define XSC_M_KIND  16	/* a short read waits for its fd's type, asked
			   with an IORING_OP_STATX (slot.acc: the count) */

/* ---- per-entry private state (parallel to the pages) ------------------ */

struct xsc_slot {
	uint64_t tag;
	union {
		struct {
			uint8_t parts;	 /* CQEs still expected */
			uint8_t backend; /* executor that runs it */
			uint8_t noted;	 /* the owner has accounted its completion */
			uint8_t mode;	 /* XSC_M_*: how the translation submitted it */
		};
		uint32_t state;	/* the four at once, for post */
	};
	_Atomic int canceled;	/* xsc_cancel was called */
	_Atomic int cnext;	/* worker completion stack link */
	_Atomic int worker;	/* 1 + index of the syscall thread running
				   it, or 0 (worker.c: "Cancel") */
	int32_t res[2];		/* CQE results, part 0 and part 1 */
	void *uptr;		/* caller's buffer to fill on completion */
	long acc;		/* XSC_M_REST: bytes transferred so far */
} __attribute__((aligned(64)));

#define XSC_REST_IOV 12	/* a rest window fits beside its msghdr in aux */

/* Buffers only some translations need, kept apart from the hot slots so
 * the common path touches two cache lines per entry: the entry and its
 * slot. */
union xsc_aux {
	struct statx stx;
	struct {
		struct msghdr mh;
		struct iovec iov;
	} msg;
	struct {
		struct __kernel_timespec ts;
		struct pollfd pfd;
	} tm;
	/* the window of the caller's iovecs a rest SQE writes (uring_rw.c) */
	struct {
		struct msghdr mh;
		struct iovec v[XSC_REST_IOV];
	} rest;
};

/* ---- the handle --------------------------------------------------------- */

struct xsc_workers;

struct xsc {
	struct xsc_entry *ent;	/* the syscall pages */
	struct xsc_slot *slot;
	union xsc_aux *aux;
	unsigned n;		/* entries */
	struct xsc_config cfg;

	/* Whose handle it is: the address of a TLS mark of the thread that
	 * opened it and the process's fork generation then (handle.c
	 * xsc__foreign).  `shared`: the runtime's own handles, used from
	 * fibers that in transparent mode have TLS blocks of their own. */
	const void *owner;
	unsigned gen;
	/* the kernel thread that opened it: its ring's registered index is
	 * in that thread's table alone (uring.c ring_exit) */
	int owner_tid;
	/* process-wide credential changes the owner thread has taken
	 * (creds.c); its syscall threads catch up to it */
	_Atomic unsigned creds_gen;
	/* changes of the owner thread's own credentials, made raw by the
	 * program (creds.c xsc__creds_own_record): its syscall threads make
	 * them too, own_gen of them so far */
	struct xsc__own_creds *own;
	_Atomic unsigned own_gen;
	bool shared;

	/* owner-only bookkeeping */
	int *free_ids;		/* free entries: a stack of nfree ids */
	unsigned nfree;
	int *pend_ids;		/* posted, not yet flushed: a ring of n ids, */
	unsigned pend_head;	/* npending of them from pend_head; */
	unsigned pend_mask;	/* the ring holds pend_mask + 1 >= n */
	unsigned npending;
	/* entries the executors handed back to the dispatcher (struct
	 * xsc_verdict): a ring of nback of them from back_head, id << 2 |
	 * verdict, pend_mask + 1 long; an entry is in it at most once */
	uint32_t *back;
	unsigned back_head, nback;
	bool routes_stale;	/* the ring was lost since the routes were
				   made (xsc__reroute makes them again) */
	unsigned flush_at;	/* cfg.batch_threshold, or UINT_MAX for none */
	unsigned ndone;		/* DONE and not released */
	unsigned inflight_uring; /* entries with CQEs outstanding */
	unsigned inflight_waits; /* readiness waits (xsc__uring_wait_fd) */
	uint64_t waits_done;	/* readiness waits completed (xsc_runtime_stats) */
	unsigned inflight_worker;
	/* per number, the head of its entries: sysno, nargs and the route
	 * (probe.c), copied into an entry by one 32-bit store */
	struct xsc_head {
		uint16_t sysno;
		uint8_t nargs;
		uint8_t route;	/* enum xsc_backend */
	} head[XSC_NR_MAX];
	uint8_t quick[XSC_NR_MAX];	/* no done function, no done_cb: an
					   entry's one CQE is its result */
	const char *why[XSC_NR_MAX];
	/* the host profile's choices for calls that may run in the caller
	 * (hostprof.h; route_all copies them): a system call costs less
	 * than a posted call in the ring, and a look at a path plus the
	 * call less than a posted call in io_uring's workers */
	const struct xsc_hostprof *hp;
	bool here_ring, here_look;

	/* io_uring */
	bool have_ring;		/* the ring can be used (routes, submit) */
	bool ring_open;		/* the ring is mapped (teardown); stays set
				   when io_uring_enter fails for good
				   (uring.c xsc__uring_lost) */
	bool sqpoll;		/* the ring is an SQPOLL ring */
	unsigned long barrier_flush; /* 1 + st.flushes at the last SQPOLL
				   barrier (uring.c xsc__sqpoll_barrier) */
	unsigned lost_mc_left;	/* multi-call SQEs the kernel never took when
				   the ring was lost (uring.c) */
	bool defer_tw;		/* DEFER_TASKRUN: completions post when we enter */
	bool futex_armed;	/* a FUTEX_WAIT on cseq is queued */
	bool reaping;		/* inside a reaper: no blocking call may be
				   issued (docs/design.md; checked in
				   run_inline under assert) */
	uint32_t armed_val;	/* ... for this value of cseq */

	/* The wake word: bumped by syscall threads on every completion and by
	 * xsc__kick(); the owner sleeps on it (futex, or IORING_OP_FUTEX_WAIT
	 * inside the ring) after announcing itself in owner_waiting. */
	_Atomic uint32_t cseq;
	_Atomic int owner_waiting;
	unsigned sq_ready;	/* SQEs prepared, not yet submitted */
	unsigned sq_head;	/* the kernel's SQ head when last read */
	struct io_uring ring;
	uint64_t ring_dev, ring_ino;	/* the ring file's identity (teardown) */
	bool ring_registered;		/* the ring fd is registered (enter by index) */
	struct io_uring_probe *probe;
	struct xsc_probe pr;
	char reason[256], sq_reason[256];

	struct xsc_workers *wk;	/* NULL until the first worker entry */
	struct xsc_fdwait *fdw;	/* readiness waits without a ring (fdwait.c) */
	void *mc;		/* multi-call state (multicall.c), or NULL */
	struct xsc_stats st;
};

/* ---- what an executor says of an entry -------------------------------
 *
 * The executors never re-route an entry themselves: one they cannot or
 * must not finish goes back to the dispatcher (handle.c), which alone
 * chooses another executor.  An entry given to the ring at flush comes
 * back as a return value (the translation's prep); one the ring gives up
 * later (a reaped CQE, a ring lost with SQEs in it) is handed back with
 * xsc__hand_back, in order, and the dispatcher re-routes it in
 * xsc__reroute as soon as the executor call that handed it back returns
 * to it.  Until then it stays BUSY, off every executor's books. */
enum xsc_verdict {
	XSC_V_DONE,		/* the executor has it: queued, in flight, or
				   its result recorded */
	XSC_V_DECLINED,		/* its translation cannot express these
				   arguments exactly; nothing was queued: the
				   row's fallback runs it */
	XSC_V_RETRY_SYNC,	/* io_uring's answer can differ from the
				   call's, and running it again is harmless:
				   the row's fallback runs it (never blocking
				   in the reaper) */
	XSC_V_RING_LOST,	/* the ring was lost before the kernel took its
				   SQE: nothing ran; the row's fallback runs it */
};

static inline void xsc__hand_back(struct xsc *x, int id, enum xsc_verdict v)
{
	x->back[(x->back_head + x->nback++) & x->pend_mask] = (uint32_t)id << 2 | v;
}

/* The dispatcher re-routes what was handed back (and, after a ring was
 * lost, routes every number again).  Called by the dispatcher after each
 * executor call that may hand entries back, and by multi-calls, which
 * drive the ring themselves (multicall_uring.c). */
void xsc__reroute_slow(struct xsc *x);
static inline void xsc__reroute(struct xsc *x)
{
	if (__builtin_expect(x->nback != 0 || x->routes_stale, 0))
		xsc__reroute_slow(x);
}

/* ---- dispatcher helpers used by the executors ------------------------- */

static inline struct xsc_slot *slot_of(struct xsc *x, int id) { return &x->slot[id]; }
static inline union xsc_aux *aux_of(struct xsc *x, int id) { return &x->aux[id]; }

/* True when the calling thread may not use x: not the thread that
 * opened it, or a forked child of it.  A few loads, no system call. */
extern __thread char xsc__owner_mark;
extern _Atomic unsigned xsc__fork_gen;
static inline bool xsc__foreign(const struct xsc *x)
{
	return __builtin_expect(!x->shared && (x->owner != &xsc__owner_mark ||
		x->gen != atomic_load_explicit(&xsc__fork_gen, memory_order_relaxed)), 0);
}

/* The part of it post needs, one compare on the fast path: a forked
 * child posts into its own copy of the pages, which harms nobody, and its
 * flush or wait says -EBADFD before anything runs. */
static inline bool xsc__foreign_thread(const struct xsc *x)
{
	return __builtin_expect(x->owner != &xsc__owner_mark, 0) && !x->shared;
}

/* Process-wide credential changes (creds.c): the generation made so far,
 * the one a parked thread has taken (UINT_MAX: none parked). */
extern _Atomic unsigned xsc__creds_gen;
extern _Atomic unsigned xsc__creds_parked;
/* set*id calls glibc makes on every thread (setuid(3) and its kin) */
bool xsc__creds_process_wide(long nr);
/* Records a change the caller has made on itself; returns its generation. */
unsigned xsc__creds_record(long nr, const long *a);
/* Makes the changes from *have on on the calling thread (aborts if one
 * fails: a thread never goes on with the old credentials). */
void xsc__creds_apply(unsigned *have);
/* A change the owner of x made to its own credentials only (a raw set*id,
 * setgroups or capset: one kernel thread, natively): x's syscall threads
 * make it too, before their next entry.  Returns 0, or -ENOMEM with
 * nothing recorded. */
int xsc__creds_own_record(struct xsc *x, long nr, const long *a);
/* Makes x's own changes from *have on on the calling syscall thread. */
void xsc__creds_own_apply(struct xsc *x, unsigned *have);
void xsc__creds_own_free(struct xsc *x);
/* A parked thread that has taken the changes up to `have`: takes every
 * change as it is recorded; never returns. */
void xsc__creds_park(unsigned have) __attribute__((noreturn));

/* The runtime's own handles skip the ownership check (see struct xsc). */
void xsc__handle_shared(struct xsc *x);
/* In a forked child, that copy of a runtime's handle: its memory freed,
 * the child's fds of it closed, nothing the parent uses touched. */
void xsc__handle_forget(struct xsc *x);

/* Marks entry id DONE with result ret (owner thread). */
void xsc__complete(struct xsc *x, int id, long ret);
/* Bookkeeping for an entry an executor marked DONE (owner thread). */
void xsc__note_done(struct xsc *x, int id);
/* The done_cb part of it: the callback, then the entry is free. */
void xsc__note_done_cb(struct xsc *x, int id);

/* Free entries are a stack of ids and posted ones a ring of ids, both
 * small hot arrays: the post of the next call never waits on a load from
 * a cold entry (a list threaded through the slots did, every call). */
static inline void xsc__free_entry(struct xsc *x, int id)
{
	st_set(&x->ent[id], XSC_FREE);
	x->free_ids[x->nfree++] = id;
}

/* SIGPIPE that the kernel sent to a thread other than the caller's
 * (complete.c): true if entry id's result owes it to the caller. */
bool xsc__sigpipe_lost(const struct xsc *x, int id, long ret);
/* ... and whether call nr, failing with EPIPE, sends it natively. */
bool xsc__sigpipe_kind(long nr, const int64_t a[6], bool *sends);
/* The owner of a library handle raises it on itself. */
void xsc__note_epipe(struct xsc *x, int id);

/* Inline forms for the reapers' hot loops. */
static inline void xsc__note_done_inl(struct xsc *x, int id)
{
	struct xsc_slot *s = &x->slot[id];

	s->noted = 1;
	x->st.completed++;
	x->st.by_backend[s->backend]++;
	if (__builtin_expect(x->ent[id].ret == -EPIPE, 0))
		xsc__note_epipe(x, id);
	if (__builtin_expect(x->cfg.done_cb != NULL, 0))
		xsc__note_done_cb(x, id);
	else
		x->ndone++;
}

static inline void xsc__complete_inl(struct xsc *x, int id, long ret)
{
	x->ent[id].ret = ret;
	st_set(&x->ent[id], XSC_DONE);
	xsc__note_done_inl(x, id);
}
/* The route of syscall nr when io_uring declines or lacks it. */
int xsc__fallback_route(struct xsc *x, long nr);
/* A call routed to io_uring runs in the caller instead: AUTO, no seccomp
 * filter (a row's .cheap_if may look at its arguments with a system call
 * of its own), and the row's .cheap_if says so for these arguments on
 * this host (x->here_*: the host profile). */
static inline bool xsc__cheap_here(const struct xsc *x, const struct xsc_sysdef *d,
				   const int64_t a[6])
{
	return __builtin_expect(d->cheap_if != NULL, 0) &&
	       x->cfg.backend == XSC_BACKEND_AUTO && !x->pr.seccomp && d->cheap_if(x, a);
}
/* Runs syscall nr in the calling thread: the one place every inline path
 * (handle, syscall threads, fibers) goes through, so a refused row
 * (.refuse: vfork, clone, ...) is -EINVAL everywhere and never runs. */
long xsc__call_here(long nr, const int64_t a[6]);
/* Executes entry id synchronously in the calling thread. */
long xsc__exec_sync(const struct xsc_entry *e);
/* A call of the library's own on the owner's handle, posted and waited
 * for like xsc_call (also on a handle with a done_cb, which never sees
 * it).  Its result, or -errno. */
#define XSC_TAG_OWN (~0ULL)
long xsc__call_own(struct xsc *x, long nr, long a0, long a1, long a2);
/* Multi-calls (multicall.c) own every SQE whose user_data has bit 63
 * set; the reaper hands their CQEs to this hook. */
#define XSC_UD_MC (1ULL << 63)
#define XSC_UD_WAIT (1ULL << 62)	/* a readiness wait: the rest is its tag */
void xsc__mc_cqe(struct xsc *x, uint64_t ud, int32_t res, uint32_t flags);
/* A whole chain handed to a syscall thread is an entry of this pseudo
 * number; xsc__exec_sync runs it through xsc__mc_run (weak default:
 * -ENOSYS).  xsc_close calls xsc__mc_close to free x->mc. */
#define XSC_NR_MC 1022
long xsc__mc_run(const struct xsc_entry *e);
void xsc__mc_close(struct xsc *x);

/* io_uring executor (uring.c) */
int xsc__uring_setup(struct xsc *x);
/* io_uring_register(2) on the handle's ring, by fd or (once the fd is
 * closed) by its registered index.  Returns the result or -errno. */
long xsc__uring_register(struct xsc *x, unsigned op, void *arg, unsigned nr);
#define XSC_FEAT_REG_REG_RING (1U << 13)		/* 6.3 */
#define XSC_REGISTER_USE_REGISTERED_RING (1U << 31)	/* 6.3 */
void xsc__uring_teardown(struct xsc *x);
/* 1 when the thread that opened x still exists */
bool xsc__owner_alive(const struct xsc *x);
bool xsc__uring_has(struct xsc *x, unsigned op);
struct io_uring_sqe *xsc__sqe_slow(struct xsc *x, int id, int part);
#define XSC_MAX_PARTS 2	/* SQEs of one entry (a poll and its timeout) */
bool xsc__sq_room_slow(struct xsc *x, unsigned k);
/* Makes room for k more SQEs before they are queued: the SQ holds a
 * batch, not every entry (uring.c, "Sizing").  Whoever queues an entry's
 * parts asks for all of them first, so a linked pair is never split
 * between two submissions.  false: no room (the ring was lost, or the
 * kernel keeps refusing the submission). */
static inline bool xsc__sq_has_room(const struct xsc *x, unsigned k)
{
	const struct io_uring_sq *sq = &x->ring.sq;

	return sq->sqe_tail + k - x->sq_head <= sq->ring_entries;
}
static inline bool xsc__sq_room(struct xsc *x, unsigned k)
{
	return xsc__sq_has_room(x, k) || xsc__sq_room_slow(x, k);
}
/* The next SQE, user_data (id << 2 | part).  Inline: every translation
 * takes one per part, and a call per SQE was a fifth of a NOP's flush. */
static inline struct io_uring_sqe *xsc__sqe(struct xsc *x, int id, int part)
{
	struct io_uring_sq *sq = &x->ring.sq;
	unsigned next = sq->sqe_tail + 1;
	struct io_uring_sqe *sqe;

	/* the caller made room (xsc__sq_room); khead is read only when
	 * the cached room says the SQ might be full */
	if (__builtin_expect(next - x->sq_head > sq->ring_entries, 0))
		return xsc__sqe_slow(x, id, part);
	sqe = &sq->sqes[sq->sqe_tail & sq->ring_mask];
	sq->sqe_tail = next;
	sqe->user_data = ((uint64_t)id << 2) | (unsigned)part;
	x->sq_ready++;
	return sqe;
}
int xsc__uring_submit(struct xsc *x);
/* SQPOLL: waits until the poller has let go of the files of every
 * request whose CQE was posted so far (before a close). */
void xsc__sqpoll_barrier(struct xsc *x);
/* io_uring_enter failed for good with err: entries still in the SQ go to
 * the fallback, later calls are routed around the ring (uring.c). */
void xsc__uring_lost(struct xsc *x, int err);
/* Stops using the ring for good (after x->cfg.backend and x->reason are
 * set): marks the routes stale and hands back every entry whose SQE the
 * kernel did not take (XSC_V_RING_LOST); those it took complete as
 * before.  The caller's dispatcher then calls xsc__reroute. */
void xsc__uring_retire(struct xsc *x);
/* The caller's sandbox or credentials changed (handle.c): from now on
 * everything runs on `backend` (INLINE: in the caller; WORKER: on syscall
 * threads, when they carry the change too), with a one-line reason. */
void xsc__sandboxed(struct xsc *x, const char *why, int backend);
/* What a call changes of the caller's sandbox or credentials, once it
 * succeeds ("seccomp filter", "Landlock", "credentials changed"), or NULL. */
const char *xsc__sandboxing(long nr, const int64_t a[6]);
int xsc__uring_reap(struct xsc *x);
int xsc__uring_wait(struct xsc *x, bool also_kick, uint32_t seen,
		    int64_t timeout_ns);
int xsc__uring_cancel(struct xsc *x, int id);
void xsc__uring_cancel_all(struct xsc *x);

/* worker executor (worker.c) */
/* In a forked child: frees the pool without joining threads that are
 * not there (their stacks are the parent's copies). */
void xsc__workers_forget(struct xsc *x);
/* Syscall threads are raw clones, not pthreads (transparent mode: worker.c) */
extern bool xsc__raw_workers;
int xsc__workers_start(struct xsc *x);
void xsc__workers_stop(struct xsc *x);
int xsc__worker_queue(struct xsc *x, int id);
void xsc__worker_kick(struct xsc *x);
int xsc__worker_reap(struct xsc *x);
int xsc__worker_wait(struct xsc *x, uint32_t seen, int64_t timeout_ns);
int xsc__worker_cancel(struct xsc *x, int id);
/* One line on stderr with write(2), never stdio (handle.c). */
void xsc__say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A new pthread attr whose thread starts with every signal blocked (glibc
 * keeps its own two open): a runtime thread takes none of the program's
 * signals, not even before it sets its own mask (complete.c). */
void xsc__attr_blocked(pthread_attr_t *attr);
/* The runtime's threads made with pthread_create are not the program's:
 * xsc__own_thread_start() after each is created, xsc__own_thread_end()
 * right before its start routine returns (ownthreads.c).  False when
 * glibc's thread count is not found: they then keep the process alive. */
bool xsc__own_threads_uncounted(void);
void xsc__own_thread_start(void);
void xsc__own_thread_end(void);

/* Wake word (handle.c): any thread may kick the owner out of a wait. */
void xsc__kick(struct xsc *x);
uint32_t xsc__kick_seen(struct xsc *x);
/* Owner: sleeps until cseq moves from `seen` or timeout_ns passes (< 0:
 * forever).  0 or -EINTR / -ETIMEDOUT. */
long xsc__futex_wait_kick(struct xsc *x, uint32_t seen, int64_t timeout_ns);
/* Owner: flushes, then sleeps until a completion, a kick after `seen`, or
 * timeout_ns (< 0: none).  For schedulers built on a handle. */
int xsc__idle_wait(struct xsc *x, uint32_t seen, int64_t timeout_ns);

/* Non-blocking-first protocol (uring.c).  io_uring waits for readiness
 * even on O_NONBLOCK pipes and sockets, so transfers are submitted with
 * RWF_NOWAIT / MSG_DONTWAIT / ACCEPT_DONTWAIT first; xsc__nowait_done()
 * then decides what the synchronous call would have returned. */
bool xsc__want_nowait(struct xsc *x, int id);
long xsc__nowait_done(struct xsc *x, int id, long res, long want, bool write,
		      bool *rest);
/* A short non-blocking write on a blocking fd, or a short non-blocking
 * read of a regular file or block device: the blocking call would have
 * kept going.  Queues an SQE for the rest (blocking form) and
 * returns XSC_PENDING, or the final result when nothing is left to do.
 * xsc__rest_done() takes each rest SQE's CQE (uring_rw.c). */
long xsc__rest_start(struct xsc *x, int id, long written);
long xsc__rest_done(struct xsc *x, int id);
/* A short read's fd type asked in the ring (uring.c xsc__nowait_done):
 * XSC_PENDING, or -1 where it cannot be; its CQE goes to
 * xsc__kind_done, which finishes the read. */
long xsc__kind_ask(struct xsc *x, int id, long res);
long xsc__kind_done(struct xsc *x, int id);
/* 1 if fd is O_NONBLOCK and not a regular file or block device, 0 if
 * blocking, -errno if the fd is gone. */
int xsc__fd_nonblocking(struct xsc *x, int fd);
/* 1 if fd is a regular file or a block device, 0 if not, -errno (uring.c) */
int xsc__fd_on_disk(struct xsc *x, int fd);
/* Transparent mode: descriptor kinds learned from stat calls, kept until
 * a close (fdkind.c); -1 from get: not known. */
extern _Atomic bool xsc__fdkind_on;
int xsc__fdkind_get(int fd);
uint32_t xsc__fdkind_seen(int fd);
void xsc__fdkind_learn(int fd, uint32_t seen, bool disk);
uint64_t xsc__fdkind_closing(int first, int last, bool begin, uint64_t marked);

/* Waits for poll events on fd without holding an entry: a POLL_ADD whose
 * CQE goes to done_cb as id -1 with `tag` (bits 62-63 clear) and the
 * revents or -errno.  Goes out with the next flush.  -ENOTSUP without a
 * ring. */
int xsc__uring_wait_fd(struct xsc *x, int fd, unsigned events, uint64_t tag);
/* The same without a ring: the handle's epoll thread (fdwait.c), started
 * by xsc_open for a handle with a done_cb and no ring. */
int xsc__fdwait_start(struct xsc *x);
int xsc__fdwait_add(struct xsc *x, int fd, unsigned events, uint64_t tag);
int xsc__fdwait_reap(struct xsc *x);
void xsc__fdwait_stop(struct xsc *x);
void xsc__fdwait_forget(struct xsc *x);	/* a forked child's copy */
/* Whether tid is x's readiness thread; its thread pointer into *tcb. */
bool xsc__fdwait_thread(const struct xsc *x, int tid, uint64_t *tcb);
/* A readiness wait ended (or was given up: revents say ready, and the
 * call goes out): hands it to done_cb as id -1. */
static inline void xsc__wait_done(struct xsc *x, uint64_t tag, long revents)
{
	x->inflight_waits--;
	x->waits_done++;
	x->cfg.done_cb(x->cfg.done_arg, -1, revents, tag);
}
/* A readiness wait on whichever of the two the handle has; -ENOTSUP if
 * neither. */
static inline int xsc__wait_fd(struct xsc *x, int fd, unsigned events, uint64_t tag)
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
/* For a socket call that failed with -EFAULT: the error the synchronous
 * call gives first (-EBADF, -ENOTSOCK), else -EFAULT. */
long xsc__sock_efault(struct xsc *x, int fd);

/* fault-safe access to caller memory (ucopy.c): 0 or -EFAULT */
int xsc__ucopy_in(void *dst, const void *usrc, size_t len);
int xsc__ucopy_out(void *udst, const void *src, size_t len);
/* The caller of an entry on one of the runtime's own handles (its tag:
 * a parked fiber) has [p, p + len) mapped and writable for sure: the live
 * part of its own stack (sched/runtime.c), where a stat buffer mostly is.
 * NULL, or false: the checked copy. */
extern bool (*xsc__umem_ours)(uint64_t tag, uintptr_t p, size_t len);
int xsc__ucopy_out_for(const struct xsc *x, uint64_t tag, void *udst,
		       const void *src, size_t len);
/* whether the kernel could read (write) [a, a + len): 0 or -EFAULT */
int xsc__uprobe(uintptr_t a, size_t len, bool write);

/* probing and routing (probe.c) */
void xsc__probe(struct xsc *x);
void xsc__route_all(struct xsc *x);
/* Reads a small file (/proc, /sys) into buf, NUL-terminated, with raw
 * system calls: no stdio, whose locks and FILE allocation the runtime
 * must not take (transparent mode).  Returns the length or -errno. */
long xsc__read_small(const char *path, char *buf, size_t len);
/* The value of field `name` ("Threads", "Seccomp") of /proc/self/status,
 * read whole line by line; -ENOENT when absent, -errno (probe.c). */
long xsc__status_field(const char *name);
/* Moves a descriptor of xsc's own to the lowest free number at or above
 * the soft RLIMIT_NOFILE (probe.c), out of the range the program
 * allocates from.  Returns the new fd (the old one closed), or fd itself
 * when there is no room (soft limit = hard limit) or a call fails. */
int xsc__fd_aside(int fd);

#pragma GCC visibility pop
#endif
