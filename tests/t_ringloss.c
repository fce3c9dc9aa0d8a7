/* A ring that cannot be entered any more: a seccomp filter installed after
 * xsc_open denies io_uring_enter (-EPERM), as a program that sandboxes
 * itself after initialising does.  Every call must still get the kernel's
 * own answer for THAT call (before: a mkdir returned the previous call's
 * -ENOTDIR and an openat 0, and xsc_close spun forever):
 *  - mkdir, openat(O_CREAT), a batch of writes: the real results, checked
 *    on disk; the one-line reason says io_uring_enter failed;
 *  - a multi-call chain runs on from where the ring stopped;
 *  - xsc_close returns.
 *  - with SQPOLL the poller takes SQEs with no enter at all, so when the
 *    enter that waits is refused, some SQEs are taken and some are not:
 *    each runs exactly once (pipe writes counted after the poller had
 *    time to run stale ones), in many rounds, with the poller on the same
 *    CPU as the caller and on another, posted and as a multi-call.
 * Run in a child per scenario, since a filter cannot be removed.
 * xsc-test: per-backend
 * xsc-test: timeout=60 */
#include <fcntl.h>
#include <sched.h>
#include <linux/seccomp.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testlib.h"
#include "xsc.h"

static void deny_enter(void)
{
	CHECK_EQ(test_seccomp_one(__NR_io_uring_enter, SECCOMP_RET_ERRNO | EPERM), 0);
}

static int scenario(void)
{
	struct xsc *x;
	struct stat st;
	long r;
	int p[2];

	CHECK_EQ(xsc_open(&x, NULL), 0);
	CHECK_EQ(pipe(p), 0);
	/* the ring works, and leaves a result behind in the entry */
	CHECK_EQ(xsc_call(x, SYS_mkdir, "d", 0755), 0);
	CHECK_EQ(xsc_call(x, SYS_mkdir, "d/e/f", 0755), -ENOENT);
	deny_enter();

	CHECK_EQ(xsc_call(x, SYS_mkdir, "d2", 0755), 0);
	CHECK_EQ(stat("d2", &st), 0);
	CHECK(S_ISDIR(st.st_mode));
	r = xsc_call(x, SYS_openat, AT_FDCWD, "f", O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	CHECK_GE(r, 3);
	CHECK_EQ(fcntl((int)r, F_GETFD), FD_CLOEXEC);
	CHECK_EQ(stat("f", &st), 0);

	int ids[3];
	for (int i = 0; i < 3; i++)
		CHECK_GE(ids[i] = xsc_post(x, SYS_write, (int)r, "abc", 3), 0);
	CHECK_EQ(xsc_wait(x, 3), 3);
	for (int i = 0; i < 3; i++) {
		long v;
		CHECK_EQ(xsc_take(x, ids[i], &v), 0);
		CHECK_EQ(v, 3);
	}
	CHECK_EQ(stat("f", &st), 0);
	CHECK_EQ(st.st_size, 9);

	/* a chain: write, then read back what was written */
	struct xsc_mc c[2] = {
		{ .nr = SYS_write, .args = { p[1], (long)"chain", 5 } },
		{ .nr = SYS_read, .args = { p[0], 0, 5 } },
	};
	char buf[8] = { 0 };
	c[1].args[1] = (long)buf;
	CHECK_EQ(xsc_multicall(x, c, 2), 2);
	CHECK_EQ(c[0].ret, 5);
	CHECK_EQ(c[1].ret, 5);
	CHECK(memcmp(buf, "chain", 5) == 0);
	close((int)r);
	CHECK_EQ(xsc_close(x), 0);
	return 0;
}

/* Pipe writes posted, or chained in a multi-call, just before the refused
 * enter: each exactly once (one run too many shows as a byte too many in
 * the pipe). */
static int appends(int round)
{
	enum { N = 16 };
	struct xsc_config cfg;
	struct xsc *x;
	char buf[2 * N];
	int ids[N], p[2];

	if (round & 1) {	/* the caller and the poller share one CPU */
		cpu_set_t set;
		CHECK_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &set)) {
				CPU_ZERO(&set);
				CPU_SET(c, &set);
				break;
			}
		CHECK_EQ(sched_setaffinity(0, sizeof(set), &set), 0);
	}
	CHECK_EQ(pipe2(p, O_CLOEXEC), 0);
	xsc_config_init(&cfg);
	cfg.flags |= XSC_QUIET;
	cfg.spin_ns = 0;	/* the wait enters at once, and is refused */
	CHECK_EQ(xsc_open(&x, &cfg), 0);
	CHECK_EQ(xsc_call(x, SYS_getppid), getppid());
	deny_enter();
	if (round & 2) {	/* as one multi-call chain */
		struct xsc_mc c[N];
		for (int i = 0; i < N; i++)
			c[i] = (struct xsc_mc){ .nr = SYS_write,
						.args = { p[1], (long)"x", 1 } };
		CHECK_EQ(xsc_multicall(x, c, N), N);
		for (int i = 0; i < N; i++)
			CHECK_EQ(c[i].ret, 1);
	} else {
		for (int i = 0; i < N; i++)
			CHECK_GE(ids[i] = xsc_post(x, SYS_write, p[1], "x", 1), 0);
		CHECK_EQ(xsc_wait(x, N), N);
		for (int i = 0; i < N; i++) {
			long v;
			CHECK_EQ(xsc_take(x, ids[i], &v), 0);
			CHECK_EQ(v, 1);
		}
	}
	usleep(20000);	/* a stale SQE would run by now */
	CHECK_EQ(xsc_close(x), 0);
	CHECK_EQ(fcntl(p[0], F_SETFL, O_NONBLOCK), 0);
	CHECK_EQ(read(p[0], buf, sizeof(buf)), N);
	return 0;
}

static int in_child(int (*fn)(int), int round)
{
	int status;
	pid_t pid = fork();

	CHECK(pid >= 0);
	if (pid == 0) {
		alarm(20);	/* a hang is a failure */
		_exit(fn(round));
	}
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "round %d: status %#x%s\n", round, status,
			WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM ? " (hung)" : "");
		return 1;
	}
	return 0;
}

static int scenario_once(int round)
{
	(void)round;
	return scenario();
}

int main(void)
{
	const char *dir = scratch_dir();	/* removed by this process at exit */
	int bad = 0;

	CHECK_EQ(chdir(dir), 0);
	bad |= in_child(scenario_once, 0);
	for (int round = 0; round < 40 && !bad; round++)
		bad |= in_child(appends, round);
	CHECK_EQ(chdir("/"), 0);	/* the directory goes at exit */
	if (bad)
		return 1;
	printf("ok (%s)\n", test_backend());
	return 0;
}
