/* xsc_close with entries posted, in flight and blocked forever: it
 * returns promptly, every entry is accounted for, nothing leaks.
 * xsc-test: per-backend */
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"
#include "xsc.h"

int main(void)
{
	struct timespec ts = { 10, 0 };
	int fds0 = count_fds(), p[2];
	struct xsc *x;
	char buf[4];
	struct timespec t0, t1;

	CHECK_EQ(pipe(p), 0);
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
