/*
 * tp_sigsleep.c - a signal interrupts a thread's sleep, which reports the
 * time left; a signal that is ignored interrupts nothing.
 *
 * Natively a handled signal ends nanosleep with EINTR and the time left in
 * *rem (clock_nanosleep with TIMER_ABSTIME: EINTR alone), after the
 * handler ran on the sleeping thread; nanosleep is never restarted.  A
 * signal whose action is to ignore it (SIGWINCH by default) does not end
 * any call.  Under `xsc run` a sleep went on to its end (the runtime did
 * not interrupt sleeps), and a pthread_kill of an ignored signal ended a
 * blocked call with EINTR (2026-11-26).  Main blocks SIGUSR1 and signals
 * the process while one thread sleeps 5 s in nanosleep, then while one
 * sleeps for ever (the largest time_t, as `sleep infinity` does), then
 * while one sleeps until 5 s from now in clock_nanosleep; then sends SIGWINCH with
 * pthread_kill to a thread sleeping 0.3 s.  Prints what each sleep
 * returned; exit 0 when all are as expected.
 */
#include "tp.h"

#include <stdatomic.h>
#include <time.h>

static atomic_int handled, started;
static __thread int handled_here;

static void on_usr1(int sig)
{
	(void)sig;
	handled_here++;
	atomic_fetch_add(&handled, 1);
}

static double since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + (t.tv_nsec - t0->tv_nsec) / 1e9;
}

static void take_usr1(void)
{
	sigset_t usr1;

	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_UNBLOCK, &usr1, NULL);
}

/* A sleeper's start: SIGUSR1 taken, started said, nanosleep(req, rem);
 * 0, or the errno it failed with. */
static int sleep_for_usr1(const struct timespec *req, struct timespec *rem)
{
	take_usr1();
	atomic_store(&started, 1);
	return nanosleep(req, rem) < 0 ? errno : 0;
}

static void *rel_sleeper(void *arg)
{
	struct timespec req = { 5, 0 }, rem = { -1, -1 };
	int e, ok;

	(void)arg;
	e = sleep_for_usr1(&req, &rem);
	ok = e == EINTR && handled_here == 1 && rem.tv_sec >= 3 && rem.tv_sec < 5 &&
	     rem.tv_nsec >= 0 && rem.tv_nsec < 1000000000;
	printf("nanosleep 5 s: %s, handler on this thread: %d, 3-5 s left: %s\n",
	       e ? strerror(e) : "slept", handled_here,
	       rem.tv_sec >= 3 && rem.tv_sec < 5 ? "yes" : "no");
	if (!ok)
		tp_failed();
	return NULL;
}

/* `sleep infinity` (coreutils) asks for the largest time_t: the kernel
 * saturates the timer's expiry at its end of time (2^63 - 1 ns of
 * CLOCK_MONOTONIC), and reports what is left of that */
static void *inf_sleeper(void *arg)
{
	struct timespec req = { (time_t)((~0ULL) >> 1), 0 }, rem = { -1, -1 }, now;
	long expect;
	int e, ok;

	(void)arg;
	e = sleep_for_usr1(&req, &rem);
	clock_gettime(CLOCK_MONOTONIC, &now);
	expect = 9223372036L - now.tv_sec;
	ok = e == EINTR && handled_here == 1 && rem.tv_sec >= expect - 2 &&
	     rem.tv_sec <= expect + 1;
	printf("nanosleep forever: %s, handler on this thread: %d, the kernel's end "
	       "of time left: %s\n", e ? strerror(e) : "slept", handled_here,
	       rem.tv_sec >= expect - 2 && rem.tv_sec <= expect + 1 ? "yes" : "no");
	if (!ok)
		tp_failed();
	return NULL;
}

static void *abs_sleeper(void *arg)
{
	struct timespec until;
	int r;

	(void)arg;
	take_usr1();
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += 5;
	atomic_store(&started, 1);
	r = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL);
	printf("clock_nanosleep until 5 s on: %s, handler on this thread: %d\n",
	       r ? strerror(r) : "slept", handled_here);
	if (!(r == EINTR && handled_here == 1))
		tp_failed();
	return NULL;
}

static void *short_sleeper(void *arg)
{
	struct timespec req = { 0, 300000000 }, t0;
	double took;
	int r;

	(void)arg;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	atomic_store(&started, 1);
	r = nanosleep(&req, NULL);
	took = since(&t0);
	printf("nanosleep 0.3 s with SIGWINCH sent: %s, the whole time: %s\n",
	       r < 0 ? strerror(errno) : "slept", took >= 0.29 ? "yes" : "no");
	if (!(r == 0 && took >= 0.29))
		tp_failed();
	return NULL;
}

/* Runs fn on a thread; once it sleeps, sends it sig (to the process when
 * to_thread is 0); returns once it has ended. */
static void one(void *(*fn)(void *), int sig, int to_thread)
{
	struct timespec t0, settle = { 0, 100000000 };
	pthread_t t;

	atomic_store(&started, 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pthread_create(&t, NULL, fn, NULL);
	while (!atomic_load(&started))
		sched_yield();
	nanosleep(&settle, NULL);	/* it is in its sleep */
	if (to_thread)
		pthread_kill(t, sig);
	else
		kill(getpid(), sig);
	pthread_join(t, NULL);
	if (since(&t0) > 4.0) {
		printf("  ^ took %.1f s: the sleep was not interrupted\n", since(&t0));
		tp_failed();
	}
}

int main(void)
{
	sigset_t usr1;

	setvbuf(stdout, NULL, _IOLBF, 0);
	tp_on_signal(SIGUSR1, on_usr1, 0);	/* no SA_RESTART */
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	/* only the sleepers take it (take_usr1) */
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);
	one(rel_sleeper, SIGUSR1, 0);
	one(inf_sleeper, SIGUSR1, 0);
	one(abs_sleeper, SIGUSR1, 0);
	one(short_sleeper, SIGWINCH, 1);
	return tp_failures != 0;
}
