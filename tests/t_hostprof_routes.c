/* Routes by the host profile (src/hostprof.c decide()).  With a profile
 * forced for a host where a system call costs 1100 ns and a posted call
 * 100 ns (400 ns in io_uring's workers), the calls that may run in the
 * caller are posted: the stat family (.cheap) and opens of a regular file
 * or a directory (.cheap_if); forced for a host where a system call costs
 * 45 ns and a posted call 110 ns (1500 ns), they run in the caller.  Seen
 * in the routes and their reasons (which give the figures) and in where
 * each call ran (xsc_stats.by_backend); either way every result is the
 * kernel's own, compared with the plain call.  The multi-call model and
 * the default spin time come from the same profile.  Each profile in a
 * child of its own: the profile loads once per process. */
#include <fcntl.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"
#include "multicall.h"
#include "testlib.h"

static char file[300], dir[300], lnk[300], missing[300];

/* Runs nr through x and plainly, each into its own buffer of len bytes
 * at argument `out` (or none: -1); the results and the buffers must be
 * the same, and x must have run it on `where`. */
static long same(struct xsc *x, int where, int out, size_t len, long nr, long a0,
		 long a1, long a2, long a3)
{
	char mine[256], theirs[256];
	long a[4] = { a0, a1, a2, a3 }, b[4] = { a0, a1, a2, a3 }, r, want;
	struct xsc_stats s0, s1;

	memset(mine, 0x5a, sizeof(mine));
	memset(theirs, 0x5a, sizeof(theirs));
	if (out >= 0) {
		a[out] = (long)mine;
		b[out] = (long)theirs;
	}
	xsc_stats_get(x, &s0);
	r = xsc_call(x, nr, a[0], a[1], a[2], a[3]);
	xsc_stats_get(x, &s1);
	want = syscall(nr, b[0], b[1], b[2], b[3]);
	if (want < 0)
		want = -errno;
	if (nr == SYS_open || nr == SYS_openat) {	/* two descriptors: the same file */
		struct stat m, t;
		CHECK_EQ(r >= 0, want >= 0);
		if (r >= 0) {
			CHECK_EQ(fstat((int)r, &m), 0);
			CHECK_EQ(fstat((int)want, &t), 0);
			CHECK_EQ(m.st_ino, t.st_ino);
			CHECK_EQ(fcntl((int)r, F_GETFL), fcntl((int)want, F_GETFL));
			close((int)want);
		} else {
			CHECK_EQ(r, want);
		}
	} else {
		CHECK_EQ(r, want);
		CHECK(memcmp(mine, theirs, len) == 0);
	}
	printf("  %-10s ran on %s\n", xsc_syscall_name(nr),
	       s1.by_backend[XSC_BACKEND_URING] > s0.by_backend[XSC_BACKEND_URING] ?
	       "uring" : "inline");
	CHECK_EQ(s1.by_backend[where] - s0.by_backend[where], 1);
	return r;
}

