/*
 * diff.h - the differential-test harness shared by t_diff_fs.c,
 * t_diff_net.c and t_diff_misc.c.
 *
 * Every case is a function run twice on identical fresh scratch objects:
 * once with the calls under test going through xsc (the executor chosen by
 * XSC_BACKEND) and once with the same calls made directly (raw syscall
 * instruction).  Each run writes an observation log: every return value
 * (64-bit, value or -errno) plus every output the case records (bytes
 * read, struct stat fields, file contents, offsets, directory listings,
 * revents, addresses...).  The two logs are then compared entry by entry;
 * a difference prints the case, the call with its arguments and both
 * results, and makes the test exit 1.
 *
 * Calls that do not change anything (stat, statx, getxattr, uname...) are
 * additionally compared on the SAME object in the xsc run (same_out():
 * xsc then direct, byte for byte, inode numbers and times included).
 *
 * Every xsc call is timed out after 2 s (SIGALRM without SA_RESTART: the
 * xsc wait returns, the call is canceled and yields -EINTR), so a call
 * that hangs in one executor is reported as a mismatch, not a hung test.
 *
 * At the end: the route of every tested syscall is checked against the
 * backend (xsc_route), the executor that completed each call is checked
 * (xsc_stats by_backend deltas), xsc_close must return 0 and no fd leaks.
 */
#ifndef XSC_DIFF_H
#define XSC_DIFF_H

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>
#include <liburing.h>

#include "diff_calls.h"
#include "rawsys.h"
#include "table.h"
#include "testlib.h"
#include "uring_ops.h"
#include "xsc.h"

#pragma GCC diagnostic ignored "-Wunused-function"

/* Formats a path into the array buf; a path that does not fit fails the
 * test instead of naming some other file. */
#define PATH_FMT(buf, ...) \
	CHECK(snprintf(buf, sizeof(buf), __VA_ARGS__) < (int)sizeof(buf))

enum { RUN_XSC = 0, RUN_SYS = 1 };

static struct xsc *X;
static int run_mode;
static const char *case_name = "-";
static char base_dir[PATH_MAX];	/* scratch dir */
static char run_dir[PATH_MAX];	/* this run's directory (cwd during a run) */
static int nfail, ncases, ncalls;
static int backend_req;		/* enum xsc_backend from XSC_BACKEND */
static unsigned long used[1024][5];	/* completions per syscall per executor */
static volatile sig_atomic_t timed_out;
static int stop_first, verbose;

/* ---- the observation log ------------------------------------------------ */

struct rec {
	char label[64];
	char desc[200];
	int kind;		/* 0 integer, 1 bytes */
	long long v;
	unsigned char *b;
	size_t n;
};
#define MAXREC 768
static struct rec logs[2][MAXREC];
static int nrec[2];

static void rec_add(const char *label, const char *desc, int kind, long long v,
		    const void *b, size_t n)
{
	struct rec *r;

	if (nrec[run_mode] >= MAXREC) {
		fprintf(stderr, "case %s: observation log full\n", case_name);
		exit(1);
	}
	r = &logs[run_mode][nrec[run_mode]++];
	snprintf(r->label, sizeof(r->label), "%s", label);
	snprintf(r->desc, sizeof(r->desc), "%s", desc ? desc : "");
	r->kind = kind;
	r->v = v;
	r->b = NULL;
	r->n = n;
	if (kind == 1) {
		r->b = malloc(n ? n : 1);
		CHECK(r->b != NULL);
		if (n)
			memcpy(r->b, b, n);
	}
}

static void rec_i(const char *label, long long v) { rec_add(label, NULL, 0, v, NULL, 0); }
static void rec_b(const char *label, const void *p, size_t n) { rec_add(label, NULL, 1, 0, p, n); }
static void rec_s(const char *label, const char *s) { rec_b(label, s, strlen(s)); }

