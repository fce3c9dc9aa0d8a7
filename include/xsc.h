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
	union {
		struct {
			uint16_t sysno;	/* syscall number (x86-64 numbering) */
			uint8_t nargs;	/* arguments the call takes */
			uint8_t route;	/* enum xsc_backend that runs it */
		};
		uint32_t head;	/* the three, written by xsc_post at once */
	};
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
/* The ring posts completions only when the owner enters the kernel
 * (io_uring's DEFER_TASKRUN, Linux 6.1; ignored on older kernels and on
 * SQPOLL rings): no wakeup or task-work signal per completion; xsc_poll,
 * finding no completion to reap, enters when the kernel says some are
 * pending.  Linked chains whose calls
 * io_uring hands to its own workers (multi-calls writing files) get
 * much slower: every link then returns to the owner.  (The xsc threads
 * do not use it: httpd-xsc measured the same CPU per request with it.) */
#define XSC_DEFER_TASKRUN (1u << 3)

/* The program's seccomp filter allows everything io_uring will do for it:
 * use a ring although a filter is active.  io_uring requests do not pass
 * through seccomp, so without this flag an active filter means no ring
 * (syscall threads, which the filter sees), whatever XSC_BACKEND says: an
 * environment variable cannot switch a sandbox off by accident.  For
 * programs that cannot set it (`xsc run`), the operator's explicit
 * equivalent is XSC_SECCOMP_ALLOWS_IO_URING=1 (see docs/design.md). */
#define XSC_SECCOMP_URING (1u << 4)

/* xsc_config.spin_ns: the default, what xsc_config_init() puts there.
 * (0 cannot mean it: 0 is "never spin".) */
#define XSC_SPIN_DEFAULT (~0u)

