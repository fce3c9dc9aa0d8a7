/*
 * bench_trace.c - `xsc bench trace [calls] [reps]`: what tracing costs.
 *
 * Workload: `dd if=/dev/zero of=/dev/null bs=64 count=calls/2`, one read
 * and one write per block, about as syscall-bound as a program gets.  It
 * runs untraced, under xsc trace (ptrace + SYSGOOD, the default), under
 * xsc trace --seccomp, under `strace -f -o /dev/null`, and under
 * xsc trace --pin (tracer and program on one CPU), all in this one run,
 * alternating modes per repetition so drift hits all alike.  The median
 * wall time of each is compared with the untraced one; the target is an
 * overhead no larger than strace's.  Recording is timed
 * in-process (fork, exec, trace, reap); analysis is timed separately.
 * Prints a table and a CSV line per mode, and writes results/trace.csv
 * and the host profile beside it (results/host-profile.txt).
 */
#include "trace.h"
#include "tracei.h"
#include "hostprof.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAXREPS 15

enum { UNTRACED, XSC, XSC_SECCOMP, STRACE };

/* Each tracer twice: free to run anywhere, and with the whole run pinned
 * to one CPU (what --pin does), because on a small VM the cross-CPU
 * wakeups of unpinned ptrace stops dominate and vary from run to run. */
static const struct mode {
	const char *name;
	int kind, pin;
} modes[] = {
	{ "untraced", UNTRACED, 0 },
	{ "xsc trace", XSC, 0 },
	{ "xsc trace --seccomp", XSC_SECCOMP, 0 },
	{ "strace -f -o /dev/null", STRACE, 0 },
	{ "xsc trace --pin", XSC, 1 },
	{ "xsc trace --seccomp --pin", XSC_SECCOMP, 1 },
	{ "strace, pinned (taskset)", STRACE, 1 },
};
#define NMODES ((int)(sizeof(modes) / sizeof(modes[0])))

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int run_plain(char **argv)
{
	int st;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		execvp(argv[0], argv);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) < 0)
		return -errno;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -ECHILD;
}

/* strace's own arguments, in front of the workload's in one argv: the
 * strace mode runs the whole vector, the others start past it. */
#define STRACE_ARGS "strace", "-f", "-o", "/dev/null"
#define NSTRACE 4

/* One timed run of a mode; *calls gets the number of calls recorded.
 * Pinning is applied to this process for the run, so the tracer and,
 * through inheritance, the program share one CPU.  cmd is the strace
 * command line; the workload is cmd + NSTRACE. */
