/* A handle belongs to the thread that opened it (include/xsc.h).  Used
 * from another thread, or in a forked child, it must answer -EBADFD at
 * once, run nothing and never hand back an earlier call's result, and the
 * owner must go on as before:
 *  - another thread: xsc_call(write) gives -EBADFD and nothing is written;
 *    xsc_flush, xsc_wait and xsc_poll give -EBADFD; the owner's next call
 *    writes, and xsc_close returns;
 *  - a forked child: xsc_call gives -EBADFD without hanging (worker: the
 *    syscall threads are not in the child), xsc_close returns, and the
 *    child's exit is clean; the parent's handle works afterwards.
 * xsc-test: per-backend
 * xsc-test: timeout=60 */
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testlib.h"
#include "xsc.h"

static struct xsc *x;
static int p[2];

static long pipe_bytes(void)
{
	int n = 0;
	CHECK_EQ(ioctl(p[0], FIONREAD, &n), 0);
	return n;
}

static void *other(void *arg)
{
	(void)arg;
	CHECK_EQ(xsc_call(x, SYS_write, p[1], "other", 5), -EBADFD);
	CHECK_EQ(xsc_flush(x), -EBADFD);
	CHECK_EQ(xsc_wait(x, 1), -EBADFD);
	CHECK_EQ(xsc_poll(x), -EBADFD);
	return NULL;
}

int main(void)
{
	pthread_t th;
	char buf[16];
	int status;

	CHECK_EQ(xsc_open(&x, NULL), 0);
	CHECK_EQ(pipe(p), 0);
	CHECK_EQ(xsc_call(x, SYS_write, p[1], "owner", 5), 5);
	CHECK_EQ(read(p[0], buf, sizeof(buf)), 5);

	CHECK_EQ(pthread_create(&th, NULL, other, NULL), 0);
	CHECK_EQ(pthread_join(th, NULL), 0);
	CHECK_EQ(pipe_bytes(), 0);		/* nothing ran */
	CHECK_EQ(xsc_call(x, SYS_write, p[1], "again", 5), 5);
	CHECK_EQ(read(p[0], buf, sizeof(buf)), 5);
	CHECK(memcmp(buf, "again", 5) == 0);

	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		alarm(10);	/* a hang is a failure, not a stuck test */
		if (xsc_call(x, SYS_write, p[1], "child", 5) != -EBADFD)
			_exit(3);
		if (xsc_close(x) != 0)
			_exit(4);
		_exit(0);
	}
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "child: status %#x (3: not -EBADFD, 4: close failed, "
			"SIGALRM: hung)\n", status);
		return 1;
	}
	CHECK_EQ(pipe_bytes(), 0);
	CHECK_EQ(xsc_call(x, SYS_write, p[1], "after", 5), 5);
	CHECK_EQ(read(p[0], buf, sizeof(buf)), 5);
	CHECK(memcmp(buf, "after", 5) == 0);
	CHECK_EQ(xsc_close(x), 0);
	printf("ok (%s)\n", test_backend());
	return 0;
}
