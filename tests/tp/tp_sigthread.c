/*
 * tp_sigthread.c - a process signal's handler runs on one of the
 * program's threads, and a call it interrupts fails only after it ran.
 *
 * Natively the kernel delivers a signal sent to the process to one of its
 * threads that does not block it: the handler sees that thread's id and
 * thread-local storage, and when that thread was blocked in a read (no
 * SA_RESTART), its read fails with EINTR after the handler returned.
 * Under `xsc run` a vcpu with no fiber to run took such signals and ran
 * the handler itself: gettid() gave the vcpu's kernel thread id and the
 * thread-local variables were the vcpu's (2985 of 3025 handlers, `xsc run
 * -b worker -t 2`, 2026-11-26), and the EINTR went to a thread whose
 * handler never ran.
 *
 * Three readers block in read() on pipes nobody writes; a sender thread,
 * which blocks SIGUSR1, sends it to the process ROUNDS times, each time
 * waiting until a handler ran.  The handler checks that it runs on a
 * reader (its gettid() is one the readers recorded, its thread-local mark
 * is set) and counts per thread; a reader whose read fails with EINTR
 * checks that a handler ran on it since its previous read.  Prints the
 * counts; exit 0 on success, 1 on any error.
 * xsc-tp: run-opts=-t 2 */
#include "tp.h"

#include <stdatomic.h>
#include <time.h>

#define NREADERS 3
#define ROUNDS 500

static int pipes[NREADERS][2];
static atomic_long reader_tid[NREADERS];
static atomic_int handled, stray_tid, unmarked, bad_eintr, other_err;
static __thread int mark;		/* set by each reader: 0 elsewhere */
static __thread int handled_here;

static void on_usr1(int sig, siginfo_t *si, void *uc)
{
	long me = syscall(SYS_gettid);
	int known = 0;

	(void)sig;
	(void)uc;
	for (int i = 0; i < NREADERS; i++)
		known |= atomic_load(&reader_tid[i]) == me;
	if (!known)
		atomic_fetch_add(&stray_tid, 1);
	if (!mark)
		atomic_fetch_add(&unmarked, 1);
	if (si->si_code != SI_USER || si->si_pid != getpid())
		atomic_fetch_add(&other_err, 1);
	handled_here++;
	atomic_fetch_add(&handled, 1);
}

static void *reader(void *arg)
{
	int i = (int)(long)arg;
	char c;

	mark = 1;
	atomic_store(&reader_tid[i], syscall(SYS_gettid));
	for (;;) {
		int before = handled_here;
		ssize_t r = read(pipes[i][0], &c, 1);
		if (r == 1)
			break;	/* released */
		if (r < 0 && errno == EINTR) {
			if (handled_here == before)
				atomic_fetch_add(&bad_eintr, 1);
			continue;
		}
		atomic_fetch_add(&other_err, 1);
		break;
	}
	return NULL;
}

static void *sender(void *arg)
{
	(void)arg;
	for (int n = 0; n < ROUNDS; n++) {
		struct timespec t0, t;
		kill(getpid(), SIGUSR1);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		while (atomic_load(&handled) <= n) {
			clock_gettime(CLOCK_MONOTONIC, &t);
			if (t.tv_sec - t0.tv_sec > 5) {
				fprintf(stderr, "tp_sigthread: signal %d not handled in 5 s\n", n);
				return (void *)1;
			}
			sched_yield();
		}
	}
	return NULL;
}

int main(void)
{
	sigset_t usr1;
	pthread_t r[NREADERS], s;
	void *sret;
	int fail = 0;

	/* no SA_RESTART: reads fail with EINTR */
	if (tp_on_siginfo(SIGUSR1, on_usr1, 0) < 0) {
		perror("sigaction");
		return 1;
	}
	/* only the readers take it: main and the sender block it */
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	for (int i = 0; i < NREADERS; i++) {
		if (pipe(pipes[i]) < 0) {
			perror("pipe");
			return 1;
		}
		pthread_create(&r[i], NULL, reader, (void *)(long)i);
	}
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);	/* inherited by the sender */
	for (int i = 0; i < NREADERS; i++)
		while (!atomic_load(&reader_tid[i]))
			usleep(1000);
	usleep(20000);	/* the readers are in read() */
	pthread_create(&s, NULL, sender, NULL);
	pthread_join(s, &sret);
	fail |= sret != NULL;
	for (int i = 0; i < NREADERS; i++)
		if (write(pipes[i][1], "x", 1) != 1)
			fail = 1;
	for (int i = 0; i < NREADERS; i++)
		pthread_join(r[i], NULL);
	printf("signals handled: %d of %d\n", atomic_load(&handled), ROUNDS);
	printf("handlers on another thread: %d, without the thread's TLS: %d\n",
	       atomic_load(&stray_tid), atomic_load(&unmarked));
	printf("EINTR with no handler run on the thread: %d, other errors: %d\n",
	       atomic_load(&bad_eintr), atomic_load(&other_err));
	fail |= atomic_load(&handled) != ROUNDS || atomic_load(&stray_tid) ||
		atomic_load(&unmarked) || atomic_load(&bad_eintr) || atomic_load(&other_err);
	return fail;
}
