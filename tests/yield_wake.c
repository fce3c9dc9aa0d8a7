/*
 * yield_wake.c - a thread woken beside threads that yield in a loop.
 *
 * Two threads yield in a loop (sched_yield), and two others pass a turn
 * back and forth through semaphores, ROUNDS times.  Under `xsc run -t 2`
 * each yielding thread shares a vcpu with one of the two (the order of
 * creation below places them so: sched/fiber.c xsc__place).  Natively a
 * woken thread runs at once; so must a fiber readied on a vcpu whose
 * only running fiber yields (t_yield.sh).
 *
 * Prints "rounds N median_us M p90_us P"; exit 0 when every round ended.
 *
 * `yield_wake turns N`: the main thread and one other pass a turn N times
 * through a shared word, each waiting for its turn with sched_yield,
 * with nothing else to run (under `taskset -c 0 xsc run -t 2`, on two
 * vcpus that share the CPU).  Prints "turns N ms T".
 *
 * Usage: yield_wake [ROUNDS] | yield_wake turns N
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static sem_t ping, pong;
static atomic_int stop;
static atomic_long spins;

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static void *nothing(void *arg)
{
	return arg;
}

static void *ponger(void *arg)
{
	long n = (long)arg;

	for (long i = 0; i < n; i++) {
		while (sem_wait(&ping) != 0)
			;
		sem_post(&pong);
	}
	return NULL;
}

static void *yielder(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		atomic_fetch_add_explicit(&spins, 1, memory_order_relaxed);
		sched_yield();
	}
	return NULL;
}

static atomic_int turn;

static void turns(long n, int me)
{
	for (long i = 0; i < n; i++) {
		while (atomic_load(&turn) != me)
			sched_yield();
		atomic_store(&turn, !me);
	}
}

static void *other(void *arg)
{
	turns((long)arg, 1);
	return NULL;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The turns case (see the top); 0 on success. */
static int pass_turns(long n)
{
	pthread_t z, o;
	double t0;

	if (pthread_create(&z, NULL, nothing, NULL) || pthread_join(z, NULL))
		return 1;
	t0 = now_us();
	if (pthread_create(&o, NULL, other, (void *)n))	/* to the idle vcpu */
		return 1;
	turns(n, 0);
	if (pthread_join(o, NULL))
		return 1;
	printf("turns %ld ms %.0f\n", n, (now_us() - t0) / 1e3);
	return 0;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 600;
	pthread_t z, p, y[2];
	double *t;

	if (argc > 2 && !strcmp(argv[1], "turns"))
		return pass_turns(atol(argv[2]));
	if (rounds < 1 || !(t = calloc((size_t)rounds, sizeof(*t))))
		return 1;
	sem_init(&ping, 0, 0);
	sem_init(&pong, 0, 0);
	/* a second thread starts the runtime under xsc run */
	if (pthread_create(&z, NULL, nothing, NULL) || pthread_join(z, NULL))
		return 1;
	/* the ponger goes to the idle vcpu and waits; the first yielder to
	 * the same, idle again; the second beside main, the vcpu with the
	 * fewest threads */
	if (pthread_create(&p, NULL, ponger, (void *)rounds))
		return 1;
	usleep(20000);
	if (pthread_create(&y[0], NULL, yielder, NULL))
		return 1;
	usleep(20000);
	if (pthread_create(&y[1], NULL, yielder, NULL))
		return 1;
	usleep(20000);
	for (long i = 0; i < rounds; i++) {
		double t0 = now_us();
		sem_post(&ping);
		while (sem_wait(&pong) != 0)
			;
		t[i] = now_us() - t0;
	}
	atomic_store(&stop, 1);
	if (pthread_join(p, NULL) || pthread_join(y[0], NULL) || pthread_join(y[1], NULL))
		return 1;
	qsort(t, (size_t)rounds, sizeof(*t), cmp);
	printf("rounds %ld median_us %.0f p90_us %.0f\n", rounds, t[rounds / 2],
	       t[rounds * 9 / 10]);
	free(t);
	return 0;
}