static void fmt_val(char *buf, size_t len, long long v)
{
	const char *e = v < 0 && v > -4096 ? strerrorname_np((int)-v) : NULL;
	if (e)
		snprintf(buf, len, "%lld (-%s)", v, e);
	else
		snprintf(buf, len, "%lld (0x%llx)", v, (unsigned long long)v);
}

static void dump(const char *who, const unsigned char *b, size_t n, size_t at)
{
	size_t s = at > 8 ? at - 8 : 0, e = at + 24 < n ? at + 24 : n;
	fprintf(stderr, "      %-7s [%zu bytes] @%zu:", who, n, s);
	for (size_t i = s; i < e; i++)
		fprintf(stderr, "%s%02x", i == at ? " >" : " ", b[i]);
	fputc('\n', stderr);
}

static void fail_note(void)
{
	nfail++;
	if (stop_first)
		exit(1);
}

static void compare_logs(void)
{
	int n = nrec[0] > nrec[1] ? nrec[0] : nrec[1];

	for (int i = 0; i < n; i++) {
		struct rec *a = &logs[0][i], *b = &logs[1][i];
		char va[64], vb[64];

		if (verbose && i < nrec[0] && i < nrec[1] && a->kind == 0) {
			fmt_val(va, sizeof(va), a->v);
			fmt_val(vb, sizeof(vb), b->v);
			printf("  %s%s: xsc=%s direct=%s\n", a->label, a->desc, va, vb);
		}
		if (i >= nrec[0] || i >= nrec[1] || strcmp(a->label, b->label)) {
			fprintf(stderr, "MISMATCH [%s] case %s: the runs diverged at "
				"observation %d (xsc: %s, direct: %s)\n", test_backend(),
				case_name, i, i < nrec[0] ? a->label : "<end>",
				i < nrec[1] ? b->label : "<end>");
			fail_note();
			return;
		}
		if (a->kind == 0 && a->v != b->v) {
			fmt_val(va, sizeof(va), a->v);
			fmt_val(vb, sizeof(vb), b->v);
			fprintf(stderr, "MISMATCH [%s] case %s: %s%s\n      xsc=%s direct=%s\n",
				test_backend(), case_name, a->label, a->desc, va, vb);
			fail_note();
		} else if (a->kind == 1 && (a->n != b->n || memcmp(a->b, b->b, a->n))) {
			size_t at = 0;
			while (at < a->n && at < b->n && a->b[at] == b->b[at])
				at++;
			fprintf(stderr, "MISMATCH [%s] case %s: %s%s (bytes differ)\n",
				test_backend(), case_name, a->label, a->desc);
			dump("xsc", a->b, a->n, at);
			dump("direct", b->b, b->n, at);
			fail_note();
		}
	}
}

static void free_logs(void)
{
	for (int m = 0; m < 2; m++) {
		for (int i = 0; i < nrec[m]; i++)
			free(logs[m][i].b);
		nrec[m] = 0;
	}
}

/* ---- executing a call ------------------------------------------------------ */

static void on_alarm(int sig) { (void)sig; timed_out = 1; }

static void arm(int on)
{
	struct itimerval it = { { 0, 0 }, { on ? 2 : 0, 0 } };
	setitimer(ITIMER_REAL, &it, NULL);
}

