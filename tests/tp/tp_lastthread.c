/*
 * tp_lastthread.c - the process ends when its last thread ends, however
 * that thread ends, and exit, _exit or a fatal signal from one thread end
 * it whatever the others are doing.
 *
 * glibc ends the process with exit(0) when its last thread leaves (main's
 * pthread_exit, a start routine's return): the pthread keys' destructors
 * of that thread run first, then the atexit handlers, then the
 * destructors, and stdio is flushed.  Each case runs in a process of its
 * own (tp_cases.h) and prints what it did; the driver prints how it ended:
 *  - main-exit-0: main joins its one thread, then calls pthread_exit;
 *  - main-exit-1: main calls pthread_exit, its one thread returns 100 ms
 *    later;
 *  - main-exit-100: the same with 100 threads left;
 *  - detached-last: the last thread is a detached one (main has joined
 *    the other and called pthread_exit);
 *  - exit-blocked: exit(3) from a thread while others wait in read, on a
 *    futex (a mutex, a condition variable) and in a sleep, and main in
 *    pthread_join;
 *  - _exit-blocked: the same with _exit(4): no atexit handler, nothing
 *    printed but what was written out before;
 *  - signal-one: pthread_kill(SIGUSR1, default action) to one thread
 *    blocked in read ends the process with that signal;
 *  - bare-exit-main: main ends with the exit system call itself (glibc
 *    does not see it go), its thread returns later and glibc ends it with
 *    the exit system call too (it counts main as alive): the kernel ends
 *    the process with the last thread's code (0), no atexit handler runs
 *    and what stdio holds is lost;
 *  - bare-exit-last: main calls pthread_exit, the last thread makes the
 *    exit system call with 7: status 7, no atexit handler.
 * Exit 0 when every case ended as natively expected, 1 otherwise.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "tp_cases.h"

static pthread_key_t key;
static sem_t started;
static sem_t go;	/* main posts it right before its pthread_exit */
static int in_case;	/* this process runs a case (not the driver) */

static void key_dtor(void *v)
{
	printf("key destructor: %s\n", (const char *)v);
}

static void at_exit1(void)
{
	printf("atexit 1\n");
}

static void at_exit2(void)
{
	printf("atexit 2\n");
}

static void __attribute__((destructor)) dtor(void)
{
	/* the driver, which ends by returning, prints nothing here */
	if (in_case)
		printf("destructor\n");
}

/* Every case's process: atexit handlers and a key whose destructor says
 * which thread ended last. */
static void setup(void)
{
	in_case = 1;
	atexit(at_exit1);
	atexit(at_exit2);
	pthread_key_create(&key, key_dtor);
	sem_init(&started, 0, 0);
	sem_init(&go, 0, 0);
}

/* ---- the last thread ends ---------------------------------------------------- */

static void *quick(void *arg)
{
	pthread_setspecific(key, "quick");
	return arg;
}

static int main_exit_0(void)
{
	setup();
	pthread_join(spawn(quick, NULL, 0), NULL);
	printf("main: joined, pthread_exit\n");
	pthread_setspecific(key, "main");
	pthread_exit(NULL);
}

/* ends 100 ms after main has gone */
static void *late(void *arg)
{
	pthread_setspecific(key, arg);
	sem_wait(&go);
	msleep(100);
	printf("%s: returns\n", (const char *)arg);
	return NULL;
}

static int main_exit_1(void)
{
	setup();
	spawn(late, "thread", 0);
	printf("main: pthread_exit\n");
	sem_post(&go);
	pthread_exit(NULL);
}

static atomic_int ndone;

static void *many(void *arg)
{
	msleep(20 + (int)(long)arg % 30);
	if (atomic_fetch_add(&ndone, 1) == 99) {
		pthread_setspecific(key, "the 100th");
		printf("thread: 100 done\n");
	}
	return NULL;
}

static int main_exit_100(void)
{
	setup();
	for (long i = 0; i < 100; i++)
		spawn(many, (void *)i, 0);
	printf("main: pthread_exit with 100 threads\n");
	pthread_exit(NULL);
}

