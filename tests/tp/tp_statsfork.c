/*
 * tp_statsfork.c - a threaded process that forks, and each of the two
 * makes N reads of one byte from a pipe (tests/t_stats.sh finds them
 * among the calls posted in the `xsc run --stats` file of each process).
 * The child ends with exit(), which runs the destructors, as the parent
 * does by returning from main.  Prints one line; exit 0 on success, 1 on
 * any detected error.
 */
#include "tp.h"

#define N 200

static void *nothing(void *arg)
{
	return arg;
}

/* N one-byte reads from a pipe holding N bytes; 0 or -1 */
static int reads(void)
{
	char buf[N], c;
	int p[2], bad = 0;

	if (pipe(p) < 0)
		return -1;
	memset(buf, 'x', sizeof(buf));
	if (write(p[1], buf, sizeof(buf)) != (ssize_t)sizeof(buf))
		bad = 1;
	for (int i = 0; i < N && !bad; i++)
		if (read(p[0], &c, 1) != 1 || c != 'x')
			bad = 1;
	close(p[0]);
	close(p[1]);
	return bad ? -1 : 0;
}

int main(void)
{
	pthread_t t;
	int status;
	pid_t pid;

	/* a second thread: under xsc run the runtime starts here */
	if (pthread_create(&t, NULL, nothing, NULL) || pthread_join(t, NULL))
		return 1;
	if (reads() < 0)
		return 1;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0)
		exit(reads() < 0 ? 1 : 0);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		return 1;
	printf("parent and child: %d reads each\n", N);
	return 0;
}
