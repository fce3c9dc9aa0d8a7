/*
 * tp_idle.c - a process whose threads all wait wakes nobody.
 * xsc-tp: run-opts=-t 1
 *
 * Three threads wait in read() of pipes nobody writes to for 1 s.
 * Natively nothing of the process runs meanwhile.  Under `xsc run` the
 * runtime's watchdog (the thread named xsc-watchdog) woke every 10 ms
 * all the same, 100 times a second for as long as a server sat idle:
 * here it may wake at most 10 times in that second.  Then two threads
 * spin on shared words, with no system call, each until the other's
 * turn (on one vcpu only a preemption lets the other run): the watchdog
 * is awake again once a thread runs.
 * Under -t 1 every thread is on the one vcpu, which sleeps in its ring
 * while they wait (a thread alone on its vcpu, waiting in its own kernel
 * thread: tp_sole).
 * Prints what it saw; exit 0 on success, 1 on a failed check.
 */
#include "tp.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WAITERS 3
#define MAX_WAKES 10
#define TURNS 20

static int p[WAITERS][2];
static _Atomic long turn;

static void *waiter(void *arg)
{
	char c;

	return (void *)(long)read(p[(long)arg][0], &c, 1);
}

static void *spinner(void *arg)
{
	long me = (long)arg;

	for (int i = 0; i < TURNS; i++) {
		while (atomic_load(&turn) % 2 != me)
			__builtin_ia32_pause();
		atomic_fetch_add(&turn, 1);
	}
	return NULL;
}

int main(void)
{
	pthread_t t[WAITERS], s[2];
	int fails = 0;

	for (long i = 0; i < WAITERS; i++) {
		if (pipe(p[i]) != 0)
			return 1;
		pthread_create(&t[i], NULL, waiter, (void *)i);
	}
	usleep(100000);	/* they wait */
	/* and the main thread sleeps */
	int wd = tp_watchdog_status();
	long a = tp_switches(wd);
	sleep(1);
	long b = tp_switches(wd);
	if (wd >= 0)
		close(wd);
	if (a >= 0 && b - a > MAX_WAKES) {
		printf("idle: the watchdog woke %ld times in 1 s while every thread "
		       "waited (at most %d)\n", b - a, MAX_WAKES);
		fails++;
	}
	printf("idle: %s\n", fails ? "woken" : "quiet");
	for (int i = 0; i < WAITERS; i++) {
		if (write(p[i][1], "x", 1) != 1)
			fails++;
		pthread_join(t[i], NULL);
	}
	for (long i = 0; i < 2; i++)
		pthread_create(&s[i], NULL, spinner, (void *)i);
	for (int i = 0; i < 2; i++)
		pthread_join(s[i], NULL);
	printf("spin: %ld turns\n", atomic_load(&turn));
	return fails ? 1 : 0;
}
