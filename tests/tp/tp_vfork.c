/* vfork(2) called by the program itself (not through posix_spawn), from
 * the main thread and from other threads at once: the child either
 * _exits with a code of its own or execs /bin/echo, and the parent,
 * suspended until then, sees the exit status and the output in order.
 * Output identical natively and under `xsc run`. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static int one(int k)
{
	int st;
	pid_t pid = vfork();

	if (pid < 0) {
		perror("vfork");
		return -1;
	}
	if (pid == 0) {
		if (k % 2)
			_exit(k);
		char arg[32];
		snprintf(arg, sizeof(arg), "echo %d", k);
		execl("/bin/sh", "sh", "-c", arg, (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

static void *worker(void *arg)
{
	long base = (long)arg, bad = 0;

	for (int i = 1; i <= 40; i += 2)	/* _exit only: no output */
		if (one((int)base + i) != (int)base + i)
			bad++;
	return (void *)bad;
}

int main(void)
{
	pthread_t t[3];
	long bad = 0;
	void *r;

	setvbuf(stdout, NULL, _IONBF, 0);	/* the children write it too */
	for (int k = 0; k < 6; k++)
		printf("main: vfork %d -> %d\n", k, one(k));
	for (long i = 0; i < 3; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)(i * 50)))
			return 1;
	for (int k = 6; k < 10; k++)
		printf("main: vfork %d -> %d\n", k, one(k));
	for (int i = 0; i < 3; i++) {
		pthread_join(t[i], &r);
		bad += (long)r;
	}
	printf("threads: %ld wrong exit status(es)\n", bad);
	return bad != 0;
}
