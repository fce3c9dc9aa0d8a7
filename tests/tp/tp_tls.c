/*
 * tp_tls.c - per-thread state of an unmodified pthread program:
 * __thread scalars and arrays, errno, pthread_self() and gettid().
 *
 * 16 threads, all alive at once (a barrier), each sets its own values,
 * sleeps (usleep, nanosleep) while the others run and change theirs, and
 * checks its own are unchanged.  errno is checked the same way after
 * failing calls (open of a missing file, close(-1), read of a bad fd)
 * and after an explicit per-thread value.  Thread identities are
 * compared inside the program; only aggregate lines are printed.
 * Exit 0 on success, 1 on any detected error.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NT 16
#define ROUNDS 6
#define ARR 64

static __thread long tls_val = -1;
static __thread unsigned char tls_arr[ARR];
static __thread int tls_init = 12345;	/* initialised TLS (.tdata) */

static pthread_barrier_t bar;
static atomic_int failures;
static pthread_t selves[NT];
static pid_t tids[NT];

#define FAIL(...) do { fprintf(stderr, "tp_tls: " __VA_ARGS__); \
	fputc('\n', stderr); atomic_fetch_add(&failures, 1); } while (0)

static void nap(int i, int round)
{
	if ((i + round) % 2) {
		if (usleep(200 + 37 * (unsigned)i) != 0)
			FAIL("usleep failed");
	} else {
		struct timespec ts = { 0, 150000 + 23000L * i };
		if (nanosleep(&ts, NULL) != 0)
			FAIL("nanosleep failed");
	}
}

static int check_arr(int i, int round)
{
	for (int k = 0; k < ARR; k++)
		if (tls_arr[k] != (unsigned char)(i * 13 + k + round))
			return -1;
	return 0;
}

/* Leaves errno set by a failing call chosen by (i, round); returns the
 * value it must have. */
static int make_errno(int i, int round)
{
	char c;

	switch ((i + round) % 4) {
	case 0:
		errno = 0;
		if (open("/nonexistent-tp-tls/missing", O_RDONLY) != -1)
			FAIL("open of a missing file succeeded");
		return ENOENT;
	case 1:
		errno = 0;
		if (close(-1) != -1)
			FAIL("close(-1) succeeded");
		return EBADF;
	case 2:
		errno = 0;
		if (read(1000 + i, &c, 1) != -1)
			FAIL("read of a bad fd succeeded");
		return EBADF;
	default:
		errno = 5000 + i;	/* unique to this thread */
		return 5000 + i;
	}
}

static void *thr(void *arg)
{
	int i = (int)(long)arg;

	if (tls_val != -1 || tls_init != 12345)
		FAIL("thread %d: fresh TLS not initialised (%ld, %d)", i, tls_val, tls_init);
	for (int k = 0; k < ARR; k++)
		if (tls_arr[k] != 0)
			FAIL("thread %d: fresh TLS array not zero", i);
	selves[i] = pthread_self();
	tids[i] = gettid();
	pthread_barrier_wait(&bar);	/* all 16 alive from here */

	for (int round = 0; round < ROUNDS; round++) {
		long want = 1000003L * (i + 1) + round;
		int e;

		tls_val = want;
		tls_init = i * 100 + round;
		for (int k = 0; k < ARR; k++)
			tls_arr[k] = (unsigned char)(i * 13 + k + round);
		nap(i, round);
		if (tls_val != want)
			FAIL("thread %d round %d: __thread long changed to %ld", i, round, tls_val);
		if (tls_init != i * 100 + round)
			FAIL("thread %d round %d: __thread int changed", i, round);
		if (check_arr(i, round))
			FAIL("thread %d round %d: __thread array changed", i, round);

		e = make_errno(i, round);
		pthread_barrier_wait(&bar);	/* the others set theirs meanwhile */
		if (errno != e)
			FAIL("thread %d round %d: errno %d, want %d", i, round, errno, e);
		nap(i, round + 1);
		if (errno != e)
			FAIL("thread %d round %d: errno %d after sleeping, want %d", i, round, errno, e);
		pthread_barrier_wait(&bar);
	}
	if (pthread_self() != selves[i] || gettid() != tids[i])
		FAIL("thread %d: identity changed", i);
	return (void *)&tls_val;	/* this thread's own instance */
}

int main(void)
{
	pthread_t t[NT];
	void *addr[NT];
	int distinct = 1;

	if (pthread_barrier_init(&bar, NULL, NT)) {
		fprintf(stderr, "tp_tls: barrier init\n");
		return 1;
	}
	tls_val = 42;
	for (int i = 0; i < NT; i++)
		if (pthread_create(&t[i], NULL, thr, (void *)(long)i)) {
			fprintf(stderr, "tp_tls: pthread_create\n");
			return 1;
		}
	for (int i = 0; i < NT; i++)
		if (pthread_join(t[i], &addr[i])) {
			fprintf(stderr, "tp_tls: pthread_join\n");
			return 1;
		}
	if (tls_val != 42)
		FAIL("main: __thread long changed to %ld", tls_val);

	for (int i = 0; i < NT; i++) {
		if (!pthread_equal(selves[i], t[i]))
			FAIL("thread %d: pthread_self differs from pthread_create's id", i);
		if (tids[i] <= 0 || tids[i] == getpid() || tids[i] == gettid())
			FAIL("thread %d: bad tid", i);
		if (addr[i] == (void *)&tls_val)
			FAIL("thread %d: TLS instance is main's", i);
		for (int j = 0; j < i; j++)
			if (pthread_equal(selves[i], selves[j]) || tids[i] == tids[j] ||
			    addr[i] == addr[j])
				distinct = 0;
	}
	if (!distinct)
		FAIL("thread identities or TLS instances not distinct");
	if (gettid() != getpid())
		FAIL("main: gettid %d != getpid %d", (int)gettid(), (int)getpid());

	if (atomic_load(&failures)) {
		fprintf(stderr, "tp_tls: %d failures\n", atomic_load(&failures));
		return 1;
	}
	printf("tls ok: %d threads x %d rounds\n", NT, ROUNDS);
	printf("errno ok\n");
	printf("distinct ok\n");
	return 0;
}
