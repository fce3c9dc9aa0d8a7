/* Syscall threads take none of the program's signals, from their first
 * instruction on.
 *
 * A syscall thread started with the signal mask of the thread whose call
 * made the pool grow, and blocked signals only once it ran: a process
 * signal that landed in between ran the program's handler on the syscall
 * thread.  Under xsc run that handler's sem_post woke no fiber and a
 * waiting thread slept for good (tests/tp/tp_sigpost.c, 5 of about 180
 * runs on the syscall-thread executor under load, 2026-11-26).
 *
 * The handle's owner (this thread) does not block SIGUSR1; a sender
 * thread, which blocks it, signals the process as fast as it can, while
 * the owner posts rounds of 48 sleeps to a fresh worker handle (each
 * round grows a new pool to 48 threads).  The handler notes the kernel
 * thread it runs on: it must be the owner or the receiver (a thread that
 * waits in read() with SIGUSR1 open), never a syscall thread.  Only the
 * worker executor is checked: the others start no syscall thread for
 * sleeps.
 * xsc-test: per-backend */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"
#include "xsc.h"

#define NSLEEP 48
#define ROUNDS 20

static atomic_int stop, foreign, handled;
static atomic_long owner_tid, receiver_tid, bad_tid;
static int pipefd[2];

static void on_usr1(int sig)
{
	long t = syscall(SYS_gettid);

	(void)sig;
	if (t == atomic_load(&owner_tid) || t == atomic_load(&receiver_tid)) {
		atomic_fetch_add(&handled, 1);
	} else {
		atomic_fetch_add(&foreign, 1);
		atomic_store(&bad_tid, t);
	}
}

static void *receiver(void *arg)
{
	char c;

	(void)arg;
	atomic_store(&receiver_tid, syscall(SYS_gettid));
	while (read(pipefd[0], &c, 1) != 1)
		;	/* EINTR: no SA_RESTART */
	return NULL;
}

static void *sender(void *arg)
{
	sigset_t s;

	(void)arg;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &s, NULL);
	while (!atomic_load(&stop))
		kill(getpid(), SIGUSR1);
	return NULL;
}

int main(void)
{
	struct timespec ts = { 0, 2 * 1000 * 1000 };
	struct xsc_config cfg;
	struct sigaction sa;
	pthread_t rcv, snd;
	int spawned = 0;

	if (strcmp(test_backend(), "worker") != 0)
		skip("only the worker executor starts a syscall thread per sleep");
	atomic_store(&owner_tid, syscall(SYS_gettid));
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;	/* no SA_RESTART: the receiver loops */
	CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
	CHECK_EQ(pipe(pipefd), 0);
	CHECK_EQ(pthread_create(&rcv, NULL, receiver, NULL), 0);
	while (!atomic_load(&receiver_tid))
		sched_yield();
	CHECK_EQ(pthread_create(&snd, NULL, sender, NULL), 0);
	for (int r = 0; r < ROUNDS; r++) {
		struct xsc *x;

		xsc_config_init(&cfg);
		cfg.backend = XSC_BACKEND_WORKER;
		cfg.max_workers = NSLEEP;
		cfg.flags |= XSC_NO_ENV | XSC_QUIET;
		CHECK_EQ(xsc_open(&x, &cfg), 0);
		for (int i = 0; i < NSLEEP; i++)
			CHECK_GE(xsc_post(x, SYS_nanosleep, &ts, NULL), 0);
		CHECK_GE(xsc_flush(x), 0);
		for (int done = 0; done < NSLEEP; ) {
			int n = xsc_wait(x, NSLEEP);
			if (n == -EINTR)
				continue;
			CHECK_GE(n, 0);
			done = n;
		}
		spawned += NSLEEP;
		CHECK_EQ(xsc_close(x), 0);
	}
	atomic_store(&stop, 1);
	CHECK_EQ(pthread_join(snd, NULL), 0);
	CHECK_EQ(write(pipefd[1], "x", 1), 1);
	CHECK_EQ(pthread_join(rcv, NULL), 0);
	printf("%d handlers on the program's threads, %d on others (last: %ld); "
	       "about %d syscall threads started\n", atomic_load(&handled),
	       atomic_load(&foreign), atomic_load(&bad_tid), spawned);
	CHECK_EQ(atomic_load(&foreign), 0);
	printf("ok\n");
	return 0;
}
