/*
 * oltp.c - `xsc bench oltp` (FlexSC Figures 14 and 15: MySQL with
 * sysbench OLTP, throughput and 95th-percentile latency vs threads).
 *
 * Debian's MariaDB (mariadbd, InnoDB) on a private data directory made by
 * mariadb-install-db, on a unix socket only (--skip-networking), never
 * through systemd; as root it runs as mysql (--user=mysql, so it drops
 * privileges with setuid, as the packaged service does).  sysbench's
 * tables (4 x 10,000 rows; --quick: 2 x 2,000) are prepared once against
 * the native server.  Then, per round, the server is started natively and
 * under `xsc run`, in turn, on the same data; sysbench oltp_read_only and
 * oltp_read_write run against it at 1, 4, 16 and 64 threads (--quick: 4
 * and 64) for --duration seconds each (default 5; --quick 2).  The server
 * is pinned to core 0 (under xsc run: one vcpu), sysbench to core 1.
 *
 * Per run: transactions/s, the 95th-percentile latency, errors sysbench
 * ignored (deadlocks), and the server's CPU time per transaction (utime +
 * stime of the process tree, from /proc).  Best of the rounds, metric by
 * metric.  Target: oltp_read_only at 64 threads, transactions/s
 * >= 1.1x native with no errors.
 *
 * Kernel entries per transaction (entries.c): in the last round, after
 * the timed runs of each server, one more sysbench run per workload and
 * thread count with the system call entries of the server's threads
 * counted by the kernel, divided by the transactions of that run, with
 * the calls that make most of them.  It is a run of its own because
 * recording an entry costs time; XSC_BENCH_ENTRIES=off leaves it out.
 *
 * Missing mariadb-server or sysbench: a message naming the package, exit 2.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "entries.h"
#include "harness.h"

int xsc_run_find_preload(char *out, size_t n);	/* tools/run.c */

static const char usage[] =
	"usage: xsc bench oltp [--quick] [--rounds N] [--out DIR] [--duration SEC]\n"
	"  MariaDB with sysbench oltp_read_only and oltp_read_write, natively vs\n"
	"  under `xsc run`, at 1..64 client threads (--quick: 4, 64); server on\n"
	"  core 0, sysbench on core 1; best of N rounds (default 2) (FlexSC\n"
	"  Figures 14-15), then one more run of each with the server's kernel\n"
	"  entries per transaction counted (XSC_BENCH_ENTRIES=tracefs|strace|off).\n"
	"  Writes DIR/oltp.csv and DIR/oltp-*.png.  Target: oltp_read_only at 64\n"
	"  threads >= 1.1x native transactions/s.\n";

enum { NATIVE, XRUN, NSRV };
static const char *const srv_name[NSRV] = { "mariadb", "mariadb+xsc-run" };
enum { RO, RW, NWL };
static const char *const wl_name[NWL] = { "oltp_read_only", "oltp_read_write" };
#define MAXT 4

struct res {
	double tps, p95_ms, cpu_us;
	long errors, trans;
	bool have;
};

struct ctx {
	struct bench_opts o;
	int dur, tables, rows;
	char dir[64], sock[128], self[PATH_MAX];
	const char *user;	/* --user for mariadbd, NULL: the caller's */
	int srv_cpu, cli_cpu;
};

