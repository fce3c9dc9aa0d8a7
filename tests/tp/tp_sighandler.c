/*
 * tp_sighandler.c - a signal handler that installs another handler.
 *
 * SIGUSR1's handler calls sigaction() for SIGALRM; then a timer raises
 * SIGALRM while main spins in its own code.  Under xsc run a handler's
 * calls ran directly, so that sigaction reached the kernel without the
 * runtime: the SIGALRM handler was installed with libc's restorer, ran
 * while program code traps every system call, and its rt_sigreturn
 * trapped and returned into garbage (SIGSEGV; Apache's SIGTERM handling
 * ended the same way).  Prints the handler counts; exit 0 on success.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

static volatile sig_atomic_t n1, n2;

static void on_alarm(int s)
{
	(void)s;
	n2++;
}

static void on_usr1(int s)
{
	struct sigaction sa;

	(void)s;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	n1++;
}

static void *nothing(void *a)
{
	return a;
}

int main(void)
{
	struct itimerval it = { { 0, 0 }, { 0, 20000 } };
	struct sigaction sa;
	pthread_t th;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	pthread_create(&th, NULL, nothing, NULL);	/* a threaded program */
	pthread_join(th, NULL);
	raise(SIGUSR1);
	setitimer(ITIMER_REAL, &it, NULL);
	while (!n2)
		;	/* in program code: SIGALRM lands here */
	printf("usr1 handler %d, alarm handler %d\n", (int)n1, (int)n2);
	return n1 == 1 && n2 == 1 ? 0 : 1;
}