static int detached_last(void)
{
	setup();
	spawn(late, "detached", 1);
	pthread_join(spawn(quick, NULL, 0), NULL);
	printf("main: joined, pthread_exit\n");
	sem_post(&go);
	pthread_exit(NULL);
}

/* ---- one thread ends the process ---------------------------------------------- */

static int pipefd[2];
static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;

static void *in_read(void *arg)
{
	char c;

	sem_post(&started);
	if (read(pipefd[0], &c, 1) >= 0)
		printf("read returned\n");
	return arg;
}

static void *in_lock(void *arg)
{
	sem_post(&started);
	pthread_mutex_lock(&held);
	printf("lock taken\n");
	return arg;
}

static void *in_cond(void *arg)
{
	pthread_mutex_lock(&m);
	sem_post(&started);
	for (;;)
		pthread_cond_wait(&never, &m);
	return arg;
}

static void *in_sleep(void *arg)
{
	sem_post(&started);
	sleep(100);
	printf("sleep returned\n");
	return arg;
}

static void *ender(void *arg)
{
	int how = (int)(long)arg;

	for (int i = 0; i < 4; i++)
		sem_wait(&started);
	msleep(50);	/* into their waits */
	printf("ender: %s\n", how == 3 ? "exit(3)" : "_exit(4)");
	if (how == 3)
		exit(3);
	fflush(stdout);
	_exit(4);
}

static void blockers(long how)
{
	setup();
	if (pipe(pipefd))
		exit(1);
	pthread_mutex_lock(&held);
	spawn(in_read, NULL, 0);
	spawn(in_lock, NULL, 0);
	spawn(in_cond, NULL, 0);
	pthread_t s = spawn(in_sleep, NULL, 0);
	spawn(ender, (void *)how, 0);
	pthread_join(s, NULL);
	printf("main: joined\n");
}

static int exit_blocked(void)
{
	blockers(3);
	return 1;
}

static int _exit_blocked(void)
{
	blockers(4);
	return 1;
}

static void *killer(void *arg)
{
	sem_wait(&started);
	msleep(50);
	printf("killer: SIGUSR1 to the reader\n");
	fflush(stdout);
	pthread_kill(*(pthread_t *)arg, SIGUSR1);
	msleep(2000);
	printf("killer: still alive\n");
	return NULL;
}

static int signal_one(void)
{
	static pthread_t r;

	setup();
	if (pipe(pipefd))
		exit(1);
	r = spawn(in_read, NULL, 0);
	pthread_join(spawn(killer, &r, 0), NULL);
	printf("main: joined\n");
	return 1;
}

/* ---- bare exit system calls --------------------------------------------------------- */

static void *late_bare(void *arg)
{
	sem_wait(&go);
	msleep(100);
	printf("thread: exit system call\n");
	fflush(stdout);
	syscall(SYS_exit, 7);
	return arg;
}

static int bare_exit_main(void)
{
	setup();
	spawn(late, "thread", 0);
	printf("main: exit system call\n");
	fflush(stdout);
	sem_post(&go);
	syscall(SYS_exit, 5);
	return 1;
}

static int bare_exit_last(void)
{
	setup();
	spawn(late_bare, NULL, 0);
	printf("main: pthread_exit\n");
	fflush(stdout);
	sem_post(&go);
	pthread_exit(NULL);
}

int main(int argc, char **argv)
{
	static const struct tp_case cases[] = {
		{ "main-exit-0", main_exit_0, 0 },
		{ "main-exit-1", main_exit_1, 0 },
		{ "main-exit-100", main_exit_100, 0 },
		{ "detached-last", detached_last, 0 },
		{ "exit-blocked", exit_blocked, 3 },
		{ "_exit-blocked", _exit_blocked, 4 },
		{ "signal-one", signal_one, -SIGUSR1 },
		{ "bare-exit-main", bare_exit_main, 0 },
		{ "bare-exit-last", bare_exit_last, 7 },
	};

	return tp_cases_main(argc, argv, cases, sizeof(cases) / sizeof(cases[0]));
}
