/* Long vectored writes that the kernel takes in several pieces: writev to
 * a 4 KiB pipe and sendmsg to a UNIX stream socket with a small send
 * buffer, 64 to 1024 iovecs (more than one window of the io_uring path's
 * completion of a short non-blocking write, src/uring.c xsc__write_rest),
 * while a reader thread drains slowly.  A blocking writev returns only
 * when all is written: the result must be the full length, and the reader
 * must see every byte in order, none twice.
 * xsc-test: per-backend */
#include <stdbool.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"
#include "xsc.h"

#define MAXIOV 1024

static unsigned char src[MAXIOV * 97];

struct reader {
	int fd;
	long want;
	long got;
	long bad;	/* offset of the first wrong byte + 1, or 0 */
};

static void *drain(void *arg)
{
	struct reader *r = arg;
	unsigned char buf[1500];
	struct timespec pause = { 0, 200000 };	/* let the writer fill up */

	while (r->got < r->want) {
		ssize_t n = read(r->fd, buf, sizeof(buf));
		if (n <= 0)
			break;
		for (ssize_t i = 0; i < n; i++)
			if (!r->bad && buf[i] != src[r->got + i])
				r->bad = r->got + i + 1;
		r->got += n;
		nanosleep(&pause, NULL);
	}
	return NULL;
}

/* Writes niov iovecs of len bytes (len cycling through 1..len when vary)
 * through xsc to wfd, drained from rfd; checks the result and the bytes. */
static void one(struct xsc *x, bool sock, int wfd, int rfd, int niov,
		size_t len, bool vary)
{
	static struct iovec iov[MAXIOV];
	struct reader r = { .fd = rfd };
	pthread_t th;
	size_t off = 0;
	long ret;

	for (int i = 0; i < niov; i++) {
		size_t l = vary ? 1 + (size_t)i % len : len;
		iov[i].iov_base = src + off;
		iov[i].iov_len = l;
		off += l;
	}
	CHECK(off <= sizeof(src));
	r.want = (long)off;
	CHECK_EQ(pthread_create(&th, NULL, drain, &r), 0);
	if (sock) {
		struct msghdr mh = { .msg_iov = iov, .msg_iovlen = (size_t)niov };
		ret = xsc_call(x, SYS_sendmsg, wfd, &mh, 0);
	} else {
		ret = xsc_call(x, SYS_writev, wfd, iov, niov);
	}
	CHECK_EQ(ret, (long)off);
	CHECK_EQ(pthread_join(th, NULL), 0);
	CHECK_EQ(r.got, (long)off);
	if (r.bad) {
		fprintf(stderr, "%s: %d iovecs: byte %ld differs\n",
			sock ? "sendmsg" : "writev", niov, r.bad - 1);
		exit(1);
	}
}

int main(void)
{
	struct xsc *x;
	int p[2], s[2], small = 4096;

	for (size_t i = 0; i < sizeof(src); i++)
		src[i] = (unsigned char)(i * 131 + (i >> 8));
	CHECK_EQ(xsc_open(&x, NULL), 0);
	CHECK_EQ(pipe(p), 0);
	CHECK_EQ(fcntl(p[1], F_SETPIPE_SZ, 4096), 4096);
	CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
	CHECK_EQ(setsockopt(s[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small)), 0);

	int counts[] = { 64, 65, 200, 1024 };
	for (unsigned k = 0; k < sizeof(counts) / sizeof(counts[0]); k++) {
		one(x, false, p[1], p[0], counts[k], 97, false);
		one(x, false, p[1], p[0], counts[k], 61, true);
		one(x, true, s[0], s[1], counts[k], 97, false);
		one(x, true, s[0], s[1], counts[k], 61, true);
	}
	/* more than IOV_MAX: the kernel's EINVAL, on every path */
	static struct iovec big[MAXIOV + 1];
	for (int i = 0; i <= MAXIOV; i++)
		big[i] = (struct iovec){ src, 1 };
	CHECK_EQ(xsc_call(x, SYS_writev, p[1], big, MAXIOV + 1), -EINVAL);
	xsc_close(x);
	printf("ok (%s)\n", test_backend());
	return 0;
}
