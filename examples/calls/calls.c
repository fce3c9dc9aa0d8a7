/*
 * calls.c - the workload of `xsc bench calls`: the cost of one call of
 * each kind a program makes through libc, in ns, best of the rounds it
 * is given.  An unmodified pthread program: the bench runs it natively,
 * under `xsc run` with every libc-internal call trapped (XSC_REWRITE=0),
 * and under `xsc run` with libc's sites rewritten.
 *
 *   xsc-calls [ITERATIONS]   prints "kind ns" lines
 *
 * Kinds: getppid() (libc's wrapper, a rewritable site), syscall(SYS_getppid)
 * (libc's generic entry: rax comes from a register, rewritten too), a
 * 1 MiB malloc+free (mmap and munmap: the threshold is fixed, so every
 * one maps), fopen+fgetc+fclose of /dev/null (openat, fstat, read, close
 * from stdio's internals), a lock+unlock of a mutex two threads contend
 * for (futex waits and wakes from glibc's lock code), clock_gettime
 * (the vDSO: no system call, natively or not), and a read() of an empty
 * non-blocking pipe (EAGAIN: the call an event loop makes most, through
 * the function `xsc run` interposes by symbol, made directly by a thread
 * alone on its vcpu).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static volatile long sink;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static long n;

static void k_getppid(void) { for (long i = 0; i < n; i++) sink += getppid(); }
static void k_syscall(void) { for (long i = 0; i < n; i++) sink += syscall(SYS_getppid); }

static void k_malloc(void)
{
	for (long i = 0; i < n; i++) {
		char *volatile p = malloc(1 << 20);
		p[0] = 1;
		free(p);
	}
}

static void k_stdio(void)
{
	for (long i = 0; i < n; i++) {
		FILE *f = fopen("/dev/null", "r");
		if (!f)
			exit(1);
		sink += fgetc(f);
		fclose(f);
	}
}

static void *contender(void *arg)
{
	for (long i = 0; i < n; i++) {
		pthread_mutex_lock(&m);
		sink++;
		pthread_mutex_unlock(&m);
	}
	return arg;
}

static void k_mutex(void)
{
	pthread_t t;

	pthread_create(&t, NULL, contender, NULL);
	contender(NULL);
	pthread_join(t, NULL);
}

static void k_clock(void)
{
	struct timespec t;

	for (long i = 0; i < n; i++) {
		clock_gettime(CLOCK_REALTIME, &t);
		sink += t.tv_nsec;
	}
}

static void k_readnb(void)
{
	static int p[2] = { -1, -1 };
	char b[16];

	if (p[0] < 0 && pipe2(p, O_NONBLOCK))
		exit(1);
	for (long i = 0; i < n; i++)
		if (read(p[0], b, sizeof(b)) != -1 || errno != EAGAIN)
			exit(1);
}

int main(int argc, char **argv)
{
	static const struct { const char *name; void (*fn)(void); long per; } k[] = {
		{ "getppid", k_getppid, 1 }, { "syscall-getppid", k_syscall, 1 },
		{ "malloc-1MiB", k_malloc, 1 }, { "stdio-open-read-close", k_stdio, 1 },
		{ "mutex-contended", k_mutex, 2 }, { "clock_gettime", k_clock, 1 },
		{ "read-nonblock-EAGAIN", k_readnb, 1 },
	};
	n = argc > 1 ? atol(argv[1]) : 100000;
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);	/* fixed: every 1 MiB maps */
	for (unsigned i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		double best = 1e30;
		for (int r = 0; r < 3; r++) {
			double t0 = now_ns();
			k[i].fn();
			double t = (now_ns() - t0) / (double)(n * k[i].per);
			if (t < best)
				best = t;
		}
		printf("%s %.1f\n", k[i].name, best);
	}
	return 0;
}
