/* The completion path never blocks (docs/design.md, "What the reaper may
 * do").  A write larger than a pipe or socket buffer to a blocking fd is
 * taken in pieces; the rest must go out as new submissions while the
 * caller waits, never as a blocking call inside the reaper.
 *  1. handle: a 1 MiB write into a pipe nobody reads yet, then xsc_poll:
 *     the poll returns at once; once a reader drains the pipe the write
 *     completes with the full count and every byte arrives in order;
 *  2. xsc threads on ONE kernel thread: a fiber writes 1 MiB and 16 MiB
 *     into a pipe and a socketpair while another fiber of the same kernel
 *     thread reads it in 64 KiB pieces; every byte is checked;
 *  3. a write whose later part fails (the reader closes its end after
 *     part of the data): the count written so far, as write(2) gives.
 * A watchdog thread turns a hang into a failure with a message.
 * xsc-test: per-backend
 * xsc-test: timeout=120 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"
#include "xsc.h"

#define BIG (16L << 20)
static unsigned char *src;
static _Atomic int stage;
static const char *stage_name[] = { "start", "xsc_poll after a 1 MiB write",
				    "fibers: pipe 1 MiB", "fibers: pipe 16 MiB",
				    "fibers: socketpair 1 MiB", "fibers: socketpair 16 MiB",
				    "partial failure", "done" };

static void *watchdog(void *arg)
{
	(void)arg;
	for (;;) {
		int s = atomic_load(&stage);
		/* each stage gets 20 s: a working path needs well under 1 */
		for (int i = 0; i < 200 && atomic_load(&stage) == s; i++)
			usleep(100000);
		if (atomic_load(&stage) == s) {
			fprintf(stderr, "hang in stage '%s'\n", stage_name[s]);
			_exit(1);
		}
	}
	return NULL;
}

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Reads want bytes from fd and checks them against src. */
static void drain_check(int fd, long want, long (*rd)(int, void *, size_t))
{
	static unsigned char buf[64 * 1024];
	long got = 0;

	while (got < want) {
		long n = rd(fd, buf, sizeof(buf));
		if (n <= 0) {
			fprintf(stderr, "read at %ld of %ld: %ld\n", got, want, n);
			exit(1);
		}
		if (memcmp(buf, src + got, (size_t)n) != 0) {
			fprintf(stderr, "bytes differ in [%ld, %ld)\n", got, got + n);
			exit(1);
		}
		got += n;
	}
}

static long plain_read(int fd, void *b, size_t n) { return read(fd, b, n); }

struct drainer { int fd; long want; };

static void *drain_thread(void *arg)
{
	struct drainer *d = arg;
	drain_check(d->fd, d->want, plain_read);
	return NULL;
}

static void handle_poll(void)
{
	struct xsc *x;
	struct drainer d;
	pthread_t th;
	int p[2], id;
	long ret;

	CHECK_EQ(xsc_open(&x, NULL), 0);
	CHECK_EQ(pipe(p), 0);
	id = xsc_post(x, SYS_write, p[1], src, 1L << 20);
	CHECK_GE(id, 0);
	CHECK_EQ(xsc_flush(x), 1);
	int64_t t0 = now_ms();
	for (int i = 0; i < 10; i++)
		xsc_poll(x);
	int64_t dt = now_ms() - t0;
	if (dt > 500) {
		fprintf(stderr, "xsc_poll took %lld ms with a full pipe\n", (long long)dt);
		exit(1);
	}
	CHECK_EQ(xsc_result(x, id, &ret), -EINPROGRESS);
	d = (struct drainer){ p[0], 1L << 20 };
	CHECK_EQ(pthread_create(&th, NULL, drain_thread, &d), 0);
	CHECK_EQ(xsc_take(x, id, &ret), 0);
	CHECK_EQ(ret, 1L << 20);
	CHECK_EQ(pthread_join(th, NULL), 0);

	/* a later part fails: the reader takes 64 KiB and closes, so the
	 * rest gets EPIPE; write(2) returns what it wrote before */
	atomic_store(&stage, 6);
	signal(SIGPIPE, SIG_IGN);
	static unsigned char buf[64 * 1024];
	id = xsc_post(x, SYS_write, p[1], src, 1L << 20);
	CHECK_GE(id, 0);
	xsc_flush(x);
	long got = 0;
	while (got < (long)sizeof(buf)) {
		long n = read(p[0], buf, sizeof(buf) - (size_t)got);
		CHECK(n > 0);
		got += n;
	}
	close(p[0]);
	CHECK_EQ(xsc_take(x, id, &ret), 0);
	/* at least what was read, at most what fit in the pipe besides */
	CHECK_GE(ret, got);
	CHECK(ret < (1L << 20));
	close(p[1]);
	xsc_close(x);
}

struct pair { int wfd, rfd; long len; bool sock; };

static void *writer(void *arg)
{
	struct pair *pr = arg;
	long r = pr->sock ? xsc_send(pr->wfd, src, (size_t)pr->len, 0)
			  : xsc_write(pr->wfd, src, (size_t)pr->len);
	return (void *)r;
}

static long fiber_read(int fd, void *b, size_t n) { return xsc_read(fd, b, n); }

static int fibers(int argc, char **argv)
{
	(void)argc; (void)argv;
	int st = 2;
	for (int sock = 0; sock < 2; sock++)
		for (long len = 1L << 20; len <= BIG; len *= 16, st++) {
			int fd[2];
			xsc_thread_t t;
			void *r;
			atomic_store(&stage, st);
			if (sock)
				CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fd), 0);
			else
				CHECK_EQ(pipe(fd), 0);
			/* pipe: fd[1] -> fd[0]; socketpair: fd[0] -> fd[1] */
			struct pair pr = { sock ? fd[0] : fd[1], sock ? fd[1] : fd[0],
					   len, sock };
			CHECK_EQ(xsc_thread_create(&t, NULL, writer, &pr), 0);
			drain_check(pr.rfd, len, fiber_read);
			CHECK_EQ(xsc_thread_join(t, &r), 0);
			CHECK_EQ((long)r, len);
			close(fd[0]);
			close(fd[1]);
		}
	return 0;
}

int main(int argc, char **argv)
{
	struct xsc_runtime_config rc;
	pthread_t wd;

	if (strcmp(test_backend(), "inline") == 0)
		skip("inline runs each call in the caller: a write to a full pipe "
		     "blocks the flush and a blocked fiber holds its kernel thread, by design");
	src = malloc(BIG);
	CHECK(src != NULL);
	for (long i = 0; i < BIG; i++)
		src[i] = (unsigned char)(i * 131 + (i >> 10));
	CHECK_EQ(pthread_create(&wd, NULL, watchdog, NULL), 0);
	atomic_store(&stage, 1);
	handle_poll();
	xsc_runtime_config_init(&rc);
	rc.nthreads = 1;
	CHECK_EQ(xsc_main(fibers, argc, argv, &rc), 0);
	atomic_store(&stage, 7);
	printf("ok (%s)\n", test_backend());
	return 0;
}
