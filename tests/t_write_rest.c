/* Long vectored writes that the kernel takes in several pieces: writev to
 * a 4 KiB pipe and sendmsg to a UNIX stream socket with a small send
 * buffer, 64 to 1024 iovecs (more than one window of the io_uring path's
 * completion of a short write, src/uring_rw.c xsc__rest_start),
 * while a reader thread drains slowly.  A blocking writev returns only
 * when all is written: the result must be the full length, and the reader
 * must see every byte in order, none twice.
 * The same with the pipe or socket full when the call is made, and the
 * reader starting 50 ms later: the non-blocking attempt finds no room
 * (-EAGAIN) and the blocking form goes in; io_uring's blocking form waits
 * for room, then writes only what fits, and returned that count (4096
 * of 49664 bytes on this pipe) where write(2) goes on until all is
 * written.
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
	long delay_ns;	/* before the first read */
	long want;
	long got;
	long bad;	/* offset of the first wrong byte + 1, or 0 */
};

static void *drain(void *arg)
{
	struct reader *r = arg;
	unsigned char buf[1500];
	struct timespec pause = { 0, 200000 };	/* let the writer fill up */
	struct timespec first = { 0, r->delay_ns };

	nanosleep(&first, NULL);
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
		size_t len, bool vary, bool full)
{
	static struct iovec iov[MAXIOV];
	struct reader r = { .fd = rfd, .delay_ns = full ? 50000000 : 0 };
	pthread_t th;
	size_t off = 0, pre = 0;
	long ret, w;

	if (full) {	/* the reader gets these bytes first */
		CHECK_EQ(fcntl(wfd, F_SETFL, O_NONBLOCK), 0);
		while ((w = write(wfd, src + pre, 512)) > 0)
			pre += (size_t)w;
		CHECK_EQ(fcntl(wfd, F_SETFL, 0), 0);
		off = pre;
	}
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
	if (ret != (long)(off - pre))
		fprintf(stderr, "%s: %d iovecs%s: %ld of %zu written\n",
			sock ? "sendmsg" : "writev", niov,
			full ? " into a full buffer" : "", ret, off - pre);
	CHECK_EQ(ret, (long)(off - pre));
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
		one(x, false, p[1], p[0], counts[k], 97, false, false);
		one(x, false, p[1], p[0], counts[k], 61, true, false);
		one(x, true, s[0], s[1], counts[k], 97, false, false);
		one(x, true, s[0], s[1], counts[k], 61, true, false);
	}
	/* into a full pipe or socket: the blocking form from the start */
	one(x, false, p[1], p[0], 512, 97, false, true);
	one(x, true, s[0], s[1], 512, 97, false, true);
	/* more than IOV_MAX: the kernel's EINVAL, on every path */
	static struct iovec big[MAXIOV + 1];
	for (int i = 0; i <= MAXIOV; i++)
		big[i] = (struct iovec){ src, 1 };
	CHECK_EQ(xsc_call(x, SYS_writev, p[1], big, MAXIOV + 1), -EINVAL);
	xsc_close(x);
	printf("ok (%s)\n", test_backend());
	return 0;
}