struct xsc_config {
	unsigned npages;	 /* syscall pages of 64 entries; 0 = 8 */
	unsigned batch_threshold;/* auto-flush when this many are pending
				    (the CEFOS threshold M); 0 = never */
	int backend;		 /* enum xsc_backend; 0 = AUTO */
	int syscall_cpu;	 /* core of the SQPOLL poller and workers;
				    -1 = no pinning; 0 is a valid core, so
				    use xsc_config_init() for defaults; a
				    core outside the caller's affinity mask:
				    xsc_open fails with -EINVAL */
	unsigned max_workers;	 /* bound of the worker pool; 0 = 16 */
	unsigned spin_ns;	 /* busy-wait of the owner and the syscall
				    threads before they sleep; 0 = never
				    spin, XSC_SPIN_DEFAULT = the default
				    (with more than one core, what waking
				    a thread on another core costs by the
				    host profile; else 0) */
	unsigned sq_idle_ms;	 /* SQPOLL poller idle time; 0 = 1000 */
	unsigned flags;		 /* XSC_NONBLOCK, XSC_NO_ENV, XSC_QUIET,
				    XSC_DEFER_TASKRUN, XSC_SECCOMP_URING */
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
 * auto|uring|sqpoll|worker|inline forces a backend.  The routes AUTO
 * chooses by cost take the costs from the host profile, measured on
 * first use and cached (`xsc info` prints it; XSC_HOST_PROFILE=FILE
 * forces one, for every handle of the process: a file that lacks a cost
 * makes xsc_open fail with -EINVAL, saying which).  Returns 0 and
 * stores the handle in *xp, or -errno. */
int xsc_open(struct xsc **xp, const struct xsc_config *cfg);

/* Closes a handle.  Entries still posted are canceled; entries in flight
 * are canceled where the executor can (io_uring cancel, a signal to the
 * syscall thread) and waited for otherwise.  Frees everything.
 *
 * A handle belongs to the thread that opened it.  From any other thread,
 * and in a forked child, xsc_post, xsc_flush, xsc_poll, xsc_wait,
 * xsc_take, xsc_call, xsc_cancel and xsc_multicall return -EBADFD at once
 * and run nothing (the ring is a single-issuer ring of the owner's task;
 * the child has none of the syscall threads).  xsc_close works from
 * anywhere: in a forked child it frees the child's copy without touching
 * what the parent has in flight.  From another thread it cancels what
 * runs on syscall threads; requests in an io_uring ring can be cancelled
 * by the owner alone (a single-issuer ring), so while the owner lives and
 * such a request is in flight it returns -EBUSY and changes nothing.
 * Once the owner has exited the kernel has cancelled them, and
 * xsc_close frees the handle.  A ring closed by another thread while its
 * owner lives stays in the kernel until the owner exits (its registered
 * fd is in the owner's table, out of reach of other threads).
 *
 * A kernel behaviour to know: the kernel frees a closed io_uring ring
 * later, in a work queue, and then notifies every thread that used it
 * as a signal would (TIF_NOTIFY_SIGNAL, no signal is delivered).  A
 * blocking call of that thread which returns partial progress on a
 * signal (recv with MSG_WAITALL, a large write to a pipe) can then return
 * short, once, after xsc_close; calls that would fail with EINTR are
 * restarted by the kernel and see nothing.  Any io_uring program has
 * this; a handle kept open for the thread's life does not. */
int xsc_close(struct xsc *x);

/* ------------------------------------------------------------------ */
/* Posting, flushing, waiting                                         */
/* ------------------------------------------------------------------ */

/* Claims a free entry and fills it with the call nr(a0..a5): plain stores,
 * no kernel crossing.  Reads six long arguments like syscall(2); pass
 * only the ones the call takes.  Returns the entry id (>= 0), or
 * -ENOSYS for a number outside 0..1023 (the kernel would truncate a
 * number with bits above 31 and run the call it names; xsc refuses such
 * numbers instead of guessing), or when the pages are full:
 * with XSC_NONBLOCK -EAGAIN; with a done_cb it flushes and waits for
 * completions, which free entries (back-pressure); without one the entries
 * hold results the caller has not taken, nothing can free them, and it
 * returns -ENOBUFS.  Entries of one batch run in no particular order. */
int xsc_post(struct xsc *x, long nr, ...);

/* The same with the six arguments in registers.  The xsc_post macro below
 * calls it: a variadic entry spills all six argument registers to the
 * stack and reads them back, about a third of the cost of a post.  The
 * function xsc_post stays for pointers to it and for (xsc_post)(...).
 * Being a macro, it splits its arguments at commas: put a compound
 * literal in parentheses, xsc_post(x, SYS_nanosleep,
 * (&(struct timespec){ 1, 0 }), NULL), or call (xsc_post)(...). */
int xsc_post6(struct xsc *x, long nr, long a0, long a1, long a2, long a3,
	      long a4, long a5);
#define XSC__ARGS7(n, a, b, c, d, e, f, ...) \
	(n), (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), (long)(f)
#define xsc_post(x, ...) xsc_post6((x), XSC__ARGS7(__VA_ARGS__, 0, 0, 0, 0, 0, 0, 0))

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

/* Tries to stop entry e, and only e: no other entry ever sees the
 * cancel.  A SUBMITTED entry completes with -ECANCELED at once and its
 * call never runs.  An in-flight one is stopped by its executor (io_uring
 * async cancel, or a signal to the syscall thread running it): it
 * completes with -ECANCELED if its call had not started or was waiting
 * inside io_uring, or with the call's own -EINTR if it was blocked in the
 * kernel; either way the call did nothing.  A call that completes first
 * keeps its result.  Returns 0 if a cancel was issued, -EALREADY if the
 * entry is done, -EINVAL for a bad or free id, -ENOTSUP when a running
 * call cannot be interrupted (the program handles SIGRTMAX-1).  The entry
 * still has to be waited for: its result says whether the call ran. */
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
/* xsc threads: M:N fibers whose system calls are exception-less      */
/* ------------------------------------------------------------------ */

/* N kernel threads ("vcpus", one per core by default, pinned) run M
 * fibers.  A fiber's system call (xsc_syscall and the wrappers below) is
 * posted into its vcpu's syscall pages and the fiber switches out; when no
 * fiber is ready the vcpu flushes the batch and sleeps in one
 * io_uring_enter (FlexSC-Threads).  Calls routed inline (getpid, mmap,
 * ...) run directly.  Scheduling is cooperative: system calls, sync
 * primitives and xsc_yield are the switch points.  Each fiber has its own
 * libc errno. */

struct timespec;
typedef struct xsc_fiber *xsc_thread_t;

typedef struct xsc_thread_attr {
	size_t stack_size;	/* 0 = runtime default (256 KiB) */
	int detached;
} xsc_thread_attr_t;

struct xsc_runtime_config {
	unsigned nthreads;	/* kernel threads; 0 = one per CPU of the
				   process's affinity mask, at most its cgroup
				   CPU quota (cpu.max, rounded up), one fewer
				   (at least one) on SQPOLL rings, whose
				   poller takes a CPU */
	int pin;		/* pin kernel thread i to the i-th CPU of the
				   affinity mask from first_cpu (wrapping) */
	int first_cpu;		/* 0 = the first allowed CPU; a CPU outside
				   the mask: xsc_main fails with -EINVAL */
	size_t stack_size;	/* default fiber stack; 0 = 256 KiB */
	unsigned npages;	/* syscall pages per kernel thread; 0 = 64:
				   at most npages * 64 calls in flight per
				   kernel thread, further callers wait */
	unsigned batch;		/* flush when this many are pending; 0 = 64 */
	int backend;		/* enum xsc_backend; 0 = auto / XSC_BACKEND */
	int syscall_cpu;	/* core specialization (FlexSC 3.6): the core
				   of the SQPOLL pollers and syscall threads;
				   -1 = none (xsc_runtime_config_init) */
};

void xsc_runtime_config_init(struct xsc_runtime_config *cfg);

/* Starts the runtime, runs fn(argc, argv) as the first fiber, and returns
 * its return value once it returns (other fibers are abandoned, like
 * threads at process exit).  The calling thread becomes kernel thread 0.
 * Returns -errno if the runtime cannot start (-EINVAL for a first_cpu or
 * syscall_cpu outside the affinity mask); it then leaves nothing behind
 * (no handle, no kernel thread, the caller's affinity as it was) and may
 * be called again.  Once fn has run, calling it again is -EBUSY (one
 * runtime per process). */
int xsc_main(int (*fn)(int, char **), int argc, char **argv,
	     const struct xsc_runtime_config *cfg);

int xsc_thread_create(xsc_thread_t *t, const xsc_thread_attr_t *attr,
		      void *(*fn)(void *), void *arg);
int xsc_thread_join(xsc_thread_t t, void **ret);
int xsc_thread_detach(xsc_thread_t t);
void xsc_thread_exit(void *ret) __attribute__((noreturn));
xsc_thread_t xsc_thread_self(void);	/* NULL outside a fiber */
int xsc_yield(void);
int xsc_usleep(unsigned long usec);
int xsc_sleep(unsigned sec);

/* Sync primitives for fibers (any vcpu).  Static initializers below. */
typedef struct xsc_mutex {
	uint32_t state, lock;
	void *head, *tail;
} xsc_mutex_t;
typedef struct xsc_cond {
	uint32_t lock, pad;
	void *head, *tail;
} xsc_cond_t;
typedef struct xsc_sem {
	uint32_t lock, pad;
	long value;
	void *head, *tail;
} xsc_sem_t;
typedef struct xsc_once {
	uint32_t state;
	xsc_mutex_t m;
} xsc_once_t;
typedef unsigned xsc_key_t;

#define XSC_MUTEX_INITIALIZER { 0, 0, 0, 0 }
#define XSC_COND_INITIALIZER { 0, 0, 0, 0 }
#define XSC_ONCE_INIT { 0, XSC_MUTEX_INITIALIZER }

int xsc_mutex_init(xsc_mutex_t *m);
int xsc_mutex_lock(xsc_mutex_t *m);
int xsc_mutex_trylock(xsc_mutex_t *m);	/* 0 or -EBUSY */
int xsc_mutex_unlock(xsc_mutex_t *m);
int xsc_mutex_destroy(xsc_mutex_t *m);
int xsc_cond_init(xsc_cond_t *c);
int xsc_cond_wait(xsc_cond_t *c, xsc_mutex_t *m);
/* abstime on CLOCK_MONOTONIC; -ETIMEDOUT when it passes */
int xsc_cond_timedwait(xsc_cond_t *c, xsc_mutex_t *m,
		       const struct timespec *abstime);
int xsc_cond_signal(xsc_cond_t *c);
int xsc_cond_broadcast(xsc_cond_t *c);
int xsc_cond_destroy(xsc_cond_t *c);
int xsc_sem_init(xsc_sem_t *s, long value);
int xsc_sem_wait(xsc_sem_t *s);
int xsc_sem_trywait(xsc_sem_t *s);	/* 0 or -EAGAIN */
int xsc_sem_post(xsc_sem_t *s);
int xsc_sem_destroy(xsc_sem_t *s);
int xsc_once(xsc_once_t *o, void (*fn)(void));
int xsc_key_create(xsc_key_t *k, void (*dtor)(void *));
int xsc_key_delete(xsc_key_t k);
void *xsc_getspecific(xsc_key_t k);
int xsc_setspecific(xsc_key_t k, const void *v);

/* Blocking system calls for fibers: value or -errno, exactly the
 * synchronous call's result.  Outside a fiber they run through a
 * per-thread handle (xsc_call). */
long xsc_syscall(long nr, ...);
struct iovec;
struct stat;
struct sockaddr;
long xsc_read(int fd, void *buf, size_t n);
long xsc_write(int fd, const void *buf, size_t n);
long xsc_readv(int fd, const struct iovec *iov, int cnt);
long xsc_writev(int fd, const struct iovec *iov, int cnt);
long xsc_pread(int fd, void *buf, size_t n, long off);
long xsc_pwrite(int fd, const void *buf, size_t n, long off);
long xsc_openat(int dirfd, const char *path, int flags, unsigned mode);
long xsc_close_fd(int fd);	/* close(2); xsc_close() closes a handle */
long xsc_fstat(int fd, struct stat *st);
long xsc_accept4(int fd, struct sockaddr *addr, unsigned *len, int flags);
long xsc_connect(int fd, const struct sockaddr *addr, unsigned len);
long xsc_recv(int fd, void *buf, size_t n, int flags);
long xsc_send(int fd, const void *buf, size_t n, int flags);
long xsc_poll1(int fd, short events, int timeout_ms);	/* revents or -errno */

/* ------------------------------------------------------------------ */
/* Multi-calls                                                        */
/* ------------------------------------------------------------------ */

/* A multi-call (System Call Clustering, section 2.2) runs calls[0..n) in
 * order, like the synchronous sequence would, in as few kernel crossings
 * as this kernel allows.  Each call has a number, six arguments, a result
 * slot and flags.  Arguments may name an earlier call's result or a word
 * of an earlier call's output (result forwarding, forward-only, so every
 * chain halts).  Paths (docs/multicall.md):
 *   uring   the chain as linked SQEs, one io_uring_enter when nothing in
 *           it needs a value io_uring cannot forward; anomalies (a short
 *           transfer, a failed unchecked call) resume with another enter
 *   worker  the whole chain on one syscall thread: one hand-off
 *   inline  the plain calls in the caller's thread
 * Results are exactly those of the synchronous sequence. */

#define XSC_MC_MAX	 64		/* calls per chain or loop body */
#define XSC_MC_ITER_MAX	 (1u << 30)	/* bound on loop iterations */

/* struct xsc_mc.flags */
#define XSC_MC_CHECK	(1u << 0) /* a result < 0 stops the chain here */
#define XSC_MC_FULL	(1u << 1) /* with CHECK on read/write/pread64/
				     pwrite64: a transfer shorter than its
				     count also stops it (io_uring's link
				     rule).  Without FULL a short transfer is
				     a success and the chain goes on. */
#define XSC_MC_PRIVATE	(1u << 2) /* open/openat whose fd is used only as an
				     fd by later calls and closed by a later
				     close in the chain: its slot gets 0 when
				     that close ran (the number is not
				     reported; on io_uring the file is a
				     direct descriptor), else the fd */

/* A reference, stored in args[i] with bit i of xsc_mc.fwd set:
 *   XSC_MC_RET(k)          the result of call k
 *   XSC_MC_WORD(k, a, off) the 64-bit word at byte off of the buffer that
 *                          call k's argument a points to, read after call k
 *                          succeeded (c-blake/batch's word copy)
 *   XSC_MC_WORD32(k, a, off) the same, a sign-extended 32-bit word
 * k must be earlier than the call (else -EINVAL before anything runs).
 * If call k failed (result < 0) or the word cannot be read, the call is
 * not executed: its slot gets -ECANCELED (-EFAULT for an unreadable
 * word); with XSC_MC_CHECK that stops the chain. */
#define XSC_MC_RET(k)		((long)(unsigned)(k) | 0xfL << 8)
#define XSC_MC_WORD(k, a, off)	((long)(unsigned)(k) | (long)(a) << 8 | \
				 (long)(off) << 16)
