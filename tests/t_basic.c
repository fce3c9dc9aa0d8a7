/* Basic life cycle on every executor: open, post a batch, flush once,
 * wait, check each result against the synchronous call, release, close
 * with no fd leak.
 * xsc-test: per-backend */
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "testlib.h"
#include "xsc.h"

int main(void)
{
	int fds0 = count_fds(), p[2], ids[8];
	struct xsc *x;
	char buf[16] = { 0 };
	long ret;

	CHECK_EQ(xsc_open(&x, NULL), 0);
	CHECK_EQ(pipe(p), 0);
	/* one batch: getppid, write, a bad fd, an unknown number */
	ids[0] = xsc_post(x, SYS_getppid);
	ids[1] = xsc_post(x, SYS_write, p[1], "hello", 5);
	ids[2] = xsc_post(x, SYS_close, 12345);
	ids[3] = xsc_post(x, 1000);
	CHECK_EQ(xsc_post(x, 5000), -ENOSYS);
	CHECK_EQ(xsc_post(x, -1), -ENOSYS);
	for (int i = 0; i < 4; i++)
		CHECK_GE(ids[i], 0);
	CHECK_EQ(xsc_flush(x), 4);
	CHECK_GE(xsc_wait(x, 4), 4);
	CHECK_EQ(xsc_result(x, ids[0], &ret), 0);
	CHECK_EQ(ret, getppid());
	CHECK_EQ(xsc_result(x, ids[1], &ret), 0);
	CHECK_EQ(ret, 5);
	CHECK_EQ(xsc_result(x, ids[2], &ret), 0);
	CHECK_EQ(ret, -EBADF);
	CHECK_EQ(xsc_result(x, ids[3], &ret), 0);
	CHECK_EQ(ret, -ENOSYS);
	for (int i = 0; i < 4; i++)
		CHECK_EQ(xsc_release(x, ids[i]), 0);
	CHECK_EQ(xsc_release(x, ids[0]), -EINVAL);
	CHECK_EQ(xsc_result(x, 99999, &ret), -EINVAL);

	/* the variadic function behind the xsc_post macro posts the same
	 * call; the macro passes an int -1 as the long -1 */
	int (*post_fn)(struct xsc *, long, ...) = xsc_post;
	int q[2];
	CHECK_EQ(pipe(q), 0);
	ids[0] = post_fn(x, SYS_write, (long)q[1], "abc", (long)3);
	ids[1] = (xsc_post)(x, SYS_fcntl, (long)q[0], (long)F_GETFD);
	ids[2] = xsc_post(x, SYS_lseek, -1, 0, SEEK_CUR);
	CHECK_EQ(xsc_entry(x, ids[2])->args[0], -1);
	CHECK_EQ(xsc_entry(x, ids[0])->nargs, 3);
	CHECK_EQ(xsc_entry(x, ids[0])->sysno, SYS_write);
	CHECK_GE(xsc_wait(x, 3), 3);
	CHECK_EQ(xsc_take(x, ids[0], &ret), 0);
	CHECK_EQ(ret, 3);
	CHECK_EQ(xsc_take(x, ids[1], &ret), 0);
	CHECK_EQ(ret, fcntl(q[0], F_GETFD));
	CHECK_EQ(xsc_take(x, ids[2], &ret), 0);
	CHECK_EQ(ret, -EBADF);
	CHECK_EQ(read(q[0], buf, 3), 3);
	CHECK(memcmp(buf, "abc", 3) == 0);
	close(q[0]);
	close(q[1]);

	/* xsc_call is the synchronous call */
	CHECK_EQ(xsc_call(x, SYS_read, p[0], buf, sizeof(buf)), 5);
	CHECK(memcmp(buf, "hello", 5) == 0);
	CHECK_EQ(write(p[1], "x", 1), 1);
	CHECK_EQ(xsc_call(x, SYS_read, p[0], (long)8, 4), -EFAULT);
	CHECK_EQ(xsc_call(x, SYS_gettid), syscall(SYS_gettid));
	CHECK_EQ(xsc_call(x, SYS_vfork), -EINVAL);
	CHECK_EQ(xsc_call(x, XSC_NR_NOP), 0);

	finish_handle(x, p, fds0);
	return 0;
}
