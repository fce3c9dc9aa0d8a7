/*
 * tp_siglock.c - a process signal reaches threads that wait on locks.
 *
 * One thread waits in pthread_cond_wait, another in sem_wait, both with
 * SIGUSR1 open; main blocks it and sends it to the process ROUNDS times,
 * each time waiting until a handler ran.  Natively the kernel picks one
 * of the two waiters, runs the handler on it, and its futex wait returns:
 * the condition wait goes on waiting, sem_wait fails with EINTR after the
 * handler ran.  Under `xsc run` a vcpu with no fiber to run took the
 * signal and ran the handler itself, with its own thread id and
 * thread-locals, and no wait was interrupted (the runtime's futex waits
 * were not), 2026-11-26.  The handler checks that it runs on one of the
 * waiters; the sem waiter checks that each EINTR came after a handler ran
 * on it.  Then main sends KILLS to the condition waiter with pthread_kill:
 * natively its handler runs at once, under `xsc run` it waited until the
 * wait ended.  Last JOINS to a thread waiting in pthread_join (a futex
 * wait without FUTEX_PRIVATE_FLAG, which xsc posts to the kernel):
 * natively each handler runs during the wait, which goes on; under `xsc
 * run` none ran until the joined thread ended, 2026-11-28.  Prints the
 * counts; exit 0 on success, 1 on any error.
 * xsc-tp: run-opts=-t 2 */
#include "tp.h"

#include <semaphore.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>

#define ROUNDS 300
#define KILLS 100
#define JOINS 50

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int released;
static sem_t sem;
static atomic_long tids[3];
static int pipefd[2];
static atomic_int ready, handled, elsewhere, bad_eintr, other_err;
static __thread int mark, handled_here;

static void on_usr1(int sig)
{
	long me = syscall(SYS_gettid);

	(void)sig;
	if (!mark || (me != atomic_load(&tids[0]) && me != atomic_load(&tids[1]) &&
		      me != atomic_load(&tids[2])))
		atomic_fetch_add(&elsewhere, 1);
	handled_here++;
	atomic_fetch_add(&handled, 1);
}

static void *cond_waiter(void *arg)
{
	(void)arg;
	mark = 1;
	atomic_store(&tids[0], syscall(SYS_gettid));
	pthread_mutex_lock(&m);
	atomic_fetch_add(&ready, 1);
	while (!released)
		pthread_cond_wait(&cv, &m);
	pthread_mutex_unlock(&m);
	return NULL;
}

static void *sem_waiter(void *arg)
{
	(void)arg;
	mark = 1;
	atomic_store(&tids[1], syscall(SYS_gettid));
	atomic_fetch_add(&ready, 1);
	for (;;) {
		int before = handled_here;
		if (sem_wait(&sem) == 0)
			return NULL;
		if (errno != EINTR) {
			atomic_fetch_add(&other_err, 1);
			return NULL;
		}
		if (handled_here == before)
			atomic_fetch_add(&bad_eintr, 1);
	}
}

static void *pipe_reader(void *arg)
{
	char c;

	(void)arg;
	return (void *)read(pipefd[0], &c, 1);
}

static void *join_waiter(void *arg)
{
	sigset_t usr1;

	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_UNBLOCK, &usr1, NULL);	/* main's is blocked */
	mark = 1;
	atomic_store(&tids[2], syscall(SYS_gettid));
	atomic_fetch_add(&ready, 1);
	pthread_join(*(pthread_t *)arg, NULL);
	return NULL;
}

/* Waits until more than n handlers ran; false (with a line on stderr)
 * after 5 s.  what and k name the signal sent. */
static bool handled_in_time(int n, const char *what, int k)
{
	struct timespec t0, now;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (atomic_load(&handled) <= n) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - t0.tv_sec > 5) {
			fprintf(stderr, "tp_siglock: %s %d not handled in 5 s\n", what, k);
			return false;
		}
		sched_yield();
	}
	return true;
}

int main(void)
{
	sigset_t usr1;
	pthread_t t[2], reader, joiner;
	int fail = 0;

	/* no SA_RESTART: sem_wait fails with EINTR */
	if (tp_on_signal(SIGUSR1, on_usr1, 0) < 0 || sem_init(&sem, 0, 0) < 0 ||
	    pipe(pipefd) < 0) {
		perror("tp_siglock");
		return 1;
	}
	pthread_create(&t[0], NULL, cond_waiter, NULL);
	pthread_create(&t[1], NULL, sem_waiter, NULL);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);
	while (atomic_load(&ready) < 2)
		usleep(1000);
	usleep(20000);	/* both wait */
	for (int n = 0; n < ROUNDS && !fail; n++) {
		kill(getpid(), SIGUSR1);
		fail = !handled_in_time(n, "signal", n);
	}
	/* then to the condition waiter itself: pthread_kill */
	for (int n = ROUNDS; n < ROUNDS + KILLS && !fail; n++) {
		pthread_kill(t[0], SIGUSR1);
		fail = !handled_in_time(n, "pthread_kill", n - ROUNDS);
	}
	/* then to a thread waiting in pthread_join */
	pthread_create(&reader, NULL, pipe_reader, NULL);
	pthread_create(&joiner, NULL, join_waiter, &reader);
	while (atomic_load(&ready) < 3)
		usleep(1000);
	usleep(20000);	/* it waits */
	for (int n = ROUNDS + KILLS; n < ROUNDS + KILLS + JOINS && !fail; n++) {
		pthread_kill(joiner, SIGUSR1);
		fail = !handled_in_time(n, "pthread_kill to a joiner", n - ROUNDS - KILLS);
	}
	if (write(pipefd[1], "x", 1) != 1)
		fail = 1;
	pthread_join(joiner, NULL);
	pthread_mutex_lock(&m);
	released = 1;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&m);
	sem_post(&sem);
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	printf("signals handled: %d of %d, not on a waiter: %d\n",
	       atomic_load(&handled), ROUNDS + KILLS + JOINS, atomic_load(&elsewhere));
	printf("EINTR with no handler run on the thread: %d, other errors: %d\n",
	       atomic_load(&bad_eintr), atomic_load(&other_err));
	return fail || atomic_load(&handled) != ROUNDS + KILLS + JOINS || atomic_load(&elsewhere) ||
	       atomic_load(&bad_eintr) || atomic_load(&other_err);
}
