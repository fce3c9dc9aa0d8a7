/*
 * tp_sigkill.c - pthread_kill reaches a thread the moment before it
 * waits, as well as while it waits.
 *
 * A thread that loops on read() (EINTR: again) and one that loops in
 * pthread_cond_wait each get SIGUSR1 from main with pthread_kill KILLS
 * times; main waits for each handler before it sends the next, so each
 * signal lands just as the thread goes back into its wait.  Natively the
 * kernel sees the pending signal as the thread enters the wait and
 * returns at once.  Under `xsc run` a signal sent after the thread's
 * check but before its call was in flight (or before it was queued on
 * the futex) stayed pending while the thread slept: the sender waited
 * for good, one signal in a few thousand (2026-11-26).  The handler
 * checks that it runs on the thread it was sent to.  Prints the counts;
 * exit 0 on success.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define KILLS 20000

static int p[2];
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int released;
static atomic_long target;
static atomic_int handled, elsewhere, ready, other_err;

static void on_usr1(int sig)
{
	(void)sig;
	if (syscall(SYS_gettid) != atomic_load(&target))
		atomic_fetch_add(&elsewhere, 1);
	atomic_fetch_add(&handled, 1);
}

static void *reader(void *arg)
{
	char c;

	(void)arg;
	atomic_store(&target, syscall(SYS_gettid));
	atomic_store(&ready, 1);
	for (;;) {
		ssize_t r = read(p[0], &c, 1);
		if (r == 1)
			return NULL;
		if (r < 0 && errno == EINTR)
			continue;
		atomic_fetch_add(&other_err, 1);
		return NULL;
	}
}

static void *cond_waiter(void *arg)
{
	(void)arg;
	atomic_store(&target, syscall(SYS_gettid));
	pthread_mutex_lock(&m);
	atomic_store(&ready, 1);
	while (!released)
		pthread_cond_wait(&cv, &m);
	pthread_mutex_unlock(&m);
	return NULL;
}

/* Sends KILLS signals to t, each once the one before was handled; the
 * number handled in time. */
static int kills(pthread_t t, const char *what)
{
	int base = atomic_load(&handled);

	for (int n = 0; n < KILLS; n++) {
		struct timespec t0, now;
		pthread_kill(t, SIGUSR1);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		while (atomic_load(&handled) - base <= n) {
			clock_gettime(CLOCK_MONOTONIC, &now);
			if (now.tv_sec - t0.tv_sec > 5) {
				fprintf(stderr, "tp_sigkill: %s: signal %d not handled in 5 s\n",
					what, n);
				return n;
			}
			sched_yield();
		}
	}
	return KILLS;
}

int main(void)
{
	struct sigaction sa;
	pthread_t t;
	int a, b;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;	/* no SA_RESTART */
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL) < 0 || pipe(p) < 0) {
		perror("tp_sigkill");
		return 1;
	}
	pthread_create(&t, NULL, reader, NULL);
	while (!atomic_load(&ready))
		sched_yield();
	usleep(10000);	/* in its read */
	a = kills(t, "read");
	if (write(p[1], "x", 1) != 1)
		return 1;
	pthread_join(t, NULL);

	atomic_store(&ready, 0);
	pthread_create(&t, NULL, cond_waiter, NULL);
	while (!atomic_load(&ready))
		sched_yield();
	b = kills(t, "pthread_cond_wait");
	pthread_mutex_lock(&m);
	released = 1;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&m);
	pthread_join(t, NULL);

	printf("to a thread in read: %d of %d handled in time\n", a, KILLS);
	printf("to a thread in pthread_cond_wait: %d of %d handled in time\n", b, KILLS);
	printf("handlers on another thread: %d, other errors: %d\n",
	       atomic_load(&elsewhere), atomic_load(&other_err));
	return a != KILLS || b != KILLS || atomic_load(&elsewhere) || atomic_load(&other_err);
}
