/*
 * tp_sole.c - a thread alone on its vcpu waits in epoll_wait and poll as
 * natively: woken by nothing but its events, its timeout and signals.
 * xsc-tp: run-opts=-t 2
 * xsc-tp: +auto
 *
 * Under `xsc run` such a wait is made in the thread's own kernel thread
 * (nothing else can run on its vcpu meanwhile).  It went in 10 ms
 * slices, and the watchdog ticked beside it: an idle redis-server made
 * 495 epoll_wait calls in 5 s against 50 natively (2026-11-29).  Here a
 * thread waits in epoll_wait with a 10 s timeout while main sleeps for
 * 1 s: the waiting threads and the watchdog together may wake at most
 * 20 times in that second (natively: 0).  Then the wait's ends, each
 * printed:
 *   kill      pthread_kill of a handled signal (no SA_RESTART) ends a
 *             10 s epoll_wait with EINTR, its handler run on the thread;
 *   timeout   a 200 ms epoll_wait with nothing to see: 0, after 200 ms;
 *   event     a write 100 ms into an endless epoll_wait: 1;
 *   process   a signal to the process, which main blocks, ends an
 *             endless epoll_wait with EINTR;
 *   poll      pthread_kill (a handler with SA_RESTART) ends a 10 s poll
 *             with EINTR: poll is not restarted after a handler;
 *   idle read the same second with the thread blocked in a read of an
 *             empty pipe (a blocking transfer, also made in its own
 *             kernel thread: the watchdog ticked beside it), then a
 *             write: the read returns 1.
 * Exit 0 when all are as expected.
 */
#include "tp.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/epoll.h>

#define MAX_WAKES 20

static int ep, p[2], q[2];
static pthread_t waiter_th;
static atomic_int phase, done;
static atomic_long result, error;
static atomic_int here;	/* the handler ran on the waiter in its wait */
static __thread int handled_here;

static void on_sig(int sig)
{
	(void)sig;
	handled_here++;
}

/* The threads whose wakes the idle second counts: those that wait in
 * epoll_wait or a pipe's read (the waiter's wait, made in its own kernel
 * thread; wchan) and the watchdog, found before it, each with its status file kept
 * open.  Not the thread that looks, nor those that run its calls: under
 * `xsc run` on a forced executor every read of a /proc file wakes the
 * looking thread's vcpu, the threads that read for it and the watchdog
 * (a vcpu that leaves idle wakes it), and a second listing of every
 * thread's files woke them dozens of times.  The count itself reads
 * the kept files alone. */
struct task { int fd; char name[32], wchan[64]; long sw; };

static int watch(struct task *t, int max)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	while (d && n < max && (e = readdir(d)) != NULL) {
		char path[300];
		struct task *k = &t[n];
		FILE *f;

		if (e->d_name[0] == '.' || !tp_thread_name(e->d_name, k->name, sizeof(k->name)))
			continue;
		k->wchan[0] = 0;
		snprintf(path, sizeof(path), "/proc/self/task/%s/wchan", e->d_name);
		if ((f = fopen(path, "r")) != NULL) {
			if (!fgets(k->wchan, sizeof(k->wchan), f))
				k->wchan[0] = 0;
			fclose(f);
		}
		if (!strstr(k->wchan, "epoll") && strcmp(k->wchan, "ep_poll") &&
		    !strstr(k->wchan, "pipe") && strcmp(k->name, "xsc-watchdog"))
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/status", e->d_name);
		if ((k->fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0)
			n++;
	}
	if (d)
		closedir(d);
	return n;
}

/* Main sleeps for 1 s while the waiter waits: the wakes of the waiting
 * threads and the watchdog, at most MAX_WAKES; said as "what: quiet". */
static void idle_second(const char *what)
{
	static struct task t[64];
	long w = 0;
	int n;

	tp_nap(200);	/* it waits */
	n = watch(t, 64);
	for (int i = 0; i < n; i++)
		t[i].sw = tp_switches(t[i].fd);
	sleep(1);
	for (int i = 0; i < n; i++)
		w += (t[i].sw = tp_switches(t[i].fd) - t[i].sw);
	/* none found: wchan unreadable here, and no watchdog (natively) */
	if (!n)
		fprintf(stderr, "%s: no waiting thread found to count\n", what);
	CHECK_SAY(w <= MAX_WAKES, "%s: %s", what, w <= MAX_WAKES ? "quiet" : "woken");
	if (w > MAX_WAKES) {
		fprintf(stderr, "%s: %ld wakes in 1 s (at most %d) of %d waiting threads:\n",
			what, w, MAX_WAKES, n);
		for (int i = 0; i < n; i++)
			fprintf(stderr, "  %s, in %s: %ld\n", t[i].name, t[i].wchan, t[i].sw);
	}
	for (int i = 0; i < n; i++)
		close(t[i].fd);
}

