/*
 * xsc.h - exception-less system calls for stock Linux.
 *
 * A program writes system call requests into "syscall pages" (arrays of
 * 64-byte entries, FlexSC OSDI'10 section 3.1) with plain stores, hands the
 * whole batch to an executor with one flush, and later collects the results.
 * Executors:
 *
 *   XSC_BACKEND_URING   entries become io_uring SQEs, one io_uring_enter
 *                       per flush; the call runs inside the kernel.
 *   XSC_BACKEND_SQPOLL  the same, on a ring polled by a kernel thread pinned
 *                       to a syscall core: no crossing on the caller's core
 *                       while the poller is awake.
 *   XSC_BACKEND_WORKER  syscall threads of this process, pinned to syscall
 *                       cores, that execute ANY syscall number.
 *   XSC_BACKEND_INLINE  the plain synchronous call in the caller's thread.
 *
 * One table routes each syscall number to the best executor this kernel
 * supports (xsc_route()); calls io_uring cannot express, or whose
 * arguments it cannot express exactly, fall back to the worker or inline
 * executor, with a reason string.  Results are always exactly what the
 * synchronous raw system call returns: a 64-bit value or -errno.
 *
 * Threading: a handle has ONE owner thread (single producer).  Every
 * function taking a struct xsc * must be called from that thread.  Several
 * handles per process (one per thread) are fine.
 *
 * Errors: every function returns a value >= 0 or a negative errno; errno is
 * never touched.
 */
#ifndef XSC_H
#define XSC_H

#include <stdint.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define XSC_VERSION_MAJOR 0
#define XSC_VERSION_MINOR 1

/* ------------------------------------------------------------------ */
/* Syscall pages                                                      */
/* ------------------------------------------------------------------ */

#define XSC_ENTRIES_PER_PAGE 64
#define XSC_DEFAULT_PAGES    8

/* Entry life cycle (FlexSC Figure 6).  `status` is written last by the
 * side that moves it forward, with release ordering, and read with acquire
 * ordering by the other side. */
enum xsc_status {
	XSC_FREE = 0,		/* unused; owner may claim it */
	XSC_SUBMITTED = 1,	/* filled by xsc_post, not yet flushed */
	XSC_BUSY = 2,		/* handed to an executor */
	XSC_DONE = 3,		/* `ret` holds the result */
};

/* A pseudo system call for measurements: IORING_OP_NOP on the io_uring
 * executors, nothing at all (result 0) on the others. */
#define XSC_NR_NOP 1023

/* One 64-byte, cache-line aligned syscall entry. */
struct xsc_entry {
	uint16_t sysno;		/* syscall number (x86-64 numbering) */
	uint8_t nargs;		/* arguments the call takes */
	uint8_t route;		/* enum xsc_backend that runs it */
	uint32_t status;	/* enum xsc_status, accessed atomically */
	int64_t args[6];
	int64_t ret;		/* value or -errno, valid once DONE */
} __attribute__((aligned(64)));

/* ------------------------------------------------------------------ */
/* Handles                                                            */
/* ------------------------------------------------------------------ */

enum xsc_backend {
	XSC_BACKEND_AUTO = 0,	/* best available per syscall */
	XSC_BACKEND_URING = 1,
	XSC_BACKEND_SQPOLL = 2,
	XSC_BACKEND_WORKER = 3,
	XSC_BACKEND_INLINE = 4,
};

/* xsc_config.flags */
#define XSC_NONBLOCK   (1u << 0) /* full pages: -EAGAIN instead of waiting */
#define XSC_NO_ENV     (1u << 1) /* ignore XSC_BACKEND and other variables */
#define XSC_QUIET      (1u << 2) /* do not print fallback reasons to stderr */

struct xsc_config {
	unsigned npages;	 /* syscall pages of 64 entries; 0 = 8 */
	unsigned batch_threshold;/* auto-flush when this many are pending
				    (the CEFOS threshold M); 0 = never */
	int backend;		 /* enum xsc_backend; 0 = AUTO */
	int syscall_cpu;	 /* core of the SQPOLL poller and workers;
				    -1 = no pinning; 0 is a valid core, so
				    use xsc_config_init() for defaults */
	unsigned max_workers;	 /* bound of the worker pool; 0 = 16 */
	unsigned spin_ns;	 /* busy-wait before sleeping; 0 = default */
	unsigned sq_idle_ms;	 /* SQPOLL poller idle time; 0 = 1000 */
	unsigned flags;		 /* XSC_NONBLOCK, XSC_NO_ENV, XSC_QUIET */
	/* Optional completion callback, run in the owner thread (from
	 * xsc_poll, xsc_wait, xsc_post, xsc_flush) once per completed entry;
	 * the entry is released right after it returns.  With a callback,
	 * full pages make xsc_post wait for completions (back-pressure). */
	void (*done_cb)(void *arg, int id, long ret, uint64_t tag);
	void *done_arg;
};

/* Fills cfg with the defaults (what a NULL cfg means). */
void xsc_config_init(struct xsc_config *cfg);

struct xsc;

/* Opens a handle: maps the syscall pages, probes io_uring, builds the
 * route table, starts nothing that is not needed.  The flexsc_register
 * analogue.  Environment (unless XSC_NO_ENV): XSC_BACKEND=
 * auto|uring|sqpoll|worker|inline forces a backend.  Returns 0 and
 * stores the handle in *xp, or -errno. */