static long direct6(long nr, const long *a)
{
	return xsc__sys6(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

static int last_exec;	/* executor of the last xsc call (enum xsc_backend) */

static long via_xsc(long nr, const long *a)
{
	struct xsc_stats s0, s1;
	long r;

	xsc_stats_get(X, &s0);
	r = xsc_call(X, nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	xsc_stats_get(X, &s1);
	last_exec = 0;
	for (int b = 1; b < 5; b++)
		if (s1.by_backend[b] > s0.by_backend[b]) {
			last_exec = b;
			used[nr & 1023][b]++;
		}
	ncalls++;
	return r;
}

/* The call under test: through xsc in the xsc run, directly otherwise. */
static long exec_call(long nr, const long *a)
{
	long r;

	timed_out = 0;
	arm(1);
	r = run_mode == RUN_XSC ? via_xsc(nr, a) : direct6(nr, a);
	arm(0);
	if (timed_out) {
		fprintf(stderr, "TIMEOUT [%s] case %s: %s (%s run) did not return "
			"within 2 s (result %ld)\n", test_backend(), case_name,
			xsc_syscall_name(nr), run_mode == RUN_XSC ? "xsc" : "direct", r);
		fail_note();
	}
	return r;
}

static void fmt_args(char *d, size_t len, long nr, const long *a)
{
	int n = snprintf(d, len, " = %s(", xsc_syscall_name(nr));
	int last = 5;
	while (last > 0 && a[last] == 0)
		last--;
	for (int i = 0; i <= last && n < (int)len; i++) {
		long v = a[i];
		if (v > -4096 && v < 65536)
			n += snprintf(d + n, len - n, "%s%ld", i ? ", " : "", v);
		else
			n += snprintf(d + n, len - n, "%s0x%lx", i ? ", " : "", (unsigned long)v);
	}
	if (n < (int)len)
		snprintf(d + n, len - n, ")");
}

/* Executes and records the return value under `label`. */
static long xs_rec(const char *label, long nr, const long *a)
{
	char desc[200];
	long r = exec_call(nr, a);

	fmt_args(desc, sizeof(desc), nr, a);
	rec_add(label, desc, 0, r, NULL, 0);
	return r;
}

/* Argument list helpers: every argument is cast to long (an int -1 must be
 * -1, never 0xffffffff), missing ones are 0. */
#define XS_N(_1, _2, _3, _4, _5, _6, N, ...) N
#define XS_CNT(...) XS_N(__VA_ARGS__, 6, 5, 4, 3, 2, 1, 0)
#define XS_L1(a) (long)(a)
#define XS_L2(a, b) (long)(a), (long)(b)
#define XS_L3(a, b, c) (long)(a), (long)(b), (long)(c)
#define XS_L4(a, b, c, d) (long)(a), (long)(b), (long)(c), (long)(d)
#define XS_L5(a, b, c, d, e) (long)(a), (long)(b), (long)(c), (long)(d), (long)(e)
#define XS_L6(a, b, c, d, e, f) (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), (long)(f)
#define XS_CAT_(a, b) a##b
#define XS_CAT(a, b) XS_CAT_(a, b)
#define ARGS(...) ((const long[6]){ XS_CAT(XS_L, XS_CNT(__VA_ARGS__))(__VA_ARGS__) })

/* R(label, SYS_x, args...): run a call under test, record its result. */
#define R(label, nr, ...) xs_rec(label, nr, ARGS(__VA_ARGS__))
#define R0(label, nr) xs_rec(label, nr, (const long[6]){ 0 })
/* Q(SYS_x, args...): run a call under test without recording it. */
#define Q(nr, ...) exec_call(nr, ARGS(__VA_ARGS__))

/* Same object, xsc against direct, in the xsc run: argument `bi` is an
 * output buffer of n bytes, replaced by two buffers prefilled with 0xa5
 * (or with `init` when given).  Returns the result; the buffer contents
 * are left in `out` (if not NULL).  Records the result under `label`. */
static long same_out(const char *label, long nr, const long *args, int bi, size_t n,
		     void *out, const void *init)
{
	unsigned char *b1 = malloc(n + 1), *b2 = malloc(n + 1);
	long a[6], r1, r2;
	char desc[200];

	CHECK(b1 && b2);
	if (init) {
		memcpy(b1, init, n);
		memcpy(b2, init, n);
	} else {
		memset(b1, 0xa5, n);
		memset(b2, 0xa5, n);
	}
	memcpy(a, args, sizeof(a));
	a[bi] = (long)b1;
	r1 = exec_call(nr, a);
	a[bi] = (long)b2;
	r2 = direct6(nr, a);
	fmt_args(desc, sizeof(desc), nr, args);
	if (r1 != r2 || memcmp(b1, b2, n)) {
		char v1[64], v2[64];
		size_t at = 0;
		while (at < n && b1[at] == b2[at])
			at++;
		fmt_val(v1, sizeof(v1), r1);
		fmt_val(v2, sizeof(v2), r2);
		fprintf(stderr, "MISMATCH [%s] case %s (same object): %s%s\n"
			"      %s=%s direct=%s\n", test_backend(), case_name, label, desc,
			run_mode == RUN_XSC ? "xsc" : "direct", v1, v2);
		if (at < n) {
			dump(run_mode == RUN_XSC ? "xsc" : "direct", b1, n, at);
			dump("direct", b2, n, at);
		}
		fail_note();
	}
	rec_add(label, desc, 0, r1, NULL, 0);
	if (out)
		memcpy(out, b1, n);
	free(b1);
	free(b2);
	return r1;
}
#define SAME(label, bi, n, out, nr, ...) same_out(label, nr, ARGS(__VA_ARGS__), bi, n, out, NULL)

/* ---- observations made directly --------------------------------------------- */

static char lbuf[128];
static const char *L(const char *a, const char *b)
{
	snprintf(lbuf, sizeof(lbuf), "%s.%s", a, b);
	return lbuf;
}

static void obs_stat(const char *label, const struct stat *st)
{
	rec_i(L(label, "mode"), st->st_mode);
	rec_i(L(label, "nlink"), (long long)st->st_nlink);
	rec_i(L(label, "uid"), st->st_uid);
	rec_i(L(label, "gid"), st->st_gid);
	rec_i(L(label, "size"), st->st_size);
	rec_i(L(label, "blocks"), st->st_blocks);
	rec_i(L(label, "rdev"), (long long)st->st_rdev);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The state of a path: type, mode, size, links; contents of a regular
 * file, target of a symlink, sorted names of a directory. */
static void obs_path(const char *label, const char *path)
{
	struct stat st;
	char buf[4096];
	int sfd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);

	/* st_blocks of freshly written data depends on when the filesystem
	 * allocates (ext4 delayed allocation): settle it first */
	if (sfd >= 0) {
		if (fstat(sfd, &st) == 0 && S_ISREG(st.st_mode))
			fsync(sfd);
		close(sfd);
	}
	if (lstat(path, &st) < 0) {
		rec_i(L(label, "lstat"), -errno);
		return;
	}
	obs_stat(label, &st);
	if (S_ISREG(st.st_mode)) {
		int fd = open(path, O_RDONLY);
		ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf)) : -1;
		rec_b(L(label, "data"), buf, n > 0 ? (size_t)n : 0);
		if (fd >= 0)
			close(fd);
	} else if (S_ISLNK(st.st_mode)) {
		ssize_t n = readlink(path, buf, sizeof(buf));
		rec_b(L(label, "target"), buf, n > 0 ? (size_t)n : 0);
	} else if (S_ISDIR(st.st_mode)) {
		DIR *d = opendir(path);
		struct dirent *de;
		char *names[256], list[4096] = "";
		int n = 0;
		while (d && (de = readdir(d)) && n < 256)
			names[n++] = strdup(de->d_name);
		if (d)
			closedir(d);
		qsort(names, n, sizeof(*names), cmp_str);
		for (int i = 0; i < n; i++) {
			strncat(list, names[i], sizeof(list) - strlen(list) - 2);
			strcat(list, "/");
			free(names[i]);
		}
		rec_s(L(label, "entries"), list);
	}
}

/* Flags, close-on-exec and offset of an fd. */
static void obs_fd(const char *label, int fd)
{
	int fl = fcntl(fd, F_GETFL);
	rec_i(L(label, "fl"), fl < 0 ? -errno : fl);
	fl = fcntl(fd, F_GETFD);
	rec_i(L(label, "fd"), fl < 0 ? -errno : fl);
	off_t o = lseek(fd, 0, SEEK_CUR);
	rec_i(L(label, "off"), o < 0 ? -errno : o);
}

/* An address whose page was mapped and unmapped just now. */
static void *unmapped(void)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED);
	CHECK_EQ(munmap(p, 4096), 0);
	return p;
}

