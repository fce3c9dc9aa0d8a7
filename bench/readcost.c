/*
 * readcost.c - `xsc bench read-cost`: the cost of an empty read() on
 * different kinds of file, called from user space vs executed inside the
 * kernel (Rubini, "Kernel System Calls", Table One).
 *
 * The article times read(fd, buf, 0) from a program and from a kernel
 * module and finds the kernel-side call ~50 ticks cheaper everywhere (the
 * two user/kernel crossings), with the file type deciding the rest.  The
 * stock-Linux way to run a read inside the kernel without a crossing per
 * call is io_uring, so per file this measures, in one interleaved run,
 * best of N rounds:
 *   sync       read(fd, buf, 0) with a raw `syscall` instruction
 *   xsc-uring  the same call posted through xsc's uring executor, a batch
 *              of 32 per io_uring_enter (post, flush, wait, take)
 *   raw-uring  IORING_OP_READ of 0 bytes straight through liburing, batch
 *              32: io_uring's own cost, without xsc's bookkeeping
 * Every result is checked (must be 0); a row with a wrong result is
 * reported and makes the run fail.
 *
 * Empty means count 0, as in the article.  Pipes, sockets and page-cache
 * files return 0 for count 0 before looking at any data (pipe_read,
 * sock_read_iter, filemap_read test the count first), so those rows time
 * the syscall, VFS and file-type dispatch, not a transfer.  Nothing can
 * block: pipes, sockets and the pty hold a byte (a line for the pty), and
 * a row is skipped unless poll() says its fd is readable.
 *
 * io_uring runs a read inline only on files that support non-blocking
 * attempts (FMODE_NOWAIT); others (procfs, sysfs, ttys on some kernels)
 * are punted to io_uring's worker threads, and xsc first tries RWF_NOWAIT
 * then resubmits (see src/uring_rw.c), so those rows cost far more than
 * the synchronous call.  That is part of the answer, not an artefact.
 *
 * Times are TSC ticks (rdtsc; the rate is measured against
 * CLOCK_MONOTONIC and printed) and ns.  The article's ticks are core
 * cycles of a 500 MHz Pentium; compare ratios, not absolute numbers.
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include "harness.h"
#include "rawsys.h"
#include "xsc.h"

int xsc_bench_readcost(int argc, char **argv);

#define BATCH 32

enum { SYNC, XSC, RAW, NCFG };
static const char *const cfg_name[NCFG] = { "sync", "xsc-uring", "raw-uring" };

struct target {
	const char *name;
	const char *paper;	/* the article's column, or NULL */
	int pu, pk;		/* its user / kernel ticks */
	int fd, peer, extra;	/* fds to close; -1 when unused */
	char fs[24];		/* file system or kind */
	char tmp[64];		/* a file to unlink, or "" */
	bool ok;
	double best[NCFG];	/* TSC ticks per call */
};

static const char *fs_name(int fd)
{
	struct statfs s;

	if (fstatfs(fd, &s))
		return "?";
	switch ((unsigned long)s.f_type) {
	case 0x01021994: return "tmpfs";
	case 0xEF53: return "ext4";
	case 0x58465342: return "xfs";
	case 0x9123683E: return "btrfs";
	case 0x794c7630: return "overlay";
	case 0x9fa0: return "procfs";
	case 0x62656572: return "sysfs";
	case 0x1cd1: return "devpts";
	case 0x50495045: return "pipefs";
	case 0x534F434B: return "sockfs";
	default: return "other";
	}
}

/* A 4 KiB file in dir, positioned at 0; -errno on failure. */
static int tmpfile_in(struct target *t, const char *dir, bool want_tmpfs)
{
	static const char page[4096];

	snprintf(t->tmp, sizeof(t->tmp), "%s/xsc-readcost.XXXXXX", dir);
	int fd = mkstemp(t->tmp);
	if (fd < 0) {
		t->tmp[0] = 0;
		return -errno;
	}
	bool is_tmpfs = !strcmp(fs_name(fd), "tmpfs");
	if (is_tmpfs != want_tmpfs || write(fd, page, sizeof(page)) != sizeof(page)) {
		close(fd);
		unlink(t->tmp);
		t->tmp[0] = 0;
		return -EXDEV;
	}
	lseek(fd, 0, SEEK_SET);
	return fd;
}

