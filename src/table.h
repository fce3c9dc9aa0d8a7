/*
 * table.h - the syscall table's row: what happens to one system call on
 * every path (the handle's executors, xsc threads, the transparent-mode
 * shim, multi-calls), each policy a named field.  The rows are in
 * src/table/, the mechanism in table.c; like the kernel's io_uring/opdef.c.
 *
 * A described row states every policy: block, thread and shim have no
 * zero value that means anything, and the table check (xsc__table_check,
 * run at build time and by t_table) fails on a row that leaves one out.
 * A number no row describes reads as all zeros and is treated as: may
 * block, may run on any thread, no io_uring form, posted by the shim.
 */
#ifndef XSC_TABLE_H
#define XSC_TABLE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct xsc;

/* Translation of one entry into SQEs.  Returns the number of SQEs queued
 * (1 or 2), or 0 to decline: the arguments cannot be expressed exactly in
 * io_uring, and the entry goes to the fallback executor.  A prep function
 * decides to decline before it takes any SQE. */
typedef int (*xsc_prep_fn)(struct xsc *x, int id);

/* Turns the CQE result(s) into the syscall's result (uring_reap.c's finish);
 * see uring.h for the values it may return besides a result. */
typedef long (*xsc_done_fn)(struct xsc *x, int id);

/* .block: may the call wait for something outside the caller (a peer, a
 * device, a timer)?  A call that may goes to a syscall thread when io_uring
 * cannot run it; one that never does runs in the caller, which is cheaper
 * than a hand-off. */
enum xsc_block {
	XSC_BLOCK_UNSTATED,
	XSC_MAY_BLOCK,
	XSC_NEVER_BLOCKS,
};

/* .thread: why the call must run on the calling thread, or that it need
 * not.  A bound call runs in the caller on every path: on a syscall thread
 * or in io_uring it would act on, or measure, another task.  Update
 * xsc__thread_why() (table.c) when you add a reason. */
enum xsc_thread {
	XSC_THREAD_UNSTATED,
	XSC_ANY_THREAD,		/* the process's state: any thread may run it */
	XSC_THREAD_IDENTITY,	/* its tid, TLS, robust list, rseq area, persona */
	XSC_THREAD_SIGNALS,	/* its signal mask, pending set, signal frame */
	XSC_THREAD_PROCESS,	/* creates, replaces or ends a thread of control */
	XSC_THREAD_SANDBOX,	/* its seccomp filter, Landlock domain, prctl, LSM */
	XSC_THREAD_CREDS,	/* its credentials as the kernel reads them */
	XSC_THREAD_SCHED,	/* its scheduling: policy, affinity, priority, cpu */
	XSC_THREAD_NAMESPACE,	/* its namespaces */
	XSC_THREAD_CLOCK,	/* measures or signals it: thread clocks, timers */
	XSC_THREAD_KEYRING,	/* its thread keyring */
	XSC_THREAD_MEMORY,	/* its memory policy, I/O ports, protection keys */
	XSC_THREAD_IO_URING,	/* rings are per task: single issuer, registered fds */
	XSC_THREAD_NKINDS
};

/* .shim: what transparent mode (libxsc-preload.so) does with the call when
 * an unmodified program makes it. */
enum xsc_shim {
	XSC_SHIM_UNSTATED,
	XSC_SHIM_POST,		/* through the runtime (xsc_syscall): the fiber
				   parks, the call takes the row's route */
	XSC_SHIM_DIRECT,	/* the raw call on the vcpu: glibc makes it while
				   holding a lock of its own, or it never waits */
	XSC_SHIM_EMULATE,	/* the shim answers it: threads are fibers (tids,
				   signals, clone, futexes); preload.c's emulators[] */
};

/* .chain.kind: how a multi-call links the call (multicall_uring.c) and
 * what a later call may take from its result. */
enum xsc_chain {
	XSC_CHAIN_NONE,		/* not linkable: the chain runs on another path */
	XSC_CHAIN_RW,		/* a transfer at the file position: a short
				   count ends an XSC_MC_FULL chain */
	XSC_CHAIN_PRW,		/* the same at an explicit offset (args[3]) */
	XSC_CHAIN_OPEN,		/* makes an fd later calls may forward */
	XSC_CHAIN_CLOSE,
	XSC_CHAIN_SYNC,
	XSC_CHAIN_NOP,
};

