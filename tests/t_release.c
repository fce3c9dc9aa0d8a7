/* xsc_release of an entry posted and not flushed yet: returns 0, takes the
 * entry out of the batch (the call never runs: no byte reaches the pipe),
 * frees its id (a second release is -EINVAL), and leaves the rest of the
 * batch to run; the stats count it posted, never completed.  An entry
 * in flight is -EBUSY and stays to be taken.
 * xsc-test: per-backend */
#include <fcntl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"
#include "xsc.h"

/* What a non-blocking read of the pipe finds (0 bytes: -EAGAIN). */
static long drain(int fd, char *buf, size_t n)
{
	long r = read(fd, buf, n);
	return r < 0 ? -errno : r;
}

int main(void)
{
	int fds0 = count_fds(), p[2], a, b, c;
	struct xsc_stats s0, s1;
	struct xsc *x;
	char buf[8] = { 0 };
	long ret;

	CHECK_EQ(xsc_open(&x, NULL), 0);
	CHECK_EQ(pipe2(p, O_NONBLOCK), 0);	/* so drain() cannot block */
	xsc_stats_get(x, &s0);

	/* alone: the batch is empty afterwards, nothing runs */
	a = xsc_post(x, SYS_write, p[1], "a", 1);
	CHECK_GE(a, 0);
	CHECK_EQ(xsc_release(x, a), 0);
	CHECK_EQ(xsc_release(x, a), -EINVAL);
	CHECK_EQ(xsc_result(x, a, &ret), -EINVAL);
	CHECK_EQ(xsc_flush(x), 0);
	CHECK_EQ(drain(p[0], buf, sizeof(buf)), -EAGAIN);

	/* in the middle of a batch: the others run, in their order */
	a = xsc_post(x, SYS_write, p[1], "a", 1);
	b = xsc_post(x, SYS_write, p[1], "b", 1);
	c = xsc_post(x, SYS_write, p[1], "c", 1);
	CHECK(a >= 0 && b >= 0 && c >= 0);
	CHECK_EQ(xsc_release(x, b), 0);
	CHECK_EQ(xsc_flush(x), 2);
	CHECK_GE(xsc_wait(x, 2), 2);
	CHECK_EQ(xsc_take(x, a, &ret), 0);
	CHECK_EQ(ret, 1);
	CHECK_EQ(xsc_take(x, c, &ret), 0);
	CHECK_EQ(ret, 1);
	CHECK_EQ(drain(p[0], buf, sizeof(buf)), 2);
	CHECK(memchr(buf, 'a', 2) && memchr(buf, 'c', 2));	/* no 'b' */

	/* the freed ids serve again */
	a = xsc_post(x, SYS_write, p[1], "d", 1);
	CHECK_GE(a, 0);
	CHECK_EQ(xsc_take(x, a, &ret), 0);
	CHECK_EQ(ret, 1);
	CHECK_EQ(drain(p[0], buf, sizeof(buf)), 1);
	CHECK_EQ(buf[0], 'd');

	/* 5 posted, the 2 released never complete */
	xsc_stats_get(x, &s1);
	CHECK_EQ(s1.posted - s0.posted, 5);
	CHECK_EQ(s1.completed - s0.completed, 3);

	/* in flight: -EBUSY, and the entry is still there to take */
	struct timespec nap = { 0, 100 * 1000 * 1000 };
	a = xsc_post(x, SYS_nanosleep, &nap, NULL);
	CHECK_GE(a, 0);
	CHECK_GE(xsc_flush(x), 0);
	if (xsc_result(x, a, &ret) == -EINPROGRESS)	/* inline: done already */
		CHECK_EQ(xsc_release(x, a), -EBUSY);
	CHECK_EQ(xsc_take(x, a, &ret), 0);
	CHECK_EQ(ret, 0);
	CHECK_EQ(xsc_close(x), 0);
	close(p[0]);
	close(p[1]);
	CHECK_EQ(count_fds(), fds0);
	printf("ok (%s)\n", test_backend());
	return 0;
}
