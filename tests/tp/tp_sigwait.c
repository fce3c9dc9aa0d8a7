/*
 * tp_sigwait.c - threads that wait for signals, as daemons do.
 *
 * Every thread blocks the signals below (main blocks them before it
 * creates any), then:
 *   - 3 waiter threads, more than a 2-CPU machine's vcpus, each in
 *     sigwaitinfo() for its own real-time signal: one round sent to the
 *     process (kill), one to the thread (pthread_kill); si_code says which.
 *     Under xsc run a waiter held its vcpu in the kernel: with as many
 *     waiters as vcpus, main never ran again.
 *   - sigtimedwait() for a signal nobody sends: EAGAIN after 100 ms.
 *   - a thread in sigsuspend() with SIGUSR2 unblocked only there: woken
 *     by pthread_kill, then by a kill to the process, its handler run in
 *     that thread (a __thread counter says so), EINTR.
 *   - a thread in pause() with SIGRTMIN+6 unblocked (the only thread that
 *     accepts it): a kill to the process ends the pause.
 *   - last, SIGTERM to the process, which every thread blocks and a
 *     waiter takes: natively the process never dies of it; under xsc run
 *     a vcpu with nothing to run took it with its default action.
 * Prints what each thread saw.  Exit 0 on success, 1 on any detected
 * error.
 */
#include "tp.h"

#include <time.h>

#define NW 3

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int arrived;		/* threads at the point where they wait */
static char seen[NW][2][48];
static volatile sig_atomic_t usr2_any, rt6;
static __thread volatile sig_atomic_t usr2_mine;

static void arrive(void)
{
	pthread_mutex_lock(&m);
	arrived++;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&m);
}

/* Waits until n threads have arrived, then a little more: they are in
 * their wait (or about to be: every case below is right either way). */
static void await(int n)
{
	pthread_mutex_lock(&m);
	while (arrived < n)
		pthread_cond_wait(&cv, &m);
	pthread_mutex_unlock(&m);
	usleep(20 * 1000);
}

static const char *code(int c)
{
	return c == SI_USER ? "SI_USER" : c == SI_TKILL ? "SI_TKILL" : "other";
}

static void *waiter(void *arg)
{
	int i = (int)(long)arg;
	sigset_t s;

	sigemptyset(&s);
	sigaddset(&s, SIGRTMIN + 1 + i);
	for (int k = 0; k < 2; k++) {
		siginfo_t si;
		int r;
		arrive();
		r = sigwaitinfo(&s, &si);
		snprintf(seen[i][k], sizeof(seen[i][k]), "%s %s",
			 r == SIGRTMIN + 1 + i ? "its signal" : "WRONG", code(si.si_code));
	}
	return NULL;
}

static void *suspender(void *arg)
{
	sigset_t s;
	int got = 0;

	(void)arg;
	pthread_sigmask(SIG_SETMASK, NULL, &s);
	sigdelset(&s, SIGUSR2);
	for (int k = 0; k < 2; k++) {
		arrive();
		while (usr2_mine == got) {
			int r = sigsuspend(&s);
			CHECK(r == -1 && errno == EINTR, "sigsuspend: %d %s", r, strerror(errno));
		}
		got = usr2_mine;
	}
	return (void *)(long)got;
}

static void *pauser(void *arg)
{
	sigset_t s;

	(void)arg;
	sigemptyset(&s);
	sigaddset(&s, SIGRTMIN + 6);
	pthread_sigmask(SIG_UNBLOCK, &s, NULL);
	arrive();
	while (!rt6)
		pause();
	return NULL;
}

static void *term_waiter(void *arg)
{
	return (void *)(long)sigwaitinfo(arg, NULL);
}

static void on_usr2(int sig)
{
	(void)sig;
	usr2_mine++;
	usr2_any++;
}

static void on_rt6(int sig)
{
	(void)sig;
	rt6 = 1;
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

int main(void)
{
	pthread_t w[NW], sus, pau, term;
	struct sigaction sa;
	struct timespec ts = { 0, 100 * 1000 * 1000 };
	sigset_t all, s;
	void *rv;
	double t0, dt;
	int r;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr2;
	sigaction(SIGUSR2, &sa, NULL);
	sa.sa_handler = on_rt6;
	sigaction(SIGRTMIN + 6, &sa, NULL);
	sigemptyset(&all);
	sigaddset(&all, SIGUSR1);
	sigaddset(&all, SIGUSR2);
	sigaddset(&all, SIGTERM);
	for (int i = 0; i <= 6; i++)
		sigaddset(&all, SIGRTMIN + 1 + i);
	pthread_sigmask(SIG_BLOCK, &all, NULL);

	for (int i = 0; i < NW; i++)
		pthread_create(&w[i], NULL, waiter, (void *)(long)i);
	for (int k = 0; k < 2; k++) {
		await(NW * (k + 1));
		for (int i = 0; i < NW; i++) {
			if (k == 0)
				kill(getpid(), SIGRTMIN + 1 + i);
			else
				pthread_kill(w[i], SIGRTMIN + 1 + i);
		}
	}
	for (int i = 0; i < NW; i++) {
		pthread_join(w[i], NULL);
		for (int k = 0; k < 2; k++)
			printf("waiter %d, %s: %s\n", i, k ? "to the thread" : "to the process", seen[i][k]);
	}

	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	t0 = now();
	r = sigtimedwait(&s, NULL, &ts);
	dt = now() - t0;
	printf("sigtimedwait: %s, %s\n", r < 0 ? strerror(errno) : "a signal",
	       dt >= 0.099 ? "after the timeout" : "EARLY");
	CHECK(r == -1 && errno == EAGAIN && dt >= 0.099, "sigtimedwait %d after %.3f s", r, dt);

	arrived = 0;
	pthread_create(&sus, NULL, suspender, NULL);
	await(1);
	pthread_kill(sus, SIGUSR2);
	await(2);
	kill(getpid(), SIGUSR2);
	pthread_join(sus, &rv);
	printf("sigsuspend: woken twice, its handler ran %ld times in it (%d in all)\n",
	       (long)rv, (int)usr2_any);
	CHECK((long)rv == 2 && usr2_any == 2, "usr2: %ld in the thread, %d in all",
	      (long)rv, (int)usr2_any);

	arrived = 0;
	pthread_create(&pau, NULL, pauser, NULL);
	await(1);
	kill(getpid(), SIGRTMIN + 6);
	pthread_join(pau, NULL);
	printf("pause: ended by a signal to the process\n");

	/* SIGTERM: blocked everywhere, taken by a waiter */
	arrived = 0;
	sigemptyset(&s);
	sigaddset(&s, SIGTERM);
	pthread_create(&term, NULL, term_waiter, &s);
	usleep(20 * 1000);
	kill(getpid(), SIGTERM);
	pthread_join(term, &rv);
	printf("SIGTERM: taken by sigwaitinfo (%s)\n", (long)rv == SIGTERM ? "right" : "WRONG");
	CHECK((long)rv == SIGTERM, "sigwaitinfo for SIGTERM returned %ld", (long)rv);

	if (tp_failures) {
		fprintf(stderr, "tp_sigwait: %d failures\n", tp_failures);
		return 1;
	}
	printf("sigwait ok\n");
	return 0;
}
