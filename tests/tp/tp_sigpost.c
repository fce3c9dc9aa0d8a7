/*
 * tp_sigpost.c - sem_post in a signal handler wakes a waiting thread.
 *
 * sem_post is async-signal-safe: a handler that posts a semaphore is the
 * usual way to hand a signal to a thread.  Under xsc run the handler's
 * futex wake went straight to the kernel, where no thread waited (a
 * fiber's wait is the runtime's): the waiter slept for good (a thread in
 * sem_wait, main raising a signal whose handler posts: fine natively,
 * killed after 10 s under `xsc run`, 2026-11-26).
 *
 * Then 15,000 rounds in which a helper signals the process (kill: any
 * thread may take it) while two other threads hand a mutex back and
 * forth, so that signals land while the runtime holds its own locks; the
 * handler posts, the waiter acknowledges each round.  Prints the counts;
 * exit 0 on success.
 * xsc-tp: run-opts=-t 2 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define ROUNDS 15000

static sem_t posted, acked;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static atomic_int stop;
static long handoffs;

static void on_signal(int sig)
{
	(void)sig;
	sem_post(&posted);
}

static void *waiter(void *arg)
{
	long n = (long)arg;

	for (long i = 0; i < n; i++) {
		while (sem_wait(&posted) != 0)
			;	/* EINTR: the signal may land here */
		sem_post(&acked);
	}
	return NULL;
}

static void *contender(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		pthread_mutex_lock(&m);
		handoffs++;
		pthread_mutex_unlock(&m);
		sched_yield();
	}
	return NULL;
}

static void *sender(void *arg)
{
	(void)arg;
	for (int i = 0; i < ROUNDS; i++) {
		kill(getpid(), SIGUSR2);
		while (sem_wait(&acked) != 0)
			;
	}
	return NULL;
}

int main(void)
{
	struct sigaction sa;
	pthread_t w, c[2], s;

	setvbuf(stdout, NULL, _IONBF, 0);
	sem_init(&posted, 0, 0);
	sem_init(&acked, 0, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);

	/* 1: a waiting thread, a raised signal */
	if (pthread_create(&w, NULL, waiter, (void *)1L))
		return 1;
	usleep(50000);	/* let it wait */
	raise(SIGUSR1);
	if (sem_wait(&acked) || pthread_join(w, NULL))
		return 1;
	printf("raised: the waiter woke\n");

	/* 2: rounds of process signals beside a contended mutex */
	if (pthread_create(&w, NULL, waiter, (void *)(long)ROUNDS) ||
	    pthread_create(&c[0], NULL, contender, NULL) ||
	    pthread_create(&c[1], NULL, contender, NULL) ||
	    pthread_create(&s, NULL, sender, NULL))
		return 1;
	pthread_join(s, NULL);
	pthread_join(w, NULL);
	atomic_store(&stop, 1);
	for (int i = 0; i < 2; i++)
		pthread_join(c[i], NULL);
	printf("process signals: %d rounds, the mutex changed hands: %s\n", ROUNDS,
	       handoffs > 0 ? "yes" : "no");
	return 0;
}
