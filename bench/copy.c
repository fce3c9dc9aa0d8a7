/*
 * copy.c - `xsc bench copy`: the copy experiments of the multi-call papers,
 * in one run, page cache warm, every strategy against copy_file_range and
 * coreutils cp.
 *
 *   Table 3 (System Call Clustering): 80 KiB, 925 KiB and 2.28 MiB files,
 *     4 KiB blocks: plain read/write loop, one multi-call per block (the
 *     AUTO path: what a program gets by default), one looped multi-call
 *     on io_uring and one forced onto a syscall thread (both asked for,
 *     so the columns mean the same path on every machine),
 *     copy_file_range, cp.  Time per copy and % saving vs plain;
 *     crossings per copied block (xsc_stats.crossings; plain counts its
 *     own calls).
 *   Figure 8: the 925 KiB file with blocks of 512 B .. 16 KiB.
 *   WSC Table 3: 100 cp transactions of 4 KiB files: NORMAL,
 *     NORMAL+COLLECT, WSC+COLLECT, NORMAL+RW, WSC+RW (threshold 8), plus
 *     copy_file_range and one cp of the 100 files.
 * Timings are best of --rounds rounds, strategies interleaved per round.
 * The copy code is examples/xcp/strategies.h, the same as xcp's.
 */
#include <stdbool.h>
#include <stdio.h>
#include <sys/wait.h>

#include "harness.h"
#include "../examples/xcp/strategies.h"

enum { S_PLAIN, S_MC, S_LOOP, S_LOOPW, S_CFR, S_CP, NS };
static const char *const sname[NS] = { "plain", "multi-call", "looped",
				       "looped-worker", "copy_file_range", "cp" };

#define NSIZE 3
static const long sizes[NSIZE] = { 80 * 1024, 925 * 1024, 2390753 };
static const char *const size_name[NSIZE] = { "80K", "925K", "2.28M" };
#define NBS 6
static const long bsizes[NBS] = { 512, 1024, 2048, 4096, 8192, 16384 };

struct cell { double ns; double cross; };

static char dir[256];

static void make_file(const char *path, long size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	char b[4096];

	for (long off = 0; off < size; off += (long)sizeof(b)) {
		for (size_t i = 0; i < sizeof(b); i++)
			b[i] = (char)(off / 4096 * 13 + (long)i * 7);
		long n = size - off < (long)sizeof(b) ? size - off : (long)sizeof(b);
		if (write(fd, b, (size_t)n) != n)
			break;
	}
	close(fd);
}