/* .newfd: the kind of descriptor the call's result is (or, with an fds_out
 * argument, the pair it writes).  The profiler (xsc trace) follows
 * descriptors by it; a multi-call may forward it (XSC_CHAIN_OPEN). */
enum xsc_newfd {
	XSC_NEWFD_NONE,
	XSC_NEWFD_FILE,		/* a path opened: file, directory, device */
	XSC_NEWFD_SOCK, XSC_NEWFD_PIPE, XSC_NEWFD_EPOLL, XSC_NEWFD_EVENT,
	XSC_NEWFD_TIMER, XSC_NEWFD_SIGNAL, XSC_NEWFD_MEMFD, XSC_NEWFD_URING,
	XSC_NEWFD_INOTIFY, XSC_NEWFD_PIDFD,
	XSC_NEWFD_DUP,		/* a copy of its fd argument */
	XSC_NEWFD_NKINDS
};

/* What each argument is, one letter per argument (xsc__sys_akinds): the
 * class of each name in .args, from the vocabulary in table.c.  The
 * profiler labels nodes with fd and const arguments and profiles len,
 * const and int values. */
enum xsc_akind {
	XSC_A_FD = 'f',		/* a file descriptor (dirfd, epfd too) */
	XSC_A_PTR = 'p',	/* a user pointer: buffer, struct, array */
	XSC_A_STR = 's',	/* a string: a path, a name */
	XSC_A_LEN = 'n',	/* a length or count */
	XSC_A_CONST = 'c',	/* flags, a command, a constant */
	XSC_A_INT = 'i',	/* another integer: offset, id, mode bits */
	XSC_A_NONE = '-',	/* no such argument */
};

/* .creds: a change of the caller's credentials, and to whom it applies.
 * io_uring (which keeps the credentials of the ring's creator) and
 * syscall threads that predate it would act with other credentials. */
enum xsc_creds {
	XSC_CREDS_NONE,
	XSC_CREDS_PROCESS,	/* set*id: POSIX makes it process-wide, glibc
				   asks every thread to make it (setxid) */
	XSC_CREDS_THREAD,	/* setfsuid, setfsgid, capset: the caller's */
};
/* .sandbox: binds the caller to a sandbox no other path would see. */
enum xsc_sandbox {
	XSC_SANDBOX_NONE,
	XSC_SANDBOX_SECCOMP,	/* a filter or strict mode (seccomp(2), or
				   prctl PR_SET_SECCOMP): xsc__sandbox_kind */
	XSC_SANDBOX_LANDLOCK,
};
/* .intr: what a signal for a thread waiting in the call does to it, as
 * signal(7) says (transparent mode: the posted call is canceled). */
enum xsc_intr {
	XSC_INTR_NONE,		/* not interrupted (or never waits) */
	XSC_INTR_EINTR,		/* -EINTR, never restarted */
	XSC_INTR_RESTART,	/* restarted with SA_RESTART, else -EINTR */
	/* only in a wait: canceled before it began, it is made again after
	 * the handlers; interrupted in the kernel, XSC_INTR_RESTART (an
	 * open, which waits only on a FIFO or a device) */
	XSC_INTR_WAIT,
};
/* .cheap_if's question: run in the caller rather than posted how? */
enum xsc_here {
	XSC_HERE_BATCH,		/* in a batch, in the ring or the workers */
	XSC_HERE_ALONE,		/* alone: the fiber has nothing to batch with */
	XSC_HERE_SOLE,		/* alone, and nothing can wait behind it on its
				   vcpu while it waits in the kernel, where a
				   signal for it ends the wait (syscalls.c
				   sole(), call_sole) */
};
/* .unmaps: may unmap or change the protection of the program's memory
 * (transparent mode forgets the pages it has seen readable). */
enum xsc_unmaps {
	XSC_UNMAPS_NONE,
	XSC_UNMAPS,
	XSC_UNMAPS_FIXED,	/* mmap: only at a fixed address */
};
/* .fdkind: what the call tells of its descriptors' kinds (sched/fdkind.c,
 * kept exact in transparent mode). */
