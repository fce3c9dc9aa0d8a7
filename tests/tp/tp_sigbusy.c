/*
 * tp_sigbusy.c - a process signal reaches the thread that accepts it
 * while the only other thread, which blocks it, never stops running.
 *
 * A reader waits in read() with SIGUSR1 open; main blocks SIGUSR1, sends
 * it to the process and spins with sched_yield() until the reader's
 * handler has run, ROUNDS times.  Natively the kernel hands each signal
 * to the reader at once.  Under `xsc run -t 1` the one vcpu ran main,
 * which blocks it, so the signal stayed pending in the kernel and main
 * spun for good (2026-11-26).  The handler checks that it runs on the
 * reader; the reader checks that each EINTR came after a handler ran on
 * it.  Prints the counts; exit 0 on success, 1 on any error.
 * xsc-tp: run-opts=-t 1 */
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

#define ROUNDS 50

static int p[2];
static atomic_long reader_tid;
static atomic_int handled, elsewhere, bad_eintr, other_err;
static __thread int handled_here;

static void on_usr1(int sig)
{
	(void)sig;
	if (syscall(SYS_gettid) != atomic_load(&reader_tid))
		atomic_fetch_add(&elsewhere, 1);
	handled_here++;
	atomic_fetch_add(&handled, 1);
}

static void *reader(void *arg)
{
	char c;

	(void)arg;
	atomic_store(&reader_tid, syscall(SYS_gettid));
	for (;;) {
		int before = handled_here;
		ssize_t r = read(p[0], &c, 1);
		if (r == 1)
			return NULL;
		if (r < 0 && errno == EINTR) {
			if (handled_here == before)
				atomic_fetch_add(&bad_eintr, 1);
			continue;
		}
		atomic_fetch_add(&other_err, 1);
		return NULL;
	}
}

int main(void)
{
	struct sigaction sa;
	sigset_t usr1;
	pthread_t t;
	int fail = 0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;	/* no SA_RESTART */
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL) < 0 || pipe(p) < 0) {
		perror("tp_sigbusy");
		return 1;
	}
	pthread_create(&t, NULL, reader, NULL);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);
	while (!atomic_load(&reader_tid))
		sched_yield();
	usleep(20000);	/* the reader is in read() */
	for (int n = 0; n < ROUNDS && !fail; n++) {
		struct timespec t0, now;
		kill(getpid(), SIGUSR1);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		while (atomic_load(&handled) <= n) {
			clock_gettime(CLOCK_MONOTONIC, &now);
			if (now.tv_sec - t0.tv_sec > 5) {
				fprintf(stderr, "tp_sigbusy: signal %d not handled in 5 s\n", n);
				fail = 1;
				break;
			}
			sched_yield();
		}
	}
	if (write(p[1], "x", 1) != 1)
		fail = 1;
	pthread_join(t, NULL);
	printf("signals handled: %d of %d, on another thread: %d\n",
	       atomic_load(&handled), ROUNDS, atomic_load(&elsewhere));
	printf("EINTR with no handler run on the thread: %d, other errors: %d\n",
	       atomic_load(&bad_eintr), atomic_load(&other_err));
	return fail || atomic_load(&handled) != ROUNDS || atomic_load(&elsewhere) ||
	       atomic_load(&bad_eintr) || atomic_load(&other_err);
}
