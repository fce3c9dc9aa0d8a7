/*
 * all.c - `xsc bench all`: every experiment built into this binary, one
 * after the other, then DIR/REPORT.md with each table and plot beside the
 * paper figure it reproduces and the paper's own numbers.
 *
 * Experiments are linked weakly (as in tools/xsc.c): one that is not built
 * is skipped with a note in the report.  Each runs in a child process, so
 * a crash or a leak in one cannot take the others down or colour their
 * numbers, with its stdout captured to DIR/<name>.txt (and echoed here);
 * stderr to DIR/<name>.err (both echoed here and quoted in the report);
 * its CSV and PNG are the ones it writes itself.  An experiment exiting 2
 * could not run here (a missing tool or binary; it says which): it is
 * reported, not counted as a failure.  --quick, --out and
 * --rounds are passed through.  `trace` takes positional arguments and
 * writes results/trace.csv under the current directory: it gets its own
 * argument list, and the report says where its CSV went.
 *
 * The paper quotes below are copied from the seed papers (shared/seeds):
 * FlexSC (OSDI'10), System Call Clustering, Rubini's "Kernel System
 * Calls" (Linux Magazine), WSC/CEFOS.  Update them together with the
 * experiment they sit beside.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

int xsc_bench_all(int argc, char **argv);

#define WEAK_BENCH(name) int xsc_bench_##name(int argc, char **argv) __attribute__((weak))
WEAK_BENCH(null);
WEAK_BENCH(switch);
WEAK_BENCH(pollution);
WEAK_BENCH(readcost);
WEAK_BENCH(modeswitch);
WEAK_BENCH(wscmodel);
WEAK_BENCH(copy);
WEAK_BENCH(http);
WEAK_BENCH(sensitivity);
WEAK_BENCH(transparent);
WEAK_BENCH(apache);
WEAK_BENCH(oltp);
#ifdef XSC_HAVE_TRACE	/* as in tools/xsc.c */
int xsc_bench_trace(int argc, char **argv);
#else
WEAK_BENCH(trace);
#endif

struct exp {
	const char *name;		/* as `xsc bench <name>` */
	int (*fn)(int, char **);
	const char *figure;		/* what it reproduces */
	const char *paper;		/* the paper's numbers, quoted */
};

