/*
 * tp_sparse.c - a thread that serves sparse events, on a vcpu where
 * another thread only waits on a condition variable, wakes nobody else;
 * a thread placed beside a spinning one still gets to run.
 * xsc-tp: run-opts=-t 2
 * xsc-tp: +auto
 *
 * Under `xsc run` a vcpu that left idle or a whole wait woke the
 * watchdog, which then ticked at least once: 3 calls of its own and a
 * futex wake by the vcpu for each event.  redis-server answering 200
 * PINGs 20 ms apart made 1,653 system calls against 799 natively
 * (strace -c -f, 2026-11-29).  A vcpu whose only thread runs has nothing
 * for the watchdog to preempt there, nor one whose other threads wait
 * on locks or conditions while the one it runs takes every signal they
 * take (redis-server's background threads beside its main thread: 2,365
 * calls for the same PINGs in a start that placed one there).  Here a
 * thread waits on a condition variable, and a server thread, placed on
 * the same vcpu, answers 50 requests 10 ms apart through pipes, waiting
 * in epoll_wait; main, alone on the other, writes each and reads the
 * reply.  The watchdog may wake at most 10 times meanwhile (natively
 * there is none).
 *
 * Then 5 times: main, alone on its vcpu after 100 ms of sleep (the
 * watchdog asleep), makes a thread and spins, with no system call, until
 * that thread has run.  With the server's vcpu held by its wait the new
 * thread is placed on main's vcpu, and only a preemption lets it run: a
 * new thread placed there must wake the watchdog.  Without that wake each
 * ran when the watchdog's own 1 s timeout ended its sleep (324-329 ms
 * for the first, then about 900 ms each); the 5 must run within 2 s in
 * all.  Each takes about 60 ms here (about three preemptions: 15 for
 * the 5 in a run with -v), 305-316 ms for the 5 in 30 runs with
 * the worker executor, and 1,141 ms once in `make test` beside the
 * sanitizer pass, over the 1 s this bound was (2026-11-29).  The new
 * fiber's push wakes the watchdog; pthread_create's own blocking of
 * signals around its clone does not (main is still alone then: a thread
 * that blocks more wakes it only beside other runnable threads).  Without
 * the push's wake the 5 took 4.2 s.
 * Prints what it saw; exit 0 on success, 1 on a failed check.
 */
#include "tp.h"

#include <stdatomic.h>
#include <sys/epoll.h>

#define REQUESTS 50
#define MAX_WAKES 10
#define NEWCOMERS 5
#define MAX_NEWCOMERS_MS 2000

static int req[2], rep[2];
static atomic_int ran;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int done;

/* Waits on the condition until the end. */
static void *parked(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	while (!done)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	return NULL;
}

static void *server(void *arg)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int ep = epoll_create1(0);
	char c = 0;

	(void)arg;
	ev.data.fd = req[0];
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, req[0], &ev) != 0)
		return (void *)1L;
	while (c != 'q') {
		if (epoll_wait(ep, &ev, 1, -1) != 1 || read(req[0], &c, 1) != 1 ||
		    write(rep[1], &c, 1) != 1)
			return (void *)1L;
	}
	close(ep);
	return NULL;
}

static void *newcomer(void *arg)
{
	(void)arg;
	atomic_store(&ran, 1);
	return NULL;
}

int main(void)
{
	pthread_t srv, nc, pk;
	void *sr = NULL;
	int served = 0;
	char c;

	if (pipe(req) != 0 || pipe(rep) != 0)
		return 1;
	/* under `xsc run` a second thread starts the runtime: every vcpu
	 * started and idle, the server gets one of its own */
	pthread_create(&nc, NULL, newcomer, NULL);
	pthread_join(nc, NULL);
	tp_nap(100);
	/* to the idle vcpu, where it waits; the server then to the same,
	 * idle again */
	pthread_create(&pk, NULL, parked, NULL);
	tp_nap(100);
	pthread_create(&srv, NULL, server, NULL);
	tp_nap(100);
	int wd = tp_watchdog_status();
	long a = tp_switches(wd);
	for (int i = 0; i < REQUESTS; i++) {
		c = 'x';
		if (write(req[1], &c, 1) != 1 || read(rep[0], &c, 1) != 1 || c != 'x')
			break;
		served++;
		tp_nap(10);
	}
	long w = tp_switches(wd) - a;
	if (wd >= 0)
		close(wd);
	CHECK_SAY(served == REQUESTS, "sparse: %d requests served", served);
	CHECK_SAY(wd < 0 || w <= MAX_WAKES, "sparse: the watchdog %s",
		  wd < 0 || w <= MAX_WAKES ? "quiet" : "woken");
	if (wd >= 0 && w > MAX_WAKES)
		fprintf(stderr, "sparse: the watchdog woke %ld times for %d requests "
			"(at most %d)\n", w, REQUESTS, MAX_WAKES);

	/* the server waits, main sleeps: the watchdog too, if any */
	long took = 0;
	int late = 0;
	for (int i = 0; i < NEWCOMERS; i++) {
		tp_nap(100);
		atomic_store(&ran, 0);
		long t0 = tp_now_ms();
		pthread_create(&nc, NULL, newcomer, NULL);
		while (!atomic_load(&ran) && tp_now_ms() - t0 < 10000)
			__builtin_ia32_pause();
		took += tp_now_ms() - t0;
		late += !atomic_load(&ran);
		pthread_join(nc, NULL);
	}
	CHECK_SAY(!late && took < MAX_NEWCOMERS_MS, "newcomers: %s",
		  late ? "never ran" : took < MAX_NEWCOMERS_MS ? "ran" : "late");
	if (took >= MAX_NEWCOMERS_MS)
		fprintf(stderr, "newcomers: %d ran after %ld ms in all (at most %d)\n",
			NEWCOMERS, took, MAX_NEWCOMERS_MS);

	c = 'q';
	if (write(req[1], &c, 1) != 1 || read(rep[0], &c, 1) != 1)
		return 1;
	pthread_join(srv, &sr);
	CHECK(sr == NULL, "the server thread failed");
	pthread_mutex_lock(&lock);
	done = 1;
	pthread_cond_signal(&cond);
	pthread_mutex_unlock(&lock);
	pthread_join(pk, NULL);
	return tp_failures ? 1 : 0;
}
