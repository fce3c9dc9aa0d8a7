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
#include "tp.h"

#include <sched.h>
#include <spawn.h>

#define NT 4

extern char **environ;

static struct tp_gate gate = TP_GATE_INIT;
static int woke;

static void *sleeper(void *arg)
{
	(void)arg;
	tp_gate_pass(&gate);
	__atomic_add_fetch(&woke, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

static int write_msg(void *msg, int out)
{
	size_t len = strlen(msg);

	if (write(out, msg, len) != (ssize_t)len)
		return 100;
	return 3;
}

static void test_fork(void)
{
	static const char msg[] = "child-ok\n";
	char buf[64];
	int st = tp_fork_capture(write_msg, (void *)msg, buf, sizeof(buf));

	CHECK(st == 3, "fork child status %d", st);
	CHECK(strcmp(buf, msg) == 0, "child wrote '%s'", buf);
	printf("fork: child wrote %s", buf);
	printf("fork: child status %d\n", st);
}

static int exec_echo(void *arg, int out)
{
	char *argv[] = { "echo", "exec-ok", "via", "execvp", NULL };

	(void)arg;
	if (dup2(out, 1) < 0)
		return 101;
	close(out);
	execvp("echo", argv);
	return 102;
}

static void test_exec(void)
{
	char buf[64];
	int st = tp_fork_capture(exec_echo, NULL, buf, sizeof(buf));

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
	st = rc == 0 ? tp_wait(pid) : -1;
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

static int say_ncpus(void *arg, int out)
{
	(void)arg;
	dprintf(out, "%d", ncpus());
	return 0;
}

static void test_affinity(void)
{
	char buf[64], pbuf[64] = "";
	int st, mine = ncpus();
	FILE *f;

	st = tp_fork_capture(say_ncpus, NULL, buf, sizeof(buf));
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
	tp_gate_await(&gate, NT);

	fflush(stdout);	/* nothing buffered is duplicated into children */
	test_fork();
	test_exec();
	test_spawn();
	test_system();
	test_popen();
	test_affinity();

	CHECK(woke == 0, "%d threads woke early", woke);
	tp_gate_open(&gate);
	for (int i = 0; i < NT; i++)
		CHECK(pthread_join(t[i], NULL) == 0, "pthread_join");
	CHECK(woke == NT, "%d threads woke", woke);
	printf("threads: %d blocked during all of it, %d woke\n", NT, woke);
	if (tp_failures) {
		fprintf(stderr, "tp_fork: %d failures\n", tp_failures);
		return 1;
	}
	printf("fork ok\n");
	return 0;
}