int xsc_open(struct xsc **xp, const struct xsc_config *cfg);

/* Closes a handle.  Entries still posted are canceled; entries in flight
 * are canceled where the executor can (io_uring cancel, a signal to the
 * syscall thread) and waited for otherwise.  Frees everything. */
int xsc_close(struct xsc *x);

/* ------------------------------------------------------------------ */
/* Posting, flushing, waiting                                         */
/* ------------------------------------------------------------------ */

/* Claims a free entry and fills it with the call nr(a0..a5): plain stores,
 * no kernel crossing.  Reads six long arguments like syscall(2); pass
 * only the ones the call takes.  Returns the entry id (>= 0), or
 * -ENOSYS for a number outside 0..1023, or when the pages are full:
 * with XSC_NONBLOCK -EAGAIN; with a done_cb it flushes and waits for
 * completions, which free entries (back-pressure); without one the entries
 * hold results the caller has not taken, nothing can free them, and it
 * returns -ENOBUFS.  Entries of one batch run in no particular order. */
int xsc_post(struct xsc *x, long nr, ...);

/* The same with an argument array and a caller tag (xsc_tag()). */
int xsc_post_args(struct xsc *x, long nr, const long args[6], uint64_t tag);

/* Hands every SUBMITTED entry to its executor: one io_uring_enter for the
 * whole batch on the uring path (none on SQPOLL while the poller is
 * awake).  Inline entries execute here.  Returns the number flushed. */
int xsc_flush(struct xsc *x);

/* Blocks until at least min_done entries are DONE (flushing first if
 * anything is pending) or until nothing more can complete.  Returns the
 * number of DONE, unreleased entries.  A signal handled during the wait
 * returns -EINTR; nothing is lost, entries stay in flight, call again. */
int xsc_wait(struct xsc *x, unsigned min_done);

/* Reaps completions without blocking.  Returns the number DONE. */
int xsc_poll(struct xsc *x);

/* If entry e is DONE stores its result in *ret and returns 0; returns
 * -EINPROGRESS if it is not done yet, -EINVAL for a bad id. */
int xsc_result(struct xsc *x, int e, long *ret);

/* Frees a DONE entry (or cancels a SUBMITTED one).  -EBUSY while the
 * entry is in flight. */
int xsc_release(struct xsc *x, int e);

/* Waits for entry e, stores its result and releases it. */
int xsc_take(struct xsc *x, int e, long *ret);

/* Tries to stop entry e: a SUBMITTED entry completes with -ECANCELED at
 * once; an in-flight one is canceled by its executor (io_uring async
 * cancel, or a signal that interrupts the syscall thread, which then
 * returns the call's own -EINTR).  Returns 0 if a cancel was issued,
 * -EALREADY if it is done, -EINVAL for a bad id.  The entry still has to
 * be waited for: its result says whether the call ran. */
int xsc_cancel(struct xsc *x, int e);

/* post + flush + wait + release for one call: returns exactly what the
 * synchronous system call returns (value or -errno).  If a signal
 * interrupts the wait and the call can be canceled before it ran, it
 * returns -EINTR, like a synchronous call interrupted before doing
 * anything. */
long xsc_call(struct xsc *x, long nr, ...);

/* The caller tag of entry e (given to xsc_post_args). */
uint64_t xsc_tag(struct xsc *x, int e);

/* Direct access to entry e (read-only for the caller). */
const struct xsc_entry *xsc_entry(struct xsc *x, int e);

/* ------------------------------------------------------------------ */
/* Routes, probing, statistics                                        */
/* ------------------------------------------------------------------ */

/* Which backend runs syscall nr on this handle and why (a one-line
 * reason, never NULL).  Returns enum xsc_backend or -ENOSYS. */
int xsc_route(struct xsc *x, long nr, const char **reason);

/* Name of syscall nr from the table ("?" when unknown) and of a backend. */
const char *xsc_syscall_name(long nr);
const char *xsc_backend_name(int backend);

/* io_uring state found by probing at xsc_open. */
struct xsc_probe {
	int uring;		/* 1 if io_uring rings can be created */
	int sqpoll;		/* 1 if SQPOLL rings can be created */
	int seccomp;		/* 1 if a seccomp filter is active */
	int nops;		/* opcodes the kernel reports */
	const char *reason;	/* why uring is off, or "" */
	const char *sqpoll_reason;
};
int xsc_probe_get(struct xsc *x, struct xsc_probe *p);

struct xsc_stats {
	uint64_t posted;	/* entries posted */
	uint64_t completed;	/* entries completed */
	uint64_t flushes;	/* xsc_flush calls that flushed something */
	uint64_t crossings;	/* user->kernel crossings made by the owner
				   thread on behalf of the handle */
	uint64_t by_backend[5];	/* completions per enum xsc_backend */
	uint64_t declined;	/* uring-routed entries sent to the fallback */
	uint64_t workers;	/* syscall threads started */
	uint64_t worker_cap_hits; /* times the pool bound stopped a growth */
	uint64_t full_waits;	/* back-pressure waits on full pages */
};
int xsc_stats_get(struct xsc *x, struct xsc_stats *s);

#ifdef __cplusplus
}
#endif
#endif /* XSC_H */