static const struct exp exps[] = {
	{ "mode-switch", xsc_bench_modeswitch,
	  "System Call Clustering, Table 1 (CPU cycles for entry and exit); FlexSC section 2.1",
	  "Clustering (Pentium 2, 266 MHz, Linux 2.4.2; rdtscl overhead of 33 cycles "
	  "subtracted): system call entry 140, exit 189 cycles; procedure call entry 3, "
	  "exit 4 cycles.  \"more than 20 times the cost of regular procedure calls\".\n"
	  "FlexSC (Core i7): \"79 cycles and 71 cycles\" to enter and leave; \"the total "
	  "round-trip time for the gettsc system call is modest at 150 cycles\"." },
	{ "null", xsc_bench_null,
	  "FlexSC Figures 9 and 10 (getppid, batched); WSC Figure 3 (getpid vs threshold)",
	  "FlexSC: \"Executing a single exception-less system call on a single core is "
	  "43% slower than a synchronous call.  However, when batching 2 or more calls "
	  "there is no overhead, and when batching 32 or more calls, the execution of each "
	  "call is up to 130% faster than a synchronous call.\"  Remote core: \"can be "
	  "more than 10 times slower than a synchronous system call\" for a single call.\n"
	  "WSC: \"we observe the effect of WSC when the threshold becomes 2 for Pentium4 "
	  "2.53GHz and Intel Core Duo 1.66GHz and 4 for Celeron 500 MHz\"." },
	{ "wsc-model", xsc_bench_wscmodel,
	  "WSC Table 2 and eq. (5) (section 3.1)",
	  "WSC Table 2, clocks (Tsys = lmbench null call of Table 1):\n"
	  "| processor | Tgen | Tsched | Tsync | Treq | Tsys | M |\n"
	  "|---|---|---|---|---|---|---|\n"
	  "| Celeron 500M | 63 | 31 | 21 | 31 | 315 | 3.4 |\n"
	  "| Pentium4 2.53G | 110 | 43 | 27 | 31 | 1090 | 1.24 |\n"
	  "| Intel Core Duo 1.62G | 61 | 30 | 19 | 29 | 464 | 1.42 |\n" },
	{ "read-cost", xsc_bench_readcost,
	  "Rubini, \"Kernel System Calls\", Table One (clock ticks for an empty read())",
	  "500 MHz Pentium, read(fd, buf, 0), user space / kernel space ticks: "
	  "/proc 570/519, net-pty 507/460, local-pty 474/424, /dev/hda 411/361, "
	  "/proc/sys 402/351, nfs 353/303, ext2fs 329/278, socket 320/270, "
	  "/dev/zero 324/273, /dev/null 313/262.  \"my CPU has an overhead of 50 "
	  "ticks (0.1usec) in crossing the user/kernel threshold twice\"." },
	{ "pollution", xsc_bench_pollution,
	  "FlexSC Figures 1-3 (user-mode IPC around and between pwrite calls)",
	  "\"Xalan has a baseline user-mode IPC of 1.46, but the IPC degrades by up to 65% "
	  "when executing a pwrite every 1,000-2,000 instructions\"; \"SPEC-JBB ... still "
	  "observes a 45% degradation\"; \"it takes up to 14,000 cycles of execution before "
	  "the IPC of this application returns to its previous level\" (Figure 1); direct "
	  "cost dominates below 2,000 instructions between calls, indirect (pollution) "
	  "from 2,000 to 100,000; \"degradation between 20% and 60%\" at server-workload "
	  "rates." },
	{ "switch", xsc_bench_switch,
	  "no paper figure: the user-level switch under FlexSC's M-on-N threads",
	  "FlexSC switches user threads in user space (section 4); no number is given." },
	{ "trace", xsc_bench_trace,
	  "System Call Clustering, section 3 (strace-based profiling)",
	  "The paper profiles with strace; it gives no tracing-overhead figure." },
	{ "copy", xsc_bench_copy,
	  "System Call Clustering, Table 3 and Figure 8 (copy with multi-calls)",
	  "Table 3, block size 4096, cycles x10^6 (original / multi-call / looped): "
	  "80K 0.3400 / 0.3264 (4%) / 0.3185 (6.3%); 925K 4.371 / 4.235 (3.1%) / 4.028 "
	  "(7.8%); 2.28M 10.93 / 10.65 (2.6%) / 10.37 (5.2%)." },
	{ "http", xsc_bench_http,
	  "FlexSC Figures 11 and 13 (Apache throughput and latency)",
	  "\"FlexSC achieves up to 116% throughput improvement\" (Apache, 2 and 4 cores)." },
	{ "sensitivity", xsc_bench_sensitivity,
	  "FlexSC Figure 16 (throughput vs syscall entries)",
	  "\"Uni-core performance approaches its best with 200 to 250 syscall entries "
	  "(3 to 4 syscall pages), while quad-core execution starts to plateau with 300 "
	  "to 400 syscall entries\"." },
	{ "transparent", xsc_bench_transparent,
	  "FlexSC section 4 (unmodified binaries)",
	  "FlexSC runs unmodified Apache, MySQL and BIND; no separate overhead figure." },
	{ "apache", xsc_bench_apache,
	  "FlexSC Figures 11 and 13 (unmodified Apache mpm_worker, uni-core)",
	  "Apache 2.2, 1 core: \"With system call batching alone (1 core case), we "
	  "observe a throughput improvement of up to 86%\"; \"except for a very low "
	  "number of concurrent requests, FlexSC outperforms Linux/NPTL by a wide "
	  "margin\"." },
	{ "oltp", xsc_bench_oltp,
	  "FlexSC Figures 14 and 15 (MySQL, sysbench OLTP)",
	  "MySQL 5.5 with InnoDB, sysbench OLTP: \"MySQL by up to 40%\"." },
};
#define NEXP ((int)(sizeof(exps) / sizeof(exps[0])))

struct outcome {
	int rc;			/* exit status; -1 not built */
	double secs;
};

