/* A ring that cannot be entered any more: a seccomp filter installed after
 * xsc_open denies io_uring_enter (-EPERM), as a program that sandboxes
 * itself after initialising does.  Every call must still get the kernel's
 * own answer for THAT call (before: a mkdir returned the previous call's
 * -ENOTDIR and an openat 0, and xsc_close spun forever):
 *  - mkdir, openat(O_CREAT), a batch of writes: the real results, checked
 *    on disk; the one-line reason says io_uring_enter failed;
 *  - a multi-call chain runs on from where the ring stopped;
 *  - xsc_close returns.
 * Run in a child per scenario, since a filter cannot be removed.
 * xsc-test: per-backend
 * xsc-test: timeout=60 */
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testlib.h"
#include "xsc.h"

static void deny_enter(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_enter, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	CHECK_EQ(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
	CHECK_EQ(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog), 0);
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

int main(void)
{
	int status;
	const char *dir = scratch_dir();	/* removed by this process at exit */
	pid_t pid;

	CHECK_EQ(chdir(dir), 0);
	pid = fork();

	CHECK(pid >= 0);
	if (pid == 0) {
		alarm(20);	/* a hang is a failure */
		_exit(scenario());
	}
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK_EQ(chdir("/"), 0);	/* the directory goes at exit */
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "scenario: status %#x%s\n", status,
			WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM ? " (hung)" : "");
		return 1;
	}
	printf("ok (%s)\n", test_backend());
	return 0;
}
