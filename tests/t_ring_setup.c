/* What docs/design.md ("Ring mode") says of the ring and the pool:
 *  - a uring handle's ring is SINGLE_ISSUER | COOP_TASKRUN (and
 *    SUBMIT_ALL); with XSC_DEFER_TASKRUN, SINGLE_ISSUER | DEFER_TASKRUN |
 *    TASKRUN_FLAG;
 *  - an SQPOLL poller goes to sleep (IORING_SQ_NEED_WAKEUP) after
 *    cfg.sq_idle_ms without work, not before: after a call through the
 *    ring, set within 500 ms with 5 ms, still clear 100 ms later with the
 *    default (1000 ms);
 *  - the SQPOLL rings of one process share one poller (ATTACH_WQ): two
 *    handles, one iou-sqp thread; with the first one closed, a third
 *    handle starts a poller of its own, and every handle still works;
 *  - the worker pool stops at cfg.max_workers and counts the times it
 *    could not grow (worker_cap_hits); the calls beyond it wait and then
 *    run, each with its own result.
 * xsc-test: timeout=60 */
#include <dirent.h>
#include <liburing.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "testlib.h"
#include "xsc.h"
#include "internal.h"

static struct xsc *open_with(const char *backend, unsigned flags, unsigned idle_ms)
{
	struct xsc_config cfg;
	struct xsc *x;

	xsc_config_init(&cfg);
	cfg.flags |= flags | XSC_NO_ENV;
	cfg.backend = !strcmp(backend, "uring") ? XSC_BACKEND_URING :
		      !strcmp(backend, "sqpoll") ? XSC_BACKEND_SQPOLL : XSC_BACKEND_WORKER;
	if (idle_ms)
		cfg.sq_idle_ms = idle_ms;
	cfg.max_workers = 2;
	CHECK_EQ(xsc_open(&x, &cfg), 0);
	CHECK_EQ(xsc_call(x, SYS_getppid), getppid());
	return x;
}

/* A call that goes through the ring (a fresh poller sleeps until its
 * first work; its idle time counts from the last) */
static void ring_work(struct xsc *x)
{
	int q[2];
	char c;

	CHECK_EQ(pipe(q), 0);
	CHECK_EQ(xsc_route(x, SYS_write, NULL), XSC_BACKEND_SQPOLL);
	CHECK_EQ(xsc_call(x, SYS_write, q[1], "w", 1), 1);
	CHECK_EQ(read(q[0], &c, 1), 1);
	close(q[0]);
	close(q[1]);
}

/* The process's SQPOLL pollers: threads named iou-sqp-PID */
static int pollers(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	char path[300], comm[32];
	int n = 0;

	CHECK(d != NULL);
	while ((e = readdir(d)) != NULL) {
		FILE *f;
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		if (!(f = fopen(path, "r")))
			continue;
		if (fgets(comm, sizeof(comm), f) && !strncmp(comm, "iou-sqp-", 8))
			n++;
		fclose(f);
	}
	closedir(d);
	return n;
}

static void one_poller(void)
{
	struct xsc *a, *b, *c;
	double t0 = now_s();

	/* the pollers of the rings closed above end on their own */
	while (pollers() && now_s() - t0 < 5)
		usleep(1000);
	CHECK_EQ(pollers(), 0);
	a = open_with("sqpoll", 0, 0);

	if (!a->sqpoll) {
		printf("no SQPOLL ring here: the shared poller not checked\n");
		CHECK_EQ(xsc_close(a), 0);
		return;
	}
	b = open_with("sqpoll", 0, 0);
	CHECK(b->sqpoll);
	ring_work(a);
	ring_work(b);
	printf("two SQPOLL handles: %d poller(s)\n", pollers());
	CHECK_EQ(pollers(), 1);
	CHECK_EQ(xsc_close(a), 0);	/* the holder */
	ring_work(b);
	c = open_with("sqpoll", 0, 0);
	CHECK(c->sqpoll);
	ring_work(c);
	ring_work(b);
	printf("holder closed, a third handle: %d poller(s)\n", pollers());
	CHECK_EQ(pollers(), 2);
	CHECK_EQ(xsc_close(b), 0);
	CHECK_EQ(xsc_close(c), 0);
}

