/*
 * calls.c - `xsc bench calls`: what one call a program makes through libc
 * costs natively, under `xsc run` with syscall user dispatch alone
 * (XSC_REWRITE=0: every libc-internal call traps), and under `xsc run`
 * with libc's syscall sites rewritten (src/preload/rewrite.c).
 *
 * The workload is examples/calls (xsc-calls), an unmodified pthread
 * program: getppid() through libc's wrapper (a rewritable site),
 * syscall(SYS_getppid) (libc's generic entry: rax from a register), a 1 MiB
 * malloc+free (mmap, munmap), fopen+fgetc+fclose (stdio's internal openat,
 * fstat, ioctl, read, close), a contended mutex (futex waits and wakes),
 * clock_gettime (the vDSO) and read() of an empty non-blocking pipe (the
 * function interposed by symbol: an event loop's commonest call, made
 * directly by a thread alone on its vcpu).  The three ways run round by round,
 * interleaved; the best of the rounds is kept.  Ratios are to native.
 * Target: a rewritten non-blocking call within 2x of native.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

int xsc_bench_calls(int argc, char **argv);
int xsc_run_find_preload(char *buf, size_t len);	/* tools/run.c */

#define NKIND 7
#define NWAY 3
static const char *const way_name[NWAY] = { "native", "sud-only", "rewritten" };

static const char usage[] =
	"usage: xsc bench calls [--quick] [--rounds N] [--out DIR]\n"
	"  ns per libc call (getppid, syscall(), malloc 1 MiB, stdio open/read/close,\n"
	"  contended mutex, clock_gettime, read of an empty non-blocking pipe)\n"
	"  natively, under xsc run with every libc-internal call trapped\n"
	"  (XSC_REWRITE=0), and with libc's syscall sites rewritten.  Writes\n"
	"  DIR/calls.csv and DIR/calls.png.\n";

struct kind {
	char name[48];
	double ns[NWAY];
};

/* Runs the workload one way; fills k[] (names the first time). */
static int run_way(const char *self, const char *prog, int way, long iters,
		   struct kind *k, int *nk)
{
	char n[32], out[4096], *argv[8];
	int fd, i = 0;
	pid_t pid;

	snprintf(n, sizeof(n), "%ld", iters);
	if (way > 0) {
		argv[i++] = (char *)self;
		argv[i++] = "run";
		argv[i++] = "--";
	}
	argv[i++] = (char *)prog;
	argv[i++] = n;
	argv[i] = NULL;
	if (way == 1)
		setenv("XSC_REWRITE", "0", 1);
	/* the runtime from the start: its first kinds run before the
	 * workload's first thread, natively otherwise (start.c, go_live) */
	if (way > 0)
		setenv("XSC_START", "now", 1);
	pid = bench_spawn(argv, -1, &fd);
	unsetenv("XSC_REWRITE");
	unsetenv("XSC_START");
	if (pid < 0)
		return -1;
	bench_read_all(fd, out, sizeof(out), 120000);
	close(fd);
	int st = 0;
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "xsc bench calls: the workload failed (%s)\n", way_name[way]);
		return -1;
	}
	int j = 0;
	for (char *l = strtok(out, "\n"); l && j < NKIND; l = strtok(NULL, "\n"), j++) {
		char name[48];
		double v;
		if (sscanf(l, "%47s %lf", name, &v) != 2)
			return -1;
		if (!k[j].name[0])
			snprintf(k[j].name, sizeof(k[j].name), "%s", name);
		if (strcmp(k[j].name, name))
			return -1;
		if (k[j].ns[way] == 0 || v < k[j].ns[way])
			k[j].ns[way] = v;
	}
	*nk = j;
	return j == NKIND ? 0 : -1;
}

int xsc_bench_calls(int argc, char **argv)
{
	char self[1024], prog[1100], *slash;
	struct bench_opts o;
	struct kind k[NKIND];
	int rc, nk = 0;
	ssize_t len;

	if (!bench_args(argc, argv, &o, usage, &rc))
		return rc;
	if (!o.rounds)
		o.rounds = o.quick ? 1 : 3;
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len <= 0)
		return 1;
	self[len] = 0;
	snprintf(prog, sizeof(prog), "%s", self);
	slash = strrchr(prog, '/');
	snprintf(slash + 1, sizeof(prog) - (size_t)(slash + 1 - prog), "examples/calls/xsc-calls");
	if (access(prog, X_OK)) {
		fprintf(stderr, "xsc bench calls: %s not built (examples/calls)\n", prog);
		return 2;
	}
	char lib[1024];
	if (xsc_run_find_preload(lib, sizeof(lib)) < 0) {
		fprintf(stderr, "xsc bench calls: libxsc-preload.so not built "
			"(sanitizer builds leave it out)\n");
		return 2;
	}
	memset(k, 0, sizeof(k));
	long iters = o.quick ? 20000 : 200000;
	int64_t t0 = bench_now_ns();
	for (int r = 0; r < o.rounds; r++) {
		bench_progress("bench calls", r, o.rounds, t0);
		for (int w = 0; w < NWAY; w++)
			if (run_way(self, prog, w, iters, k, &nk) < 0)
				return 1;
	}
	bench_progress_done();

	FILE *f = bench_csv_open(&o, "calls", "call,native_ns,sud_ns,rewritten_ns,"
				 "sud_over_native,rewritten_over_native");
	printf("ns per call, best of %d rounds of %ld calls (xsc bench calls)\n",
	       o.rounds, iters);
	printf("  %-24s %9s %9s %9s   %9s %9s\n", "call", way_name[0], way_name[1],
	       way_name[2], "sud/nat", "rewr/nat");
	for (int j = 0; j < nk; j++) {
		double a = k[j].ns[0], b = k[j].ns[1], c = k[j].ns[2];
		printf("  %-24s %9.1f %9.1f %9.1f   %9.2f %9.2f\n", k[j].name, a, b, c,
		       b / a, c / a);
		if (f)
			fprintf(f, "%s,%.1f,%.1f,%.1f,%.3f,%.3f\n", k[j].name, a, b, c,
				b / a, c / a);
	}
	printf("target: a rewritten non-blocking call within 2x of native "
	       "(getppid: %.2fx)\n", k[0].ns[2] / k[0].ns[0]);
	int ok = bench_csv_plot(&o, "calls", f,
				 "set title 'ns per libc call: native, xsc run with traps only, "
				 "with rewritten sites'\n"
				 "set style data histograms\nset style fill solid 0.8\n"
				 "set logscale y\nset ylabel 'ns per call'\nset xtics rotate by -30\n"
				 "set datafile separator ','\nset key top left\n"
				 "plot DIR.'/calls.csv' using 2:xtic(1) title 'native', '' using 3 "
				 "title 'xsc run, SUD only', '' using 4 title 'xsc run, rewritten'") == 0;
	printf("wrote %s/calls.csv and %s/calls.png\n", o.out, o.out);
	return ok ? 0 : 1;
}
