/*
 * table.c - the syscall table: one row per x86-64 system call, the single
 * description every part of xsc reads (the dispatcher and executors, the
 * shim, multi-calls, `xsc info`, the profiler, the tests), like the
 * kernel's io_uring/opdef.c.  The row type and its fields are in table.h,
 * the rows in src/table/ by family; who reads which field: docs/design.md,
 * "The syscall table".
 *
 * Rules:
 *  - a row is a designated initializer, one policy a line, and states
 *    every policy; xsc__table_check() below (run by the build and by
 *    t_table) fails on a row that leaves one unstated or contradicts itself;
 *  - argument names come from the vocabulary below (akinds[]): the
 *    profiler reads their kinds;
 *  - when you add an io_uring translation, add its prep (and done) in
 *    uring_prep.h, the call to the list in docs/design.md ("Executors and
 *    routes") and a differential case: its number in tests/diff_calls.h
 *    (t_table fails without it) and a case in the t_diff_*.c that lists it
 *    (the differential test fails without it).
 */
#include "uring_prep.h"
#include "ucopy.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <poll.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "sysnames.h"

/* Notes shown by `xsc info`. */
#define NBNOTE "; non-blocking attempt first (O_NONBLOCK exact)"
#define POSNOTE NBNOTE "; an explicit offset: fallback (-ESPIPE exact)"

/* ---- arguments that make a call depend on the calling thread (.bound) -- */

/* Priority-inheritance futexes record the caller's thread id as owner. */
static bool futex_bound(const int64_t a[6])
{
	switch (a[1] & FUTEX_CMD_MASK) {
	case FUTEX_LOCK_PI: case FUTEX_UNLOCK_PI: case FUTEX_TRYLOCK_PI:
	case FUTEX_WAIT_REQUEUE_PI: case FUTEX_CMP_REQUEUE_PI: case 13 /* LOCK_PI2 */:
		return true;
	default:
		return false;
	}
}

/* __WNOTHREAD: children of the calling thread alone. */
static bool wait4_bound(const int64_t a[6]) { return (a[2] & __WNOTHREAD) != 0; }
static bool waitid_bound(const int64_t a[6]) { return (a[3] & __WNOTHREAD) != 0; }

/* A signal mask set for the wait is the calling thread's, and the signals
 * that end the wait are the ones delivered to it. */
static bool ppoll_bound(const int64_t a[6]) { return a[3] != 0; }
static bool pselect6_bound(const int64_t a[6]) { return a[5] != 0; }
static bool epoll_pwait_bound(const int64_t a[6]) { return a[4] != 0; }

/* ---- the shim's policy by arguments (.shim_args) ------------------------ */

/* A wait with a zero timeout never waits: the raw call is cheaper than a
 * hand-off.  A timeout behind a pointer is read with a checked copy: an
 * address that faults is posted, and the kernel answers -EFAULT as it
 * would natively. */
static enum xsc_shim shim_zero_ms(int ms)
{
	return ms == 0 ? XSC_SHIM_DIRECT : XSC_SHIM_POST;
}

/* A futex in memory shared with other processes (no FUTEX_PRIVATE_FLAG:
 * glibc's process-shared mutexes and condition variables, sem_open
 * semaphores, Python's multiprocessing locks) is woken by other
 * processes through the kernel, where an emulated wait would never see
 * it: its waits go through the runtime to the kernel (the fiber parks and
 * its vcpu runs others; io_uring's FUTEX_WAIT, or a syscall thread for a
 * timed wait), its wakes and requeues straight to the kernel (they never
 * block).  Private futexes, and PI ones either way, are the emulator's. */
static enum xsc_shim shim_futex(const int64_t a[6])
{
	if (a[1] & FUTEX_PRIVATE_FLAG)
		return XSC_SHIM_EMULATE;
	switch (a[1] & FUTEX_CMD_MASK) {
	case FUTEX_WAIT: case FUTEX_WAIT_BITSET:
		return XSC_SHIM_POST;
	case FUTEX_WAKE: case FUTEX_WAKE_BITSET: case FUTEX_WAKE_OP:
	case FUTEX_REQUEUE: case FUTEX_CMP_REQUEUE:
		return XSC_SHIM_DIRECT;
	default:
		return XSC_SHIM_EMULATE;
	}
}

