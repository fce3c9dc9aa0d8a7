/* A seccomp filter is found whatever else /proc/self/status holds.  xsc
 * looks for an active filter at xsc_open (io_uring's requests would pass
 * it by) in the "Seccomp:" line of /proc/self/status, which it read into
 * 4 KiB: for a user in many groups the "Groups:" line before it is longer
 * than that, the line was not seen, the filter was taken for none, and a
 * call the filter refuses ran through the ring.  In a forked child: 20,000
 * supplementary groups, a filter refusing mkdir, then xsc_open and a mkdir
 * through it, which must fail with EPERM and create nothing, on every
 * executor.  Needs root (setgroups); skips otherwise.
 * xsc-test: per-backend */
#include <errno.h>
#include <grp.h>
#include <linux/seccomp.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testlib.h"
#include "xsc.h"

#define NGROUPS 20000

static int child(const char *dir)
{
	static gid_t g[NGROUPS];
	struct stat st;
	struct xsc *x;
	long r;

	for (int i = 0; i < NGROUPS; i++)
		g[i] = (gid_t)(100000 + i);
	CHECK_EQ(setgroups(NGROUPS, g), 0);
	CHECK_EQ(test_seccomp_one(SYS_mkdir, SECCOMP_RET_ERRNO | EPERM), 0);
	CHECK_EQ(xsc_open(&x, NULL), 0);
	r = xsc_call(x, SYS_mkdir, dir, 0700);
	CHECK_EQ(xsc_close(x), 0);
	if (r != -EPERM || stat(dir, &st) == 0) {
		fprintf(stderr, "mkdir through xsc under a filter refusing it: %ld, "
			"the directory %s\n", r, stat(dir, &st) == 0 ? "exists" : "is absent");
		return 1;
	}
	return 0;
}

int main(void)
{
	char dir[300];
	int st;

	if (geteuid() != 0)
		skip("needs root (setgroups)");
	snprintf(dir, sizeof(dir), "%s/made", scratch_dir());
	fflush(stdout);
	pid_t pid = fork();
	CHECK_GE(pid, 0);
	if (pid == 0)
		_exit(child(dir));
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 0);
	printf("ok (%s)\n", test_backend());
	return 0;
}