/* Runs one experiment in a child with stdout in DIR/<name>.txt. */
static int run_one(const struct bench_opts *o, const struct exp *e, int rounds)
{
	char txt[512], r[16], *av[8];
	int ac = 0;

	bench_path(o, e->name, txt, sizeof(txt) - 4);
	strcat(txt, ".txt");
	av[ac++] = (char *)e->name;
	if (!strcmp(e->name, "trace")) {
		av[ac++] = o->quick ? "20000" : "100000";
		av[ac++] = o->quick ? "3" : "5";
	} else {
		if (o->quick)
			av[ac++] = "--quick";
		av[ac++] = "--out";
		av[ac++] = (char *)o->out;
		if (rounds) {
			snprintf(r, sizeof(r), "%d", rounds);
			av[ac++] = "--rounds";
			av[ac++] = r;
		}
	}
	av[ac] = NULL;
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		int fd = open(txt, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0 || dup2(fd, 1) < 0)
			_exit(1);
		strcpy(txt + strlen(txt) - 4, ".err");
		fd = open(txt, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0 || dup2(fd, 2) < 0)
			_exit(1);
		int rc = e->fn(ac, av);
		fflush(stdout);
		_exit(rc & 0xff);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Copies file path into out, inside a fenced block when fence is set. */
static bool copy_file(FILE *out, const char *path, bool fence)
{
	char line[1024];
	FILE *f = fopen(path, "r");

	if (!f)
		return false;
	if (fence)
		fprintf(out, "```\n");
	while (fgets(line, sizeof(line), f))
		fputs(line, out);
	if (fence)
		fprintf(out, "```\n");
	fclose(f);
	return true;
}

/* A CSV as a markdown table (at most 100 rows). */
static bool csv_table(FILE *out, const char *path)
{
	char line[1024];
	int n = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f) && n <= 100) {
		line[strcspn(line, "\r\n")] = 0;
		fputs("| ", out);
		for (char *p = line; *p; p++)
			fputs(*p == ',' ? " | " : (char[2]){ *p, 0 }, out);
		fputs(" |\n", out);
		if (n++ == 0) {
			fputs("|", out);
			for (char *p = line; ; p++) {
				fputs("---|", out);
				p = strchr(p, ',');
				if (!p)
					break;
			}
			fputs("\n", out);
		}
	}
	fclose(f);
	return true;
}

static void machine(FILE *out)
{
	struct utsname u;
	char line[256], model[128] = "?";
	FILE *f = fopen("/proc/cpuinfo", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
			snprintf(model, sizeof(model), "%s", strchr(line, ':') + 2);
			model[strcspn(model, "\n")] = 0;
			break;
		}
	if (f)
		fclose(f);
	uname(&u);
	time_t now = time(NULL);
	fprintf(out, "Machine: %s, %d cores online, %s %s %s.  Generated %s", model,
		bench_ncpu(), u.sysname, u.release, u.machine, ctime(&now));
}

