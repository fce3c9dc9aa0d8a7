/*
 * tp_signal.c - signals in an unmodified threaded program.
 *
 *   SIGUSR1 (sigaction, SA_SIGINFO): raise() from main and from a thread
 *     (the handler has run when raise returns, in the raising thread);
 *     pthread_kill() to another thread that waits for it (the handler runs
 *     in that thread: a __thread counter says so).
 *   SIGUSR2: a thread blocks it with pthread_sigmask, raises it, sees it in
 *     sigpending() and not handled; unblocking runs the handler.
 *   SIGALRM: alarm(1); a loop of nanosleeps observes the handler's counter.
 * Counts come from volatile sig_atomic_t variables.  Prints the counts.
 * Exit 0 on success, 1 on any detected error.
 */
#include "tp.h"

#include <time.h>

static volatile sig_atomic_t usr1, usr2, alrm, bad_info;
static __thread volatile sig_atomic_t my_usr1, my_usr2;
static volatile sig_atomic_t target_ready;

static void on_usr1(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (sig != SIGUSR1 || si->si_signo != SIGUSR1 || si->si_code != SI_TKILL ||
	    si->si_pid != getpid())
		bad_info = 1;
	usr1++;
	my_usr1++;
}

static void on_usr2(int sig)
{
	if (sig != SIGUSR2)
		bad_info = 1;
	usr2++;
	my_usr2++;
}

static void on_alrm(int sig)
{
	if (sig != SIGALRM)
		bad_info = 1;
	alrm++;
}

static long ms_since(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

static void *raiser(void *arg)
{
	(void)arg;
	CHECK(raise(SIGUSR1) == 0, "raise in a thread");
	CHECK(my_usr1 == 1, "thread's raise: handler ran %d times in the raising thread", (int)my_usr1);
	return NULL;
}

/* Waits (sleeping) until SIGUSR1 has been handled in this thread. */
static void *target(void *arg)
{
	struct timespec t0;

	(void)arg;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	target_ready = 1;
	while (my_usr1 == 0 && ms_since(&t0) < 10000)
		tp_nap(2);
	CHECK(my_usr1 == 1, "pthread_kill: handler ran %d times in the target thread", (int)my_usr1);
	return (void *)(long)my_usr1;
}

static void *blocker(void *arg)
{
	sigset_t s, pend, old;

	(void)arg;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR2);
	CHECK(pthread_sigmask(SIG_BLOCK, &s, &old) == 0, "pthread_sigmask block");
	CHECK(!sigismember(&old, SIGUSR2), "SIGUSR2 blocked already");
	CHECK(raise(SIGUSR2) == 0, "raise SIGUSR2");
	tp_nap(20);
	CHECK(usr2 == 0 && my_usr2 == 0, "blocked SIGUSR2 was handled");
	sigemptyset(&pend);
	CHECK(sigpending(&pend) == 0, "sigpending");
	CHECK(sigismember(&pend, SIGUSR2) == 1, "SIGUSR2 not pending while blocked");
	CHECK(sigismember(&pend, SIGUSR1) == 0, "SIGUSR1 pending");
	CHECK(pthread_sigmask(SIG_UNBLOCK, &s, NULL) == 0, "pthread_sigmask unblock");
	CHECK(my_usr2 == 1, "unblocking ran the handler %d times in this thread", (int)my_usr2);
	sigemptyset(&pend);
	CHECK(sigpending(&pend) == 0 && !sigismember(&pend, SIGUSR2), "SIGUSR2 still pending");
	CHECK(pthread_sigmask(SIG_SETMASK, NULL, &old) == 0 && !sigismember(&old, SIGUSR2),
	      "SIGUSR2 still blocked");
	return NULL;
}