static int run_cp(const char *const *src, int nf, const char *dst)
{
	const char *argv[210];
	int st, k = 0;
	pid_t pid;

	argv[k++] = "cp";
	for (int i = 0; i < nf; i++)
		argv[k++] = src[i];
	argv[k++] = dst;
	argv[k] = NULL;
	pid = fork();
	if (pid == 0) {
		execvp("cp", (char *const *)argv);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* One timed copy of file src with strategy s; crossings in *cross. */
static double one(struct xsc *x, int s, const char *src, const char *dst,
		  long bs, long size, double *cross)
{
	struct xsc_stats a, b;
	const char *sv[1] = { src }, *dv[1] = { dst };
	long blocks = (size + bs - 1) / bs;
	int64_t t0;
	int ret;

	xsc_stats_get(x, &a);
	t0 = bench_now_ns();
	switch (s) {
	case S_PLAIN: ret = xcp_copy(XCP_PLAIN, x, sv, dv, 1, bs, 0); break;
	case S_MC: ret = xcp_copy(XCP_MC, x, sv, dv, 1, bs, XSC_MC_AUTO); break;
	case S_LOOP: ret = xcp_copy(XCP_MCLOOP, x, sv, dv, 1, bs, XSC_MC_URING); break;
	case S_LOOPW: ret = xcp_copy(XCP_MCLOOP, x, sv, dv, 1, bs, XSC_MC_WORKER); break;
	case S_CFR: ret = xcp_copy(XCP_CFR, x, sv, dv, 1, bs, 0); break;
	default: ret = run_cp(sv, 1, dst);
	}
	double ns = (double)(bench_now_ns() - t0);
	xsc_stats_get(x, &b);
	if (ret < 0) {
		fprintf(stderr, "bench copy: %s failed: %d\n", sname[s], ret);
		exit(1);
	}
	/* plain: its own calls; open+open+close+close, reads and writes */
	*cross = s == S_PLAIN ? (double)(4 + 2 * blocks + 1) :
		 s == S_CFR ? (double)(4 + 2) :
		 (double)(b.crossings - a.crossings);
	if (s == S_CP)
		*cross = 0;	/* not measured: another process */
	return ns;
}

static void best(struct cell *c, double ns, double cross)
{
	if (!c->ns || ns < c->ns) {
		c->ns = ns;
		c->cross = cross;
	}
}

/* Copies, best of rounds, strategies interleaved. */
static void measure(struct xsc *x, const struct bench_opts *o, const char *src,
		    long size, long bs, int reps, struct cell *row)
{
	char dst[300];

	snprintf(dst, sizeof(dst), "%s/dst", dir);
	for (int r = 0; r < o->rounds; r++)
		for (int s = 0; s < NS; s++) {
			double sum = 0, cross = 0;
			int n = s == S_CP ? (reps + 9) / 10 : reps;
			for (int i = 0; i < n; i++)
				sum += one(x, s, src, dst, bs, size, &cross);
			best(&row[s], sum / n, cross);
		}
}

static void table3(struct xsc *x, const struct bench_opts *o, FILE *f,
		   struct cell (*t)[NS])
{
	char src[300];

	printf("\nClustering Table 3: copy with 4 KiB blocks, us per copy (saving vs plain)\n");
	printf("%6s", "file");
	for (int s = 0; s < NS; s++)
		printf(" %20s", sname[s]);
	printf("\n");
	for (int i = 0; i < NSIZE; i++) {
		snprintf(src, sizeof(src), "%s/src%d", dir, i);
		measure(x, o, src, sizes[i], 4096, o->quick ? 20 : 100, t[i]);
		printf("%6s", size_name[i]);
		fprintf(f, "%s,%ld", size_name[i], sizes[i]);
		for (int s = 0; s < NS; s++) {
			printf(" %11.1f (%+5.1f%%)", t[i][s].ns / 1e3,
			       100 * (1 - t[i][s].ns / t[i][S_PLAIN].ns));
			fprintf(f, ",%.0f", t[i][s].ns);
		}
		long blocks = (sizes[i] + 4095) / 4096;
		printf("\n%6s", "x/blk");
		for (int s = 0; s < NS; s++) {
			printf(" %20.4f", t[i][s].cross / blocks);
			fprintf(f, ",%.4f", t[i][s].cross / blocks);
		}
		printf("\n");
		fprintf(f, "\n");
	}
}

static void figure8(struct xsc *x, const struct bench_opts *o, FILE *f)
{
	char src[300];
	struct cell row[NS];

	snprintf(src, sizeof(src), "%s/src1", dir);
	printf("\nClustering Figure 8: 925 KiB file, %% saving vs plain by block size\n");
	printf("%6s %12s %10s %10s %14s %10s\n", "block", "plain us", "multi-call",
	       "looped", "looped-worker", "cfr");
	for (int b = 0; b < NBS; b++) {
		memset(row, 0, sizeof(row));
		measure(x, o, src, sizes[1], bsizes[b], o->quick ? 10 : 40, row);
		double p = row[S_PLAIN].ns;
		printf("%6ld %12.1f %9.1f%% %9.1f%% %13.1f%% %9.1f%%\n", bsizes[b], p / 1e3,
		       100 * (1 - row[S_MC].ns / p), 100 * (1 - row[S_LOOP].ns / p),
		       100 * (1 - row[S_LOOPW].ns / p), 100 * (1 - row[S_CFR].ns / p));
		fprintf(f, "%ld,%.0f,%.0f,%.0f,%.0f,%.0f,%.2f,%.2f\n", bsizes[b], p,
			row[S_MC].ns, row[S_LOOP].ns, row[S_LOOPW].ns, row[S_CFR].ns,
			100 * (1 - row[S_MC].ns / p), 100 * (1 - row[S_LOOP].ns / p));
	}
}

/* ---- WSC Table 3 --------------------------------------------------------- */

#define NW 100
enum { W_NOR, W_NCOL, W_WCOL, W_NRW, W_WRW, W_CFR, W_CP, NWS };
static const char *const wname[NWS] = { "NORMAL", "NORMAL+COLLECT", "WSC+COLLECT",
					"NORMAL+RW", "WSC+RW", "copy_file_range", "cp" };
static const int wstrat[NWS] = { XCP_NORMAL, XCP_NCOLLECT, XCP_WCOLLECT, XCP_NRW,
				 XCP_WRW, XCP_CFR, -1 };

static void wsc(struct xsc *x, const struct bench_opts *o, FILE *f)
{
	static char sbuf[NW][600], dbuf[NW][600];
	const char *sv[NW], *dv[NW];
	struct cell w[NWS];
	char ddir[300];

	memset(w, 0, sizeof(w));
	snprintf(ddir, sizeof(ddir), "%s/wdst", dir);
	mkdir(ddir, 0755);
	for (int i = 0; i < NW; i++) {
		snprintf(sbuf[i], sizeof(sbuf[i]), "%s/w%d", dir, i);
		snprintf(dbuf[i], sizeof(dbuf[i]), "%s/w%d", ddir, i);
		make_file(sbuf[i], 4096);
		sv[i] = sbuf[i];
		dv[i] = dbuf[i];
	}
	for (int r = 0; r < o->rounds; r++)
		for (int s = 0; s < NWS; s++) {
			int reps = o->quick ? 5 : 20;
			double sum = 0, cross = 0;
			for (int k = 0; k < reps; k++) {
				struct xsc_stats a, b;
				xsc_stats_get(x, &a);
				int64_t t0 = bench_now_ns();
				int ret = s == W_CP ? run_cp(sv, NW, ddir)
						    : xcp_copy(wstrat[s], x, sv, dv, NW, 4096, 0);
				sum += (double)(bench_now_ns() - t0);
				xsc_stats_get(x, &b);
				if (ret < 0) {
					fprintf(stderr, "bench copy: %s failed\n", wname[s]);
					exit(1);
				}
				/* NORMAL*: 6 calls and one EOF read per file */
				cross = s == W_WCOL || s == W_WRW ? (double)(b.crossings - a.crossings) :
					s == W_CFR ? 6.0 * NW : s == W_CP ? 0 : 7.0 * NW;
			}
			best(&w[s], sum / reps, cross);
		}
	printf("\nWSC Table 3: %d cp transactions of 4 KiB files (threshold 8)\n", NW);
	printf("%16s %12s %10s %12s\n", "portion", "us total", "vs NORMAL", "crossings");
	for (int s = 0; s < NWS; s++) {
		printf("%16s %12.1f %9.2fx %12.0f%s\n", wname[s], w[s].ns / 1e3,
		       w[s].ns / w[W_NOR].ns, w[s].cross, s == W_CP ? " (other process)" : "");
		fprintf(f, "%s,%.0f,%.0f\n", wname[s], w[s].ns, w[s].cross);
	}
}

static const char usage[] =
	"usage: xsc bench copy [--quick] [--rounds N] [--out DIR]\n"
	"  Clustering Table 3 and Figure 8, WSC Table 3, against copy_file_range\n"
	"  and cp.  Writes DIR/copy_table3.csv, copy_fig8.csv, copy_wsc.csv and\n"
	"  copy_fig8.png.\n";

int xsc_bench_copy(int argc, char **argv)
{
	struct bench_opts o;
	struct xsc_config cfg;
	struct cell t[NSIZE][NS];
	struct xsc *x;
	char src[300];
	int i = bench_parse(argc, argv, &o, usage);

	if (i < 0)
		return i == -2 ? 0 : 2;
	snprintf(dir, sizeof(dir), "/tmp/xsc-bench-copy.XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	for (int k = 0; k < NSIZE; k++) {
		snprintf(src, sizeof(src), "%s/src%d", dir, k);
		make_file(src, sizes[k]);
	}
	xsc_config_init(&cfg);
	cfg.batch_threshold = 8;	/* WSC's threshold M */
	cfg.flags |= XSC_QUIET;
	if (xsc_open(&x, &cfg) < 0)
		return 1;
	memset(t, 0, sizeof(t));
	FILE *f3 = bench_csv_open(&o, "copy_table3", "file,bytes,plain_ns,mc_ns,"
				  "looped_ns,looped_worker_ns,cfr_ns,cp_ns,plain_xpb,mc_xpb,"
				  "looped_xpb,looped_worker_xpb,cfr_xpb,cp_xpb");
	FILE *f8 = bench_csv_open(&o, "copy_fig8", "block,plain_ns,mc_ns,looped_ns,"
				  "looped_worker_ns,cfr_ns,mc_saving,looped_saving");
	FILE *fw = bench_csv_open(&o, "copy_wsc", "portion,ns,crossings");
	if (!f3 || !f8 || !fw)
		return 1;
	printf("xsc bench copy: files in %s (page cache warm), best of %d rounds\n",
	       dir, o.rounds);
	table3(x, &o, f3, t);
	figure8(x, &o, f8);
	wsc(x, &o, fw);
	printf("\nTargets: looped/plain at 80K = %.2f, at 925K = %.2f (<= 0.7); "
	       "crossings per block looped/plain = 1/%.0f, 1/%.0f, 1/%.0f (<= 1/32)\n",
	       t[0][S_LOOP].ns / t[0][S_PLAIN].ns, t[1][S_LOOP].ns / t[1][S_PLAIN].ns,
	       t[0][S_PLAIN].cross / t[0][S_LOOP].cross,
	       t[1][S_PLAIN].cross / t[1][S_LOOP].cross,
	       t[2][S_PLAIN].cross / t[2][S_LOOP].cross);
	bool ok = bench_csv_close(&o, "copy_table3", f3, true) == 0 &&
		  bench_csv_close(&o, "copy_fig8", f8, true) == 0 &&
		  bench_csv_close(&o, "copy_wsc", fw, true) == 0;
	if (ok)
		bench_plot(&o, "copy_fig8",
			   "set title 'Copy of a 925 KiB file: saving vs plain read/write loop'\n"
			   "set datafile separator ','\nset logscale x 2\n"
			   "set xlabel 'block size (bytes)'\nset ylabel '% saving'\n"
			   "plot DIR.'/copy_fig8.csv' every ::1 using 1:7 with linespoints "
			   "lw 2 title 'multi-call', '' every ::1 using 1:8 with linespoints "
			   "lw 2 title 'looped multi-call'");
	xsc_close(x);
	char cmd[400];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "bench copy: could not remove %s\n", dir);
	printf("wrote %s/copy_table3.csv, copy_fig8.csv, copy_wsc.csv, copy_fig8.png\n",
	       o.out);
	return ok ? 0 : 1;
}