/* A thread stack glibc maps (MAP_STACK, no address asked for) goes below
 * 4 GiB where thread pointers are loaded through the LDT (sched/tls.c):
 * the shim places it.  Every other mapping is made as asked. */
static enum xsc_shim shim_mmap(const int64_t a[6])
{
	return !a[0] && (a[3] & MAP_STACK) && !(a[3] & (MAP_FIXED | MAP_FIXED_NOREPLACE)) ?
		XSC_SHIM_EMULATE : XSC_SHIM_DIRECT;
}

/* PR_GET_TID_ADDRESS answers with the calling thread's
 * CLONE_CHILD_CLEARTID word: a fiber's is its own (set_tid_address is
 * emulated), not the kernel thread's that runs it.  stress-ng's pthread
 * stressor reads it and sets it back; the kernel's answer made every
 * thread's exit clear some other word, and pthread_join never return.
 * Every other operation is posted. */
static enum xsc_shim shim_prctl(const int64_t a[6])
{
	return a[0] == PR_GET_TID_ADDRESS ? XSC_SHIM_EMULATE : XSC_SHIM_POST;
}

static enum xsc_shim shim_poll(const int64_t a[6]) { return shim_zero_ms((int)a[2]); }
static enum xsc_shim shim_epoll_wait(const int64_t a[6]) { return shim_zero_ms((int)a[3]); }

static enum xsc_shim shim_ppoll(const int64_t a[6])
{
	struct timespec ts;

	if (!a[2] || xsc__ucopy_in(&ts, (const void *)a[2], sizeof(ts)) < 0)
		return XSC_SHIM_POST;
	return ts.tv_sec == 0 && ts.tv_nsec == 0 ? XSC_SHIM_DIRECT : XSC_SHIM_POST;
}

static enum xsc_shim shim_select(const int64_t a[6])
{
	struct timeval tv;

	if (!a[4] || xsc__ucopy_in(&tv, (const void *)a[4], sizeof(tv)) < 0)
		return XSC_SHIM_POST;
	return tv.tv_sec == 0 && tv.tv_usec == 0 ? XSC_SHIM_DIRECT : XSC_SHIM_POST;
}

/* A lock wait parks the fiber; every other fcntl never waits. */
static enum xsc_shim shim_fcntl(const int64_t a[6])
{
	return a[1] == F_SETLKW || a[1] == F_OFD_SETLKW ? XSC_SHIM_POST : XSC_SHIM_DIRECT;
}

/* ---- the rows ------------------------------------------------------------ */

const struct xsc_sysdef xsc__sys[XSC_NR_MAX] = {
#include "table/files.h"
#include "table/net.h"
#include "table/plain.h"
#include "table/thread.h"

	/* xsc's own: an entry that does nothing (IORING_OP_NOP) */
	[XSC_NR_NOP] = {
		.args = "",
		.block = XSC_NEVER_BLOCKS,
		.thread = XSC_ANY_THREAD,
		.shim = XSC_SHIM_DIRECT,
		.chain = { .op = IORING_OP_NOP, .kind = XSC_CHAIN_NOP },
		.uring = {
			.op = { IORING_OP_NOP },
			.prep = xsc__prep_nop,
			.note = "IORING_OP_NOP; 0 without a syscall elsewhere",
		},
	},
};

static const char *const names[XSC_NR_MAX] = {
#define XSC_SYSNAME(nr, nm) [nr] = #nm,
#include "sysnames.h"
#undef XSC_SYSNAME
	[XSC_NR_NOP] = "xsc_nop",
};

/* ---- argument names ------------------------------------------------------ */

/* Every name a row's .args may use, and its enum xsc_akind; sorted (the
 * table check says so when it is not).  Add a name here before a row
 * uses it. */