static unsigned sq_flags(struct xsc *x)
{
	return IO_URING_READ_ONCE(*x->ring.sq.kflags);
}

int main(void)
{
	struct xsc *x;
	struct xsc_stats st;
	int p[4][2], id[4];
	char b[4][2];
	long r;

	if (xsc_open(&x, NULL) != 0 || xsc_route(x, SYS_read, NULL) != XSC_BACKEND_URING)
		skip("no io_uring ring here");
	xsc_close(x);

	x = open_with("uring", 0, 0);
	printf("uring ring flags %#x\n", x->ring.flags);
	CHECK_EQ(x->ring.flags & (IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_COOP_TASKRUN |
				  IORING_SETUP_SUBMIT_ALL | IORING_SETUP_DEFER_TASKRUN),
		 IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_COOP_TASKRUN | IORING_SETUP_SUBMIT_ALL);
	CHECK_EQ(xsc_close(x), 0);
	x = open_with("uring", XSC_DEFER_TASKRUN, 0);
	printf("XSC_DEFER_TASKRUN ring flags %#x\n", x->ring.flags);
	CHECK_EQ(x->ring.flags & (IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_COOP_TASKRUN |
				  IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_TASKRUN_FLAG),
		 IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_TASKRUN_FLAG);
	CHECK_EQ(xsc_close(x), 0);

	x = open_with("sqpoll", 0, 0);
	if (!x->sqpoll) {
		printf("no SQPOLL ring here: poller idle not checked\n");
	} else {
		ring_work(x);
		usleep(100000);
		CHECK_EQ(sq_flags(x) & IORING_SQ_NEED_WAKEUP, 0);	/* 1000 ms */
		CHECK_EQ(xsc_close(x), 0);
		x = open_with("sqpoll", 0, 5);
		ring_work(x);
		double t0 = now_s();
		while (!(sq_flags(x) & IORING_SQ_NEED_WAKEUP) && now_s() - t0 < 0.5)
			usleep(1000);
		printf("poller with 5 ms idle asleep after %.1f ms\n", (now_s() - t0) * 1e3);
		CHECK(sq_flags(x) & IORING_SQ_NEED_WAKEUP);
		CHECK_EQ(xsc_call(x, SYS_getppid), getppid());	/* woken */
	}
	CHECK_EQ(xsc_close(x), 0);
	one_poller();

	x = open_with("worker", 0, 0);
	for (int i = 0; i < 4; i++) {
		CHECK_EQ(pipe(p[i]), 0);
		CHECK_GE(id[i] = xsc_post(x, SYS_read, p[i][0], b[i], 2), 0);
	}
	CHECK_GE(xsc_flush(x), 0);
	usleep(50000);
	CHECK_EQ(xsc_stats_get(x, &st), 0);
	printf("worker: %llu threads, %llu cap hits\n", (unsigned long long)st.workers,
	       (unsigned long long)st.worker_cap_hits);
	CHECK_EQ(st.workers, 2);
	CHECK_GE(st.worker_cap_hits, 1);
	for (int i = 0; i < 4; i++) {
		char m[2] = { 'a', (char)('0' + i) };
		CHECK_EQ(write(p[i][1], m, 2), 2);
	}
	for (int i = 0; i < 4; i++) {
		CHECK_EQ(r = take_within(x, id[i], 10), 2);
		CHECK(b[i][0] == 'a' && b[i][1] == '0' + i);
		close(p[i][0]);
		close(p[i][1]);
	}
	CHECK_EQ(xsc_stats_get(x, &st), 0);
	CHECK_EQ(st.workers, 2);
	CHECK_EQ(xsc_close(x), 0);
	printf("ok\n");
	return 0;
}
