/* xsc threads: create/join, errno per fiber, mutex/cond/sem under
 * contention with a checked invariant, sleep ordering, pipes ping-pong
 * with every byte checked, cond timedwait; with 1 and 2 kernel threads.
 * xsc-test: per-backend
 * xsc-test: timeout=300 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testlib.h"
#include "xsc.h"

static int nthreads, max_pairs;

/* ---- create / join --------------------------------------------------- */
static void *ret_arg(void *a) { return a; }

static void create_join(int n)
{
	for (int i = 0; i < n; i++) {
		xsc_thread_t t;
		void *r;
		CHECK_EQ(xsc_thread_create(&t, NULL, ret_arg, (void *)(long)(i + 1)), 0);
		CHECK_EQ(xsc_thread_join(t, &r), 0);
		CHECK_EQ((long)r, i + 1);
	}
}

/* ---- errno isolation --------------------------------------------------- */
static void *errno_fiber(void *a)
{
	long want = (long)a;
	errno = (int)want;
	for (int i = 0; i < 50; i++) {
		xsc_yield();
		CHECK_EQ(xsc_syscall(SYS_getppid), getppid());
		CHECK_EQ(xsc_read(-1, NULL, 0), -EBADF);	/* -errno, errno untouched */
		CHECK_EQ(errno, want);
	}
	return NULL;
}

/* ---- mutex + cond: a bounded buffer, producers/consumers ------------- */
#define CAP 8
static xsc_mutex_t mu = XSC_MUTEX_INITIALIZER;
static xsc_cond_t notfull = XSC_COND_INITIALIZER, notempty = XSC_COND_INITIALIZER;
static long buf[CAP], head, tail, count, consumed_sum, inside;

static void *producer(void *a)
{
	long base = (long)a;
	for (long i = 0; i < 2000; i++) {
		xsc_mutex_lock(&mu);
		CHECK_EQ(inside++, 0);	/* mutual exclusion */
		while (count == CAP) {
			inside--;
			xsc_cond_wait(&notfull, &mu);
			CHECK_EQ(inside++, 0);
		}
		buf[tail] = base + i;
		tail = (tail + 1) % CAP;
		count++;
		inside--;
		xsc_cond_signal(&notempty);
		xsc_mutex_unlock(&mu);
		if (i % 7 == 0)
			xsc_yield();
	}
	return NULL;
}

static void *consumer(void *a)
{
	long n = (long)a;
	for (long i = 0; i < n; i++) {
		xsc_mutex_lock(&mu);
		CHECK_EQ(inside++, 0);
		while (count == 0) {
			inside--;
			xsc_cond_wait(&notempty, &mu);
			CHECK_EQ(inside++, 0);
		}
		consumed_sum += buf[head];
		head = (head + 1) % CAP;
		count--;
		inside--;
		xsc_cond_signal(&notfull);
		xsc_mutex_unlock(&mu);
	}
	return NULL;
}

/* ---- semaphore: at most K inside ---------------------------------------- */
static xsc_sem_t sem;
static _Atomic int in_sem, max_in_sem;

static void *sem_fiber(void *a)
{
	(void)a;
	for (int i = 0; i < 200; i++) {
		xsc_sem_wait(&sem);
		int now = ++in_sem;
		if (now > max_in_sem)
			max_in_sem = now;
		CHECK(now <= 3);
		xsc_yield();
		in_sem--;
		xsc_sem_post(&sem);
	}
	return NULL;
}

/* ---- sleep ordering ------------------------------------------------------ */
static xsc_mutex_t order_mu = XSC_MUTEX_INITIALIZER;
static int order[5], norder;
static int64_t started[5], woke[5];	/* ns, by sleeper index */

static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void *sleeper(void *a)
{
	long i = (long)a, ms = 100 * (i + 1);
	started[i] = mono_ns();
	CHECK_EQ(xsc_usleep((unsigned long)ms * 1000), 0);
	woke[i] = mono_ns();
	xsc_mutex_lock(&order_mu);
	order[norder++] = (int)ms;
	xsc_mutex_unlock(&order_mu);
	return NULL;
}

/* ---- pipes ping-pong ------------------------------------------------------ */
struct pp { int rd, wr; long id; };

static void *pong(void *a)
{
	struct pp *p = a;
	unsigned char c, want = (unsigned char)p->id;
	for (int i = 0; i < 5; i++) {
		CHECK_EQ(xsc_read(p->rd, &c, 1), 1);
		CHECK_EQ(c, want);
		want++;
		CHECK_EQ(xsc_write(p->wr, &want, 1), 1);
		want++;
	}
	return NULL;
}