#define XSC_MC_WORD32(k, a, off) (XSC_MC_WORD(k, a, off) | 1L << 12)
/* stx_size of statx(dirfd, path, flags, mask, buf) = call k */
#define XSC_MC_STATX_SIZE(k)	XSC_MC_WORD(k, 4, 40)
/* st_size of fstat(fd, buf) = call k (x86-64 struct stat) */
#define XSC_MC_FSTAT_SIZE(k)	XSC_MC_WORD(k, 1, 48)

struct xsc_mc {
	long nr;		/* syscall number */
	unsigned flags;		/* XSC_MC_CHECK, XSC_MC_FULL, XSC_MC_PRIVATE */
	unsigned fwd;		/* bit i: args[i] is a reference */
	long args[6];
	long ret;		/* out: value, -errno, -ECANCELED if not run */
};

/* Sets args[i] of c to reference ref (XSC_MC_RET(k), ...). */
static inline void xsc_mc_fwd(struct xsc_mc *c, int i, long ref)
{
	c->args[i] = ref;
	c->fwd |= 1u << i;
}

enum xsc_mc_path {
	XSC_MC_AUTO = 0,	/* auto handle: uring or inline, whichever is
				   expected to finish first (measured model);
				   forced backend: uring when it saves
				   crossings, else by route */
	XSC_MC_URING = 1,
	XSC_MC_WORKER = 2,
	XSC_MC_INLINE = 3,
};

