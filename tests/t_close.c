/* xsc_close with entries posted, in flight and blocked forever: it
 * returns promptly, every entry is accounted for, nothing leaks.  Entries
 * posted and not flushed are canceled: a done_cb sees -ECANCELED for
 * each, and they never run.
 * xsc-test: per-backend */
#include <errno.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"
#include "xsc.h"

static long cb_ret[4];
static int cb_n;

static void note(void *arg, int id, long ret, uint64_t tag)
{
	(void)arg, (void)id, (void)tag;
	if (cb_n < 4)
		cb_ret[cb_n] = ret;
	cb_n++;
}

/* Posted, never flushed, then xsc_close. */
static void close_posted(int p[2])
{
	struct xsc_config cfg;
	struct xsc *x;
	char c;

	xsc_config_init(&cfg);
	cfg.done_cb = note;
	CHECK_EQ(xsc_open(&x, &cfg), 0);
	CHECK_GE(xsc_post(x, SYS_write, p[1], "a", 1), 0);
	CHECK_GE(xsc_post(x, SYS_write, p[1], "b", 1), 0);
	CHECK_EQ(xsc_close(x), 0);
	CHECK_EQ(cb_n, 2);
	CHECK_EQ(cb_ret[0], -ECANCELED);
	CHECK_EQ(cb_ret[1], -ECANCELED);
	CHECK_EQ(fcntl(p[0], F_SETFL, O_NONBLOCK), 0);
	CHECK_EQ(read(p[0], &c, 1), -1);	/* nothing was written */
	CHECK_EQ(fcntl(p[0], F_SETFL, 0), 0);
}

int main(void)
{
	struct timespec ts = { 10, 0 };
	int fds0 = count_fds(), p[2];
	struct xsc *x;
	char buf[4];
	struct timespec t0, t1;

	CHECK_EQ(pipe(p), 0);
	close_posted(p);
	for (int round = 0; round < 20; round++) {
		CHECK_EQ(xsc_open(&x, NULL), 0);
		if (strcmp(test_backend(), "inline")) {
			/* never complete on their own */
			CHECK_GE(xsc_post(x, SYS_read, p[0], buf, 1), 0);
			CHECK_GE(xsc_post(x, SYS_nanosleep, &ts, NULL), 0);
			xsc_flush(x);
		}
		CHECK_GE(xsc_post(x, SYS_getppid), 0);	/* done, not taken */
		xsc_flush(x);
		CHECK_GE(xsc_post(x, SYS_getppid), 0);	/* posted, not flushed */
		clock_gettime(CLOCK_MONOTONIC, &t0);
		CHECK_EQ(xsc_close(x), 0);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		CHECK(t1.tv_sec - t0.tv_sec < 3);
	}
	/* the canceled read did not consume anything */
	CHECK_EQ(write(p[1], "k", 1), 1);
	CHECK_EQ(read(p[0], buf, 1), 1);
	CHECK_EQ(buf[0], 'k');
	close(p[0]);
	close(p[1]);
	CHECK_EQ(count_fds(), fds0);
	return 0;
}
