/*
 * tp_fork.c - process creation from a multithreaded unmodified program.
 *
 * While 4 threads are blocked on a condition variable, main runs:
 * fork (the child writes to a pipe and _exit(3)s; waitpid sees 3),
 * fork + execvp("echo") with its output captured through a pipe,
 * posix_spawnp("sh -c 'exit 5'") (status 5), system("exit 4") (status 4)
 * and popen("echo popen-ok").  Then the CPUs each kind of new process
 * may run on: main's, a forked child's, an exec'd nproc's and a spawned
 * one's (natively all the process's mask; under xsc run a child inherited
 * the one CPU its vcpu was pinned to).  Then it wakes the threads and
 * joins them.
 * Prints the collected results.  Exit 0 on success, 1 on any detected
 * error.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NT 4

extern char **environ;

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int go, waiting, woke;
static int failures;

#define CHECK(cond, ...) do { if (!(cond)) { \
	fprintf(stderr, "tp_fork:%d: ", __LINE__); fprintf(stderr, __VA_ARGS__); \
	fputc('\n', stderr); failures++; } } while (0)

static void *sleeper(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m);
	waiting++;
	pthread_cond_broadcast(&cv);
	while (!go)
		pthread_cond_wait(&cv, &m);
	woke++;
	pthread_mutex_unlock(&m);
	return NULL;
}

/* Reads fd to EOF into buf (NUL-terminated); returns the length or -1. */
static ssize_t slurp(int fd, char *buf, size_t cap)
{
	size_t n = 0;

	for (;;) {
		ssize_t r = read(fd, buf + n, cap - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		n += (size_t)r;
		if (n == cap - 1)
			break;
	}
	buf[n] = 0;
	return (ssize_t)n;
}

static int wait_status(pid_t pid)
{
	int st;
	pid_t r;

	do
		r = waitpid(pid, &st, 0);
	while (r < 0 && errno == EINTR);
	if (r != pid) {
		fprintf(stderr, "tp_fork: waitpid(%d) = %d: %s\n", (int)pid, (int)r, strerror(errno));
		return -1;
	}
	if (!WIFEXITED(st)) {
		fprintf(stderr, "tp_fork: child %d did not exit normally (status %#x)\n", (int)pid, st);
		return -1;
	}
	return WEXITSTATUS(st);
}

/* The parent's side of a child writing into pipe p: its output into
 * buf[0..cap) and its exit status (-1 on failure). */
static int child_output(pid_t pid, int p[2], char *buf, size_t cap)
{
	CHECK(pid > 0, "fork: %s", strerror(errno));
	close(p[1]);
	CHECK(slurp(p[0], buf, cap) >= 0, "read from child %d", (int)pid);
	close(p[0]);
	return wait_status(pid);
}

static void test_fork(void)
{
	static const char msg[] = "child-ok\n";
	char buf[64];
	int p[2], st;
	pid_t pid;

	CHECK(pipe(p) == 0, "pipe");
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		if (write(p[1], msg, sizeof(msg) - 1) != (ssize_t)sizeof(msg) - 1)
			_exit(100);
		_exit(3);
	}
	st = child_output(pid, p, buf, sizeof(buf));
	CHECK(st == 3, "fork child status %d", st);
	CHECK(strcmp(buf, msg) == 0, "child wrote '%s'", buf);
	printf("fork: child wrote %s", buf);
	printf("fork: child status %d\n", st);
}

static void test_exec(void)
{
	char buf[64];
	int p[2], st;
	pid_t pid;

	CHECK(pipe(p) == 0, "pipe");
	pid = fork();
	if (pid == 0) {
		char *argv[] = { "echo", "exec-ok", "via", "execvp", NULL };
		if (dup2(p[1], 1) < 0)
			_exit(101);
		close(p[0]);
		close(p[1]);
		execvp("echo", argv);
		_exit(102);
	}
	st = child_output(pid, p, buf, sizeof(buf));
	CHECK(st == 0, "echo status %d", st);
	CHECK(strcmp(buf, "exec-ok via execvp\n") == 0, "echo wrote '%s'", buf);
	printf("exec: echo wrote %s", buf);
	printf("exec: status %d\n", st);
}