/* Two pages, the second one PROT_NONE: edge(k) is k accessible bytes
 * before it. */
static char *edge_pages;
static char *edge(size_t k)
{
	if (!edge_pages) {
		edge_pages = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		CHECK(edge_pages != MAP_FAILED);
		CHECK_EQ(mprotect(edge_pages + 4096, 4096, PROT_NONE), 0);
	}
	memset(edge_pages, 0x5a, 4096);
	return edge_pages + 4096 - k;
}

static void put_file(const char *path, const char *data, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	CHECK_EQ(write(fd, data, n), (long)n);
	CHECK_EQ(close(fd), 0);
}

/* ---- cases ------------------------------------------------------------------ */

static int fds_base;

static void fd_snapshot(unsigned char *open_fds)
{
	for (int fd = 0; fd < 1024; fd++)
		open_fds[fd] = fcntl(fd, F_GETFD) >= 0;
}

/* Closes the fds a run left open (not those open before it). */
static void close_new(const unsigned char *open_fds)
{
	for (int fd = 0; fd < 1024; fd++)
		if (!open_fds[fd] && fcntl(fd, F_GETFD) >= 0)
			close(fd);
}

/* Runs case fn in both modes and compares.  Any fd a run leaves open is
 * recorded (a leak in one executor shows as a mismatch) and closed. */