static int tcp_pair(int *srv, int *cli, int *lis)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);

	*lis = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (*lis < 0 || bind(*lis, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(*lis, 1) || getsockname(*lis, (struct sockaddr *)&a, &len))
		return -errno;
	*cli = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (*cli < 0 || connect(*cli, (struct sockaddr *)&a, sizeof(a)))
		return -errno;
	*srv = accept4(*lis, NULL, NULL, SOCK_CLOEXEC);
	return *srv < 0 ? -errno : 0;
}

/* Opens target i; its fd is readable (poll) and holds data where a read
 * could otherwise wait.  Returns 0 or -errno. */
static int setup(struct target *t)
{
	int p[2], err = 0;
	const char *n = t->name;

	t->fd = t->peer = t->extra = -1;
	if (n[0] == '/') {
		t->fd = open(n, O_RDONLY | O_CLOEXEC);
		err = t->fd < 0 ? -errno : 0;
	} else if (!strcmp(n, "pipe")) {
		if (pipe2(p, O_CLOEXEC))
			return -errno;
		t->fd = p[0], t->peer = p[1];
	} else if (!strcmp(n, "unix-socket")) {
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p))
			return -errno;
		t->fd = p[0], t->peer = p[1];
	} else if (!strcmp(n, "tcp-loopback")) {
		err = tcp_pair(&t->fd, &t->peer, &t->extra);
	} else if (!strcmp(n, "pty")) {
		t->peer = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
		if (t->peer < 0 || grantpt(t->peer) || unlockpt(t->peer))
			return -errno;
		t->fd = open(ptsname(t->peer), O_RDWR | O_NOCTTY | O_CLOEXEC);
		err = t->fd < 0 ? -errno : 0;
	} else if (!strcmp(n, "file-tmpfs")) {
		t->fd = tmpfile_in(t, "/dev/shm", true);
		err = t->fd < 0 ? t->fd : 0;
	} else if (!strcmp(n, "file-disk")) {
		t->fd = tmpfile_in(t, "/var/tmp", false);
		if (t->fd < 0)
			t->fd = tmpfile_in(t, "/tmp", false);
		err = t->fd < 0 ? t->fd : 0;
	}
	if (err)
		return err;
	/* Something to read, so no read anywhere (io_uring included) waits. */
	if (t->peer >= 0 && write(t->peer, "x\n", 2) != 2)
		return -errno;
	snprintf(t->fs, sizeof(t->fs), "%s", fs_name(t->fd));
	struct pollfd pf = { .fd = t->fd, .events = POLLIN };
	for (int i = 0; i < 100 && poll(&pf, 1, 10) == 0; i++)
		;	/* tcp and pty data may take a moment to arrive */
	return pf.revents & POLLIN ? 0 : -EWOULDBLOCK;
}

static void teardown(struct target *t)
{
	if (t->fd >= 0)
		close(t->fd);
	if (t->peer >= 0)
		close(t->peer);
	if (t->extra >= 0)
		close(t->extra);
	if (t->tmp[0])
		unlink(t->tmp);
}

static char buf[64];

/* Ticks per call, or -1 after a wrong result. */
static double run_sync(int fd, long n)
{
	long bad = 0;
	uint64_t t0 = bench_tsc();

	for (long i = 0; i < n; i++)
		bad |= xsc__sys3(SYS_read, fd, buf, 0);
	uint64_t t1 = bench_tsc();
	return bad ? -1 : (double)(t1 - t0) / (double)n;
}

static double run_xsc(struct xsc *x, int fd, long n)
{
	int ids[BATCH];
	long bad = 0, ret;
	uint64_t t0 = bench_tsc();

	for (long it = 0; it < n / BATCH; it++) {
		for (int i = 0; i < BATCH; i++)
			ids[i] = xsc_post(x, SYS_read, (long)fd, (long)buf, 0L);
		xsc_flush(x);
		for (int i = 0; i < BATCH; i++) {
			if (ids[i] < 0 || xsc_take(x, ids[i], &ret) < 0)
				return -1;
			bad |= ret;
		}
	}
	uint64_t t1 = bench_tsc();
	return bad ? -1 : (double)(t1 - t0) / (double)(n / BATCH * BATCH);
}