enum xsc_fdkind {
	XSC_FDKIND_NONE,
	XSC_FDKIND_STAT,	/* reads the kind of descriptor arg 0: fstat,
				   or at-calls with AT_EMPTY_PATH and "" */
	XSC_FDKIND_CLOSE,	/* closes descriptors: close, dup2, dup3,
				   close_range */
	XSC_FDKIND_OFF,		/* may make the table inexact: a ring of the
				   program's own, a descriptor table unshared
				   or given to another process */
	XSC_FDKIND_NEW,		/* makes a descriptor that is no file (its
				   result, or the pair written at fds_out), of
				   the row's .newfd; non-blocking when the
				   argument at .nonblock has O_NONBLOCK's bit
				   (SOCK_NONBLOCK, EFD_NONBLOCK, ...) */
	XSC_FDKIND_SETFL,	/* may set or clear O_NONBLOCK of descriptor
				   arg 0: fcntl F_SETFL, ioctl FIONBIO (and
				   fcntl F_DUPFD shares it, as dup does) */
	XSC_FDKIND_SHARE,	/* may give an open file description to
				   another descriptor or process, whose
				   changes of O_NONBLOCK are not seen: dup
				   (arg 0), fork (all), sendmsg and sendmmsg
				   with control data (all); the OFF rows
				   clone and clone3 too, for a process */
};
/* .turn: a call that may wait for another party on its descriptor (arg
 * 0) takes the descriptor's turn (sched/fdq.c).  Each such call honours
 * O_NONBLOCK (and MSG_DONTWAIT at .turn.msg): on a non-blocking
 * descriptor it cannot wait (sched/syscalls.c). */
enum xsc_turn_dir { XSC_TURN_NONE, XSC_TURN_READ, XSC_TURN_WRITE };

struct xsc_sysdef {
	/* io_uring: the translation (NULL prep: none).  Read on the hot
	 * path, so first. */
	struct {
		xsc_prep_fn prep;
		xsc_done_fn done;	/* NULL: the CQE result is the result */
		uint8_t op[2];		/* opcodes the kernel must have (0: none) */
		const char *note;	/* its limits, shown by `xsc info` */
		/* non-NULL: on an SQPOLL ring the call itself does not go
		 * through the poller, and why: the prep posts a NOP, whose
		 * done hands the call to the row's fallback */
		const char *no_sqpoll;
	} uring;
	/* non-NULL: with these arguments the call depends on the calling
	 * thread (a PI futex, __WNOTHREAD, a wait with a signal mask), and
	 * then runs on it whatever the row's route (xsc__bound) */
	bool (*bound)(const int64_t a[6]);
	const char *args;	/* argument names, comma-separated, each from
				   the vocabulary in table.c (which gives its
				   enum xsc_akind); their count is the argument
				   count; NULL: not described */
	uint8_t newfd;		/* enum xsc_newfd */
	uint8_t block;		/* enum xsc_block */
	uint8_t thread;		/* enum xsc_thread */
	uint8_t shim;		/* enum xsc_shim */
	/* made in a signal handler, answered by the shim (preload.c's
	 * in_handler[]) and not made directly: emulated rows whose answer a
	 * handler needs too (its thread's tid, a kill, a futex wake, a
	 * sigaction, the thread's exit) */
	bool in_handler;
	/* A candidate to run in the caller though it has an io_uring form,
	 * which io_uring runs in its worker threads: AUTO routes it inline
	 * where the host profile says a system call costs less than such a
	 * posted call (probe.c; hostprof.c decide()); forced backends use
	 * the io_uring form. */
	bool cheap;
	/* non-NULL: with these arguments the call may run in the caller (it
	 * can wait for nothing but the disk there, or, made by a fiber
	 * `where` says is sole, harms no one by waiting), and true when, by
	 * the host profile (x->here_*), that costs less than posting it as
	 * `where` would; AUTO then runs it in the caller (xsc__cheap_here) */
	bool (*cheap_if)(const struct xsc *x, const int64_t a[6], enum xsc_here where);
	const char *refuse;	/* non-NULL: never run by xsc (-EINVAL), and why */
	/* non-NULL: the shim policy for these arguments, instead of .shim */
	enum xsc_shim (*shim_args)(const int64_t a[6]);
	struct {
		uint8_t op;		/* the linked SQE's opcode */
		uint8_t kind;		/* enum xsc_chain */
		uint8_t flags;		/* the linked SQE's op flags (an fsync's
					   IORING_FSYNC_DATASYNC) */
	} chain;
	uint8_t creds;		/* enum xsc_creds */
	uint8_t sandbox;	/* enum xsc_sandbox */
	uint8_t intr;		/* enum xsc_intr */
	uint8_t unmaps;		/* enum xsc_unmaps */
	uint8_t fdkind;		/* enum xsc_fdkind */
	/* Arguments below are positions + 1 (0: none). */
	uint8_t nonblock;	/* XSC_FDKIND_NEW: the flags that may make the
				   new descriptor non-blocking (0: it is born
				   blocking) */
	uint8_t probe;		/* a wait's timeout in milliseconds: a wait
				   may first look with 0 (sched/syscalls.c) */
	uint8_t intr_timeout;	/* XSC_INTR_RESTART: a timeout that, given,
				   makes a handled signal end the call with
				   EINTR even under SA_RESTART (the kernel's
				   -ERESTART_RESTARTBLOCK: a futex wait) */
	/* the descriptor a call acts on: made on a regular file or a block
	 * device, it waits for nothing but the disk, and a fiber alone on
	 * its vcpu makes it itself where a system call costs less than a
	 * call posted alone (sched/syscalls.c) */
	uint8_t disk;
	struct {
		uint8_t dir;		/* enum xsc_turn_dir */
		uint8_t msg;		/* its MSG_* flags: MSG_DONTWAIT takes no
					   turn, nor does MSG_WAITALL on a read */
	} turn;
	/* EPIPE comes with SIGPIPE natively (a pipe with no reader, a socket
	 * that can no longer send) */
	struct {
		uint8_t fd;		/* the descriptor written to (0: never) */
		uint8_t msg;		/* its MSG_* flags: MSG_NOSIGNAL sends none */
		uint8_t pos;		/* an offset that is the file position only
					   when -1 (pwritev2): else no signal */
		bool uring_nosignal;	/* io_uring's form adds MSG_NOSIGNAL */
	} sigpipe;
};

