/*
 * tp_forkexit.c - processes made by a thread (fork, vfork + exec) and a
 * process whose threads started in a forked child end as natively when
 * their last thread ends (see tp_lastthread.c for the rules).  Each case
 * runs in a process of its own (tp_cases.h):
 *  - fork-thread: a thread other than main forks; in the child, that
 *    thread (the child's only one) starts a thread, joins it and returns
 *    from its start routine: the child exits 0, its atexit handlers run;
 *    the parent's thread waits for it and returns, main joins it;
 *  - fork-thread-main-gone: the same with main gone (pthread_exit) in the
 *    parent, and in the child the forking thread calls pthread_exit while
 *    a detached thread it started still runs;
 *  - vfork-exec-thread: a thread vforks and the child execs a shell, main
 *    having called pthread_exit; the thread waits for it and returns;
 *  - forked-runtime: a single-threaded process forks, and the child's
 *    main starts a thread (the child's first) and calls pthread_exit;
 *  - forked-runtime-exit: that child's thread calls exit(6) while others
 *    wait in read and in pthread_join.
 * Exit 0 when every case ended as natively expected, 1 otherwise.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tp_cases.h"

static int in_case;	/* this process runs a case (not the driver) */

static void at_exit1(void)
{
	printf("%s: atexit\n", in_case == 2 ? "child" : "parent");
}

static void __attribute__((destructor)) dtor(void)
{
	if (in_case)
		printf("%s: destructor\n", in_case == 2 ? "child" : "parent");
}

static void setup(void)
{
	in_case = 1;
	atexit(at_exit1);
}

static void report(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) != pid)
		printf("parent: waitpid failed\n");
	else if (WIFEXITED(st))
		printf("parent: child exit %d\n", WEXITSTATUS(st));
	else
		printf("parent: child signal %d\n", WTERMSIG(st));
}

static pid_t fork_child(void)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(1);
	}
	if (pid == 0)
		in_case = 2;
	return pid;
}

/* ---- fork from a thread --------------------------------------------------------- */

static void *late(void *arg)
{
	msleep(100);
	printf("%s: returns\n", (const char *)arg);
	return NULL;
}

static void *forker(void *arg)
{
	int main_gone = (int)(long)arg;
	pid_t pid;

	/* main gone first: natively a fork while main is still in its
	 * pthread_exit left a child that aborted in glibc, 1 run in 30 */
	if (main_gone)
		msleep(100);
	pid = fork_child();

	if (pid == 0) {
		if (main_gone) {
			/* printed first: the thread may end before */
			printf("child: forking thread pthread_exit\n");
			spawn(late, "child's detached thread", 1);
			pthread_exit(NULL);
		}
		pthread_join(spawn(late, "child's thread", 0), NULL);
		printf("child: forking thread returns\n");
		return NULL;
	}
	report(pid);
	printf("parent: forking thread returns\n");
	return NULL;
}

static int fork_thread(void)
{
	setup();
	pthread_join(spawn(forker, (void *)0L, 0), NULL);
	printf("parent: main returns\n");
	return 0;
}

static int fork_thread_main_gone(void)
{
	setup();
	spawn(forker, (void *)1L, 0);
	pthread_exit(NULL);
}

static void *vforker(void *arg)
{
	pid_t pid;

	msleep(50);	/* main is gone */
	fflush(stdout);
	pid = vfork();
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", "echo vfork child: exec", (char *)NULL);
		_exit(127);
	}
	report(pid);
	printf("parent: vforking thread returns\n");
	return arg;
}

static int vfork_exec_thread(void)
{
	setup();
	spawn(vforker, NULL, 0);
	pthread_exit(NULL);
}

/* ---- a runtime that starts in a forked child ------------------------------------------ */

static int pipefd[2];

static void *in_read(void *arg)
{
	char c;

	if (read(pipefd[0], &c, 1) >= 0)
		printf("child: read returned\n");
	return arg;
}

static void *exit6(void *arg)
{
	msleep(50);
	printf("child: exit(6)\n");
	exit(6);
	return arg;
}

static int forked(int how)
{
	pid_t pid;

	setup();
	pid = fork_child();
	if (pid == 0) {
		if (how == 0) {
			printf("child: main pthread_exit\n");
			spawn(late, "child's thread", 0);
			pthread_exit(NULL);
		}
		if (pipe(pipefd))
			exit(1);
		spawn(in_read, NULL, 0);
		pthread_join(spawn(exit6, NULL, 0), NULL);
		printf("child: joined\n");
		return 1;
	}
	report(pid);
	return 0;
}

static int forked_runtime(void)
{
	return forked(0);
}

static int forked_runtime_exit(void)
{
	return forked(6);
}

int main(int argc, char **argv)
{
	static const struct tp_case cases[] = {
		{ "fork-thread", fork_thread, 0 },
		{ "fork-thread-main-gone", fork_thread_main_gone, 0 },
		{ "vfork-exec-thread", vfork_exec_thread, 0 },
		{ "forked-runtime", forked_runtime, 0 },
		{ "forked-runtime-exit", forked_runtime_exit, 0 },
	};

	return tp_cases_main(argc, argv, cases, sizeof(cases) / sizeof(cases[0]));
}
