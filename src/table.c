/*
 * table.c - the syscall table: one row per x86-64 system call, the single
 * description every part of xsc reads: the dispatcher and every executor
 * (routes, translations, which calls stay on the calling thread), the
 * transparent-mode shim (post, direct or emulate), multi-calls (which
 * calls link, and how), `xsc info`, and the tests.  Like the kernel's
 * io_uring/opdef.c.
 *
 * The row type and what each field means are in table.h; the rows are in
 * src/table/ by family.  A row is a designated initializer, one policy a
 * line, and states every policy; a second row for the same number is a
 * build error (-Woverride-init, on in every developer build), and
 * xsc__table_check() below, run when the library is built and by t_table,
 * fails on a row that leaves a policy unstated or contradicts itself.
 *
 * Names come from the build machine's kernel headers (scripts/
 * gen-sysnames.sh, run by the build), so every number they have is named;
 * a number no row describes may block, runs on any thread and has no
 * io_uring form.  When you add an io_uring translation, add its prep (and
 * done) in uring_prep.h, the README's list of translated calls and a
 * differential case (tests/t_diff_fs.c, t_diff_net.c, t_diff_misc.c:
 * t_table fails without one).
 */
#include "uring_prep.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <poll.h>
#include <string.h>
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
		.chain = { IORING_OP_NOP, XSC_CHAIN_NOP },
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
	if (!d->uring.prep && (d->uring.done || d->uring.op[0] || d->uring.note || d->cheap))
		BAD("io_uring fields without a prep");
	if ((xsc__row_bound(d) || d->refuse) &&
	    (d->uring.prep || d->bound || d->chain.kind))
		BAD("thread-bound or refused, yet translated, argument-bound or linkable");
	if (d->refuse && !xsc__row_bound(d))
		BAD("refused but not bound to the calling thread");
	if (d->chain.kind > XSC_CHAIN_NOP ||
	    (d->chain.kind && !d->chain.op && d->chain.kind != XSC_CHAIN_NOP) ||
	    (!d->chain.kind && d->chain.op))
		BAD("a chain kind and opcode that do not go together");
	return bad;
#undef BAD
}

int xsc__table_check(FILE *f)
{
	int bad = 0;

	for (long nr = 0; nr < XSC_NR_MAX; nr++)
		bad += xsc__table_check_row(f, nr, &xsc__sys[nr]);
	return bad;
}