#define XSC_NR_MAX 1024	/* syscall numbers accepted by xsc_post */

/* Hidden: the table and its helpers are reached PC-relative, never through
 * the GOT (the library exports none of them). */
#pragma GCC visibility push(hidden)

extern const struct xsc_sysdef xsc__sys[XSC_NR_MAX];

/* Row nr, or NULL out of range (a number no row describes is all zeros). */
const struct xsc_sysdef *xsc__sysdef(long nr);
/* Its argument count: the kinds listed, or 6 for an undescribed number. */
int xsc__sys_nargs(const struct xsc_sysdef *d);
/* The enum xsc_akind letter of each argument into k[0..5] ('-' past the
 * last, and for every argument of an undescribed number); returns the
 * count of names the vocabulary does not know (the table check fails on
 * any). */
int xsc__sys_akinds(const struct xsc_sysdef *d, char k[6]);
/* The row writes two descriptors through a pointer (pipe, socketpair). */
bool xsc__sys_pair(const struct xsc_sysdef *d);
/* The position of that pointer (the argument named fds_out), or -1. */
int xsc__sys_pair_at(const struct xsc_sysdef *d);
/* The kernel headers (or the list of newer calls) name number nr. */
bool xsc__sys_named(long nr);
/* Why a row's calls run on the calling thread, for `xsc info`. */
const char *xsc__thread_why(const struct xsc_sysdef *d);
/* Checks every row (see table.c); prints each fault to f, returns how
 * many there are.  _row: row d as if it were number nr's (t_table checks
 * the check with rows it breaks on purpose). */
int xsc__table_check(FILE *f);
int xsc__table_check_row(FILE *f, long nr, const struct xsc_sysdef *d);

#pragma GCC visibility pop

static inline bool xsc__may_block(const struct xsc_sysdef *d)
{
	return d->block != XSC_NEVER_BLOCKS;
}

/* An argument by its position + 1 in a row's column (0: none). */
static inline int64_t xsc__sys_arg(const int64_t a[6], uint8_t pos1)
{
	return a[pos1 - 1];
}

/* The row's calls depend on the calling thread (whatever their arguments). */
static inline bool xsc__row_bound(const struct xsc_sysdef *d)
{
	return d->thread > XSC_ANY_THREAD;
}

/* The call depends on the calling thread: by its row, or by its arguments. */
static inline bool xsc__bound(const struct xsc_sysdef *d, const int64_t a[6])
{
	return xsc__row_bound(d) || (d->bound && d->bound(a));
}

/* What the shim does with this call (undescribed numbers: post). */
static inline enum xsc_shim xsc__shim_policy(const struct xsc_sysdef *d,
					     const int64_t a[6])
{
	if (d->shim_args)
		return d->shim_args(a);
	return d->shim ? (enum xsc_shim)d->shim : XSC_SHIM_POST;
}

#endif
