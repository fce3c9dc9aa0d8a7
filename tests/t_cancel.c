/* xsc_cancel as include/xsc.h documents it, on every executor:
 *  1. a posted, not flushed entry completes with -ECANCELED at once and
 *     its call never runs: a write that must not reach its pipe, even
 *     after a flush and a wait;
 *  2. a read blocked on an empty pipe returns -EINTR (syscall thread) or
 *     -ECANCELED (io_uring) and consumes nothing; an uncanceled read in
 *     flight beside it is not disturbed and gets its byte;
 *  3. a cancel right after the flush, when the call may not have started
 *     yet, still ends it, 200 times over (within 5 s each: a lost cancel
 *     fails instead of hanging);
 *  4. a DONE entry: -EALREADY and its result intact; a second cancel of a
 *     canceled entry too;
 *  5. bad ids: -EINVAL (out of range, free);
 *  6. an endless epoll_wait and poll canceled after a timed one ran out
 *     in the same entry: -ECANCELED or -EINTR, never 0 (the timed one's
 *     timeout result stayed in the entry, and the canceled wait read as
 *     timed out: tp_sole's endless epoll_wait interrupted by a signal
 *     returned 0 under `xsc run -b sqpoll`).
 * Parts 2, 3 and 6 need a call in flight: inline runs every call during the
 * flush, so there they are left out (said on stdout).
 * xsc-test: per-backend
 * xsc-test: timeout=60 */
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"
#include "xsc.h"

/* Bytes waiting in pipe read end fd, read out without blocking. */
static int drain(int fd)
{
	int fl = fcntl(fd, F_GETFL), n = 0;
	char c;

	CHECK_EQ(fcntl(fd, F_SETFL, fl | O_NONBLOCK), 0);
	while (read(fd, &c, 1) == 1)
		n++;
	CHECK_EQ(fcntl(fd, F_SETFL, fl), 0);
	return n;
}

/* 1: the call of a canceled SUBMITTED entry never runs. */
static void posted(struct xsc *x, int p[2])
{
	long ret;
	int id;

	id = xsc_post(x, SYS_write, p[1], "x", 1);
	CHECK_GE(id, 0);
	CHECK_EQ(xsc_cancel(x, id), 0);
	CHECK_EQ(xsc_result(x, id, &ret), 0);	/* at once */
	CHECK_EQ(ret, -ECANCELED);
	CHECK_EQ(xsc_cancel(x, id), -EALREADY);
	CHECK_EQ(xsc_flush(x), 0);		/* not pending any more */
	CHECK_EQ(xsc_take(x, id, &ret), 0);
	CHECK_EQ(ret, -ECANCELED);

	/* one of a batch: its neighbours run, it does not */
	int a = xsc_post(x, SYS_write, p[1], "a", 1);
	id = xsc_post(x, SYS_write, p[1], "x", 1);
	int b = xsc_post(x, SYS_write, p[1], "b", 1);
	CHECK_GE(a, 0);
	CHECK_GE(id, 0);
	CHECK_GE(b, 0);
	CHECK_EQ(xsc_cancel(x, id), 0);
	CHECK_EQ(xsc_flush(x), 2);
	CHECK_EQ(xsc_take(x, a, &ret), 0);
	CHECK_EQ(ret, 1);
	CHECK_EQ(xsc_take(x, b, &ret), 0);
	CHECK_EQ(ret, 1);
	CHECK_EQ(xsc_take(x, id, &ret), 0);
	CHECK_EQ(ret, -ECANCELED);
	char buf[4] = { 0 };
	CHECK_EQ(read(p[0], buf, sizeof(buf)), 2);	/* "ab" in some order */
	CHECK(memchr(buf, 'x', 2) == NULL);
	CHECK_EQ(drain(p[0]), 0);
}

/* 2: a blocked read is interrupted; the read beside it is not. */
static void blocked(struct xsc *x, int p[2], int q[2])
{
	char c = 0, d = 0;
	long ret;
	int id, other;

	id = xsc_post(x, SYS_read, p[0], &c, 1);
	other = xsc_post(x, SYS_read, q[0], &d, 1);
	CHECK_GE(id, 0);
	CHECK_GE(other, 0);
	CHECK_EQ(xsc_flush(x), 2);
	usleep(100 * 1000);	/* both asleep in the kernel by now */
	CHECK_EQ(xsc_result(x, id, &ret), -EINPROGRESS);
	CHECK_EQ(xsc_cancel(x, id), 0);
	ret = take_within(x, id, 5.0);
	printf("blocked read canceled: %s\n", ret == -EINTR ? "-EINTR" :
	       ret == -ECANCELED ? "-ECANCELED" : "?");
	CHECK(ret == -EINTR || ret == -ECANCELED);
	CHECK_EQ(c, 0);
	CHECK_EQ(xsc_cancel(x, id), -EINVAL);	/* released: free */

	CHECK_EQ(xsc_result(x, other, &ret), -EINPROGRESS);
	CHECK_EQ(write(q[1], "q", 1), 1);
	CHECK_EQ(xsc_take(x, other, &ret), 0);
	CHECK_EQ(ret, 1);
	CHECK_EQ(d, 'q');

	/* the canceled read took nothing: the next byte is there */
	CHECK_EQ(write(p[1], "z", 1), 1);
	CHECK_EQ(read(p[0], &c, 1), 1);
	CHECK_EQ(c, 'z');
}

