/* More SQEs in one flush than the submission queue holds.  The SQ holds
 * a batch (512 SQEs, src/uring.c "Sizing"), not every entry: a flush
 * that queues more submits on the way, and an entry's two linked SQEs (a
 * poll and its timeout) must go in the same submission, or the poll of
 * an empty pipe loses its timeout and waits for good.
 *  1. a handle of 2048 entries: 2000 calls posted, flushed once: polls
 *     of an empty pipe (time out: 0), polls of a readable one (1, POLLIN)
 *     and reads of /dev/zero, every result checked within 10 s;
 *  2. the same handle: 2000 reads of an empty pipe, flushed at once; their
 *     non-blocking attempts come back -EAGAIN and the reaper queues 2000
 *     blocking forms (making room on the way); then 2000 bytes are
 *     written and every read gets one;
 *  3. xsc threads on ONE kernel thread with a ring: 1500 fibers each
 *     poll an empty pipe (linked pairs, 64 calls a flush), then a byte
 *     written to the pipe wakes every one of them (1, POLLIN).
 *     (On syscall threads or inline a blocked poll holds its thread:
 *     there is no SQ there, and 1500 of them wait for threads.)
 * xsc-test: per-backend */
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "testlib.h"
#include "xsc.h"

#define N 2000
#define FIBERS 1500

static struct pollfd pfd[N];
static long want[N];
static char buf[N][8];

static void handle_part(void)
{
	struct xsc_config cfg;
	struct xsc_stats st;
	struct xsc *x;
	int empty[2], full[2], ids[N];
	int zero = open("/dev/zero", O_RDONLY);

	CHECK_GE(zero, 0);
	CHECK_EQ(pipe(empty), 0);
	CHECK_EQ(pipe(full), 0);
	CHECK_EQ(write(full[1], "x", 1), 1);
	xsc_config_init(&cfg);
	cfg.npages = 32;
	CHECK_EQ(xsc_open(&x, &cfg), 0);
	for (int i = 0; i < N; i++) {
		switch (i % 3) {
		case 0:	/* two linked SQEs; the timeout ends it */
			pfd[i] = (struct pollfd){ .fd = empty[0], .events = POLLIN };
			ids[i] = xsc_post(x, SYS_poll, &pfd[i], 1, 5);
			want[i] = 0;
			break;
		case 1:	/* two linked SQEs; ready at once */
			pfd[i] = (struct pollfd){ .fd = full[0], .events = POLLIN };
			ids[i] = xsc_post(x, SYS_poll, &pfd[i], 1, 10000);
			want[i] = 1;
			break;
		default:
			ids[i] = xsc_post(x, SYS_read, zero, buf[i], 8);
			want[i] = 8;
		}
		CHECK_GE(ids[i], 0);
	}
	CHECK_EQ(xsc_flush(x), N);
	xsc_stats_get(x, &st);
	for (int i = 0; i < N; i++) {
		long r = take_within(x, ids[i], 10.0);
		if (r != want[i])
			fprintf(stderr, "call %d (%s): %ld, want %ld\n", i,
				i % 3 == 2 ? "read" : "poll", r, want[i]);
		CHECK_EQ(r, want[i]);
		if (i % 3 == 1)
			CHECK_EQ(pfd[i].revents, POLLIN);
		else if (i % 3 == 0)
			CHECK_EQ(pfd[i].revents, 0);
	}
	printf("handle: %d calls in one flush, %llu crossings in it\n", N,
	       (unsigned long long)st.crossings);
	/* with a ring, all of them ran there: none was sent to a fallback
	 * for want of room in the SQ */
	xsc_stats_get(x, &st);
	int pr = xsc_route(x, SYS_poll, NULL), rr = xsc_route(x, SYS_read, NULL);
	if ((pr == XSC_BACKEND_URING || pr == XSC_BACKEND_SQPOLL) && pr == rr)
		CHECK_EQ(st.by_backend[XSC_BACKEND_URING] +
			 st.by_backend[XSC_BACKEND_SQPOLL], N);
	CHECK_EQ(st.declined, 0);

	/* 2: blocking forms queued by the reaper (with a ring: inline would
	 * block the flush in the first read) */
	if (rr == XSC_BACKEND_URING || rr == XSC_BACKEND_SQPOLL) {
		static char bytes[500];
		for (int i = 0; i < N; i++)
			CHECK_GE(ids[i] = xsc_post(x, SYS_read, empty[0], buf[i], 1), 0);
		CHECK_EQ(xsc_flush(x), N);
		for (int k = 0; k < 50; k++)	/* the -EAGAINs: resubmissions */
			xsc_poll(x);
		for (int i = 0; i < N; i += 500)
			CHECK_EQ(write(empty[1], bytes, 500), 500);
		for (int i = 0; i < N; i++)
			CHECK_EQ(take_within(x, ids[i], 10.0), 1);
		printf("handle: %d blocking reads resubmitted by the reaper, all "
		       "answered\n", N);
	}
	CHECK_EQ(xsc_close(x), 0);
	close(zero);
	close(empty[0]);
	close(empty[1]);
	close(full[0]);
	close(full[1]);
}

static int wake[2];
static long got[FIBERS];

static void *poller(void *arg)
{
	long i = (long)arg;
	struct pollfd p = { .fd = wake[0], .events = POLLIN };

	got[i] = xsc_syscall(SYS_poll, &p, 1, 20000);
	if (got[i] == 1 && p.revents != POLLIN)
		got[i] = -1000 - p.revents;
	return NULL;
}

static int fibers(int argc, char **argv)
{
	static xsc_thread_t t[FIBERS];
	struct timespec settle = { 0, 100 * 1000 * 1000 };

	(void)argc;
	(void)argv;
	CHECK_EQ(pipe(wake), 0);
	for (long i = 0; i < FIBERS; i++)
		CHECK_EQ(xsc_thread_create(&t[i], NULL, poller, (void *)i), 0);
	xsc_syscall(SYS_nanosleep, &settle, NULL);	/* all of them wait */
	CHECK_EQ(xsc_syscall(SYS_write, wake[1], "w", 1), 1);
	for (int i = 0; i < FIBERS; i++) {
		CHECK_EQ(xsc_thread_join(t[i], NULL), 0);
		if (got[i] != 1)
			fprintf(stderr, "fiber %d: poll returned %ld\n", i, got[i]);
		CHECK_EQ(got[i], 1);
	}
	printf("fibers: %d polls on one kernel thread woke\n", FIBERS);
	return 42;
}

int main(void)
{
	struct xsc_runtime_config cfg;

	handle_part();
	if (test_read_route() != XSC_BACKEND_URING &&
	    test_read_route() != XSC_BACKEND_SQPOLL) {
		printf("ok (%s; no ring: the fibers' part needs one)\n",
		       test_backend());
		return 0;
	}
	xsc_runtime_config_init(&cfg);
	cfg.nthreads = 1;
	CHECK_EQ(xsc_main(fibers, 0, NULL, &cfg), 42);
	printf("ok (%s)\n", test_backend());
	return 0;
}
