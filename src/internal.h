/*
 * internal.h - the core every part of libxsc shares: the handle (struct
 * xsc), the per-entry slots beside the syscall pages, the status word
 * entries are handed over with, and what an executor says of an entry.
 * Each module's own functions are declared in its header (handle.h,
 * dispatch.h, done.h, uring.h, worker.h, ...): a file includes the
 * ones it calls.
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
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>

#include "xsc.h"
#include "table.h"

/* Everything declared in libxsc's headers lives in libxsc and is never
 * exported (the version script says so): declared hidden, the table and
 * the helpers are reached PC-relative instead of through the GOT.  Each
 * header wraps its declarations in this pragma. */
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

/* A whole multi-call chain handed to a syscall thread is one entry of
 * this pseudo number (multicall.c); the inline execution runs it
 * (exec.c xsc__exec_sync). */
#define XSC_NR_MC 1022
/* The tag of a call of the library's own on the owner's handle
 * (dispatch.h xsc__call_own): counted as done, never given to done_cb. */
#define XSC_TAG_OWN (~0ULL)

/* ---- per-entry private state (parallel to the pages) ------------------ */

struct xsc_slot {
	uint64_t tag;
	union {
		struct {
			uint8_t parts;	 /* CQEs still expected */
			uint8_t backend; /* executor that runs it */
			uint8_t noted;	 /* the owner has accounted its completion */
			uint8_t mode;	 /* XSC_M_* (uring.h): how the translation
					    submitted it */
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

#define XSC_NTIMER 8	/* sleeps in flight with a known end (struct xsc) */
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
struct xsc_fdwait;
struct xsc_hostprof;
struct xsc__own_creds;

struct xsc {
	struct xsc_entry *ent;	/* the syscall pages */
	struct xsc_slot *slot;
	union xsc_aux *aux;
	unsigned n;		/* entries */
	struct xsc_config cfg;

	/* Whose handle it is: the address of a TLS mark of the thread that
	 * opened it and the process's fork generation then (handle.h
	 * xsc__foreign).  `shared`: the runtime's own handles, used from
	 * fibers that in transparent mode have TLS blocks of their own. */
	const void *owner;
	unsigned gen;
	/* the kernel thread that opened it: its ring's registered index is
	 * in that thread's table alone (uring_setup.c ring_exit) */
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
	/* from npending to nback, one cache line: what a fiber's call
	 * made directly reads to know it is alone (sched/syscalls.c alone,
	 * xsc__reap_idle) */
	unsigned npending;
	bool here_alone;	/* hp->here_alone, copied here */
	bool routes_stale;	/* the ring was lost since the routes were
				   made (xsc__reroute makes them again) */
	unsigned inflight_uring; /* entries with CQEs outstanding */
	unsigned inflight_waits; /* readiness waits (xsc__uring_wait_fd) */
	unsigned inflight_worker;
	/* entries the executors handed back to the dispatcher (struct
	 * xsc_verdict): a ring of nback of them from back_head, id << 2 |
	 * verdict, pend_mask + 1 long; an entry is in it at most once */
	unsigned nback, back_head;
	uint32_t *back;
	unsigned flush_at;	/* cfg.batch_threshold, or UINT_MAX for none */
	unsigned ndone;		/* DONE and not released */
	uint64_t waits_done;	/* readiness waits completed (xsc_runtime_stats) */
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
	/* the opening thread's timer slack (PR_GET_TIMERSLACK), added to
	 * posted sleeps as the kernel lets its own end that late */
	uint64_t slack_ns;

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
	bool drain;		/* retired, DEFER_TASKRUN: entered still for
				   the completions of what it took
				   (uring.c xsc__uring_retire) */
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
	bool refused;	/* the backend asked for was refused: AUTO's routes,
			   but posted as the asked one would (probe.c) */

	struct xsc_workers *wk;	/* NULL until the first worker entry */
	struct xsc_fdwait *fdw;	/* readiness waits without a ring (fdwait.c) */
	void *mc;		/* multi-call state (multicall.c), or NULL */
	struct xsc_stats st;
	/* posted sleeps on the ring whose end is known (uring_misc.c,
	 * "Timers"): a wait the runtime makes in the caller ends before
	 * the earliest (sched/syscalls.c sole).  Last: the hot fields
	 * above keep their places in their cache lines */
	struct xsc_timer {
		int id;
		int64_t end;	/* CLOCK_MONOTONIC ns, the slack included */
	} timer[XSC_NTIMER];
	unsigned ntimer;
};

/* The earliest end of x's calls in flight on the ring when every one of
 * them is a sleep whose end is known (uring_misc.c, "Timers"); else -1. */
int64_t xsc__timers_end(struct xsc *x);
static inline struct xsc_slot *slot_of(struct xsc *x, int id) { return &x->slot[id]; }
static inline union xsc_aux *aux_of(struct xsc *x, int id) { return &x->aux[id]; }

/* ---- what an executor says of an entry -------------------------------
 *
 * The executors never re-route an entry themselves: one they cannot or
 * must not finish goes back to the dispatcher (dispatch.h), which alone
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

/* ---- where multi-calls plug in ------------------------------------------
 *
 * The multi-call module (multicall*.c) sits above the dispatcher: it
 * posts through it and drives the ring itself.  The three places under
 * it that meet its work reach it through these, which it registers
 * before it runs its first chain (xsc_multicall_ex).  NULL until then,
 * when no chain of its, SQE or state can exist; an XSC_NR_MC entry
 * posted by hand then gets -ENOSYS, as one with a wrong cookie does. */
struct xsc_mc_ops {
	/* a chain entry (XSC_NR_MC) run in the calling thread (exec.c) */
	long (*run)(const struct xsc_entry *e);
	/* the CQE of one of its SQEs (user_data XSC_UD_MC: uring_reap.c) */
	void (*cqe)(struct xsc *x, uint64_t ud, int32_t res, uint32_t flags);
	/* xsc_close: frees x->mc */
	void (*close)(struct xsc *x);
};
/* exec.c; release store by the module, acquire loads (a syscall thread
 * reads it for an entry the owner queued after registering) */
extern const struct xsc_mc_ops *_Atomic xsc__mc_ops;
static inline const struct xsc_mc_ops *xsc__mc(void)
{
	return atomic_load_explicit(&xsc__mc_ops, memory_order_acquire);
}

/* A seccomp filter installed through xsc refuses io_uring_enter (sched/
 * sandbox.c): no thread of xsc's enters a ring again (a filter that
 * kills would kill the process).  Set before the filter goes in. */
extern _Atomic bool xsc__uring_enter_denied;

#pragma GCC visibility pop
#endif
