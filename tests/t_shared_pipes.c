/* Many waiters on shared descriptors: N pairs of fibers share P pipe
 * pairs (pair i uses pipe pair i % P).  Fiber A writes one byte to pipe
 * ab, then reads one byte from pipe ba; fiber B reads one byte from ab,
 * then writes one byte to ba; ROUNDS rounds each.  Every byte written is
 * read exactly once by some fiber of the same pipe pair, so the program
 * always finishes (natively, with threads, it does).  Thousands of
 * readers wait on one descriptor at once, and one byte arriving must wake
 * one of them, not lose the wake-up and not wake all of them for good.
 *   t_shared_pipes [PAIRS PIPES]  (default 50,000 pairs on 4,000 pipes)
 * Fails when no round completes for STALL_S seconds (a stall: with a
 * readiness wait per waiter past half the entries, 30,000 fibers on 4,000
 * pipe pairs stop after a third of the rounds and 100,000 within the
 * first second; docs/design.md, "Many blocked fibers").  Prints the
 * completions the handle reaped per byte read (the herd: K waiters woken
 * for one byte).
 * xsc-test: per-backend
 * xsc-test: timeout=200 */
#include <fcntl.h>
#include <pthread.h>
#include <time.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/resource.h>
#include <unistd.h>

#include "testlib.h"
#include "xsc.h"

enum { ROUNDS = 10, STALL_S = 15 };

struct pipes {
	int ab[2], ba[2];
};

static struct pipes *pp;
static int npairs, npipes;
static _Atomic long rounds_done, bytes_read;
static _Atomic int created, finished;

static void *side_a(void *arg)
{
	struct pipes *p = arg;
	unsigned char c = 'a', got;

	for (int r = 0; r < ROUNDS; r++) {
		CHECK_EQ(xsc_write(p->ab[1], &c, 1), 1);
		CHECK_EQ(xsc_read(p->ba[0], &got, 1), 1);
		CHECK_EQ(got, 'b');
		atomic_fetch_add_explicit(&bytes_read, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&rounds_done, 1, memory_order_relaxed);
	}
	atomic_fetch_add(&finished, 1);
	return NULL;
}

static void *side_b(void *arg)
{
	struct pipes *p = arg;
	unsigned char c, b = 'b';

	for (int r = 0; r < ROUNDS; r++) {
		CHECK_EQ(xsc_read(p->ab[0], &c, 1), 1);
		CHECK_EQ(c, 'a');
		atomic_fetch_add_explicit(&bytes_read, 1, memory_order_relaxed);
		CHECK_EQ(xsc_write(p->ba[1], &b, 1), 1);
	}
	atomic_fetch_add(&finished, 1);
	return NULL;
}

/* Prints progress each second and fails the test on a stall.  A kernel
 * thread of its own, outside the runtime: a fiber's sleep would need the
 * very entries or syscall threads a stall holds. */
static void *watchdog(void *arg)
{
	long last = -1;
	double t0 = now_s(), since = t0;
	struct timespec tick = { 0, 200 * 1000 * 1000 };

	(void)arg;
	while (atomic_load(&finished) < 2 * npairs) {
		nanosleep(&tick, NULL);
		long r = atomic_load(&rounds_done);
		int c = atomic_load(&created);
		double t = now_s();
		if (r != last || c < 2 * npairs) {
			if ((long)(t - t0) != (long)(since - t0))
				printf("  %.0f s: %d created, %ld of %ld rounds\n", t - t0, c, r,
				       (long)npairs * ROUNDS);
			last = r;
			since = t;
		} else if (t - since > STALL_S) {
			fprintf(stderr, "stall: %d fibers created, %ld of %ld rounds, "
				"%d finished, no round for %d s\n", c, r,
				(long)npairs * ROUNDS, atomic_load(&finished), STALL_S);
			fflush(stdout);
			_exit(1);
		}
	}
	return NULL;
}

static int body(int argc, char **argv)
{
	pthread_t wd;
	xsc_thread_t *ts = calloc((size_t)npairs * 2, sizeof(*ts));
	double t0 = now_s();

	(void)argc;
	(void)argv;
	CHECK(ts);
	CHECK_EQ(pthread_create(&wd, NULL, watchdog, NULL), 0);
	for (int i = 0; i < npairs; i++) {
		CHECK_EQ(xsc_thread_create(&ts[2 * i + 1], NULL, side_b, &pp[i % npipes]), 0);
		atomic_fetch_add(&created, 1);
		CHECK_EQ(xsc_thread_create(&ts[2 * i], NULL, side_a, &pp[i % npipes]), 0);
		atomic_fetch_add(&created, 1);
	}
	for (int i = 0; i < 2 * npairs; i++)
		CHECK_EQ(xsc_thread_join(ts[i], NULL), 0);
	CHECK_EQ(pthread_join(wd, NULL), 0);
	printf("%d fibers, %d pipe pairs, %d rounds: %.2f s, %ld bytes read\n",
	       2 * npairs, npipes, ROUNDS, now_s() - t0, atomic_load(&bytes_read));
	free(ts);
	return 42;
}

int main(int argc, char **argv)
{
	struct rlimit rl;
	struct xsc_runtime_config cfg;

	if (test_read_route() == XSC_BACKEND_INLINE)
		skip("inline runs each call in its kernel thread: fibers of one "
		     "kernel thread cannot talk to each other (by design)");
	setvbuf(stdout, NULL, _IOLBF, 0);
	npairs = argc > 2 ? atoi(argv[1]) : test_sanitized() ? 5000 : 50000;
	npipes = argc > 2 ? atoi(argv[2]) : test_sanitized() ? 400 : 4000;
	CHECK_EQ(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_cur < (rlim_t)npipes * 4 + 256) {
		rl.rlim_cur = (rlim_t)npipes * 4 + 256;
		if (rl.rlim_max < rl.rlim_cur)
			rl.rlim_max = rl.rlim_cur;
		if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
			skip("RLIMIT_NOFILE cannot be raised to %llu",
			     (unsigned long long)rl.rlim_cur);
	}
	pp = calloc((size_t)npipes, sizeof(*pp));
	CHECK(pp);
	for (int i = 0; i < npipes; i++) {
		CHECK_EQ(pipe2(pp[i].ab, O_CLOEXEC), 0);
		CHECK_EQ(pipe2(pp[i].ba, O_CLOEXEC), 0);
	}
	xsc_runtime_config_init(&cfg);
	cfg.stack_size = 64 * 1024;
	main_in_child(body, &cfg);
	printf("ok (%s)\n", test_backend());
	return 0;
}
