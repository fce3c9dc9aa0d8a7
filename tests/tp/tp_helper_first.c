/* A program whose first extra thread is glibc's own: a SIGEV_THREAD
 * timer's helper, made by glibc inside timer_create, not through the
 * pthread_create the shim interposes.  Under `xsc run` that thread is a
 * kernel thread the runtime cannot take in, so the program stays native
 * (src/preload/start.c, go_live) and must work exactly as natively.
 * xsc-tp: stays-native */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>

static sem_t fired;

static void tick(union sigval v)
{
	(void)v;
	sem_post(&fired);
}

static void *worker(void *arg)
{
	return arg;
}

int main(void)
{
	struct sigevent ev = { .sigev_notify = SIGEV_THREAD,
			       .sigev_notify_function = tick };
	struct itimerspec its = { .it_value = { 0, 10 * 1000 * 1000 } };
	timer_t tm;
	pthread_t t;
	void *r;

	sem_init(&fired, 0, 0);
	if (timer_create(CLOCK_MONOTONIC, &ev, &tm) || timer_settime(tm, 0, &its, NULL))
		return 2;
	sem_wait(&fired);
	printf("the timer fired\n");
	if (pthread_create(&t, NULL, worker, (void *)5) || pthread_join(t, &r))
		return 2;
	printf("joined %ld\n", (long)r);
	timer_delete(tm);
	return 0;
}