static const struct akind {
	const char *name;
	char kind;
} akinds[] = {
	{ "a", 'i' }, { "act_in", 'p' }, { "act_out", 'p' }, { "addr", 'p' },
	{ "addr_in", 'p' }, { "addr_out", 'p' }, { "advice", 'c' },
	{ "amode", 'c' }, { "arg", 'p' }, { "args", 'p' }, { "argsz", 'n' },
	{ "argv", 'p' }, { "attr", 'p' }, { "b", 'i' }, { "backlog", 'i' },
	{ "c", 'i' }, { "cache", 'p' }, { "clock", 'c' }, { "cmd", 'c' },
	{ "code", 'c' }, { "count", 'i' }, { "cpu", 'i' }, { "cpu_out", 'p' },
	{ "ctid", 'p' }, { "d", 'i' }, { "data", 'p' }, { "desc", 'p' },
	{ "dirfd", 'f' }, { "domain", 'c' }, { "entries", 'n' }, { "envp", 'p' },
	{ "epfd", 'f' }, { "event_in", 'p' }, { "fd", 'f' }, { "fds", 'p' },
	{ "fds_out", 'p' }, { "fields", 'c' }, { "flags", 'c' }, { "from", 'i' },
	{ "gid", 'i' }, { "group_fd", 'f' }, { "hdr", 'p' }, { "head", 'p' },
	{ "how", 'c' }, { "in", 'p' }, { "info", 'p' }, { "info_out", 'p' },
	{ "io", 'p' }, { "iov_in", 'p' }, { "iov_out", 'p' }, { "keydesc", 's' },
	{ "keyring", 'i' }, { "keytype", 's' }, { "len", 'n' }, { "lenp", 'p' },
	{ "level", 'i' }, { "list", 'p' }, { "mask", 'p' }, { "maxnode", 'n' },
	{ "min_complete", 'i' }, { "mode", 'i' }, { "ms", 'i' }, { "msg_in", 'p' },
	{ "msg_out", 'p' }, { "msgvec", 'p' }, { "n", 'n' }, { "name", 's' },
	{ "node_out", 'p' }, { "nodemask", 'p' }, { "nr", 'n' }, { "num", 'i' },
	{ "off", 'i' }, { "off_hi", 'i' }, { "offp", 'p' }, { "old", 'p' },
	{ "on", 'i' }, { "op", 'c' }, { "options", 'c' }, { "optlevel", 'c' },
	{ "optname", 'c' }, { "out", 'p' }, { "param", 'p' }, { "params", 'p' },
	{ "path", 's' }, { "payload", 'p' }, { "persona", 'i' }, { "pid", 'i' },
	{ "pidfd", 'f' }, { "pkey", 'i' },
	{ "policy", 'c' }, { "pollfd_io", 'p' }, { "prio", 'i' }, { "prot", 'c' },
	{ "proto", 'c' }, { "ptid", 'p' }, { "req", 'c' }, { "res", 'c' },
	{ "rights", 'c' }, { "ring", 'f' }, { "rseq", 'p' }, { "ruleset_fd", 'f' },
	{ "rusage_out", 'p' }, { "set", 'p' }, { "sevp", 'p' }, { "shmid", 'i' }, { "sig", 'c' },
	{ "size", 'n' }, { "size_io", 'p' }, { "ss", 'p' }, { "stack", 'p' },
	{ "status", 'i' }, { "status_out", 'p' }, { "tgid", 'i' }, { "tid", 'i' },
	{ "tidp", 'p' }, { "tls", 'p' }, { "to_submit", 'i' }, { "ts", 'p' },
	{ "ts_in", 'p' }, { "ts_io", 'p' }, { "ts_out", 'p' }, { "tv", 'p' },
	{ "type", 'c' }, { "uaddr", 'p' }, { "uaddr2", 'p' }, { "uid", 'i' },
	{ "val", 'i' }, { "val3", 'i' }, { "whence", 'c' }, { "which", 'c' },
	{ "who", 'i' },
};
#define NAKINDS (sizeof(akinds) / sizeof(akinds[0]))

