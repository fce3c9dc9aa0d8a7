/*
 * all.c - `xsc bench all`: every experiment built into this binary, one
 * after the other, then DIR/REPORT.md with each table and plot beside the
 * paper figure it reproduces and the paper's own numbers.
 *
 * The experiments are the list in experiments.c, which `xsc bench` reads
 * too; one that is not built is skipped with a note in the report.  Each runs in a child process, so
 * a crash or a leak in one cannot take the others down or colour their
 * numbers, with its stdout captured to DIR/<name>.txt (and echoed here);
 * stderr to DIR/<name>.err (both echoed here and quoted in the report);
 * its CSV and PNG are the ones it writes itself.  The host profile the
 * routes were chosen by (DIR/host-profile.txt) heads the report.  An experiment exiting 2
 * could not run here (a missing tool or binary; it says which): it is
 * reported, not counted as a failure.  --quick, --out and
 * --rounds are passed through.  XSC_BENCH_SKIP=NAME,... leaves some out
 * (the report says so).  `trace` takes positional arguments and
 * writes results/trace.csv under the current directory: it gets its own
 * argument list, and the report says where its CSV went.
 *
 */
#include <errno.h>
#include <stdbool.h>
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

struct outcome {
	int rc;			/* exit status; -1 not built, -2 left out
				   (XSC_BENCH_SKIP) */
	double secs;
};

/* Whether XSC_BENCH_SKIP (names separated by commas or spaces) names
 * experiment `name`: left out of this run, and the report says so. */
static bool skip_listed(const char *name)
{
	const char *l = getenv("XSC_BENCH_SKIP");
	size_t n = strlen(name);

	while (l && *l) {
		size_t k = strcspn(l, ", ");
		if (k == n && !strncmp(l, name, n))
			return true;
		l += k + (l[k] != 0);
	}
	return false;
}

/* Runs one experiment in a child with stdout in DIR/<name>.txt. */
static int run_one(const struct bench_opts *o, const struct bench_exp *e, int rounds)
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

/* A CSV as a markdown table (at most 100 rows; a row of http.csv, with
 * its text columns of the calls behind the kernel entries, is over 1 KiB). */
static bool csv_table(FILE *out, const char *path)
{
	char line[8192];
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
	if (bench_profile_save(o) == 0) {
		fprintf(out, "\nHost profile: the costs xsc's routes were chosen by in "
			"this run (`host-profile.txt`, beside each CSV; `xsc info` "
			"prints it):\n\n");
		copy_file(out, bench_path(o, "host-profile.txt", path, sizeof(path)), true);
	}
	fprintf(out, "\nTimes are wall-clock or TSC based: this machine has no "
		"hardware performance counters.  Every experiment interleaves its "
		"configurations and keeps the best of N rounds; ratios inside one "
		"run are what to compare with the papers, not absolute numbers.\n");
	for (int i = 0; i < bench_nexps; i++) {
		const struct bench_exp *e = &bench_exps[i];
		fprintf(out, "\n## %s\n\nReproduces: %s.\n\n", e->name, e->figure);
		if (res[i].rc == -1) {
			fprintf(out, "_Not built into this binary: skipped._\n\n"
				"Paper: %s\n", e->paper);
			continue;
		}
		if (res[i].rc == -2) {
			fprintf(out, "_Skipped: named in XSC_BENCH_SKIP._\n\n"
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
	struct outcome res[bench_nexps];
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
	for (int k = 0; k < bench_nexps; k++) {
		res[k].rc = -1;
		res[k].secs = 0;
		if (!bench_exps[k].fn) {
			printf("== %s: not built, skipped\n", bench_exps[k].name);
			continue;
		}
		if (skip_listed(bench_exps[k].name)) {
			res[k].rc = -2;
			printf("== %s: skipped (XSC_BENCH_SKIP)\n", bench_exps[k].name);
			continue;
		}
		fprintf(stderr, "xsc bench all: [%d/%d] %s (%.0fs elapsed)\n", k + 1,
			bench_nexps, bench_exps[k].name, (bench_now_ns() - t0) / 1e9);
		int64_t s = bench_now_ns();
		res[k].rc = run_one(&o, &bench_exps[k], rounds);
		res[k].secs = (bench_now_ns() - s) / 1e9;
		char p[256], txt[512];
		snprintf(p, sizeof(p), "%s.txt", bench_exps[k].name);
		printf("== %s (exit %d, %.1f s)\n", bench_exps[k].name, res[k].rc, res[k].secs);
		copy_file(stdout, bench_path(&o, p, txt, sizeof(txt)), false);
		snprintf(p, sizeof(p), "%s.err", bench_exps[k].name);
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
