/* A program that is single-threaded for a while.  Under `xsc run` the
 * runtime starts at its first pthread_create (src/preload/start.c,
 * go_live): until then it has one kernel thread, as natively, and what it
 * set up natively carries over to the fibers: a handler, a blocked
 * signal, an alternate signal stack.  A child forked while single-
 * threaded is single-threaded too, and starts a runtime of its own at
 * its first thread, made with C11's thrd_create (which reaches glibc's
 * pthread_create inside libc).  Output identical natively and under
 * `xsc run`; t_transparent also wants two "its second thread starts the
 * runtime" lines, the parent's and the child's. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <threads.h>
#include <unistd.h>

static char altstack[1 << 16];
static volatile int handled, on_alt;

static int threads(void)
{
	char line[256];
	int n = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "Threads:", 8) == 0)
			n = atoi(line + 8);
	if (f)
		fclose(f);
	return n;
}

static void on_usr1(int sig)
{
	char here;

	(void)sig;
	handled++;
	on_alt = &here >= altstack && &here < altstack + sizeof(altstack);
}

static void *worker(void *arg)
{
	raise(SIGUSR1);		/* this thread's own handler run */
	return arg;
}

static int c11_worker(void *arg)
{
	raise(SIGUSR1);
	return (int)(long)arg;
}

static int child(void)
{
	thrd_t t;
	int r;

	printf("child: %d thread(s) before its first thrd_create\n", threads());
	if (thrd_create(&t, c11_worker, (void *)7) != thrd_success ||
	    thrd_join(t, &r) != thrd_success)
		return 2;
	printf("child: joined %d, handler ran %d time(s)\n", r, handled);
	return 0;
}

int main(void)
{
	struct sigaction sa;
	stack_t ss = { .ss_sp = altstack, .ss_size = sizeof(altstack) };
	sigset_t usr2, now;
	pthread_t t;
	void *r;
	int st;

	printf("main: %d thread(s) at start\n", threads());
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_ONSTACK;
	if (sigaction(SIGUSR1, &sa, NULL) || sigaltstack(&ss, NULL))
		return 2;
	sigemptyset(&usr2);
	sigaddset(&usr2, SIGUSR2);
	sigprocmask(SIG_BLOCK, &usr2, NULL);

	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		int rc = child();
		fflush(stdout);
		_exit(rc);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return 2;
	printf("main: child exited %d\n", WEXITSTATUS(st));

	printf("main: %d thread(s) before its first pthread_create\n", threads());
	if (pthread_create(&t, NULL, worker, (void *)42) || pthread_join(t, &r))
		return 2;
	printf("main: joined %ld, handler ran %d time(s)\n", (long)r, handled);
	raise(SIGUSR1);
	printf("main: handler ran %d time(s), on the alternate stack: %s\n",
	       handled, on_alt ? "yes" : "no");
	sigprocmask(SIG_BLOCK, NULL, &now);
	printf("main: SIGUSR2 still blocked: %s\n",
	       sigismember(&now, SIGUSR2) ? "yes" : "no");
	return WEXITSTATUS(st);
}
