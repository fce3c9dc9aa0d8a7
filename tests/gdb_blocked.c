/*
 * gdb_blocked.c - a program whose threads all block, each in a known
 * call, for tests/t_gdb.sh to look at with gdb.  Built twice: with
 * -DXSC_API as xsc threads linked to libxsc (gdb_blocked_api), and as a
 * plain pthread program (gdb_blocked) that t_gdb runs under `xsc run`.
 *
 * make_blockers() creates 100 threads in four groups of 25: block_read
 * (a read of its own empty pipe, whose read end is fd 500 + i),
 * block_sleep (a sleep of 1000 + i seconds), block_lock (a mutex main
 * holds) and block_poll (a poll of its own empty pipe, fd 600 + i).
 * Once all have started and had time to block, main prints "ready" and
 * sleeps; an alarm ends the process after 120 s whatever happens.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#ifdef XSC_API
#include <sys/syscall.h>
#include "xsc.h"
typedef xsc_thread_t thread_t;
typedef xsc_mutex_t mutex_t;
#define MUTEX_INIT XSC_MUTEX_INITIALIZER
#define thread_create(t, fn, arg) xsc_thread_create(t, NULL, fn, arg)
#define mutex_lock xsc_mutex_lock
#define do_read(fd, b, n) xsc_read(fd, b, n)
#define do_poll(p) xsc_syscall(SYS_poll, (long)(p), 1L, -1L, 0L, 0L, 0L)
#define do_sleep(s) xsc_sleep(s)
#define do_msleep(ms) xsc_usleep((ms) * 1000UL)
#else
#include <pthread.h>
typedef pthread_t thread_t;
typedef pthread_mutex_t mutex_t;
#define MUTEX_INIT PTHREAD_MUTEX_INITIALIZER
#define thread_create(t, fn, arg) (-pthread_create(t, NULL, fn, arg))
#define mutex_lock pthread_mutex_lock
#define do_read(fd, b, n) read(fd, b, n)
#define do_poll(p) poll(p, 1, -1)
#define do_sleep(s) sleep(s)
#define do_msleep(ms) usleep((ms) * 1000U)
#endif

#define PER 25

static mutex_t lock = MUTEX_INIT;
static atomic_int started;

/* Each keeps what it got alive after the call: no tail call, so its
 * frame stays on the stack while it waits. */
static volatile long sink;

static __attribute__((noinline)) void *block_read(void *arg)
{
	char c;
	int fd = (int)(long)arg;

	atomic_fetch_add(&started, 1);
	sink = do_read(fd, &c, 1);
	return NULL;
}

static __attribute__((noinline)) void *block_sleep(void *arg)
{
	atomic_fetch_add(&started, 1);
	sink = do_sleep((unsigned)(long)arg);
	return NULL;
}

static __attribute__((noinline)) void *block_lock(void *arg)
{
	atomic_fetch_add(&started, 1);
	sink = mutex_lock(&lock);
	return arg;
}

static __attribute__((noinline)) void *block_poll(void *arg)
{
	struct pollfd p = { (int)(long)arg, POLLIN, 0 };

	atomic_fetch_add(&started, 1);
	sink = do_poll(&p);
	return NULL;
}

/* A pipe whose read end is descriptor `want` (its write end is kept
 * open, so a read or poll waits for good). */
static int pipe_at(int want)
{
	int p[2];

	if (pipe(p) < 0 || dup2(p[0], want) < 0)
		return -1;
	close(p[0]);
	return want;
}

static __attribute__((noinline)) int make_blockers(void)
{
	thread_t t;

	for (long i = 0; i < PER; i++) {
		if (pipe_at(500 + (int)i) < 0 || pipe_at(600 + (int)i) < 0)
			return -1;
		if (thread_create(&t, block_read, (void *)(500 + i)) < 0 ||
		    thread_create(&t, block_sleep, (void *)(1000 + i)) < 0 ||
		    thread_create(&t, block_lock, (void *)i) < 0 ||
		    thread_create(&t, block_poll, (void *)(600 + i)) < 0)
			return -1;
	}
	return 0;
}

static int body(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	mutex_lock(&lock);
	if (make_blockers() < 0) {
		fprintf(stderr, "gdb_blocked: cannot create the threads\n");
		return 1;
	}
	while (atomic_load(&started) < 4 * PER)
		do_msleep(10);
	do_msleep(200);		/* long enough for each to be in its call */
	printf("ready\n");
	fflush(stdout);
	for (;;)
		do_sleep(100);
	return 0;
}

int main(int argc, char **argv)
{
	alarm(120);
#ifdef XSC_API
	struct xsc_runtime_config cfg;

	xsc_runtime_config_init(&cfg);
	cfg.nthreads = 2;
	return xsc_main(body, argc, argv, &cfg);
#else
	return body(argc, argv);
#endif
}
