/* A posted sleep lasts as long as the caller's own would.  The kernel lets
 * a nanosleep end up to the thread's timer slack late (an hrtimer range;
 * on an idle CPU it ends that late), where io_uring's timeout ends on the
 * nanosecond: a program sleeping 100 us in a loop woke 1.5 times as often
 * under xsc.  On a ring the handle adds the slack of the thread that
 * opened it (uring_misc.c get_ts): with a slack of 3 ms, a sleep of 1 us
 * posted there lasts at least 3 ms, relative (nanosleep, clock_nanosleep)
 * and absolute alike.  On the other executors the kernel's own nanosleep
 * runs, with its own range: at least the request.
 * xsc-test: per-backend */
#include <stdbool.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>

#include "testlib.h"
#include "xsc.h"

#define SLACK_NS 3000000L

static long ns_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000000000L + (t.tv_nsec - t0->tv_nsec);
}

int main(void)
{
	struct timespec req = { 0, 1000 }, t0, abs;
	long shortest[3] = { -1, -1, -1 };
	struct xsc *x;

	CHECK_EQ(prctl(PR_SET_TIMERSLACK, SLACK_NS, 0, 0, 0), 0);
	CHECK_EQ(xsc_open(&x, NULL), 0);
	int route = xsc_route(x, SYS_nanosleep, NULL);
	bool ring = route == XSC_BACKEND_URING || route == XSC_BACKEND_SQPOLL;

	for (int i = 0; i < 5; i++) {
		long d[3];

		clock_gettime(CLOCK_MONOTONIC, &t0);
		CHECK_EQ(xsc_call(x, SYS_nanosleep, &req, NULL), 0);
		d[0] = ns_since(&t0);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		CHECK_EQ(xsc_call(x, SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &req, NULL), 0);
		d[1] = ns_since(&t0);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		abs = t0;
		abs.tv_nsec += 1000;
		if (abs.tv_nsec >= 1000000000) {
			abs.tv_nsec -= 1000000000;
			abs.tv_sec++;
		}
		CHECK_EQ(xsc_call(x, SYS_clock_nanosleep, CLOCK_MONOTONIC, TIMER_ABSTIME,
				  &abs, NULL), 0);
		d[2] = ns_since(&t0);
		for (int k = 0; k < 3; k++)
			if (shortest[k] < 0 || d[k] < shortest[k])
				shortest[k] = d[k];
	}
	printf("route %d; shortest of 5 sleeps of 1 us with a %ld ns slack: nanosleep %ld ns, "
	       "clock_nanosleep %ld ns, absolute %ld ns\n", route, SLACK_NS, shortest[0],
	       shortest[1], shortest[2]);
	for (int k = 0; k < 3; k++)
		CHECK_GE(shortest[k], ring ? SLACK_NS : 1000);
	CHECK_EQ(xsc_close(x), 0);
	printf("ok (%s)\n", test_backend());
	return 0;
}