static double run_mode(const struct mode *m, char **cmd, size_t *calls)
{
	char **dd = cmd + NSTRACE;
	struct xt_recopt ro = { .seccomp = m->kind == XSC_SECCOMP, .progress = -1 };
	cpu_set_t old, one;
	struct xt_trace t;
	double t0;
	int err;

	sched_getaffinity(0, sizeof(old), &old);
	if (m->pin) {
		CPU_ZERO(&one);
		CPU_SET(sched_getcpu() < 0 ? 0 : sched_getcpu(), &one);
		sched_setaffinity(0, sizeof(one), &one);
	}
	t0 = now();
	if (m->kind == XSC || m->kind == XSC_SECCOMP) {
		xt_trace_init(&t);
		err = xt_record(&t, dd, &ro);
		*calls = t.n;
		xt_trace_free(&t);
	} else if (m->kind == STRACE) {
		err = run_plain(cmd);
	} else {
		err = run_plain(dd);
	}
	t0 = now() - t0;
	sched_setaffinity(0, sizeof(old), &old);
	return err < 0 ? -1 : t0;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double analysis_time(char **dd)
{
	struct xt_recopt ro = { .progress = -1 };
	struct xt_clopt co = { .min_weight = 2, .max_cands = 50 };
	struct xt_trace t;
	struct xt_graph g;
	struct xt_cand *c = NULL;
	double t0 = -1;

	xt_trace_init(&t);
	if (xt_record(&t, dd, &ro) == 0) {
		t0 = now();
		if (xt_graph_build(&g, &t) == 0) {
			if (xt_cluster(&g, &co, &c) >= 0)
				free(c);
			xt_graph_free(&g);
		}
		t0 = now() - t0;
	}
	xt_trace_free(&t);
	return t0;
}

static void write_csv(double t[][MAXREPS], const size_t *calls, long n,
		      int reps)
{
	FILE *f;

	mkdir("results", 0755);
	f = fopen("results/trace.csv", "w");
	if (!f) {
		perror("xsc bench trace: results/trace.csv");
		return;
	}
	fprintf(f, "mode,workload_calls,recorded_calls,reps,median_s,min_s,"
		"max_s,overhead_x\n");
	for (int m = 0; m < NMODES; m++)
		if (t[m][reps / 2] > 0)
			fprintf(f, "%s,%ld,%zu,%d,%.6f,%.6f,%.6f,%.3f\n",
				modes[m].name, n, calls[m], reps, t[m][reps / 2],
				t[m][0], t[m][reps - 1], t[m][reps / 2] / t[0][reps / 2]);
	fclose(f);
	/* beside it, as the harness does for every CSV (bench/harness.h) */
	const struct xsc_hostprof *hp = xsc__hostprof(NULL);
	if (hp)
		xsc__hostprof_save(hp, "results/host-profile.txt");
}

static void table(double t[][MAXREPS], long n, int reps)
{
	double base = t[0][reps / 2];

	printf("  %-26s %9s %9s %9s %9s %9s\n", "mode", "median s", "min s",
	       "max s", "overhead", "us/call");
	for (int m = 0; m < NMODES; m++) {
		double med = t[m][reps / 2];
		if (med <= 0) {
			printf("  %-26s %9s\n", modes[m].name, "n/a");
			continue;
		}
		printf("  %-26s %9.3f %9.3f %9.3f %8.1fx %9.2f\n", modes[m].name,
		       med, t[m][0], t[m][reps - 1], med / base,
		       1e6 * (med - base) / (double)n);
	}
	for (int m = 0; m < NMODES; m++)
		if (t[m][reps / 2] > 0)
			printf("csv,trace,%s,%ld,%.6f,%.3f\n", modes[m].name, n,
			       t[m][reps / 2], t[m][reps / 2] / base);
}

int xsc_bench_trace(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000;
	int reps = argc > 2 ? atoi(argv[2]) : 5;
	char count[32], *cmd[] = { STRACE_ARGS, "dd", "if=/dev/zero",
				   "of=/dev/null", "bs=64", count,
				   "status=none", NULL };
	double t[NMODES][MAXREPS];
	size_t calls[NMODES] = { 0 };
	int have_strace = system("strace -V >/dev/null 2>&1") == 0;

	if (n < 1000 || reps < 1 || reps > MAXREPS) {
		fprintf(stderr, "usage: xsc bench trace [calls>=1000] [reps 1..%d]\n",
			MAXREPS);
		return 2;
	}
	snprintf(count, sizeof(count), "count=%ld", n / 2);
	for (int r = 0; r < reps; r++)
		for (int m = 0; m < NMODES; m++)
			t[m][r] = modes[m].kind == STRACE && !have_strace ? -1 :
				  run_mode(&modes[m], cmd, &calls[m]);
	for (int m = 0; m < NMODES; m++)
		qsort(t[m], reps, sizeof(double), cmp_d);
	printf("xsc bench trace: dd bs=64 count=%ld (%ld read+write calls), "
	       "%d runs per mode\n", n / 2, n, reps);
	table(t, n, reps);
	printf("  analysis (graph + clusters) of the xsc trace: %.3f s\n",
	       analysis_time(cmd + NSTRACE));
	write_csv(t, calls, n, reps);
	return t[0][reps / 2] > 0 && t[1][reps / 2] > 0 ? 0 : 1;
}