/* 3: canceled just after the flush, maybe before the call started. */
static void early(struct xsc *x, int p[2])
{
	int n[2] = { 0, 0 };

	for (int i = 0; i < 200; i++) {
		char c = 0;
		int id = xsc_post(x, SYS_read, p[0], &c, 1);
		long ret;

		CHECK_GE(id, 0);
		CHECK_EQ(xsc_flush(x), 1);
		for (int k = i * 16; k; k--)	/* 0 to ~30 us later */
			__builtin_ia32_pause();
		CHECK_EQ(xsc_cancel(x, id), 0);
		ret = take_within(x, id, 5.0);
		CHECK(ret == -EINTR || ret == -ECANCELED);
		CHECK_EQ(c, 0);
		n[ret == -EINTR]++;
	}
	CHECK_EQ(drain(p[0]), 0);
	printf("early cancels: %d -ECANCELED, %d -EINTR\n", n[0], n[1]);
}

/* 6: a wait (epoll_wait, else poll) of ms, taken: its result. */
static long wait_ms(struct xsc *x, int fd, int ep, int ms, bool cancel, int *id)
{
	struct epoll_event ev;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	*id = ep >= 0 ? xsc_post(x, SYS_epoll_wait, ep, &ev, 1, ms) :
			xsc_post(x, SYS_poll, &pfd, 1, ms);
	CHECK_GE(*id, 0);
	CHECK_EQ(xsc_flush(x), 1);
	if (!cancel)
		return take_within(x, *id, 5.0);
	usleep(20 * 1000);
	CHECK_EQ(xsc_cancel(x, *id), 0);
	return take_within(x, *id, 5.0);
}

static void after_timeout(struct xsc *x, int p[2])
{
	int ep = epoll_create1(EPOLL_CLOEXEC), same = 0;
	struct epoll_event ev = { .events = EPOLLIN };

	CHECK_GE(ep, 0);
	CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev), 0);
	for (int i = 0; i < 10; i++) {
		int use = i % 2 ? -1 : ep, a, b;
		long r;

		CHECK_EQ(wait_ms(x, p[0], use, 30, false, &a), 0);
		r = wait_ms(x, p[0], use, -1, true, &b);
		CHECK(r == -ECANCELED || r == -EINTR);
		same += a == b;
	}
	printf("canceled endless waits after timed ones: %d of 10 in the same entry\n",
	       same);
	CHECK(same > 0);	/* else the check above proved nothing */
	close(ep);
}

/* 4 and 5 */
static void done_and_bad(struct xsc *x)
{
	long ret;
	int id;

	id = xsc_post(x, SYS_getppid);
	CHECK_GE(id, 0);
	CHECK_EQ(xsc_wait(x, 1), 1);
	CHECK_EQ(xsc_cancel(x, id), -EALREADY);
	CHECK_EQ(xsc_take(x, id, &ret), 0);
	CHECK_EQ(ret, getppid());
	CHECK_EQ(xsc_cancel(x, id), -EINVAL);	/* free now */
	CHECK_EQ(xsc_cancel(x, -1), -EINVAL);
	CHECK_EQ(xsc_cancel(x, XSC_DEFAULT_PAGES * XSC_ENTRIES_PER_PAGE),
		 -EINVAL);
}

int main(void)
{
	int fds0 = count_fds(), p[2], q[2];
	struct xsc *x;

	CHECK_EQ(xsc_open(&x, NULL), 0);
	CHECK_EQ(pipe(p), 0);
	CHECK_EQ(pipe(q), 0);
	posted(x, p);
	if (strcmp(test_backend(), "inline")) {
		blocked(x, p, q);
		early(x, p);
		after_timeout(x, p);
	} else {
		printf("inline: no call is ever in flight; parts 2, 3 and 6 "
		       "left out\n");
	}
	done_and_bad(x);
	close(q[0]);
	close(q[1]);
	finish_handle(x, p, fds0);
	return 0;
}