/* Loop conditions: the loop ends when result(until_call) OP until_val. */
enum xsc_mc_cond { XSC_MC_LE = 1, XSC_MC_LT, XSC_MC_EQ, XSC_MC_NE, XSC_MC_GE,
		   XSC_MC_GT };

struct xsc_mc_opts {
	int path;		/* enum xsc_mc_path to ask for; a path that
				   cannot run the chain exactly declines */
	/* Looped multi-call: with max_iter > 0 the body is repeated until
	 * the condition holds right after call until_call (the rest of that
	 * iteration does not run), a checked call fails, or max_iter
	 * iterations ran.  References to body calls name the same
	 * iteration.  The body is calls[loop_first..loop_end) (loop_end 0 =
	 * n): calls before it run once first (a prologue: opens), calls
	 * after it once when the loop ended by its condition or its bound (an
	 * epilogue: closes; not after a failed checked call).  Body calls may
	 * reference the prologue, epilogue calls the prologue and earlier
	 * epilogue calls, not the body. */
	unsigned max_iter;
	int until_call;
	int until_op;		/* enum xsc_mc_cond */
	long until_val;
	unsigned batch;		/* uring: iterations per submission; 0 = adaptive */
	int sum_call;		/* report.sum adds this call's results >= 0; -1 */
	int loop_first;		/* first call of the loop body (0) */
	int loop_end;		/* one past its last call (0 = n) */
};

