/*
 * tp_churn.c - the runtime's own code against the program's glibc locks.
 *
 * In transparent mode glibc's locks (malloc's arenas, the thread stack
 * cache, stdio) are emulated futexes, while the runtime (the scheduler,
 * the syscall threads it starts, the timers of timed waits) runs outside
 * the emulation.  A runtime that takes one of those locks, or sleeps in
 * the kernel on one a fiber holds, hangs the program now and then; this
 * program makes the windows wide: 48 threads pass tokens around a ring of
 * pipes (every blocked read holds a syscall thread on the worker backend,
 * so the pool grows while the others run), each round allocating and
 * freeing blocks (shared arenas: 48 threads on 2 cores), every 8th round a
 * 1 ms timed wait that times out, every 16th round a short-lived helper
 * thread (pthread_create/join: the stack cache).
 *
 * Each thread's sizes and contents come from its own PRNG and the rounds
 * are fixed, so the printed totals do not depend on scheduling.  Exit 0
 * on success, 1 on a detected error.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tp_rnd.h"

#define NT 48
#define ROUNDS 400
#define TOKENS 12
#define NBLK 8

static int pipes[NT][2];
static atomic_long errors, timeouts, helpers;
static atomic_ullong checksum;

static void *helper(void *arg)
{
	uint64_t *v = malloc(64);

	if (!v)
		return NULL;
	*v = (uint64_t)(uintptr_t)arg * 3 + 1;
	return v;
}

static void churn(uint64_t *s)
{
	unsigned char *b[NBLK];
	size_t n[NBLK];

	for (int i = 0; i < NBLK; i++) {
		uint64_t r = rnd(s);
		n[i] = 1 + (size_t)(r % (r & 0x100 ? 200000 : 2048));
		b[i] = malloc(n[i]);
		if (!b[i]) {
			errors++;
			return;
		}
		memset(b[i], (int)(r >> 32), n[i]);
	}
	for (int i = NBLK - 1; i >= 0; i--) {
		if (b[i][0] != b[i][n[i] - 1] || b[i][n[i] / 2] != b[i][0])
			errors++;
		checksum += b[i][0] + n[i];
		free(b[i]);
	}
}

static void *run(void *arg)
{
	int me = (int)(intptr_t)arg;
	uint64_t s = 0x9e3779b97f4a7c15ULL ^ (uint64_t)(me + 1) * 0x100000001b3ULL;
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t c = PTHREAD_COND_INITIALIZER;
	char tok;

	for (int r = 0; r < ROUNDS; r++) {
		if (read(pipes[me][0], &tok, 1) != 1) {
			errors++;
			break;
		}
		churn(&s);
		if (r % 8 == 0) {
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 1000000;
			if (ts.tv_nsec >= 1000000000) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000;
			}
			pthread_mutex_lock(&m);
			int e;
			while ((e = pthread_cond_timedwait(&c, &m, &ts)) == 0)
				;	/* spurious: nobody signals c */
			if (e == ETIMEDOUT)
				timeouts++;
			else
				errors++;
			pthread_mutex_unlock(&m);
		}
		if (r % 16 == 0) {
			pthread_t t;
			void *ret = NULL;
			if (pthread_create(&t, NULL, helper, (void *)(intptr_t)r) ||
			    pthread_join(t, &ret) || !ret ||
			    *(uint64_t *)ret != (uint64_t)r * 3 + 1)
				errors++;
			free(ret);
			helpers++;
		}
		if (write(pipes[(me + 1) % NT][1], &tok, 1) != 1) {
			errors++;
			break;
		}
	}
	return NULL;
}

int main(void)
{
	pthread_t t[NT];

	for (int i = 0; i < NT; i++)
		if (pipe(pipes[i]) < 0) {
			perror("pipe");
			return 1;
		}
	for (int i = 0; i < TOKENS; i++)
		if (write(pipes[i * (NT / TOKENS)][1], "t", 1) != 1)
			return 1;
	for (int i = 0; i < NT; i++)
		if (pthread_create(&t[i], NULL, run, (void *)(intptr_t)i)) {
			fprintf(stderr, "pthread_create failed\n");
			return 1;
		}
	for (int i = 0; i < NT; i++)
		pthread_join(t[i], NULL);
	printf("threads %d rounds %d timeouts %ld helpers %ld checksum %llu errors %ld\n",
	       NT, ROUNDS, (long)timeouts, (long)helpers,
	       (unsigned long long)checksum, (long)errors);
	return errors ? 1 : 0;
}