/* The kind of the argument name s[0..len), or 0 when the vocabulary does
 * not have it. */
static char akind_of(const char *s, size_t len)
{
	size_t lo = 0, hi = NAKINDS;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strncmp(s, akinds[mid].name, len);
		if (c == 0 && akinds[mid].name[len])
			c = -1;		/* s is a proper prefix of the name */
		if (c == 0)
			return akinds[mid].kind;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return 0;
}

int xsc__sys_akinds(const struct xsc_sysdef *d, char k[6])
{
	const char *p = d->args;
	int i = 0, unknown = 0;

	memset(k, XSC_A_NONE, 6);
	while (p && *p) {
		size_t len = strcspn(p, ",");
		char c = akind_of(p, len);

		unknown += !c;
		if (i < 6)
			k[i++] = c ? c : XSC_A_NONE;
		p += len + (p[len] == ',');
	}
	return unknown;
}

int xsc__sys_pair_at(const struct xsc_sysdef *d)
{
	const char *p = d->args ? strstr(d->args, "fds_out") : NULL;
	int at = 0;

	if (!p)
		return -1;
	for (const char *c = d->args; c < p; c++)
		at += *c == ',';
	return at;
}

bool xsc__sys_pair(const struct xsc_sysdef *d)
{
	return xsc__sys_pair_at(d) >= 0;
}

const struct xsc_sysdef *xsc__sysdef(long nr)
{
	if (nr < 0 || nr >= XSC_NR_MAX)
		return NULL;
	return &xsc__sys[nr];
}

int xsc__sys_nargs(const struct xsc_sysdef *d)
{
	int n;

	if (!d->args)
		return 6;
	n = *d->args != 0;
	for (const char *p = d->args; *p; p++)
		n += *p == ',';
	return n;
}

const char *xsc__thread_why(const struct xsc_sysdef *d)
{
	static const char *const why[XSC_THREAD_NKINDS] = {
#define D "depends on the calling thread: "
		[XSC_THREAD_IDENTITY] = D "its id, TLS or registered areas",
		[XSC_THREAD_SIGNALS] = D "its signal mask or signal frame",
		[XSC_THREAD_PROCESS] = D "creates, replaces or ends a thread of control",
		[XSC_THREAD_SANDBOX] = D "its seccomp filter, Landlock domain or LSM state",
		[XSC_THREAD_CREDS] = D "its credentials",
		[XSC_THREAD_SCHED] = D "its scheduling",
		[XSC_THREAD_NAMESPACE] = D "its namespaces",
		[XSC_THREAD_CLOCK] = D "measures or signals it (thread clocks, timers)",
		[XSC_THREAD_KEYRING] = D "its thread keyring",
		[XSC_THREAD_MEMORY] = D "its memory policy, I/O ports or protection keys",
		[XSC_THREAD_IO_URING] = D "its io_uring rings (per task)",
#undef D
	};
	return d->thread < XSC_THREAD_NKINDS && why[d->thread] ? why[d->thread] : NULL;
}

bool xsc__sys_named(long nr)
{
	return nr >= 0 && nr < XSC_NR_MAX && names[nr];
}

XSC_EXPORT const char *xsc_syscall_name(long nr)
{
	return nr >= 0 && nr < XSC_NR_MAX && names[nr] ? names[nr] : "?";
}

XSC_EXPORT const char *xsc_backend_name(int b)
{
	static const char *const bnames[] = { "auto", "uring", "sqpoll", "worker",
					      "inline" };
	return b >= 0 && b <= XSC_BACKEND_INLINE ? bnames[b] : "?";
}

/* ---- the check -------------------------------------------------------------- */

/* An argument position + 1 of a column (0: none) names an argument of
 * kind `want` ('-': any). */
static bool arg_is(const struct xsc_sysdef *d, const char k[6], uint8_t pos1, char want)
{
	return !pos1 || (pos1 <= xsc__sys_nargs(d) && (want == '-' || k[pos1 - 1] == want));
}