static int run_quiet(char *const argv[], int cpu, char *out, size_t len, int timeout_s)
{
	int fd = -1, st = 0;
	pid_t pid = bench_spawn(argv, cpu, out ? &fd : NULL);

	if (pid < 0)
		return -1;
	if (out) {
		bench_read_all(fd, out, len, timeout_s * 1000);
		close(fd);
	}
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static bool sql(const struct ctx *c, const char *stmt)
{
	char *argv[] = { "mariadb", "-uroot", "-S", (char *)c->sock, "-e", (char *)stmt, NULL };
	return run_quiet(argv, -1, NULL, 0, 30) == 0;
}

/* Whether the server answers "SELECT 1", the client's output (its
 * "Can't connect" while the server starts) to /dev/null. */
static bool answers(const struct ctx *c)
{
	char *argv[] = { "mariadb", "-uroot", "-S", (char *)c->sock, "-e", "SELECT 1", NULL };
	int st = 0;
	pid_t pid = fork();

	if (pid == 0) {
		int nul = open("/dev/null", O_RDWR);
		dup2(nul, 0);
		dup2(nul, 1);
		dup2(nul, 2);
		execvp(argv[0], argv);
		_exit(127);
	}
	return pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && !WEXITSTATUS(st);
}

static pid_t start_server(const struct ctx *c, bool xrun)
{
	char datadir[128], elog[160], ulog[128], sockopt[160], eout[160];
	char *argv[20], **a = argv;
	pid_t pid;

	snprintf(datadir, sizeof(datadir), "--datadir=%s/data", c->dir);
	snprintf(sockopt, sizeof(sockopt), "--socket=%s", c->sock);
	snprintf(elog, sizeof(elog), "--log-error=%s/%s.err", c->dir, srv_name[xrun]);
	snprintf(ulog, sizeof(ulog), "--user=%s", c->user ? c->user : "");
	/* what mariadbd says on stderr before its log is open (a warning
	 * about the open-files limit) goes to a file of its own: sh execs
	 * the command with stderr on it, the pid stays the server's */
	snprintf(eout, sizeof(eout), "%s/%s.stderr", c->dir, srv_name[xrun]);
	*a++ = "/bin/sh";
	*a++ = "-c";
	*a++ = "f=$1; shift; exec \"$@\" 2>>\"$f\"";
	*a++ = "sh";
	*a++ = eout;
	if (xrun) {
		*a++ = (char *)c->self;
		*a++ = "run";
		*a++ = "--";
	}
	*a++ = "/usr/sbin/mariadbd";
	*a++ = "--no-defaults";
	*a++ = datadir;
	*a++ = sockopt;
	*a++ = "--skip-networking";
	*a++ = "--innodb-buffer-pool-size=256M";
	*a++ = "--max-connections=300";
	*a++ = elog;
	if (c->user)
		*a++ = ulog;
	*a = NULL;
	pid = bench_spawn(argv, c->srv_cpu, NULL);
	for (int i = 0; pid > 0 && i < 300; i++) {	/* up to 30 s, silently */
		if (answers(c))
			return pid;
		if (waitpid(pid, NULL, WNOHANG) == pid)
			break;
		usleep(100000);
	}
	sql(c, "SELECT 1");	/* once more, its error on stderr */
	fprintf(stderr, "bench oltp: %s did not start; its log: %s/%s.err, its stderr: %s\n",
		srv_name[xrun], c->dir, srv_name[xrun], eout);
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	return -1;
}

/* SIGTERM (a clean shutdown), up to 60 s. */
static int stop_server(pid_t pid)
{
	int st;

	if (pid <= 0)
		return -1;
	kill(pid, SIGTERM);
	for (int i = 0; i < 600; i++) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
		usleep(100000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return -1;
}

static int sysbench(const struct ctx *c, int wl, const char *cmd, int threads,
		    char *out, size_t len)
{
	char sock[160], tables[32], rows[32], th[32], tm[32];
	char *argv[] = { "sysbench", (char *)wl_name[wl], "--db-driver=mysql", sock,
			 "--mysql-user=root", "--mysql-db=sbtest", tables, rows, th, tm,
			 "--percentile=95", (char *)cmd, NULL };

	snprintf(sock, sizeof(sock), "--mysql-socket=%s", c->sock);
	snprintf(tables, sizeof(tables), "--tables=%d", c->tables);
	snprintf(rows, sizeof(rows), "--table-size=%d", c->rows);
	snprintf(th, sizeof(th), "--threads=%d", threads);
	snprintf(tm, sizeof(tm), "--time=%d", c->dur);
	return run_quiet(argv, c->cli_cpu, out, len, c->dur + 120);
}

/* "transactions:  N  (X per sec.)", "95th percentile:  Y", "ignored errors: E" */
static int parse(const char *out, struct res *r)
{
	const char *p = strstr(out, "transactions:"), *q = strstr(out, "95th percentile:"),
		   *e = strstr(out, "ignored errors:");

	if (!p || !q)
		return -1;
	r->trans = strtol(p + strlen("transactions:"), NULL, 10);
	if (!(p = strchr(p, '(')))
		return -1;
	r->tps = strtod(p + 1, NULL);
	r->p95_ms = strtod(q + strlen("95th percentile:"), NULL);
	r->errors = e ? strtol(e + strlen("ignored errors:"), NULL, 10) : 0;
	return r->tps > 0 ? 0 : -1;
}

static void keep(struct res *b, const struct res *r)
{
	if (!b->have) {
		*b = *r;
		b->have = true;
		return;
	}
	if (r->tps > b->tps)
		b->tps = r->tps;
	if (r->p95_ms < b->p95_ms)
		b->p95_ms = r->p95_ms;
	if (r->cpu_us < b->cpu_us)
		b->cpu_us = r->cpu_us;
	if (r->errors < b->errors)
		b->errors = r->errors;
}

static int prepare(struct ctx *c)
{
	char cmd[600], out[4096];
	pid_t pid;
	int ret = -1;

	snprintf(c->dir, sizeof(c->dir), "/tmp/xsc-bench-oltp.XXXXXX");
	if (!mkdtemp(c->dir))
		return -1;
	snprintf(c->sock, sizeof(c->sock), "%s/sock", c->dir);
	if (c->user) {	/* mariadbd drops to mysql: it must own the directory */
		struct passwd *pw = getpwnam(c->user);
		if (!pw || chown(c->dir, pw->pw_uid, pw->pw_gid)) {
			fprintf(stderr, "bench oltp: no user %s\n", c->user);
			return -1;
		}
	}
	snprintf(cmd, sizeof(cmd), "mariadb-install-db --no-defaults --datadir=%s/data "
		 "%s%s --auth-root-authentication-method=normal --skip-test-db "
		 ">%s/install.log 2>&1", c->dir, c->user ? "--user=" : "",
		 c->user ? c->user : "", c->dir);
	if (system(cmd) != 0) {
		fprintf(stderr, "bench oltp: mariadb-install-db failed; see %s/install.log\n",
			c->dir);
		return -1;
	}
	pid = start_server(c, false);
	if (pid < 0)
		return -1;
	if (sql(c, "CREATE DATABASE sbtest") &&
	    sysbench(c, RW, "prepare", 4, out, sizeof(out)) == 0)
		ret = 0;
	else
		fprintf(stderr, "bench oltp: sysbench prepare failed:\n%s\n", out);
	stop_server(pid);
	return ret;
}

/* In ent[w][k], the kernel entries per transaction of server pid (srv)
 * under each workload and thread count, each in a sysbench run of its
 * own.  -1 when sysbench failed; when no count can be started, every
 * figure is n/a with the reason. */
static int count_entries(const struct ctx *c, pid_t pid, int srv, const int *th, int nt,
			 struct bench_per_op ent[NWL][MAXT], const char **method)
{
	char out[16384];

	for (int w = 0; w < NWL; w++)
		for (int k = 0; k < nt; k++) {
			struct bench_counter *bc;
			struct bench_entries e;
			struct res res = { 0 };
			if (bench_counter_start(&bc, pid, &e)) {
				for (int ww = 0; ww < NWL; ww++)
					for (int kk = 0; kk < nt; kk++)
						bench_per_op_na(e.why, &ent[ww][kk]);
				return 0;
			}
			int rc = sysbench(c, w, "run", th[k], out, sizeof(out));
			bench_counter_stop(bc, &e);
			if (rc != 0 || parse(out, &res)) {
				fprintf(stderr, "bench oltp: %s %s at %d threads failed while "
					"counting entries (exit %d):\n%.2000s\n", srv_name[srv],
					wl_name[w], th[k], rc, out);
				return -1;
			}
			bench_per_op(&e, (double)res.trans, &ent[w][k]);
			*method = e.method;
		}
	return 0;
}

/* What the rounds found: best[w][s][k] of workload w on server s at th[k]
 * client threads, and the kernel entries per transaction (counted with
 * method; NULL: not counted). */
struct results {
	const int *th;
	int nt;
	struct res best[NWL][NSRV][MAXT];
	struct bench_per_op ent[NSRV][NWL][MAXT];
	const char *method;
};

/* Options into c (ours, --duration, taken out of argv before
 * bench_parse sees it); -1 to go on, else the exit status. */
static int parse_args(struct ctx *c, int argc, char **argv)
{
	bool rounds_given = false;
	int i;

	for (i = 1; i < argc; i++)	/* our own option first */
		if (!strcmp(argv[i], "--duration") && i + 1 < argc) {
			c->dur = atoi(argv[i + 1]);
			memmove(&argv[i], &argv[i + 2], (size_t)(argc - i - 1) * sizeof(*argv));
			argc -= 2;
			break;
		}
	for (int k = 1; k < argc; k++)
		rounds_given |= !strcmp(argv[k], "--rounds");
	i = bench_parse(argc, argv, &c->o, usage);
	if (i == -2)
		return 0;
	if (i < 0 || i < argc || c->dur < 0 || c->dur > 600) {
		fprintf(stderr, "xsc bench oltp: bad arguments\n%s", usage);
		return 2;
	}
	if (!rounds_given)
		c->o.rounds = 2;
	if (!c->dur)
		c->dur = c->o.quick ? 2 : 5;
	c->tables = c->o.quick ? 2 : 4;
	c->rows = c->o.quick ? 2000 : 10000;
	return -1;
}

/* The programs the experiment runs: 0, or 2 with a message naming the
 * package that is missing. */
static int find_programs(void)
{
	char lib[1200];

	if (access("/usr/sbin/mariadbd", X_OK) || system("command -v mariadb-install-db "
							 ">/dev/null 2>&1")) {
		fprintf(stderr, "xsc bench oltp: mariadbd not found; install the Debian "
			"package mariadb-server (apt-get install mariadb-server) or run "
			"`make demo`\n");
		return 2;
	}
	if (system("command -v sysbench >/dev/null 2>&1")) {
		fprintf(stderr, "xsc bench oltp: sysbench not found; install the Debian "
			"package sysbench (apt-get install sysbench) or run `make demo`\n");
		return 2;
	}
	if (xsc_run_find_preload(lib, sizeof(lib)) < 0) {
		fprintf(stderr, "xsc bench oltp: libxsc-preload.so not built (ASan "
			"build?) or installed\n");
		return 2;
	}
	return 0;
}

/* The timed runs of server s (started as pid): every workload at every
 * thread count, each kept in R->best if it beats the rounds before.
 * -1 (the server stopped) when a sysbench run failed. */
static int timed_runs(const struct ctx *c, pid_t pid, int s, struct results *R)
{
	char out[16384];

	for (int w = 0; w < NWL; w++)
		for (int k = 0; k < R->nt; k++) {
			struct res res = { 0 };
			long a = bench_tree_ticks(pid);
			int rc = sysbench(c, w, "run", R->th[k], out, sizeof(out));
			long b = bench_tree_ticks(pid);
			if (rc != 0 || parse(out, &res) || a < 0 || b < 0) {
				fprintf(stderr, "bench oltp: %s %s at %d threads "
					"failed (exit %d):\n%.2000s\n", srv_name[s],
					wl_name[w], R->th[k], rc, out);
				stop_server(pid);
				return -1;
			}
			res.cpu_us = (double)(b - a) * 1e6 / (double)sysconf(_SC_CLK_TCK) /
				     (res.tps * c->dur);
			keep(&R->best[w][s][k], &res);
		}
	return 0;
}

/* Every round: each server started in turn, its timed runs, and in the
 * last round its entries counted; 0 or -1. */
static int rounds(const struct ctx *c, struct results *R)
{
	int64_t t0 = bench_now_ns();

	for (int r = 0, step = 0; r < c->o.rounds; r++)
		for (int s = 0; s < NSRV; s++, step++) {
			bench_progress("bench oltp", step, c->o.rounds * NSRV, t0);
			pid_t pid = start_server(c, s == XRUN);
			if (pid < 0 || timed_runs(c, pid, s, R))
				return -1;
			if (r == c->o.rounds - 1 &&
			    count_entries(c, pid, s, R->th, R->nt, R->ent[s], &R->method)) {
				stop_server(pid);
				return -1;
			}
			int st = stop_server(pid);
			if (st != 0) {
				fprintf(stderr, "bench oltp: %s did not shut down cleanly "
					"(status %d)\n", srv_name[s], st);
				return -1;
			}
		}
	bench_progress_done();
	return 0;
}

/* The table of every run, then the ratios of xsc run to native, then
 * the target. */
static void print_results(const struct ctx *c, const struct results *R)
{
	char num[32];

	printf("%-16s %8s  %-16s %12s %10s %14s %8s %14s  %s\n", "workload", "threads",
	       "server", "trans/s", "p95 ms", "cpu us/trans", "errors", "entries/trans",
	       "top calls per transaction");
	for (int w = 0; w < NWL; w++)
		for (int k = 0; k < R->nt; k++)
			for (int s = 0; s < NSRV; s++) {
				const struct res *r = &R->best[w][s][k];
				printf("%-16s %8d  %-16s %12.1f %10.2f %14.1f %8ld %s  %s\n",
				       wl_name[w], R->th[k], srv_name[s], r->tps, r->p95_ms,
				       r->cpu_us, r->errors,
				       bench_per_op_num(&R->ent[s][w][k], 14, num, sizeof(num)),
				       R->ent[s][w][k].text);
			}
	if (R->method)
		printf("entries/trans: system call entries of the server's threads per "
		       "transaction (calls trapped with SIGSYS included), counted with "
		       "%s in one more %d s run of each, apart from the timed runs; then "
		       "the calls that make most of them\n", R->method, c->dur);
	printf("\nmariadb+xsc-run / mariadb:\n%-16s %8s %10s %10s %12s %14s\n", "workload",
	       "threads", "trans/s", "p95", "cpu/trans", "entries/trans");
	for (int w = 0; w < NWL; w++)
		for (int k = 0; k < R->nt; k++) {
			const struct res *x = &R->best[w][XRUN][k], *y = &R->best[w][NATIVE][k];
			const struct bench_per_op *ex = &R->ent[XRUN][w][k],
						  *ey = &R->ent[NATIVE][w][k];
			printf("%-16s %8d %10.2f %10.2f %12.2f", wl_name[w], R->th[k],
			       x->tps / y->tps, x->p95_ms / y->p95_ms, x->cpu_us / y->cpu_us);
			if (ex->ok && ey->ok && ey->entries > 0)
				printf(" %14.2f\n", ex->entries / ey->entries);
			else
				printf(" %14s\n", "n/a");
		}
	for (int k = 0; k < R->nt; k++)
		if (R->th[k] == 64) {
			double q = R->best[RO][XRUN][k].tps / R->best[RO][NATIVE][k].tps;
			long e = R->best[RO][XRUN][k].errors;
			printf("\ntarget: oltp_read_only at 64 threads >= 1.10x native "
			       "transactions/s with no errors (%.2fx, %ld errors: %s)\n", q, e,
			       q >= 1.1 && !e ? "met" : "not met");
		}
}

/* DIR/oltp.csv, a row per thread count; 0 or -1. */
static int write_csv(const struct ctx *c, const struct results *R)
{
	FILE *f = bench_csv_open(&c->o, "oltp", "threads,"
		"ro mariadb trans/s,ro mariadb+xsc-run trans/s,"
		"rw mariadb trans/s,rw mariadb+xsc-run trans/s,"
		"ro mariadb p95 ms,ro mariadb+xsc-run p95 ms,"
		"rw mariadb p95 ms,rw mariadb+xsc-run p95 ms,"
		"ro mariadb cpu us/trans,ro mariadb+xsc-run cpu us/trans,"
		"rw mariadb cpu us/trans,rw mariadb+xsc-run cpu us/trans,"
		"ro mariadb+xsc-run errors,rw mariadb+xsc-run errors,"
		"ro mariadb entries/trans,ro mariadb+xsc-run entries/trans,"
		"rw mariadb entries/trans,rw mariadb+xsc-run entries/trans,"
		"ro mariadb top calls/trans,ro mariadb+xsc-run top calls/trans,"
		"rw mariadb top calls/trans,rw mariadb+xsc-run top calls/trans");

	if (!f)
		return -1;
	for (int k = 0; k < R->nt; k++) {
		fprintf(f, "%d", R->th[k]);
		for (int w = 0; w < NWL; w++)
			for (int s = 0; s < NSRV; s++)
				fprintf(f, ",%.1f", R->best[w][s][k].tps);
		for (int w = 0; w < NWL; w++)
			for (int s = 0; s < NSRV; s++)
				fprintf(f, ",%.2f", R->best[w][s][k].p95_ms);
		for (int w = 0; w < NWL; w++)
			for (int s = 0; s < NSRV; s++)
				fprintf(f, ",%.1f", R->best[w][s][k].cpu_us);
		fprintf(f, ",%ld,%ld", R->best[RO][XRUN][k].errors, R->best[RW][XRUN][k].errors);
		for (int w = 0; w < NWL; w++)
			for (int s = 0; s < NSRV; s++)
				bench_per_op_csv_num(f, &R->ent[s][w][k]);
		for (int w = 0; w < NWL; w++)
			for (int s = 0; s < NSRV; s++)
				bench_per_op_csv_text(f, &R->ent[s][w][k]);
		fprintf(f, "\n");
	}
	return bench_csv_close(&c->o, "oltp", f, true) ? -1 : 0;
}

/* DIR/oltp-{throughput,latency,entries}.png (entries: when counted). */
static void plots(const struct ctx *c, const struct results *R)
{
	/* the first of the four columns of each (the CSV's header above) */
	static const char *const what[][3] = {
		{ "throughput", "transactions/s", "2" },
		{ "latency", "95th percentile latency, ms", "6" },
		{ "entries", "kernel entries per transaction", "16" },
	};

	for (int p = 0; p < (R->method ? 3 : 2); p++) {
		char script[1024], png[64];
		int lo = atoi(what[p][2]);
		snprintf(png, sizeof(png), "oltp-%s", what[p][0]);
		snprintf(script, sizeof(script),
			 "set title '%s vs client threads (xsc bench oltp)'\n"
			 "set logscale x 2\nset xlabel 'sysbench threads'\n"
			 "set ylabel '%s'\nset yrange [0:*]\n"
			 "plot for [c=%d:%d] DIR.'/oltp.csv' using 1:c title columnhead(c) "
			 "with linespoints lw 2", what[p][1], what[p][1], lo, lo + 3);
		bench_plot(&c->o, png, script);
	}
	printf("wrote %s/oltp.csv and %s/oltp-{throughput,latency%s}.png\n", c->o.out,
	       c->o.out, R->method ? ",entries" : "");
}

int xsc_bench_oltp(int argc, char **argv)
{
	static const int full[] = { 1, 4, 16, 64 }, quick[] = { 4, 64 };
	struct results R;
	char path[PATH_MAX + 64];
	struct ctx c;
	int rc, ok = 0;

	memset(&c, 0, sizeof(c));
	memset(&R, 0, sizeof(R));
	rc = parse_args(&c, argc, argv);
	if (rc >= 0)
		return rc;
	rc = find_programs();
	if (rc)
		return rc;
	ssize_t n = readlink("/proc/self/exe", c.self, sizeof(c.self) - 1);
	if (n <= 0)
		return 1;
	c.self[n] = 0;
	c.user = geteuid() == 0 ? "mysql" : NULL;
	c.srv_cpu = 0;
	c.cli_cpu = bench_ncpu() > 1 ? 1 : 0;
	R.th = c.o.quick ? quick : full;
	R.nt = c.o.quick ? 2 : 4;
	signal(SIGPIPE, SIG_IGN);
	if (prepare(&c))
		goto out;
	printf("%d s per run, %d rounds, %d tables x %d rows, MariaDB on core %d, "
	       "sysbench on core %d\n", c.dur, c.o.rounds, c.tables, c.rows, c.srv_cpu,
	       c.cli_cpu);
	if (rounds(&c, &R))
		goto out;
	print_results(&c, &R);
	if (write_csv(&c, &R))
		goto out;
	plots(&c, &R);
	ok = 1;
out:
	if (c.dir[0] && !ok)	/* the logs the messages above name */
		fprintf(stderr, "bench oltp: kept %s\n", c.dir);
	else if (c.dir[0]) {
		snprintf(path, sizeof(path), "rm -rf '%s'", c.dir);
		if (system(path) != 0)
			fprintf(stderr, "bench oltp: could not remove %s\n", c.dir);
	}
	return ok ? 0 : 1;
}