static void pingpong(int n)
{
	struct pp *ps = calloc((size_t)n, sizeof(*ps));
	int (*fds)[4] = calloc((size_t)n, sizeof(*fds));
	xsc_thread_t *ts = calloc((size_t)n, sizeof(*ts));

	for (int i = 0; i < n; i++) {
		CHECK_EQ(pipe(&fds[i][0]), 0);	/* to pong */
		CHECK_EQ(pipe(&fds[i][2]), 0);	/* from pong */
		ps[i] = (struct pp){ fds[i][0], fds[i][3], i };
		CHECK_EQ(xsc_thread_create(&ts[i], NULL, pong, &ps[i]), 0);
	}
	for (int r = 0; r < 5; r++)
		for (int i = 0; i < n; i++) {
			unsigned char c = (unsigned char)(i + 2 * r), got;
			CHECK_EQ(xsc_write(fds[i][1], &c, 1), 1);
			CHECK_EQ(xsc_read(fds[i][2], &got, 1), 1);
			CHECK_EQ(got, (unsigned char)(c + 1));
		}
	for (int i = 0; i < n; i++) {
		CHECK_EQ(xsc_thread_join(ts[i], NULL), 0);
		for (int k = 0; k < 4; k++)
			close(fds[i][k]);
	}
	free(ps);
	free(fds);
	free(ts);
}

/* ---- timed wait ----------------------------------------------------------- */
static void timedwait(void)
{
	xsc_mutex_t m = XSC_MUTEX_INITIALIZER;
	xsc_cond_t c = XSC_COND_INITIALIZER;
	struct timespec now, dl;

	clock_gettime(CLOCK_MONOTONIC, &now);
	dl = now;
	dl.tv_nsec += 30 * 1000000;
	if (dl.tv_nsec >= 1000000000) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000;
	}
	xsc_mutex_lock(&m);
	CHECK_EQ(xsc_cond_timedwait(&c, &m, &dl), -ETIMEDOUT);
	clock_gettime(CLOCK_MONOTONIC, &now);
	CHECK(now.tv_sec > dl.tv_sec || (now.tv_sec == dl.tv_sec && now.tv_nsec >= dl.tv_nsec));
	xsc_mutex_unlock(&m);
}

static void *blocked_reader(void *a)
{
	char c;
	xsc_read(*(int *)a, &c, 1);
	return NULL;
}

/* A fiber that spins in xsc_yield while another waits for I/O must not
 * starve it: the scheduler reaps completions between runnable fibers
 * (on a DEFER_TASKRUN ring that means entering the kernel for them). */
static volatile int got_byte;

static void *byte_reader(void *a)
{
	char c = 0;
	if (xsc_read(*(int *)a, &c, 1) == 1 && c == 'y')
		got_byte = 1;
	return NULL;
}

static void yield_spin(void)
{
	int p[2];
	xsc_thread_t t;
	struct timespec t0, t1;

	CHECK_EQ(pipe(p), 0);
	got_byte = 0;
	CHECK_EQ(xsc_thread_create(&t, NULL, byte_reader, &p[0]), 0);
	for (int i = 0; i < 100; i++)
		xsc_yield();	/* the reader is blocked in its read now */
	/* a direct write(2): no entry of ours completes with it */
	CHECK_EQ(syscall(SYS_write, p[1], "y", 1), 1);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		xsc_yield();
		clock_gettime(CLOCK_MONOTONIC, &t1);
	} while (!got_byte && t1.tv_sec - t0.tv_sec < 5);
	CHECK_EQ(got_byte, 1);
	CHECK_EQ(xsc_thread_join(t, NULL), 0);
	close(p[0]);
	close(p[1]);
}