static void check(const char *which)
{
	bool dear = !strcmp(which, "dear");
	int where = dear ? XSC_BACKEND_URING : XSC_BACKEND_INLINE;
	static const long cheap[] = { SYS_stat, SYS_lstat, SYS_fstat, SYS_newfstatat };
	const char *why, *figure = dear ? "a system call 1100 ns" : "a system call costs 45 ns";
	struct xsc_config cfg;
	struct xsc_probe pr;
	struct xsc *x;
	long fd;
	int fds0 = count_fds();

	test_force_profile(which);
	unsetenv("XSC_BACKEND");	/* what AUTO chooses */
	CHECK_EQ(xsc_open(&x, NULL), 0);
	xsc_probe_get(x, &pr);
	if (!pr.uring || pr.seccomp)
		skip("no ring here (%s): nothing to post to", *pr.reason ? pr.reason :
		     "a seccomp filter is active");
	printf("%s host:\n", which);
	for (int i = 0; i < 4; i++) {
		CHECK_EQ(xsc_route(x, cheap[i], &why), where);
		if (!strstr(why, figure) || !strstr(why, "host profile, forced")) {
			fprintf(stderr, "%s: reason '%s' lacks '%s'\n",
				xsc_syscall_name(cheap[i]), why, figure);
			exit(1);
		}
	}
	printf("  stat's route: %s\n", why);
	CHECK_EQ(xsc_route(x, SYS_openat, &why), XSC_BACKEND_URING);
	CHECK(strstr(why, dear ? "with other flags it is posted" :
		     "with other flags it does"));
	CHECK(strstr(why, dear ? "O_DIRECTORY it is posted" : "O_DIRECTORY it does"));

	fd = open(file, O_RDONLY);
	CHECK_GE(fd, 0);
	same(x, where, 1, sizeof(struct stat), SYS_fstat, fd, 0, 0, 0);
	close((int)fd);
	same(x, where, 1, sizeof(struct stat), SYS_stat, (long)file, 0, 0, 0);
	same(x, where, 1, sizeof(struct stat), SYS_lstat, (long)lnk, 0, 0, 0);
	same(x, where, 2, sizeof(struct stat), SYS_newfstatat, AT_FDCWD, (long)dir, 0, 0);
	same(x, where, 2, sizeof(struct stat), SYS_newfstatat, AT_FDCWD, (long)missing, 0, 0);
	/* an open of a regular file (a look at the path, then the open) and
	 * one whose flags never wait */
	fd = same(x, where, -1, 0, SYS_open, (long)file, O_RDONLY | O_CLOEXEC, 0, 0);
	CHECK_EQ(close((int)fd), 0);
	fd = same(x, where, -1, 0, SYS_openat, AT_FDCWD, (long)dir, O_RDONLY | O_DIRECTORY, 0);
	CHECK_EQ(close((int)fd), 0);
	same(x, where, -1, 0, SYS_openat, AT_FDCWD, (long)missing, O_RDONLY, 0);

	/* the multi-call model: Tsys, and Tenter + Top alone, Tenter/32 +
	 * Top per call in 32 */
	const struct mc_model *m = xsc__mc_model(x);
	printf("  multi-call model: Tsys %u, Tenter %u, Top %u\n", m->tsys, m->tenter, m->top);
	CHECK_EQ(m->tsys, dear ? 1100 : 45);
	CHECK_EQ(m->tenter + m->top, dear ? 1250 : 160);
	CHECK_EQ(m->top, dear ? (32 * 100 - 1250) / 31 : (32 * 110 - 160) / 31);
	xsc_config_init(&cfg);
	if (sysconf(_SC_NPROCESSORS_ONLN) > 1)
		CHECK_EQ(cfg.spin_ns, dear ? 30000 : 5000);
	CHECK_EQ(xsc_close(x), 0);
	CHECK_EQ(count_fds(), fds0);
}

int main(void)
{
	int fd, status, fds0 = count_fds();

	snprintf(file, sizeof(file), "%s/file", scratch_dir());
	snprintf(dir, sizeof(dir), "%s/dir", scratch_dir());
	snprintf(lnk, sizeof(lnk), "%s/link", scratch_dir());
	snprintf(missing, sizeof(missing), "%s/missing", scratch_dir());
	fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK_EQ(write(fd, "profile", 7), 7);
	close(fd);
	CHECK_EQ(mkdir(dir, 0755), 0);
	CHECK_EQ(symlink(file, lnk), 0);
	for (int i = 0; i < 2; i++) {
		const char *which = i ? "cheap" : "dear";
		fflush(stdout);
		pid_t pid = fork();
		CHECK(pid >= 0);
		if (pid == 0) {
			check(which);
			fflush(stdout);
			_exit(0);
		}
		CHECK_EQ(waitpid(pid, &status, 0), pid);
		CHECK(WIFEXITED(status));
		if (WEXITSTATUS(status) == 77)
			return 77;
		CHECK_EQ(WEXITSTATUS(status), 0);
	}
	CHECK_EQ(count_fds(), fds0);
	printf("ok\n");
	return 0;
}