static double run_raw(struct io_uring *ring, int fd, long n)
{
	struct io_uring_cqe *cqe;
	unsigned head, got;
	long bad = 0;
	uint64_t t0 = bench_tsc();

	for (long it = 0; it < n / BATCH; it++) {
		for (int i = 0; i < BATCH; i++)
			io_uring_prep_read(io_uring_get_sqe(ring), fd, buf, 0, -1);
		io_uring_submit_and_wait(ring, BATCH);
		got = 0;
		io_uring_for_each_cqe(ring, head, cqe) {
			bad |= cqe->res;
			got++;
		}
		io_uring_cq_advance(ring, got);
		if (got != BATCH)
			return -1;
	}
	uint64_t t1 = bench_tsc();
	return bad ? -1 : (double)(t1 - t0) / (double)(n / BATCH * BATCH);
}

static const char usage[] =
	"usage: xsc bench read-cost [--quick] [--rounds N] [--out DIR]\n"
	"  Empty read(fd, buf, 0) per file type: synchronous vs io_uring (xsc and\n"
	"  raw liburing, batches of 32), TSC ticks and ns per call.\n"
	"  Writes DIR/read-cost.csv and DIR/read-cost.png.\n";

#define T(n, p, u, k) { .name = n, .paper = p, .pu = u, .pk = k }
static struct target targets[] = {
	T("/dev/null", "/dev/null", 313, 262),
	T("/dev/zero", "/dev/zero", 324, 273),
	T("pipe", NULL, 0, 0),
	T("unix-socket", "socket", 320, 270),
	T("tcp-loopback", "socket", 320, 270),
	T("file-tmpfs", NULL, 0, 0),
	T("file-disk", "ext2fs", 329, 278),
	T("pty", "local-pty", 474, 424),
	T("/proc/loadavg", "/proc", 570, 519),
	T("/proc/sys/kernel/ostype", "/proc/sys", 402, 351),
	T("/sys/devices/system/cpu/online", NULL, 0, 0),
};
#undef T
#define NT ((int)(sizeof(targets) / sizeof(targets[0])))

static void print_and_csv(FILE *f, double ghz)
{
	printf("%-31s %-7s %9s %9s %9s %8s %8s %8s %7s %7s  %s\n", "file", "fs",
	       "sync", "xsc-ur", "raw-ur", "sync ns", "xsc ns", "raw ns",
	       "xsc/syn", "raw/syn", "paper user/kernel ticks (k/u)");
	for (int t = 0; t < NT; t++) {
		struct target *g = &targets[t];
		if (!g->ok) {
			printf("%-31s skipped\n", g->name);
			continue;
		}
		double *b = g->best;
		printf("%-31s %-7s %9.0f %9.0f %9.0f %8.1f %8.1f %8.1f %7.2f %7.2f  ",
		       g->name, g->fs, b[SYNC], b[XSC], b[RAW], b[SYNC] / ghz,
		       b[XSC] / ghz, b[RAW] / ghz, b[XSC] / b[SYNC], b[RAW] / b[SYNC]);
		if (g->paper)
			printf("%s %d/%d (%.2f)\n", g->paper, g->pu, g->pk,
			       (double)g->pk / g->pu);
		else
			printf("-\n");
		if (f)
			fprintf(f, "%s,%s,%.1f,%.1f,%.1f,%.2f,%.2f,%.2f,%.3f,%.3f,%d,%d\n",
				g->name, g->fs, b[SYNC], b[XSC], b[RAW], b[SYNC] / ghz,
				b[XSC] / ghz, b[RAW] / ghz, b[XSC] / b[SYNC],
				b[RAW] / b[SYNC], g->pu, g->pk);
	}
}

/* Every round: each file, read n times on each path; the best of each
 * kept.  True when a read did not return 0 (that row is dropped). */