static void run_case(const char *name, void (*fn)(void))
{
	const char *only = getenv("XSC_DIFF_ONLY");

	if (only && !strstr(name, only))
		return;
	case_name = name;
	ncases++;
	printf("case %s\n", name);
	fflush(stdout);
	for (int m = 0; m < 2; m++) {
		unsigned char open_fds[1024];
		int before = count_fds();
		fd_snapshot(open_fds);
		run_mode = m;
		PATH_FMT(run_dir, "%s/%c/%s", base_dir, m ? 'S' : 'X', name);
		CHECK_EQ(mkdir(run_dir, 0755), 0);
		CHECK_EQ(chdir(run_dir), 0);
		fn();
		CHECK_EQ(chdir(base_dir), 0);
		rec_i("open fds left by the case", count_fds() - before);
		if (count_fds() != before)
			close_new(open_fds);
	}
	compare_logs();
	free_logs();
}
#define CASE(fn) run_case(#fn, fn)

/* ---- setup and the final checks -------------------------------------------- */

static struct io_uring_probe *uprobe;
static int sqpoll_ring;

static void *probe_ring(void *arg)
{
	struct io_uring ring;

	(void)arg;
	if (io_uring_queue_init(4, &ring, 0) == 0) {
		uprobe = io_uring_get_probe_ring(&ring);
		io_uring_queue_exit(&ring);
	}
	return NULL;
}