static void test_spawn(void)
{
	char *argv[] = { "sh", "-c", "exit 5", NULL };
	pid_t pid = -1;
	int rc, st;

	rc = posix_spawnp(&pid, "sh", NULL, NULL, argv, environ);
	CHECK(rc == 0, "posix_spawnp: %s", strerror(rc));
	st = rc == 0 ? wait_status(pid) : -1;
	CHECK(st == 5, "posix_spawnp child status %d", st);
	printf("posix_spawnp: status %d\n", st);
}

static void test_system(void)
{
	int st = system("exit 4");

	CHECK(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 4, "system status %#x", st);
	printf("system: status %d\n", st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

static void test_popen(void)
{
	char buf[64] = "";
	FILE *f = popen("echo popen-ok", "r");
	int st;

	CHECK(f != NULL, "popen: %s", strerror(errno));
	if (!f)
		return;
	CHECK(fgets(buf, sizeof(buf), f) != NULL, "popen: no output");
	CHECK(fgetc(f) == EOF, "popen: more output");
	st = pclose(f);
	CHECK(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "pclose status %#x", st);
	CHECK(strcmp(buf, "popen-ok\n") == 0, "popen read '%s'", buf);
	printf("popen: read %s", buf);
	printf("popen: status %d\n", st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

static int ncpus(void)
{
	cpu_set_t s;

	return sched_getaffinity(0, sizeof(s), &s) == 0 ? CPU_COUNT(&s) : -1;
}

static void test_affinity(void)
{
	char buf[64], pbuf[64] = "";
	int p[2], st, mine = ncpus();
	FILE *f;
	pid_t pid;

	CHECK(pipe(p) == 0, "pipe");
	pid = fork();
	if (pid == 0) {
		dprintf(p[1], "%d", ncpus());
		_exit(0);
	}
	st = child_output(pid, p, buf, sizeof(buf));
	CHECK(st == 0 && atoi(buf) == mine, "forked child: %s CPUs, main %d", buf, mine);
	f = popen("nproc; sh -c 'exec nproc'", "r");
	CHECK(f != NULL, "popen nproc: %s", strerror(errno));
	if (f) {
		size_t n = fread(pbuf, 1, sizeof(pbuf) - 1, f);
		pbuf[n] = 0;
		for (char *c = pbuf; *c && c[1]; c++)
			if (*c == '\n')
				*c = ' ';
		st = pclose(f);
		CHECK(st == 0, "nproc status %#x", st);
	}
	printf("affinity: main %d, forked child %s, spawned and exec'd nproc %s", mine, buf, pbuf);
}

int main(void)
{
	pthread_t t[NT];

	for (int i = 0; i < NT; i++)
		if (pthread_create(&t[i], NULL, sleeper, NULL)) {
			fprintf(stderr, "tp_fork: pthread_create\n");
			return 1;
		}
	pthread_mutex_lock(&m);
	while (waiting < NT)
		pthread_cond_wait(&cv, &m);
	pthread_mutex_unlock(&m);

	fflush(stdout);	/* nothing buffered is duplicated into children */
	test_fork();
	test_exec();
	test_spawn();
	test_system();
	test_popen();
	test_affinity();

	pthread_mutex_lock(&m);
	CHECK(woke == 0, "%d threads woke early", woke);
	go = 1;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&m);
	for (int i = 0; i < NT; i++)
		CHECK(pthread_join(t[i], NULL) == 0, "pthread_join");
	CHECK(woke == NT, "%d threads woke", woke);
	printf("threads: %d blocked during all of it, %d woke\n", NT, woke);
	if (failures) {
		fprintf(stderr, "tp_fork: %d failures\n", failures);
		return 1;
	}
	printf("fork ok\n");
	return 0;
}
