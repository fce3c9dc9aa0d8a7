/* No thundering herd: K = 1,000 fibers read one byte at a time from one
 * pipe, and a writer fiber writes one byte at a time, each once the one
 * before was read, so every byte arrives with about K readers waiting.
 * The cost of a byte is counted as the runtime's completions (entries
 * completed plus readiness waits completed, xsc_runtime_stats) less the
 * writer's own, per byte read: at most 2 (the turn's readiness wait and
 * the read).  Without turns, past half the entries every waiter has a
 * readiness wait of its own and one byte completes all K of them (K
 * failed retries); below it, K blocked reads are K waiters the kernel
 * wakes and retries per byte.  Run twice: with 1,024 entries per kernel thread
 * (the waiters hold more than half) and with the default 4,096.
 * Then 200 fibers append to one regular file at once: no readiness wait,
 * since a file never waits for another party.  And 32 fibers write to
 * /dev/null at once: a character device takes no turn either, so their
 * writes leave in batches, at most one flush per two writes (in turns,
 * each write was a flush and a round trip of its own: 40 times slower).
 * xsc-test: per-backend
 * xsc-test: timeout=120 */
#include <fcntl.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <unistd.h>

#include "testlib.h"
#include "xsc.h"

enum { K = 1000 };

static int pfd[2], nbytes;
static unsigned npages;
static _Atomic int got, started;
static xsc_sem_t consumed;

static int wfd, wcount;	/* writers(): the descriptor, lines per fiber */

static void *writer(void *arg)
{
	(void)arg;
	for (int i = 0; i < wcount; i++)
		CHECK_EQ(xsc_write(wfd, "fiber.\n", 7), 7);
	return NULL;
}

/* n fibers write count lines each to fd at once; the runtime's
 * statistics before (s0, w0) and after (s1, w1) */
static void writers(xsc_thread_t *ts, int n, int fd, int count, struct xsc_stats *s0,
		    uint64_t *w0, struct xsc_stats *s1, uint64_t *w1)
{
	wfd = fd;
	wcount = count;
	CHECK_EQ(xsc_runtime_stats(s0, w0), 0);
	for (int i = 0; i < n; i++)
		CHECK_EQ(xsc_thread_create(&ts[i], NULL, writer, NULL), 0);
	for (int i = 0; i < n; i++)
		CHECK_EQ(xsc_thread_join(ts[i], NULL), 0);
	CHECK_EQ(xsc_runtime_stats(s1, w1), 0);
}

static void *reader(void *arg)
{
	char c;
	long r;

	(void)arg;
	atomic_fetch_add(&started, 1);
	while ((r = xsc_read(pfd[0], &c, 1)) == 1) {
		CHECK_EQ(c, 'x');
		atomic_fetch_add(&got, 1);
		xsc_sem_post(&consumed);
	}
	CHECK_EQ(r, 0);	/* the end of the pipe */
	return NULL;
}

static int body(int argc, char **argv)
{
	xsc_thread_t ts[K];
	struct xsc_stats s0, s1;
	uint64_t w0, w1;

	(void)argc;
	(void)argv;
	CHECK_EQ(pipe2(pfd, O_CLOEXEC), 0);	/* here: the parent holds no end */
	CHECK_EQ(xsc_sem_init(&consumed, 0), 0);
	for (int i = 0; i < K; i++)
		CHECK_EQ(xsc_thread_create(&ts[i], NULL, reader, NULL), 0);
	while (atomic_load(&started) < K)
		xsc_yield();
	for (int i = 0; i < 20; i++)	/* every reader parked in its read */
		xsc_usleep(1000);
	struct rusage r0, r1;
	CHECK_EQ(getrusage(RUSAGE_SELF, &r0), 0);
	CHECK_EQ(xsc_runtime_stats(&s0, &w0), 0);
	for (int i = 0; i < nbytes; i++) {
		CHECK_EQ(xsc_write(pfd[1], "x", 1), 1);
		/* parked, no call: the writer's completions are its writes */
		CHECK_EQ(xsc_sem_wait(&consumed), 0);
	}
	CHECK_EQ(xsc_runtime_stats(&s1, &w1), 0);
	CHECK_EQ(getrusage(RUSAGE_SELF, &r1), 0);
	/* printed, not checked (a time): the kernel's share of a herd */
	double cpu_us = ((r1.ru_utime.tv_sec - r0.ru_utime.tv_sec) +
			 (r1.ru_stime.tv_sec - r0.ru_stime.tv_sec)) * 1e6 +
			(r1.ru_utime.tv_usec - r0.ru_utime.tv_usec) +
			(r1.ru_stime.tv_usec - r0.ru_stime.tv_usec);
	/* the readers' completions: all of them less the writer's writes */
	double per = (double)((s1.completed - s0.completed) + (w1 - w0) - (uint64_t)nbytes) /
		     nbytes;
	CHECK_EQ(close(pfd[1]), 0);
	for (int i = 0; i < K; i++)
		CHECK_EQ(xsc_thread_join(ts[i], NULL), 0);
	CHECK_EQ(atomic_load(&got), nbytes);
	/* A regular file never waits for another party: 200 fibers that
	 * append to one at once take no turns (no readiness wait). */
	char path[256];
	snprintf(path, sizeof(path), "%s/log", scratch_dir());
	int logfd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	CHECK(logfd >= 0);
	writers(ts, 200, logfd, 20, &s0, &w0, &s1, &w1);
	CHECK_EQ(lseek(logfd, 0, SEEK_END), 200 * 20 * 7);
	CHECK_EQ(w1 - w0, 0);
	/* a number of its own: the log's record knows a file (closed here
	 * with no runtime call, its kind stays) */
	int nullfd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	CHECK(nullfd >= 0);
	close(logfd);
	writers(ts, 32, nullfd, 100, &s0, &w0, &s1, &w1);
	close(nullfd);
	double fpw = (double)(s1.flushes - s0.flushes) / (32 * 100);
	printf("32 fibers writing to /dev/null: %.3f flushes per write\n", fpw);
	CHECK(fpw <= 0.5);
	printf("%d readers, %u entries per kernel thread, %d bytes: %.2f completions "
	       "per byte read, %.1f us of CPU per byte\n", K, npages * 64, nbytes, per,
	       cpu_us / nbytes);
	if (per > 2.0) {
		fprintf(stderr, "a herd: %.2f completions per byte (at most 2)\n", per);
		return 1;
	}
	return 42;
}

int main(void)
{
	struct xsc_runtime_config cfg;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (test_read_route() == XSC_BACKEND_INLINE)
		skip("inline runs each call in its kernel thread: fibers of one "
		     "kernel thread cannot talk to each other (by design)");
	nbytes = test_sanitized() ? 200 : 2000;
	for (npages = 16; npages <= 64; npages *= 4) {
		xsc_runtime_config_init(&cfg);
		cfg.stack_size = 64 * 1024;
		cfg.npages = npages;
		main_in_child(body, &cfg);
	}
	printf("ok (%s)\n", test_backend());
	return 0;
}