static int write_report(const struct bench_opts *o, const struct outcome *res,
			const char *cmd)
{
	char path[512], p2[512];
	FILE *out = fopen(bench_path(o, "REPORT.md", path, sizeof(path)), "w");

	if (!out) {
		fprintf(stderr, "xsc bench all: cannot write %s: %s\n", path, strerror(errno));
		return -1;
	}
	fprintf(out, "# xsc experiments against the papers\n\n`%s`%s\n\n", cmd,
		o->quick ? " (quick mode: short runs, noisier figures)" : "");
	machine(out);
	fprintf(out, "\nTimes are wall-clock or TSC based: this machine has no "
		"hardware performance counters.  Every experiment interleaves its "
		"configurations and keeps the best of N rounds; ratios inside one "
		"run are what to compare with the papers, not absolute numbers.\n");
	for (int i = 0; i < NEXP; i++) {
		const struct exp *e = &exps[i];
		fprintf(out, "\n## %s\n\nReproduces: %s.\n\n", e->name, e->figure);
		if (res[i].rc == -1) {
			fprintf(out, "_Not built into this binary: skipped._\n\n"
				"Paper: %s\n", e->paper);
			continue;
		}
		fprintf(out, "`xsc bench %s` exited %d after %.1f s.\n\n", e->name,
			res[i].rc, res[i].secs);
		snprintf(p2, sizeof(p2), "%s.png", e->name);
		bench_path(o, p2, path, sizeof(path));
		bool png = access(path, R_OK) == 0;
		/* paper on the left, our plot on the right */
		fprintf(out, "<table><tr><td width=\"45%%\" valign=\"top\">\n\n"
			"**Paper** (%s)\n\n%s\n\n</td><td valign=\"top\">\n\n", e->figure,
			e->paper);
		if (png)
			fprintf(out, "**This run**\n\n![%s](%s)\n", e->name, p2);
		else
			fprintf(out, "**This run**: no plot (a table-only experiment, or "
				"gnuplot missing: apt-get install gnuplot-nox)\n");
		fprintf(out, "\n</td></tr></table>\n\n");
		snprintf(p2, sizeof(p2), "%s.txt", e->name);
		fprintf(out, "Output:\n\n");
		if (!copy_file(out, bench_path(o, p2, path, sizeof(path)), true))
			fprintf(out, "(no output captured)\n");
		snprintf(p2, sizeof(p2), "%s.err", e->name);
		struct stat st;
		if (!stat(bench_path(o, p2, path, sizeof(path)), &st) && st.st_size > 0) {
			fprintf(out, "\nstderr:\n\n");
			copy_file(out, path, true);
		}
		snprintf(p2, sizeof(p2), "%s.csv", e->name);
		if (!strcmp(e->name, "trace"))
			snprintf(path, sizeof(path), "results/trace.csv");
		else
			bench_path(o, p2, path, sizeof(path));
		fprintf(out, "\nCSV (`%s`):\n\n", path);
		if (!csv_table(out, path))
			fprintf(out, "(no CSV: the run failed or wrote none)\n");
	}
	return fclose(out) ? -1 : 0;
}

static const char usage[] =
	"usage: xsc bench all [--quick] [--rounds N] [--out DIR]\n"
	"  Runs every experiment built into this binary (each in a child process)\n"
	"  and writes DIR/REPORT.md beside the per-experiment CSV, PNG and text.\n";

int xsc_bench_all(int argc, char **argv)
{
	struct bench_opts o;
	struct outcome res[NEXP];
	char cmd[256];
	int rc, failed = 0, skipped = 0;
	/* bench_parse fills in its default; pass only an explicit --rounds */
	int rounds = 0;

	if (!bench_args(argc, argv, &o, usage, &rc))
		return rc;
	for (int a = 1; a + 1 < argc; a++)
		if (!strcmp(argv[a], "--rounds"))
			rounds = o.rounds;
	mkdir(o.out, 0755);
	int64_t t0 = bench_now_ns();
	for (int k = 0; k < NEXP; k++) {
		res[k].rc = -1;
		res[k].secs = 0;
		if (!exps[k].fn) {
			printf("== %s: not built, skipped\n", exps[k].name);
			continue;
		}
		fprintf(stderr, "xsc bench all: [%d/%d] %s (%.0fs elapsed)\n", k + 1,
			NEXP, exps[k].name, (bench_now_ns() - t0) / 1e9);
		int64_t s = bench_now_ns();
		res[k].rc = run_one(&o, &exps[k], rounds);
		res[k].secs = (bench_now_ns() - s) / 1e9;
		char p[256], txt[512];
		snprintf(p, sizeof(p), "%s.txt", exps[k].name);
		printf("== %s (exit %d, %.1f s)\n", exps[k].name, res[k].rc, res[k].secs);
		copy_file(stdout, bench_path(&o, p, txt, sizeof(txt)), false);
		snprintf(p, sizeof(p), "%s.err", exps[k].name);
		copy_file(stderr, bench_path(&o, p, txt, sizeof(txt)), false);
		/* 2 = could not run here (usage, missing tool or binary): the
		 * experiment said why; anything else non-zero is a failure */
		skipped += res[k].rc == 2;
		failed += res[k].rc != 0 && res[k].rc != 2;
	}
	snprintf(cmd, sizeof(cmd), "xsc bench all%s --out %s", o.quick ? " --quick" : "",
		 o.out);
	if (write_report(&o, res, cmd))
		return 1;
	printf("wrote %s/REPORT.md (%d failed, %d could not run here)\n", o.out,
	       failed, skipped);
	return failed ? 1 : 0;
}
