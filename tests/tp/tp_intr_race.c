/* Process signals interrupt a thread's blocked reads, read after read.
 * A child process sends SIGUSR1 to this one every 20 us; the main thread
 * blocks it, so the kernel gives each to the reader, whose read(2) of an
 * empty pipe fails with EINTR (the handler has no SA_RESTART).  Under
 * `xsc run` an idle vcpu takes the signal and asks the reader's vcpu to
 * cancel its call; a vcpu between its look for such work and its sleep
 * slept through the request, the reader waited for good, and every later
 * signal found the request still standing (tp_forkrun's child hung about
 * once in 60 runs under load).  5,000 reads; no progress for 2 s fails.
 * xsc-tp: run-opts=-t 2 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define READS 5000

static int data[2];
static _Atomic int reads, wrong;
static volatile sig_atomic_t handled;

static void on_usr1(int sig)
{
	(void)sig;
	handled++;
}

static void *reader(void *arg)
{
	sigset_t usr1;
	char c;

	(void)arg;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_UNBLOCK, &usr1, NULL);
	while (reads < READS) {
		if (read(data[0], &c, 1) < 0 && errno == EINTR)
			reads++;
		else
			wrong++;
	}
	return NULL;
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(void)
{
	struct sigaction sa;
	sigset_t usr1;
	pthread_t t;
	pid_t sender, me = getpid();
	int last = -1, rc = 0;
	double since = now();

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;	/* no SA_RESTART */
	sigaction(SIGUSR1, &sa, NULL);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);	/* the reader takes them */
	if (pipe(data))
		return 2;
	sender = fork();
	if (sender == 0) {
		struct timespec d = { 0, 20000 };
		for (;;) {	/* until killed */
			if (kill(me, SIGUSR1) < 0)
				_exit(0);
			nanosleep(&d, NULL);
		}
	}
	if (sender < 0 || pthread_create(&t, NULL, reader, NULL))
		return 2;
	while (reads < READS) {
		struct timespec ms = { 0, 10000000 };
		nanosleep(&ms, NULL);
		if (reads != last) {
			last = reads;
			since = now();
		} else if (now() - since > 2.0) {
			printf("no read interrupted for 2 s, after %d\n", last);
			rc = 1;
			break;
		}
	}
	kill(sender, SIGKILL);
	waitpid(sender, NULL, 0);
	if (rc)
		return rc;	/* the reader is still blocked */
	pthread_join(t, NULL);
	if (wrong) {
		printf("%d reads ended otherwise than with EINTR\n", (int)wrong);
		return 1;
	}
	printf("%d blocked reads interrupted by process signals\n", READS);
	return 0;
}
