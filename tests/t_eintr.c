/* Signals during waits.  Documented semantics (include/xsc.h):
 *  - xsc_wait interrupted by a handled signal returns -EINTR; the entries
 *    stay in flight and complete normally on the next wait;
 *  - xsc_call of a call that has not run when a signal arrives returns
 *    -EINTR, like a synchronous call interrupted before doing anything.
 * xsc-test: per-backend */
#include <signal.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"
#include "xsc.h"

static volatile sig_atomic_t hits;
static void on_alarm(int sig) { (void)sig; hits++; }

/* A process-directed SIGALRM every `ms`, as a program's own timer would
 * send.  Periodic, because a signal that lands while the waiting thread
 * is between two system calls is handled in user space and interrupts
 * nothing (true of synchronous calls as well); the next one will. */
static void arm(long ms)
{
	struct itimerval it = { { ms / 1000, (ms % 1000) * 1000 },
				{ ms / 1000, (ms % 1000) * 1000 } };
	CHECK_EQ(setitimer(ITIMER_REAL, &it, NULL), 0);
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(void)
{
	struct sigaction sa = { .sa_handler = on_alarm };	/* no SA_RESTART */
	struct timespec ts = { 1, 0 };
	struct xsc *x;
	int p[2], id, r;
	long ret;
	char c;
	double t0;

	sigemptyset(&sa.sa_mask);
	CHECK_EQ(sigaction(SIGALRM, &sa, NULL), 0);
	CHECK_EQ(xsc_open(&x, NULL), 0);
	CHECK_EQ(pipe(p), 0);

	/* 1. xsc_wait interrupted while a 1 s sleep is in flight: 20 alarms
	 * for one to land in the wait (a 300 ms sleep ran out first twice
	 * on sqpoll beside a heavily loaded make test) */
	t0 = now_ms();
	id = xsc_post(x, SYS_nanosleep, &ts, NULL);
	CHECK_GE(id, 0);
	arm(50);
	r = xsc_wait(x, 1);
	arm(0);
	if (!strcmp(test_backend(), "inline")) {
		/* inline: the sleep itself ran in the flush and was interrupted */
		CHECK_EQ(r, 1);
		CHECK_EQ(xsc_take(x, id, &ret), 0);
		CHECK_EQ(ret, -EINTR);
	} else {
		CHECK_EQ(r, -EINTR);
		CHECK_EQ(xsc_result(x, id, &ret), -EINPROGRESS);
		CHECK_EQ(xsc_wait(x, 1), 1);	/* nothing lost */
		CHECK_EQ(xsc_take(x, id, &ret), 0);
		CHECK_EQ(ret, 0);
		CHECK(now_ms() - t0 >= 990);
	}
	CHECK_GE(hits, 1);

	/* 2. xsc_call of a read that can never complete: -EINTR */
	hits = 0;
	arm(50);
	t0 = now_ms();
	CHECK_EQ(xsc_call(x, SYS_read, p[0], &c, 1), -EINTR);
	arm(0);
	CHECK_GE(hits, 1);
	CHECK(now_ms() - t0 < 5000);

	/* 3. the pipe still works and no stale read steals its byte */
	CHECK_EQ(write(p[1], "z", 1), 1);
	CHECK_EQ(xsc_call(x, SYS_read, p[0], &c, 1), 1);
	CHECK_EQ(c, 'z');
	CHECK_EQ(xsc_close(x), 0);
	return 0;
}
