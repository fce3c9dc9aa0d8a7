/*
 * tp_rtqueue.c - real-time signals queue, and a thread that only makes
 * quick system calls does not starve the others.
 *   - A thread sends the main thread, which blocks the signal, 20
 *     instances of SIGRTMIN+2 with pthread_kill; main then takes them with
 *     sigtimedwait: all 20, then EAGAIN.  Under xsc run the instances sent
 *     to a thread were kept as one pending bit: 1 of 20.
 *   - A thread handles 50 instances of SIGRTMIN+3 sent to it while it
 *     runs: every one runs the handler.
 *   - A thread loops on getppid() (a system call the runtime answers in
 *     the caller, without switching threads) until main, which sleeps in
 *     between, has counted to 100.  Under xsc run the looping thread held
 *     its vcpu and main's sleeps never completed (a hang).
 * Prints what it saw; exit 0 when all hold.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_t main_th;
static volatile sig_atomic_t handled, stop;

static void *sender(void *arg)
{
	(void)arg;
	for (int i = 0; i < 20; i++)
		pthread_kill(main_th, SIGRTMIN + 2);
	return NULL;
}

static void on_rt(int s)
{
	(void)s;
	handled++;
}

static void *busy(void *arg)
{
	long n = 0;

	(void)arg;
	while (!stop)
		n += getppid() > 0;
	return (void *)n;
}

int main(void)
{
	struct timespec one = { 1, 0 }, zero = { 0, 0 };
	struct sigaction sa;
	sigset_t set;
	pthread_t th;
	int taken = 0, bad = 0;

	main_th = pthread_self();
	sigemptyset(&set);
	sigaddset(&set, SIGRTMIN + 2);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	pthread_create(&th, NULL, sender, NULL);
	pthread_join(th, NULL);
	while (sigtimedwait(&set, NULL, &one) == SIGRTMIN + 2)
		taken++;
	int last = sigtimedwait(&set, NULL, &zero);
	printf("queued: %d of 20 taken, then %s\n", taken,
	       last < 0 && errno == EAGAIN ? "EAGAIN" : "something else");
	bad |= taken != 20 || !(last < 0 && errno == EAGAIN);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_rt;
	sigaction(SIGRTMIN + 3, &sa, NULL);
	pthread_create(&th, NULL, busy, NULL);
	for (int i = 0; i < 50; i++)
		pthread_kill(th, SIGRTMIN + 3);
	for (int i = 0; i < 100; i++)	/* sleeps beside a thread that never waits */
		usleep(1000);
	for (int i = 0; i < 3000 && handled < 50; i++)
		usleep(1000);
	stop = 1;
	pthread_join(th, NULL);
	printf("handled: %d of 50; main counted to 100 beside a busy thread\n",
	       (int)handled);
	bad |= handled != 50;
	return bad;
}
