/* A read of a descriptor last seen to be a socket goes to io_uring as a
 * receive (src/uring_rw.c, "reads of sockets"): its short count is final,
 * with no question about the descriptor's type after it.  The answers
 * stay read(2)'s:
 *  1. a stream socket: a short read learns it is one; the next short
 *     read then makes no system call of its own (io_uring: one crossing,
 *     the enter, where the first made two); end of file reads 0;
 *  2. a datagram socket: a zero-byte read takes no datagram, each read
 *     takes one;
 *  3. an O_NONBLOCK socket with nothing to read: -EAGAIN; a blocking one
 *     waits for the data a thread writes 50 ms later;
 *  4. a bad buffer: -EFAULT, as read(2) gives;
 *  5. the hint gone stale: the socket's number, closed behind xsc's back,
 *     made again as a regular file (the whole read and the position), an
 *     empty O_NONBLOCK pipe (-EAGAIN) and a pipe holding 3 bytes (3).
 * xsc-test: per-backend+auto
 * xsc-test: dear-host */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "testlib.h"
#include "xsc.h"

static struct xsc *x;
static char buf[8192];

static long rd(int fd, void *b, long n)
{
	return xsc_call(x, SYS_read, fd, (long)b, n, 0, 0, 0);
}

static uint64_t crossings(void)
{
	struct xsc_stats s;

	xsc_stats_get(x, &s);
	return s.crossings;
}

static void *late_writer(void *arg)
{
	usleep(50000);
	if (write(*(int *)arg, "late", 4) != 4)
		return (void *)1;
	return NULL;
}

/* Makes descriptor `at` a copy of `fd` (closed after), behind xsc's back. */
static void replace(int at, int fd)
{
	CHECK_EQ(dup2(fd, at), at);
	close(fd);
}

int main(void)
{
	int fds0 = count_fds(), p[2], s[2], d[2], q[2], u[2], w[2], fd;
	bool uring = !strcmp(test_backend(), "uring");
	char path[300];
	pthread_t t;
	uint64_t c0, c1, c2;
	struct xsc_probe pr;

	CHECK_EQ(xsc_open(&x, NULL), 0);
	CHECK_EQ(pipe(p), 0);
	xsc_probe_get(x, &pr);
	uring = uring && pr.uring;	/* not when io_uring is refused */

	/* 1. a stream socket */
	CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
	CHECK_EQ(write(s[1], "hello", 5), 5);
	c0 = crossings();
	CHECK_EQ(rd(s[0], buf, 100), 5);
	c1 = crossings();
	CHECK_EQ(write(s[1], "world!!", 7), 7);
	CHECK_EQ(rd(s[0], buf, 100), 7);
	c2 = crossings();
	CHECK(!memcmp(buf, "world!!", 7));
	printf("short reads of a socket: %llu crossings the first, %llu the next\n",
	       (unsigned long long)(c1 - c0), (unsigned long long)(c2 - c1));
	if (uring) {
		CHECK_EQ(c2 - c1, 1);
		CHECK(c1 - c0 >= 2);
	}

	/* 3. nothing to read: blocking, then O_NONBLOCK */
	CHECK_EQ(pthread_create(&t, NULL, late_writer, &s[1]), 0);
	CHECK_EQ(rd(s[0], buf, 100), 4);
	CHECK(!memcmp(buf, "late", 4));
	CHECK_EQ(pthread_join(t, NULL), 0);
	CHECK_EQ(fcntl(s[0], F_SETFL, O_NONBLOCK), 0);
	CHECK_EQ(rd(s[0], buf, 100), -EAGAIN);
	CHECK_EQ(fcntl(s[0], F_SETFL, 0), 0);

	/* 4. a bad buffer, with data there */
	CHECK_EQ(write(s[1], "xy", 2), 2);
	CHECK_EQ(rd(s[0], (void *)8, 10), -EFAULT);
	CHECK_EQ(rd(s[0], buf, 100), 2);

	/* end of file */
	CHECK_EQ(shutdown(s[1], SHUT_WR), 0);
	CHECK_EQ(rd(s[0], buf, 100), 0);

	/* 2. a datagram socket */
	CHECK_EQ(socketpair(AF_UNIX, SOCK_DGRAM, 0, d), 0);
	CHECK_EQ(write(d[1], "z", 1), 1);
	CHECK_EQ(rd(d[0], buf, 100), 1);	/* learned */
	CHECK_EQ(write(d[1], "abc", 3), 3);
	CHECK_EQ(write(d[1], "defg", 4), 4);
	CHECK_EQ(rd(d[0], buf, 0), 0);
	CHECK_EQ(rd(d[0], buf, 100), 3);
	CHECK(!memcmp(buf, "abc", 3));
	CHECK_EQ(rd(d[0], buf, 2), 2);		/* the rest of "defg" is dropped */
	CHECK(!memcmp(buf, "de", 2));

	/* 5. stale: a regular file where the stream socket was */
	snprintf(path, sizeof(path), "%s/f", scratch_dir());
	fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0600);
	CHECK_GE(fd, 0);
	for (int i = 0; i < 5000; i++)
		buf[i] = (char)(i * 7);
	CHECK_EQ(write(fd, buf, 5000), 5000);
	CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
	replace(s[0], fd);
	memset(buf, 0, sizeof(buf));
	CHECK_EQ(rd(s[0], buf, 100), 100);
	CHECK_EQ(lseek(s[0], 0, SEEK_CUR), 100);
	CHECK_EQ(rd(s[0], buf + 100, 8000), 4900);
	for (int i = 0; i < 5000; i++)
		CHECK_EQ(buf[i], (char)(i * 7));
	CHECK_EQ(rd(s[0], buf, 100), 0);

	/* an empty O_NONBLOCK pipe where the datagram socket was */
	CHECK_EQ(pipe2(q, O_NONBLOCK), 0);
	replace(d[0], q[0]);
	CHECK_EQ(rd(d[0], buf, 100), -EAGAIN);
	close(q[1]);
	/* a pipe holding 3 bytes where a socket was */
	CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, u), 0);
	CHECK_EQ(write(u[1], "abc", 3), 3);
	CHECK_EQ(rd(u[0], buf, 100), 3);	/* learned */
	CHECK_EQ(pipe(w), 0);
	CHECK_EQ(write(w[1], "pqr", 3), 3);
	replace(u[0], w[0]);
	CHECK_EQ(rd(u[0], buf, 100), 3);
	CHECK(!memcmp(buf, "pqr", 3));

	close(s[0]);
	close(s[1]);
	close(d[0]);
	close(d[1]);
	close(u[0]);
	close(u[1]);
	close(w[1]);
	unlink(path);
	finish_handle(x, p, fds0);
	printf("ok (%s)\n", test_backend());
	return 0;
}