/* What stopped a chain (xsc_mc_report.stop). */
enum xsc_mc_stop { XSC_MC_DONE = 0, XSC_MC_FAILED, XSC_MC_UNTIL, XSC_MC_BOUND };

struct xsc_mc_report {
	int path;		/* enum xsc_mc_path that ran it */
	const char *reason;	/* why that path, never NULL */
	unsigned crossings;	/* user->kernel crossings of the caller's thread */
	unsigned submits;	/* io_uring submissions */
	unsigned resumes;	/* link breaks resumed with another submission */
	unsigned iters;		/* iterations that ran (1 for a chain) */
	int stop;		/* enum xsc_mc_stop */
	uint64_t sum;		/* see xsc_mc_opts.sum_call */
};

/* Defaults: AUTO, no loop, sum_call -1. */
void xsc_mc_opts_init(struct xsc_mc_opts *o);

/* Runs calls[0..n) (see above).  Returns n when no checked call failed,
 * else the index of the first checked call that failed; later calls get
 * -ECANCELED.  n = 0 returns 0; n > XSC_MC_MAX or max_iter >
 * XSC_MC_ITER_MAX returns -E2BIG; a bad reference, flag or other loop
 * option returns -EINVAL before anything runs.
 * Flushes entries posted before it.  Calls done_cb for entries that
 * complete meanwhile. */
