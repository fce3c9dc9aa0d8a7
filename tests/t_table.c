/* The syscall table (src/table.c, rows in src/table/) checked against
 * itself and against the tests that rely on it:
 *  - xsc__table_check finds no fault (every described row states block,
 *    thread and shim; translations have an opcode, a prep and a note;
 *    thread-bound and refused rows are neither translated nor linkable);
 *  - the check itself catches each policy left out: every described row
 *    is copied with one field cleared, and each copy must be flagged;
 *  - the rows with an io_uring translation are exactly the calls the
 *    differential tests cover (tests/diff_calls.h, read by t_diff_fs.c,
 *    t_diff_net.c and t_diff_misc.c): a translation without a
 *    differential case is untested against the kernel;
 *  - every argument name has a kind (the letters the profiler, xsc
 *    trace, reads);
 *  - every number the kernel headers name has that name in the library;
 *  - the argument count of a described row is its list of kinds.
 * Not per backend: the table is the same for all. */
#include <sys/syscall.h>

#include "diff_calls.h"
#include "internal.h"
#include "testlib.h"

static const long diff_calls[] = { DIFF_FS_CALLS, DIFF_NET_CALLS, DIFF_MISC_CALLS };
#define NDIFF (sizeof(diff_calls) / sizeof(diff_calls[0]))

static bool diff_covers(long nr)
{
	for (size_t i = 0; i < NDIFF; i++)
		if (diff_calls[i] == nr)
			return true;
	return false;
}

/* Row d with one field broken must be flagged by the check. */
static int flagged(FILE *devnull, long nr, struct xsc_sysdef d)
{
	return xsc__table_check_row(devnull, nr, &d);
}

static int check_the_check(void)
{
	FILE *nul = fopen("/dev/null", "w");
	int bad = 0, tried = 0;

	CHECK(nul != NULL);
	for (long nr = 0; nr < XSC_NR_MAX; nr++) {
		const struct xsc_sysdef *d = &xsc__sys[nr];
		struct xsc_sysdef m;
#define MUST_FLAG(what, change) do { \
		m = *d; change; tried++; \
		if (!flagged(nul, nr, m)) { \
			fprintf(stderr, "%ld %s: the check misses %s\n", nr, \
				xsc_syscall_name(nr), what); \
			bad = 1; } } while (0)
		if (!d->args)
			continue;
		MUST_FLAG(".block left out", m.block = XSC_BLOCK_UNSTATED);
		MUST_FLAG(".thread left out", m.thread = XSC_THREAD_UNSTATED);
		MUST_FLAG(".shim left out", m.shim = XSC_SHIM_UNSTATED);
		MUST_FLAG(".args left out", m.args = NULL);
		MUST_FLAG("an argument name without a kind", m.args = "fd,no_such_kind");
		MUST_FLAG(".newfd out of range", m.newfd = XSC_NEWFD_NKINDS);
		if (xsc__sys_pair(d) || d->chain.kind == XSC_CHAIN_OPEN)
			MUST_FLAG(".newfd left out", m.newfd = XSC_NEWFD_NONE);
		if (d->uring.prep && nr != XSC_NR_NOP)
			MUST_FLAG(".uring.op left out", memset(m.uring.op, 0, 2));
		if (d->uring.prep)
			MUST_FLAG(".uring.note left out", m.uring.note = NULL);
		if (d->uring.prep)
			MUST_FLAG(".uring.prep left out", m.uring.prep = NULL);
		if (d->cheap_if)
			MUST_FLAG(".cheap_if with .cheap", m.cheap = true);
		if (d->cheap_if)
			MUST_FLAG(".cheap_if without a translation", m.uring.prep = NULL;
				  m.uring.op[0] = 0; m.uring.note = NULL);
		if (d->refuse)
			MUST_FLAG(".thread of a refused row", m.thread = XSC_ANY_THREAD);
		if (d->chain.kind && d->chain.kind != XSC_CHAIN_NOP)
			MUST_FLAG(".chain.op left out", m.chain.op = 0);
		if (d->chain.kind && d->chain.kind != XSC_CHAIN_SYNC)
			MUST_FLAG(".chain.flags on a call that is no fsync", m.chain.flags = 1);
		if (d->creds)
			MUST_FLAG(".creds on another thread kind", m.thread = XSC_ANY_THREAD);
		if (d->sandbox)
			MUST_FLAG(".sandbox on another thread kind", m.thread = XSC_ANY_THREAD);
		if (d->intr || d->turn.dir)
			MUST_FLAG(".intr/.turn of a call that never blocks",
				  m.block = XSC_NEVER_BLOCKS);
		if (d->turn.msg)
			MUST_FLAG(".turn.msg naming a descriptor", m.turn.msg = 1);
		if (d->sigpipe.fd)
			MUST_FLAG(".sigpipe.fd past the arguments", m.sigpipe.fd = 7);
		if (d->sigpipe.msg)
			MUST_FLAG(".sigpipe.msg without .sigpipe.fd", m.sigpipe.fd = 0);
		MUST_FLAG(".intr out of range", m.intr = XSC_INTR_WAIT + 1);
		if (d->shim != XSC_SHIM_EMULATE)
			MUST_FLAG(".in_handler in a row the shim does not emulate",
				  m.in_handler = true);
		MUST_FLAG(".fdkind out of range", m.fdkind = XSC_FDKIND_SHARE + 1);
		if (d->nonblock)
			MUST_FLAG(".nonblock in a row that makes no descriptor",
				  m.fdkind = XSC_FDKIND_NONE);
		if (d->fdkind == XSC_FDKIND_NEW)
			MUST_FLAG("a new descriptor that may be a file", m.newfd = XSC_NEWFD_FILE);
		if (d->nonblock)
			MUST_FLAG(".nonblock naming a pointer", m.nonblock = 4; m.args = "a,b,c,fds_out");
		if (d->probe)
			MUST_FLAG(".probe of a call that never blocks", m.block = XSC_NEVER_BLOCKS);
		if (d->probe)
			MUST_FLAG(".probe naming a pointer", m.probe = 1);
		if (d->intr_timeout)
			MUST_FLAG(".intr_timeout naming an integer", m.intr_timeout = 3);
		if (d->intr_timeout)
			MUST_FLAG(".intr_timeout in a call not restarted", m.intr = XSC_INTR_EINTR);
		if (d->disk)
			MUST_FLAG(".disk naming a buffer", m.disk = 2);
		if (d->disk)
			MUST_FLAG(".disk on a thread-bound call", m.thread = XSC_THREAD_SIGNALS);
		if (d->disk)
			MUST_FLAG(".disk on a call that never blocks", m.block = XSC_NEVER_BLOCKS);
		if (xsc__row_bound(d))
			MUST_FLAG("a bound row translated", m.uring.prep = xsc__sys[SYS_read].uring.prep;
				  m.uring.op[0] = 1; m.uring.note = "x");
#undef MUST_FLAG
	}
	fclose(nul);
	if (!bad)
		printf("ok: the check flags each of %d broken rows\n", tried);
	return bad;
}

