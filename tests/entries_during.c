/*
 * entries_during PID CMD [ARGS...]: the kernel entries of process PID
 * (its threads, and whatever it forks) while CMD runs, counted by the
 * benchmarks' counter (bench/entries.c: tracefs, else strace -f -c; the
 * environment's XSC_BENCH_ENTRIES chooses as there).  CMD is not counted
 * unless it is below PID.  For shell tests: CMD is typically the load
 * (wrk) against the server PID.
 *
 * CMD's output comes first; then one line
 *	entries TOTAL by METHOD; NAME COUNT, NAME COUNT, ...
 * (the six calls with the most entries), or
 *	entries n/a: WHY
 * when nothing could count.  Exits with CMD's status (127 if it did not
 * start, 2 for a usage error), 1 when a started count failed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../bench/entries.h"

int main(int argc, char **argv)
{
	struct bench_counter *c;
	struct bench_entries e;
	char top[512];
	pid_t pid, child;
	int st = 0, rc, started;

	if (argc < 3 || (pid = (pid_t)atoi(argv[1])) <= 0) {
		fprintf(stderr, "usage: entries_during PID CMD [ARGS...]\n");
		return 2;
	}
	rc = bench_counter_start(&c, pid, &e);
	started = rc == 0;
	fflush(stdout);
	child = fork();
	if (child == 0) {
		execvp(argv[2], argv + 2);
		perror(argv[2]);
		_exit(127);
	}
	if (child < 0 || waitpid(child, &st, 0) != child)
		st = 127 << 8;
	if (rc == 0)
		rc = bench_counter_stop(c, &e);
	if (rc == 0) {
		bench_entries_top(&e, 1, 6, top, sizeof(top));
		printf("entries %llu by %s; %s\n", (unsigned long long)e.total, e.method, top);
	} else {
		printf("entries n/a: %s\n", e.why);
	}
	if (rc && started)
		return 1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