static void diff_init(void)
{
	struct sigaction sa;
	char d[PATH_MAX];
	struct xsc_probe pr;
	const char *b = test_backend();

	setvbuf(stdout, NULL, _IOLBF, 0);
	stop_first = getenv("XSC_DIFF_STOP") != NULL;
	verbose = getenv("XSC_DIFF_VERBOSE") != NULL;
	umask(022);
	signal(SIGPIPE, SIG_IGN);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;	/* no SA_RESTART: interrupt the wait */
	sigemptyset(&sa.sa_mask);
	CHECK_EQ(sigaction(SIGALRM, &sa, NULL), 0);
	backend_req = !strcmp(b, "uring") ? XSC_BACKEND_URING :
		      !strcmp(b, "sqpoll") ? XSC_BACKEND_SQPOLL :
		      !strcmp(b, "worker") ? XSC_BACKEND_WORKER :
		      !strcmp(b, "inline") ? XSC_BACKEND_INLINE : XSC_BACKEND_AUTO;
	fds_base = count_fds();
	struct xsc_config cfg;
	xsc_config_init(&cfg);
	cfg.flags |= XSC_QUIET;
	CHECK_EQ(xsc_open(&X, &cfg), 0);
	xsc_probe_get(X, &pr);
	sqpoll_ring = pr.sqpoll;
	/* The probe ring lives on a thread of its own: the kernel frees a
	 * ring later, in a work queue, and then notifies the threads that
	 * used it as a signal would, which cut c_waitall's MSG_WAITALL recv
	 * short (2 runs in 480 under load) when it landed on this thread. */
	pthread_t t;
	CHECK_EQ(pthread_create(&t, NULL, probe_ring, NULL), 0);
	CHECK_EQ(pthread_join(t, NULL), 0);
	PATH_FMT(base_dir, "%s", scratch_dir());
	PATH_FMT(d, "%s/X", base_dir);
	CHECK_EQ(mkdir(d, 0755), 0);
	PATH_FMT(d, "%s/S", base_dir);
	CHECK_EQ(mkdir(d, 0755), 0);
	CHECK_EQ(chdir(base_dir), 0);
	printf("backend %s, scratch %s\n", b, base_dir);
}

static int has_op(int op)
{
	return uprobe && io_uring_opcode_supported(uprobe, op);
}

/* The kernel has every opcode row nr's translation needs. */
static int has_ops(long nr)
{
	const struct xsc_sysdef *d = xsc__sysdef(nr);

	if (!d || !d->uring.prep)
		return 0;
	for (int i = 0; i < 2; i++)
		if ((i == 0 || d->uring.op[i]) && !has_op(d->uring.op[i]))
			return 0;
	return 1;
}

/* Route and executor checks, stats, close, fd leak.  us: the translated
 * calls the test covers (diff_calls.h); other: untranslated ones. */