int xsc_multicall(struct xsc *x, struct xsc_mc *calls, unsigned n);

/* The same with options (NULL = defaults) and a report (may be NULL).
 * For a loop, calls[] holds the last iteration's results. */
int xsc_multicall_ex(struct xsc *x, struct xsc_mc *calls, unsigned n,
		     const struct xsc_mc_opts *o, struct xsc_mc_report *r);

/* ------------------------------------------------------------------ */
/* Routes, probing, statistics                                        */
/* ------------------------------------------------------------------ */

/* The calling thread sandboxed itself or changed its credentials without
 * going through this handle (a seccomp filter, Landlock, set*id, capset):
 * from now on every call of the handle runs in the calling thread (the
 * inline executor), where the kernel checks it exactly as a synchronous
 * call.  io_uring executes requests without passing through seccomp, and
 * syscall threads that predate a filter (or a credential change) do not
 * carry it.  Calls made before keep running where they are, as calls the
 * program made before sandboxing itself; an SQPOLL poller takes nothing
 * that was not taken already.  One line on stderr unless XSC_QUIET.
 * Such calls made through the handle itself (seccomp, prctl(PR_SET_SECCOMP),
 * landlock_restrict_self, set*id, setgroups, capset) switch it by
 * themselves when they succeed.  Returns 0, or -EBADFD from a thread that
 * does not own the handle. */
int xsc_sandbox_changed(struct xsc *x);

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
/* The sums of the statistics of the runtime's kernel threads (xsc
 * threads: each has a handle of its own), read while they run; *waits
 * (may be NULL) gets the readiness waits that completed: fibers parked on
 * a descriptor without an entry.  -ESRCH when no runtime runs. */
int xsc_runtime_stats(struct xsc_stats *s, uint64_t *waits);

#ifdef __cplusplus
}
#endif
#endif /* XSC_H */