static bool rounds(struct xsc *x, struct io_uring *ring, const struct bench_opts *o,
		   long n)
{
	int64_t t0 = bench_now_ns();
	bool failed = false;

	for (int r = 0; r < o->rounds; r++)
		for (int t = 0; t < NT; t++) {
			struct target *g = &targets[t];
			bench_progress("bench read-cost", r * NT + t, o->rounds * NT, t0);
			if (!g->ok)
				continue;
			double v[NCFG] = { run_sync(g->fd, n), run_xsc(x, g->fd, n),
					   run_raw(ring, g->fd, n) };
			for (int k = 0; k < NCFG; k++) {
				if (v[k] < 0) {
					fprintf(stderr, "read-cost: %s via %s: a read did "
						"not return 0\n", g->name, cfg_name[k]);
					g->ok = false;
					failed = true;
				} else if (v[k] < g->best[k]) {
					g->best[k] = v[k];
				}
			}
		}
	bench_progress_done();
	return failed;
}

/* The table, the CSV and the plot; 0, or 1 when the CSV could not be
 * written or a read went wrong (then no CSV is left behind). */
static int report(const struct bench_opts *o, double ghz, long n, bool failed)
{
	printf("Empty read(fd, buf, 0): TSC ticks and ns per call (best of %d "
	       "rounds x %ld calls; io_uring batches of %d)\n", o->rounds, n, BATCH);
	printf("TSC: %.0f MHz (ticks, not core cycles: no hardware counters "
	       "here).  Paper: 500 MHz Pentium, core cycles, user space vs a "
	       "kernel module calling read().\n", ghz * 1000);
	FILE *f = bench_csv_open(o, "read-cost", "file,fs,sync_ticks,xsc_uring_ticks,"
				 "raw_uring_ticks,sync_ns,xsc_uring_ns,raw_uring_ns,"
				 "xsc_over_sync,raw_over_sync,paper_user_ticks,"
				 "paper_kernel_ticks");
	print_and_csv(f, ghz);
	printf("io_uring runs a read inline only where the file supports "
	       "non-blocking attempts; other files go to io_uring worker threads.\n");
	if (!f || bench_csv_close(o, "read-cost", f, !failed) != 0 || failed)
		return 1;
	bench_plot(o, "read-cost",
		   "set title 'Empty read() per file type (xsc bench read-cost)'\n"
		   "set style data histogram\nset style histogram cluster gap 1\n"
		   "set style fill solid 0.8 border -1\nset logscale y\n"
		   "set xtics rotate by -35\nset ylabel 'ns per call (log)'\n"
		   "set bmargin 8\nset rmargin 12\n"
		   "plot DIR.'/read-cost.csv' using 6:xtic(1) title 'sync read()', "
		   "'' using 7 title 'xsc uring (batch 32)', "
		   "'' using 8 title 'raw liburing (batch 32)'");
	printf("wrote %s/read-cost.csv\n", o->out);
	return 0;
}

int xsc_bench_readcost(int argc, char **argv)
{
	struct bench_opts o;
	struct bench_uring_pair u;
	int rc, ret = 1;

	if (!bench_args(argc, argv, &o, usage, &rc))
		return rc;
	long n = o.quick ? 2048 : 32768;
	bench_pin(0);
	double ghz = bench_tsc_per_ns(o.quick ? 20 : 100);
	if (bench_uring_pair_open(&u, 0, SYS_read, 256, "xsc bench read-cost"))
		goto out;
	for (int t = 0; t < NT; t++) {
		int err = setup(&targets[t]);
		targets[t].ok = !err;
		for (int k = 0; k < NCFG; k++)
			targets[t].best[k] = 1e300;
		if (err)
			fprintf(stderr, "read-cost: %s skipped: %s\n", targets[t].name,
				strerror(-err));
	}
	ret = report(&o, ghz, n, rounds(u.x, &u.ring, &o, n));
	for (int t = 0; t < NT; t++)
		teardown(&targets[t]);
out:
	bench_uring_pair_close(&u);
	return ret;
}