int main(void)
{
	int bad = 0, translated = 0, described = 0;

	if (xsc__table_check(stderr))
		bad = 1;
	for (long nr = 0; nr < XSC_NR_MAX; nr++) {
		const struct xsc_sysdef *d = &xsc__sys[nr];
		const char *nm = xsc_syscall_name(nr);
		described += d->args != NULL;
		if (!d->uring.prep)
			continue;
		translated++;
		if (nr < XSC_NR_NOP && !diff_covers(nr)) {
			fprintf(stderr, "%ld %s: translated to io_uring, but no "
				"differential case (tests/diff_calls.h)\n", nr, nm);
			bad = 1;
		}
	}
	for (size_t i = 0; i < NDIFF; i++)
		if (!xsc__sys[diff_calls[i]].uring.prep) {
			fprintf(stderr, "%s: in tests/diff_calls.h, but not translated\n",
				xsc_syscall_name(diff_calls[i]));
			bad = 1;
		}
	/* the kernel headers' numbers: each has its own name */
#define XSC_SYSNAME(n, nm) \
	if (strcmp(xsc_syscall_name(n), #nm)) { \
		fprintf(stderr, "%d %s: named \"%s\"\n", n, #nm, xsc_syscall_name(n)); bad = 1; }
#include "sysnames.h"
#undef XSC_SYSNAME
	/* argument counts: the kinds listed (a row with kinds of its own) */
	CHECK_EQ(xsc__sys_nargs(&xsc__sys[SYS_read]), 3);
	CHECK_EQ(xsc__sys_nargs(&xsc__sys[SYS_getppid]), 0);
	CHECK_EQ(xsc__sys_nargs(&xsc__sys[SYS_futex]), 6);
	/* argument kinds: the letters the profiler reads */
	char k[6];
	CHECK_EQ(xsc__sys_akinds(&xsc__sys[SYS_openat], k), 0);
	CHECK(!memcmp(k, "fsci--", 6));
	CHECK(xsc__sys[SYS_openat].newfd == XSC_NEWFD_FILE);
	CHECK(xsc__sys_pair(&xsc__sys[SYS_pipe2]) && !xsc__sys_pair(&xsc__sys[SYS_dup]));
	CHECK(xsc__sys_pair_at(&xsc__sys[SYS_pipe2]) == 0 &&
	      xsc__sys_pair_at(&xsc__sys[SYS_socketpair]) == 3 &&
	      xsc__sys_pair_at(&xsc__sys[SYS_dup]) == -1);
	bad |= check_the_check();
	if (bad)
		return 1;
	printf("ok: %d rows described, %d translated to io_uring, each with a "
	       "differential case\n", described, translated);
	return 0;
}
