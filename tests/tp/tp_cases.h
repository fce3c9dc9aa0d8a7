/*
 * tp_cases.h - one process per case, for programs whose cases end their
 * process (tp_lastthread, tp_forkexit).  Header-only: each program stays
 * one plain libc + pthreads source.
 *
 * Run without arguments, the program is the driver: single-threaded, it
 * runs each case in a fresh exec of itself (`/proc/self/exe NAME`, so
 * under `xsc run` each case is a process of its own with the preload
 * library, its runtime starting at its first thread), in a process group
 * of its own, and prints how the case ended: "exit N" or "signal N".  A
 * case still running after TP_CASE_SECONDS is killed with its whole group
 * (its forked children too) and reported as "timed out"; the driver exits
 * 1 unless every case ended as expected.  A case prints to the same
 * stdout, so its output (and whether exit flushed it) is compared too.
 */
#ifndef TP_CASES_H
#define TP_CASES_H
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TP_CASE_SECONDS 5

struct tp_case {
	const char *name;
	int (*run)(void);
	int want;		/* exit status, or -signal */
};

/* Helpers both case programs use: a sleep that resumes after a handler,
 * and a thread made joinable or detached (exit 1 if it cannot be). */
static void msleep(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0)
		;
}

static pthread_t spawn(void *(*fn)(void *), void *arg, int detached)
{
	pthread_attr_t a;
	pthread_t t;

	pthread_attr_init(&a);
	if (detached)
		pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &a, fn, arg) != 0) {
		perror("pthread_create");
		exit(1);
	}
	pthread_attr_destroy(&a);
	return t;
}

static volatile sig_atomic_t tp_case_expired;

static void tp_case_alarm(int s)
{
	(void)s;
	tp_case_expired = 1;
}

/* Runs one case in a fresh exec of this program; returns how it ended
 * (exit status, -signal, or -1000 when it had to be killed). */
static int tp_case_spawn(const char *argv0, const char *name)
{
	struct sigaction sa;
	pid_t pid;
	int st;

	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return -2000;
	}
	if (pid == 0) {
		setpgid(0, 0);
		execl("/proc/self/exe", argv0, name, (char *)NULL);
		perror("exec");
		_exit(127);
	}
	setpgid(pid, pid);	/* as the child does: whichever runs first */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = tp_case_alarm;	/* no SA_RESTART: waitpid fails EINTR */
	sigaction(SIGALRM, &sa, NULL);
	tp_case_expired = 0;
	alarm(TP_CASE_SECONDS);
	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR)
			return -2000;
		if (tp_case_expired) {
			kill(-pid, SIGKILL);
			waitpid(pid, &st, 0);
			return -1000;
		}
	}
	alarm(0);
	kill(-pid, SIGKILL);	/* what the case left behind, if anything */
	return WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? -WTERMSIG(st) : -2000;
}

static int tp_cases_main(int argc, char **argv, const struct tp_case *c, int n)
{
	int bad = 0;

	if (argc > 1) {
		for (int i = 0; i < n; i++)
			if (strcmp(argv[1], c[i].name) == 0) {
				alarm(2 * TP_CASE_SECONDS);	/* a net of its own */
				return c[i].run();
			}
		fprintf(stderr, "%s: no case %s\n", argv[0], argv[1]);
		return 2;
	}
	for (int i = 0; i < n; i++) {
		int r = tp_case_spawn(argv[0], c[i].name);
		if (r == -1000)
			printf("case %s: timed out after %d s\n", c[i].name, TP_CASE_SECONDS);
		else if (r < 0)
			printf("case %s: signal %d\n", c[i].name, -r);
		else
			printf("case %s: exit %d\n", c[i].name, r);
		if (r != c[i].want) {
			fprintf(stderr, "%s: case %s ended with %d, want %d\n",
				argv[0], c[i].name, r, c[i].want);
			bad = 1;
		}
	}
	return bad;
}
#endif