int main(void)
{
	struct sigaction sa;
	struct timespec t0;
	pthread_t t;
	sigset_t m;
	void *r;
	long el;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_sigaction = on_usr1;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	CHECK(sigaction(SIGUSR1, &sa, NULL) == 0, "sigaction SIGUSR1");
	sa.sa_handler = on_usr2;
	sa.sa_flags = SA_RESTART;
	CHECK(sigaction(SIGUSR2, &sa, NULL) == 0, "sigaction SIGUSR2");
	sa.sa_handler = on_alrm;
	sa.sa_flags = 0;
	CHECK(sigaction(SIGALRM, &sa, NULL) == 0, "sigaction SIGALRM");
	memset(&sa, 0, sizeof(sa));
	CHECK(sigaction(SIGUSR1, NULL, &sa) == 0 && sa.sa_sigaction == on_usr1 &&
	      (sa.sa_flags & SA_SIGINFO), "sigaction does not read back SIGUSR1's handler");

	/* raise from main */
	CHECK(raise(SIGUSR1) == 0, "raise");
	CHECK(usr1 == 1 && my_usr1 == 1, "main's raise: handler ran %d (%d here)", (int)usr1, (int)my_usr1);
	printf("raise in main: %d\n", (int)my_usr1);

	/* raise from a thread */
	CHECK(pthread_create(&t, NULL, raiser, NULL) == 0, "pthread_create");
	CHECK(pthread_join(t, NULL) == 0, "pthread_join");
	CHECK(usr1 == 2 && my_usr1 == 1, "thread's raise: %d in all, %d in main", (int)usr1, (int)my_usr1);
	printf("raise in a thread: %d\n", (int)usr1 - 1);

	/* pthread_kill to a waiting thread */
	CHECK(pthread_create(&t, NULL, target, NULL) == 0, "pthread_create");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!target_ready && ms_since(&t0) < 10000)
		tp_nap(1);
	CHECK(target_ready, "the new thread did not start within 10 s while main slept");
	tp_nap(10);	/* most likely asleep in nanosleep now */
	CHECK(pthread_kill(t, SIGUSR1) == 0, "pthread_kill");
	CHECK(pthread_join(t, &r) == 0, "pthread_join");
	CHECK(usr1 == 3, "after pthread_kill: handler ran %d times in all", (int)usr1);
	CHECK(my_usr1 == 1, "pthread_kill's signal was handled in main");
	printf("pthread_kill to a waiting thread: handled there %ld\n", (long)r);

	/* blocked, pending, unblocked */
	CHECK(pthread_create(&t, NULL, blocker, NULL) == 0, "pthread_create");
	CHECK(pthread_join(t, NULL) == 0, "pthread_join");
	CHECK(usr2 == 1, "SIGUSR2 handled %d times", (int)usr2);
	CHECK(my_usr2 == 0, "SIGUSR2 handled in main");
	printf("SIGUSR2: pending while blocked, handled %d after unblocking\n", (int)usr2);

	/* main's own mask was never changed by the thread's */
	CHECK(pthread_sigmask(SIG_SETMASK, NULL, &m) == 0 && !sigismember(&m, SIGUSR2) &&
	      !sigismember(&m, SIGUSR1), "main's mask changed");

	/* SIGALRM */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK(alarm(1) == 0, "an alarm was already set");
	while (alrm == 0 && ms_since(&t0) < 10000)
		tp_nap(10);
	el = ms_since(&t0);
	CHECK(alrm == 1, "SIGALRM handled %d times", (int)alrm);
	CHECK(el >= 900, "SIGALRM after %ld ms", el);
	tp_nap(50);
	CHECK(alrm == 1, "SIGALRM handled %d times", (int)alrm);
	printf("SIGALRM: %d\n", (int)alrm);

	CHECK(!bad_info, "a handler saw the wrong signal number or siginfo");
	printf("totals: SIGUSR1 %d, SIGUSR2 %d, SIGALRM %d\n", (int)usr1, (int)usr2, (int)alrm);
	if (tp_failures) {
		fprintf(stderr, "tp_signal: %d failures\n", tp_failures);
		return 1;
	}
	printf("signal ok\n");
	return 0;
}