static int body(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	xsc_thread_t t[16];
	int nfib = test_sanitized() ? 20000 : 100000;

	create_join(nfib);
	for (int i = 0; i < 8; i++)
		CHECK_EQ(xsc_thread_create(&t[i], NULL, errno_fiber, (void *)(long)(i + 1)), 0);
	for (int i = 0; i < 8; i++)
		CHECK_EQ(xsc_thread_join(t[i], NULL), 0);

	consumed_sum = 0;
	for (int i = 0; i < 4; i++)
		CHECK_EQ(xsc_thread_create(&t[i], NULL, producer, (void *)(long)(i * 100000)), 0);
	for (int i = 0; i < 2; i++)
		CHECK_EQ(xsc_thread_create(&t[4 + i], NULL, consumer, (void *)4000L), 0);
	for (int i = 0; i < 6; i++)
		CHECK_EQ(xsc_thread_join(t[i], NULL), 0);
	long want = 0;
	for (int p = 0; p < 4; p++)
		want += 2000L * p * 100000 + 2000L * 1999 / 2;
	CHECK_EQ(consumed_sum, want);
	CHECK_EQ(count, 0);

	xsc_sem_init(&sem, 3);
	for (int i = 0; i < 10; i++)
		CHECK_EQ(xsc_thread_create(&t[i], NULL, sem_fiber, NULL), 0);
	for (int i = 0; i < 10; i++)
		CHECK_EQ(xsc_thread_join(t[i], NULL), 0);
	CHECK_EQ(max_in_sem <= 3, 1);

	/* inline executes every call synchronously: a sleeping or blocked
	 * fiber holds its kernel thread, so sleeps serialize and a pipe
	 * ping-pong between fibers of one kernel thread cannot progress.
	 * That is the inline baseline's documented meaning. */
	if (!strcmp(test_backend(), "inline")) {
		timedwait();
		printf("ok: %d kernel threads, inline (sleep order and ping-pong "
		       "need an asynchronous executor)\n", nthreads);
		return 42;
	}
	/* sleeps never end early, and end in the order of their lengths
	 * (100 ms apart) when they started together.  A starved machine can
	 * start them far apart (sqpoll beside a loaded `make test` swapped
	 * two, 10 ms apart, and later two 100 ms apart): then the order
	 * says nothing and is not checked.  Nor does it among sleepers that
	 * woke together: with two `make test`s on two cores, all five woke
	 * within 0.2 ms of each other, 76-476 ms late, their timers all
	 * expired while the vcpu waited for a core, and natively such
	 * threads wake in any order too.  A shorter sleep must not end
	 * more than 50 ms after a longer one. */
	norder = 0;
	long idx[5] = { 4, 0, 3, 1, 2 };	/* 500, 100, 400, 200, 300 ms */
	for (int i = 0; i < 5; i++)
		CHECK_EQ(xsc_thread_create(&t[i], NULL, sleeper, (void *)idx[i]), 0);
	for (int i = 0; i < 5; i++)
		CHECK_EQ(xsc_thread_join(t[i], NULL), 0);
	int64_t lo = started[0], hi = started[0];
	for (int i = 0; i < 5; i++) {
		CHECK(woke[i] - started[i] >= 100000000LL * (i + 1));
		lo = started[i] < lo ? started[i] : lo;
		hi = started[i] > hi ? started[i] : hi;
	}
	if (hi - lo < 50000000LL) {
		bool in_order = true;
		for (int i = 0; i < 5; i++)
			for (int j = i + 1; j < 5; j++)
				in_order &= woke[i] <= woke[j] + 50000000LL;
		if (!in_order) {	/* what happened, for the report */
			for (int i = 0; i < 5; i++)
				printf("sleeper %d ms: started %+.1f ms, woke %+.1f ms (%.1f late)\n",
				       100 * (i + 1), (double)(started[i] - lo) / 1e6,
				       (double)(woke[i] - lo) / 1e6,
				       (double)(woke[i] - started[i]) / 1e6 - 100.0 * (i + 1));
			printf("wake order: %ld %ld %ld %ld %ld ms\n", (long)order[0],
			       (long)order[1], (long)order[2], (long)order[3], (long)order[4]);
		}
		CHECK(in_order);
	} else {
		printf("note: the sleepers started %.0f ms apart: order not checked\n",
		       (double)(hi - lo) / 1e6);
	}

	/* the worker executor holds one syscall thread per blocked fiber
	 * (bounded at 256 per kernel thread): asked for, or the fallback
	 * when io_uring is forbidden (the route tells, not the name) */
	int pairs = test_read_route() == XSC_BACKEND_WORKER ? 200 :
		    test_sanitized() ? 500 : 10000;
	if (pairs > max_pairs) {
		printf("note: RLIMIT_NOFILE allows only %d ping-pong pairs\n", max_pairs);
		pairs = max_pairs;
	}
	pingpong(pairs);
	yield_spin();
	timedwait();
	/* leave fibers blocked in calls that never complete: xsc_main must
	 * still return (they are abandoned, like threads at exit) */
	static int never[2];
	CHECK_EQ(pipe(never), 0);
	for (int i = 0; i < 16; i++)
		CHECK_EQ(xsc_thread_create(NULL, &(xsc_thread_attr_t){ .detached = 1 },
					   blocked_reader, &never[0]), 0);
	xsc_yield();
	printf("ok: %d kernel threads, backend %s\n", nthreads, test_backend());
	return 42;
}

int main(void)
{
	struct rlimit rl;

	/* 10,000 ping-pong pairs hold 40,000 pipe fds */
	CHECK_EQ(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_max < 41000)
		rl.rlim_max = 41000;	/* root may raise it */
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) != 0) {
		CHECK_EQ(getrlimit(RLIMIT_NOFILE, &rl), 0);
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	max_pairs = (int)((rl.rlim_cur - 256) / 4);
	for (nthreads = 1; nthreads <= 2; nthreads++) {
		struct xsc_runtime_config cfg;
		xsc_runtime_config_init(&cfg);
		cfg.nthreads = (unsigned)nthreads;
		cfg.npages = 200;	/* 12800 calls in flight: 10,000 blocked fibers */
		main_in_child(body, &cfg);
	}
	return 0;
}