/* The columns of the policies the runtime and the shim read by row
 * (creds, sandbox, intr, intr_timeout, unmaps, fdkind, nonblock, probe, turn,
 * sigpipe, disk). */
static int check_policies(FILE *f, long nr, const struct xsc_sysdef *d, const char k[6])
{
	int bad = 0;
#define BAD(...) (fprintf(f, "xsc table: %ld %s: ", nr, xsc_syscall_name(nr)), \
		  fprintf(f, __VA_ARGS__), fputc('\n', f), bad++)

	if (d->creds > XSC_CREDS_THREAD || d->sandbox > XSC_SANDBOX_LANDLOCK ||
	    d->intr > XSC_INTR_WAIT || d->unmaps > XSC_UNMAPS_FIXED ||
	    d->fdkind > XSC_FDKIND_SHARE || d->turn.dir > XSC_TURN_WRITE)
		BAD("a policy column (.creds .sandbox .intr .unmaps .fdkind .turn) out of range");
	if (d->fdkind == XSC_FDKIND_NEW &&
	    (!d->newfd || d->newfd == XSC_NEWFD_FILE || d->newfd == XSC_NEWFD_MEMFD ||
	     d->newfd == XSC_NEWFD_DUP || d->newfd == XSC_NEWFD_URING))
		BAD("a new descriptor (.fdkind) that may be a file or a copy (.newfd)");
	if (d->nonblock && d->fdkind != XSC_FDKIND_NEW)
		BAD("the flags of a new descriptor (.nonblock) in a row that makes none (.fdkind)");
	if (d->intr_timeout && d->intr != XSC_INTR_RESTART)
		BAD("a timeout that stops a restart (.intr_timeout) in a call not restarted (.intr)");
	if (d->probe && d->block != XSC_MAY_BLOCK)
		BAD("a wait's timeout (.probe) in a call that never blocks");
	if (d->creds && d->thread != XSC_THREAD_CREDS)
		BAD("a credential change (.creds) not bound to the calling thread's credentials");
	if (d->in_handler && d->shim != XSC_SHIM_EMULATE)
		BAD("answered by the shim in a handler (.in_handler) but not emulated (.shim)");
	if (d->sandbox && d->thread != XSC_THREAD_SANDBOX)
		BAD("a sandbox (.sandbox) not bound to the calling thread's sandbox");
	if ((d->intr || d->turn.dir) && d->block != XSC_MAY_BLOCK)
		BAD("interrupted by signals (.intr) or waiting its turn (.turn) but never blocks");
	if ((d->turn.dir || d->fdkind == XSC_FDKIND_STAT || d->fdkind == XSC_FDKIND_CLOSE ||
	     d->fdkind == XSC_FDKIND_SETFL) &&
	    !arg_is(d, k, 1, XSC_A_FD))
		BAD("a descriptor policy (.turn, .fdkind) whose first argument is no descriptor");
	if (!d->turn.dir && d->turn.msg)
		BAD("MSG_* flags for a turn (.turn.msg) it does not take");
	if (!d->sigpipe.fd && (d->sigpipe.msg || d->sigpipe.pos || d->sigpipe.uring_nosignal))
		BAD("SIGPIPE details (.sigpipe) without its descriptor");
	if (!arg_is(d, k, d->sigpipe.fd, XSC_A_FD) || !arg_is(d, k, d->turn.msg, XSC_A_CONST) ||
	    !arg_is(d, k, d->sigpipe.msg, XSC_A_CONST) || !arg_is(d, k, d->sigpipe.pos, XSC_A_INT) ||
	    !arg_is(d, k, d->nonblock, XSC_A_CONST) || !arg_is(d, k, d->probe, XSC_A_INT) ||
	    !arg_is(d, k, d->disk, XSC_A_FD) || !arg_is(d, k, d->intr_timeout, XSC_A_PTR))
		BAD("a column names an argument of another kind (.sigpipe, .turn.msg, .nonblock, .probe, .disk, .intr_timeout)");
	if (d->disk && (d->thread != XSC_ANY_THREAD || d->block != XSC_MAY_BLOCK))
		BAD("a call made alone on a disk descriptor (.disk) that is thread-bound or never posted");
	return bad;