static void diff_finish(const long *us, size_t nus, const long *other, size_t nother)
{
	int ring = backend_req == XSC_BACKEND_SQPOLL && sqpoll_ring ?
		   XSC_BACKEND_SQPOLL : XSC_BACKEND_URING;
	struct xsc_stats st;
	const char *why;
	int bad = 0;

	for (size_t i = 0; i < nus + nother; i++) {
		long nr = i < nus ? us[i] : other[i - nus];
		/* a row whose call the SQPOLL poller does not make
		 * (.uring.no_sqpoll) routes to the ring, a NOP there, and
		 * runs on its fallback */
		int nopoll = i < nus && has_ops(nr) && ring == XSC_BACKEND_SQPOLL &&
			     xsc__sysdef(nr)->uring.no_sqpoll;
		int has = i < nus && has_ops(nr) && !nopoll;
		int r = xsc_route(X, nr, &why), want = -1, ok;
		unsigned long *u = used[nr];

		switch (backend_req) {
		case XSC_BACKEND_URING:
		case XSC_BACKEND_SQPOLL:
			ok = has || nopoll ? r == ring :
			     (r == XSC_BACKEND_WORKER || r == XSC_BACKEND_INLINE);
			want = has || nopoll ? ring : -1;
			if (nopoll && (u[1] || u[2] || !(u[3] || u[4]))) {
				fprintf(stderr, "EXECUTOR [%s] %s: not made on its fallback "
					"after the ring's NOP (uring %lu sqpoll %lu worker %lu "
					"inline %lu)\n", test_backend(), xsc_syscall_name(nr),
					u[1], u[2], u[3], u[4]);
				bad++;
			}
			/* the basic cases must really run on the ring */
			if (has && !u[ring]) {
				fprintf(stderr, "EXECUTOR [%s] %s: no call completed on the "
					"ring (uring %lu sqpoll %lu worker %lu inline %lu)\n",
					test_backend(), xsc_syscall_name(nr), u[1], u[2], u[3], u[4]);
				bad++;
			}
			if (!has && (u[1] || u[2])) {
				fprintf(stderr, "EXECUTOR [%s] %s: completed on a ring without "
					"an io_uring form\n", test_backend(), xsc_syscall_name(nr));
				bad++;
			}
			break;
		case XSC_BACKEND_WORKER:
		case XSC_BACKEND_INLINE:
			want = backend_req;
			ok = r == want;
			for (int b = 1; b < 5; b++)
				if (b != want && u[b]) {
					fprintf(stderr, "EXECUTOR [%s] %s: %lu calls completed on "
						"%s\n", test_backend(), xsc_syscall_name(nr), u[b],
						xsc_backend_name(b));
					bad++;
				}
			break;
		default:
			ok = 1;
		}
		if (!u[1] && !u[2] && !u[3] && !u[4]) {
			fprintf(stderr, "COVERAGE %s: never called through xsc\n",
				xsc_syscall_name(nr));
			bad++;
		}
		if (!ok) {
			fprintf(stderr, "ROUTE [%s] %s routes to %s (%s), expected %s\n",
				test_backend(), xsc_syscall_name(nr), xsc_backend_name(r), why,
				want < 0 ? "worker or inline" : xsc_backend_name(want));
			bad++;
		}
	}
	xsc_stats_get(X, &st);
	printf("stats: posted %llu completed %llu declined %llu uring %llu sqpoll %llu "
	       "worker %llu inline %llu\n", (unsigned long long)st.posted,
	       (unsigned long long)st.completed, (unsigned long long)st.declined,
	       (unsigned long long)st.by_backend[1], (unsigned long long)st.by_backend[2],
	       (unsigned long long)st.by_backend[3], (unsigned long long)st.by_backend[4]);
	CHECK_EQ(st.posted, st.completed);
	struct xsc_probe pr;
	xsc_probe_get(X, &pr);
	if (!pr.uring && (backend_req == XSC_BACKEND_URING || backend_req == XSC_BACKEND_SQPOLL)) {
		/* io_uring forbidden (seccomp, io_uring_disabled): the asked
		 * ring is not there; the results above came from the fallback */
		printf("io_uring unavailable (%s): compared on the fallback executors\n",
		       pr.reason);
		backend_req = XSC_BACKEND_AUTO;
	}
	switch (backend_req) {
	case XSC_BACKEND_URING: CHECK(st.by_backend[XSC_BACKEND_URING] > 0); break;
	case XSC_BACKEND_SQPOLL: CHECK(st.by_backend[ring] > 0); break;
	case XSC_BACKEND_WORKER:
		CHECK(st.by_backend[XSC_BACKEND_WORKER] > 0);
		CHECK_EQ(st.by_backend[XSC_BACKEND_URING] + st.by_backend[XSC_BACKEND_SQPOLL], 0);
		break;
	case XSC_BACKEND_INLINE:
		CHECK(st.by_backend[XSC_BACKEND_INLINE] > 0);
		CHECK_EQ(st.by_backend[1] + st.by_backend[2] + st.by_backend[3], 0);
		break;
	}
	CHECK_EQ(xsc_close(X), 0);
	if (uprobe)
		io_uring_free_probe(uprobe);
	if (edge_pages)
		munmap(edge_pages, 8192);
	CHECK_EQ(count_fds(), fds_base);
	printf("%d cases, %d xsc calls, %d mismatches, %d route/executor errors (%s)\n",
	       ncases, ncalls, nfail, bad, test_backend());
	if (nfail || bad)
		exit(1);
}

#endif
