/* close(2) has released the file when it returns: a FIFO's reader sees
 * its last writer gone (POLLHUP) and a flock(2) the descriptor held is
 * free for another open of the file, at once.  On an SQPOLL ring the
 * poller drops the last reference and the file was released a moment
 * after the CQE: 61 of 200 closes of a FIFO's write end were seen by the
 * reader more than 1 ms late (and in a multi-call, the next open of the
 * FIFO found a writer that was closed, and did not wait for one).  200
 * rounds of each, through a handle and as a multi-call [close] (the file
 * opened through the handle); nothing may be late at all (poll with
 * timeout 0).
 * xsc-test: per-backend */
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "testlib.h"
#include "xsc.h"

#define ROUNDS 200
#define READ_ROUNDS 600	/* the plain call's miss was 1-7 in 200 */

static char fifo[256], file[256];

/* Closes fd through x: a plain call, or [close] as a multi-call. */
static long xclose(struct xsc *x, long fd, bool chain)
{
	struct xsc_mc c = { .nr = SYS_close, .flags = XSC_MC_CHECK, .args = { fd } };
	struct xsc_mc_opts o;

	if (!chain)
		return xsc_call(x, SYS_close, fd);
	xsc_mc_opts_init(&o);
	if (test_read_route() == XSC_BACKEND_URING || test_read_route() == XSC_BACKEND_SQPOLL)
		o.path = XSC_MC_URING;
	CHECK_EQ(xsc_multicall_ex(x, &c, 1, &o, NULL), 1);
	return c.ret;
}

static int fifo_late(struct xsc *x, bool chain)
{
	int late = 0;

	for (int i = 0; i < ROUNDS; i++) {
		int r = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		long w;
		struct pollfd p;

		CHECK_GE(r, 0);
		w = xsc_call(x, SYS_openat, AT_FDCWD, fifo, O_WRONLY | O_CLOEXEC, 0);
		CHECK_GE(w, 0);
		CHECK_EQ(xclose(x, w, chain), 0);
		p = (struct pollfd){ .fd = r, .events = POLLIN };
		late += !(poll(&p, 1, 0) == 1 && (p.revents & POLLHUP));
		close(r);
	}
	return late;
}

static int flock_late(struct xsc *x, bool chain)
{
	int late = 0;

	for (int i = 0; i < ROUNDS; i++) {
		int other = open(file, O_RDONLY | O_CLOEXEC);
		long fd = xsc_call(x, SYS_openat, AT_FDCWD, file, O_RDONLY | O_CLOEXEC, 0);

		CHECK_GE(other, 0);
		CHECK_GE(fd, 0);
		CHECK_EQ(flock((int)fd, LOCK_EX), 0);
		CHECK_EQ(xclose(x, fd, chain), 0);
		if (flock(other, LOCK_EX | LOCK_NB) != 0)
			late++;
		close(other);
	}
	return late;
}

/* The descriptor's last use went through the ring: a read of the FIFO's
 * read end that waited for its writer to go (end of file), then its
 * close.  A writer's non-blocking open right after must find no reader
 * (ENXIO), as natively.  On an SQPOLL ring the poller still held the
 * read's reference to the file for a moment after the read's CQE, so the
 * close did not release it: the open found the closed reader (tp_fifo's
 * writer then got EPIPE).  Not on the inline executor, where the read
 * would wait in the flush for a writer this thread has not closed yet. */
static int read_late(struct xsc *x, bool chain)
{
	int late = 0;

	if (test_read_route() == XSC_BACKEND_INLINE)
		return 0;
	for (int i = 0; i < READ_ROUNDS; i++) {
		long r = xsc_call(x, SYS_openat, AT_FDCWD, fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC, 0);
		int w, id;
		char c;

		CHECK_GE(r, 0);
		w = open(fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
		CHECK_GE(w, 0);
		/* a read that waits: blocking, so the kernel arms a poll */
		CHECK_EQ(fcntl((int)r, F_SETFL, O_RDONLY), 0);
		id = xsc_post6(x, SYS_read, r, (long)&c, 1, 0, 0, 0);
		CHECK_GE(id, 0);
		CHECK_GE(xsc_flush(x), 0);
		usleep(200);
		close(w);
		CHECK_EQ(take_within(x, id, 5.0), 0);
		CHECK_EQ(xclose(x, r, chain), 0);
		int w2 = open(fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
		late += w2 >= 0;
		if (w2 >= 0)
			close(w2);
	}
	return late;
}

int main(void)
{
	struct xsc *x;
	int p[2], fds0, bad = 0;

	snprintf(fifo, sizeof(fifo), "%s/fifo", scratch_dir());
	snprintf(file, sizeof(file), "%s/file", scratch_dir());
	CHECK_EQ(mkfifo(fifo, 0600), 0);
	int f = open(file, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	CHECK_GE(f, 0);
	close(f);
	fds0 = count_fds();
	CHECK_EQ(pipe(p), 0);
	CHECK_EQ(xsc_open(&x, NULL), 0);
	for (int chain = 0; chain < 2; chain++) {
		int a = fifo_late(x, chain), b = flock_late(x, chain),
		    c = read_late(x, chain);
		printf("%s: %d of %d FIFO writers still there after the close, "
		       "%d of %d locks still held, %d of %d FIFO readers still "
		       "there after a read and the close\n",
		       chain ? "multi-call" : "call", a, ROUNDS, b, ROUNDS, c, READ_ROUNDS);
		bad |= a || b || c;
	}
	CHECK_EQ(bad, 0);
	finish_handle(x, p, fds0);
	return 0;
}