/* Phase k: one wait, its result and errno kept, then done = k. */
static void *waiter(void *arg)
{
	struct epoll_event ev;
	struct pollfd pf = { .fd = p[0], .events = POLLIN };
	char c;

	sigset_t usr2;

	(void)arg;
	sigemptyset(&usr2);
	sigaddset(&usr2, SIGUSR2);
	pthread_sigmask(SIG_UNBLOCK, &usr2, NULL);	/* main blocks it */
	for (int k = 1; k <= 7; k++) {
		long r;
		while (atomic_load(&phase) < k)
			tp_nap(1);
		handled_here = 0;
		if (k == 7)
			r = read(q[0], &c, 1);
		else if (k == 6)
			r = poll(&pf, 1, 10000);
		else
			r = epoll_wait(ep, &ev, 1, k == 1 || k == 2 ? 10000 : k == 3 ? 200 : -1);
		atomic_store(&error, r < 0 ? errno : 0);
		atomic_store(&here, handled_here > 0);
		atomic_store(&result, r);
		atomic_store(&done, k);
	}
	return NULL;
}

/* Starts phase k and waits for its end, up to 15 s. */
static bool run_phase(int k, int sig, pthread_t to)
{
	long t0 = tp_now_ms();

	atomic_store(&phase, k);
	tp_nap(50);
	while (atomic_load(&done) < k && tp_now_ms() - t0 < 15000) {
		if (sig && to)
			pthread_kill(to, sig);
		else if (sig)
			kill(getpid(), sig);
		for (int i = 0; i < 40 && atomic_load(&done) < k; i++)
			tp_nap(5);
	}
	return atomic_load(&done) >= k;
}

static const char *err_name(long e)
{
	return e == 0 ? "0" : e == EINTR ? "EINTR" : strerror((int)e);
}

int main(void)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct sigaction sa;
	sigset_t usr2;
	long t0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sig;
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGHUP, &sa, NULL);
	sigemptyset(&usr2);
	sigaddset(&usr2, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &usr2, NULL);
	if (pipe(p) != 0 || pipe(q) != 0 || (ep = epoll_create1(0)) < 0)
		return 1;
	ev.data.fd = p[0];
	epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev);
	pthread_create(&waiter_th, NULL, waiter, NULL);

	/* idle: the waiter in a 10 s epoll_wait, main asleep */
	atomic_store(&phase, 1);
	idle_second("idle");
	CHECK(run_phase(1, SIGUSR1, waiter_th), "idle: the wait did not end");

	bool ok = run_phase(2, SIGUSR1, waiter_th);
	CHECK_SAY(ok && atomic_load(&result) == -1 && atomic_load(&error) == EINTR &&
		  atomic_load(&here), "kill: %ld %s handled here %s", atomic_load(&result),
		  err_name(atomic_load(&error)), atomic_load(&here) ? "yes" : "no");

	t0 = tp_now_ms();
	ok = run_phase(3, 0, 0);
	long took = tp_now_ms() - t0;
	CHECK_SAY(ok && atomic_load(&result) == 0 && took >= 200, "timeout: %ld %s",
		  atomic_load(&result), took >= 200 ? "after 200 ms" : "early");

	atomic_store(&phase, 4);
	tp_nap(100);
	if (write(p[1], "x", 1) != 1)
		return 1;
	ok = run_phase(4, 0, 0);
	CHECK_SAY(ok && atomic_load(&result) == 1, "event: %ld", atomic_load(&result));
	char c;
	if (read(p[0], &c, 1) != 1)
		return 1;

	ok = run_phase(5, SIGUSR2, 0);
	CHECK_SAY(ok && atomic_load(&result) == -1 && atomic_load(&error) == EINTR,
		  "process: %ld %s", atomic_load(&result), err_name(atomic_load(&error)));

	ok = run_phase(6, SIGHUP, waiter_th);
	CHECK_SAY(ok && atomic_load(&result) == -1 && atomic_load(&error) == EINTR &&
		  atomic_load(&here), "poll: %ld %s handled here %s", atomic_load(&result),
		  err_name(atomic_load(&error)), atomic_load(&here) ? "yes" : "no");

	/* idle again: the waiter in a read of an empty pipe */
	atomic_store(&phase, 7);
	idle_second("idle read");
	if (write(q[1], "y", 1) != 1)
		return 1;
	ok = run_phase(7, 0, 0);
	CHECK_SAY(ok && atomic_load(&result) == 1, "read: %ld", atomic_load(&result));
	pthread_join(waiter_th, NULL);
	return tp_failures ? 1 : 0;
}