#undef BAD
}

int xsc__table_check_row(FILE *f, long nr, const struct xsc_sysdef *d)
{
	int bad = 0;
#define BAD(...) (fprintf(f, "xsc table: %ld %s: ", nr, xsc_syscall_name(nr)), \
		  fprintf(f, __VA_ARGS__), fputc('\n', f), bad++)

	if (!d->args) {		/* undescribed: nothing may be stated */
		static const struct xsc_sysdef zero;
		if (memcmp(d, &zero, sizeof(zero)))
			BAD("policies without argument kinds (.args)");
		return bad;
	}
	if (!names[nr])
		BAD("a row for a number the kernel headers do not name");
	if (xsc__sys_nargs(d) > 6)
		BAD("%d arguments", xsc__sys_nargs(d));
	char k[6];
	if (xsc__sys_akinds(d, k))
		BAD("an argument name the vocabulary (table.c akinds[]) lacks: %s", d->args);
	if (d->newfd >= XSC_NEWFD_NKINDS)
		BAD("a descriptor kind (.newfd) out of range");
	if (xsc__sys_pair(d) && !d->newfd)
		BAD("writes descriptors (fds_out) of no stated kind (.newfd)");
	if (d->chain.kind == XSC_CHAIN_OPEN && !d->newfd)
		BAD("a multi-call may forward its descriptor, of no stated kind (.newfd)");
	if (d->block != XSC_MAY_BLOCK && d->block != XSC_NEVER_BLOCKS)
		BAD("whether it may block is not stated (.block)");
	if (d->thread == XSC_THREAD_UNSTATED || d->thread >= XSC_THREAD_NKINDS)
		BAD("whether it depends on the calling thread is not stated (.thread)");
	if (d->shim == XSC_SHIM_UNSTATED || d->shim > XSC_SHIM_EMULATE)
		BAD("what the shim does with it is not stated (.shim)");
	if (d->uring.prep && !d->uring.op[0] && nr != XSC_NR_NOP)
		BAD("an io_uring prep without an opcode");	/* IORING_OP_NOP is 0 */
	if (d->uring.prep && !d->uring.note)
		BAD("an io_uring translation without a note for `xsc info`");
	if (!d->uring.prep && (d->uring.done || d->uring.op[0] || d->uring.note || d->cheap ||
			       d->cheap_if || d->uring.no_sqpoll))
		BAD("io_uring fields without a prep");
	if (d->cheap && d->cheap_if)
		BAD("a candidate for the caller always (.cheap) and for some arguments (.cheap_if)");
	if ((xsc__row_bound(d) || d->refuse) &&
	    (d->uring.prep || d->bound || d->chain.kind))
		BAD("thread-bound or refused, yet translated, argument-bound or linkable");
	if (d->refuse && !xsc__row_bound(d))
		BAD("refused but not bound to the calling thread");
	if (d->chain.flags && d->chain.kind != XSC_CHAIN_SYNC)
		BAD("op flags for a linked SQE (.chain.flags) that only an fsync takes");
	if (d->chain.kind > XSC_CHAIN_NOP ||
	    (d->chain.kind && !d->chain.op && d->chain.kind != XSC_CHAIN_NOP) ||
	    (!d->chain.kind && d->chain.op))
		BAD("a chain kind and opcode that do not go together");
	bad += check_policies(f, nr, d, k);
	return bad;
#undef BAD
}

int xsc__table_check(FILE *f)
{
	int bad = 0;

	for (size_t i = 1; i < NAKINDS; i++)
		if (strcmp(akinds[i - 1].name, akinds[i].name) >= 0) {
			fprintf(f, "xsc table: argument names not sorted at %s\n",
				akinds[i].name);
			bad++;
		}

	for (long nr = 0; nr < XSC_NR_MAX; nr++)
		bad += xsc__table_check_row(f, nr, &xsc__sys[nr]);
	return bad;
}
