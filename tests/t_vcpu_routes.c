/* Every kernel thread of xsc threads gets the same executors, or the
 * program is told.  As a user without CAP_IPC_LOCK, RLIMIT_MEMLOCK can
 * leave room for exactly one ring: kernel thread 0 gets it, kernel thread
 * 1 falls back to syscall threads.  Its handle is opened quiet (one line
 * per program, not per thread), so without a line of its own nothing
 * would say so.  The test finds such a limit with two handles of the
 * runtime's size, then runs xsc_main with 2 kernel threads under it and
 * wants the line that names kernel thread 1.
 * Needs root (to become nobody); skips otherwise. */
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testlib.h"
#include "xsc.h"

static int has_ring(struct xsc *x)
{
	const char *why;
	int r = xsc_route(x, SYS_read, &why);
	return r == XSC_BACKEND_URING || r == XSC_BACKEND_SQPOLL;
}

static int body(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return 42;
}

/* A soft RLIMIT_MEMLOCK with room for one handle's ring and not two, or 0. */
static rlim_t one_ring_limit(void)
{
	struct xsc_config cfg;

	xsc_config_init(&cfg);
	cfg.npages = 64;	/* as a kernel thread of xsc threads opens it */
	cfg.flags = XSC_QUIET | XSC_NO_ENV;
	struct rlimit hard;

	CHECK_EQ(getrlimit(RLIMIT_MEMLOCK, &hard), 0);
	for (rlim_t kib = 64; kib * 1024 <= hard.rlim_max; kib += 64) {
		struct rlimit rl = { kib * 1024, hard.rlim_max };
		struct xsc *a, *b;
		int one, two;

		CHECK_EQ(setrlimit(RLIMIT_MEMLOCK, &rl), 0);
		if (xsc_open(&a, &cfg) < 0)
			continue;
		one = has_ring(a);
		two = one && xsc_open(&b, &cfg) == 0 ? has_ring(b) + 1 : 0;
		if (two)
			xsc_close(b);
		xsc_close(a);
		/* a closed ring's memory is given back by deferred work: wait,
		 * or the next round would count it still */
		usleep(100000);
		if (one && two == 1)
			return kib * 1024;
		if (two == 2)
			return 0;	/* no limit in between (page-sized steps) */
	}
	return 0;
}

static int child(const char *log)
{
	struct xsc_runtime_config cfg;
	rlim_t lim;
	int fd;

	if (setgid(65534) != 0 || setuid(65534) != 0)
		return 77;
	lim = one_ring_limit();
	if (!lim)
		return 78;
	struct rlimit rl;
	CHECK_EQ(getrlimit(RLIMIT_MEMLOCK, &rl), 0);
	rl.rlim_cur = lim;
	CHECK_EQ(setrlimit(RLIMIT_MEMLOCK, &rl), 0);
	fd = open(log, O_WRONLY | O_TRUNC);
	CHECK_GE(fd, 0);
	CHECK_EQ(dup2(fd, 2), 2);
	xsc_runtime_config_init(&cfg);
	cfg.nthreads = 2;
	cfg.backend = XSC_BACKEND_URING;
	printf("RLIMIT_MEMLOCK %llu KiB: room for one ring\n",
	       (unsigned long long)lim / 1024);
	fflush(stdout);
	return xsc_main(body, 0, NULL, &cfg) == 42 ? 0 : 1;
}

int main(void)
{
	char log[256], buf[4096] = { 0 };
	int st, fd;

	if (geteuid() != 0)
		skip("needs root to run as nobody under RLIMIT_MEMLOCK");
	snprintf(log, sizeof(log), "%s/stderr", scratch_dir());
	fd = open(log, O_CREAT | O_WRONLY, 0666);
	CHECK_GE(fd, 0);
	CHECK_EQ(fchmod(fd, 0666), 0);
	close(fd);
	CHECK_EQ(chmod(log, 0666), 0);
	CHECK_EQ(chmod(scratch_dir(), 0777), 0);
	struct rlimit rl;	/* room to search in: up to the hard limit */
	CHECK_EQ(getrlimit(RLIMIT_MEMLOCK, &rl), 0);
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < (1 << 20))
		skip("RLIMIT_MEMLOCK's hard limit (%llu) leaves no room for a ring",
		     (unsigned long long)rl.rlim_max);
	if (rl.rlim_max == RLIM_INFINITY)
		rl.rlim_max = 64 << 20;
	rl.rlim_cur = rl.rlim_max;
	CHECK_EQ(setrlimit(RLIMIT_MEMLOCK, &rl), 0);
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
		_exit(child(log));
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st));
	if (WEXITSTATUS(st) == 77)
		skip("cannot become nobody");
	if (WEXITSTATUS(st) == 78)
		skip("no RLIMIT_MEMLOCK fits exactly one ring (io_uring unavailable, or rings not charged to it)");
	CHECK_EQ(WEXITSTATUS(st), 0);
	fd = open(log, O_RDONLY);
	CHECK_GE(fd, 0);
	CHECK_GE(read(fd, buf, sizeof(buf) - 1), 0);
	close(fd);
	if (!strstr(buf, "kernel thread 1:")) {
		fprintf(stderr, "kernel thread 1 got no ring and nothing said so; "
			"stderr was:\n%s", buf);
		return 1;
	}
	printf("%sok\n", buf);
	return 0;
}
