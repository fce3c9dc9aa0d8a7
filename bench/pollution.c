/*
 * pollution.c - `xsc bench pollution`: how much slower user-mode work runs
 * when it is interleaved with system calls, beyond the time of the calls
 * themselves (FlexSC, Figures 1-3).  The method, the configurations and
 * the figures: docs/experiments.md, "pollution".
 *
 * This machine has no hardware counters, so the user-mode IPC drop is
 * measured as time: K instructions of a fixed hash-table walk (--ws KIB;
 * INSN_PER_UNIT instructions a step, counted with callgrind through
 * `--calibrate N`) are timed alone with rdtsc, one call is issued between
 * two segments outside the timed region, and slowdown = mean segment
 * time / mean segment time of the "none" configuration - 1.
 *
 * Calls: null (getppid; IORING_OP_NOP on io_uring) and a 64-byte pwrite
 * into a 64 KiB region of a file in /var/tmp (on io_uring a write at the
 * file position, rewound with lseek, since xsc runs pwrite64 on its
 * syscall threads).  Configurations none, sync, uring (flush and wait
 * every 32), sqpoll-other and worker-other (spinning 200 us, as a
 * dedicated syscall core would), interleaved, best of N rounds.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include "harness.h"
#include "rawsys.h"
#include "xsc.h"

int xsc_bench_pollution(int argc, char **argv);

/* Instructions per work() step, counted with callgrind on the gcc 12 -O2
 * build (RelWithDebInfo): Ir of work() / steps.  Update it when work()
 * changes or the compiler does (see --calibrate). */
#define INSN_PER_UNIT 14.0

#define BATCH 32
#define REGION (64 << 10)	/* pwrite cycles over this many bytes */
#define PW_LEN 64

enum { NONE, SYNC, URING, SQPOLL, WORKER, NCFG };
static const char *const cfg_name[NCFG] = { "none", "sync", "uring",
					    "sqpoll-other", "worker-other" };
enum { NUL, PWRITE, NCALL };
static const char *const call_name[NCALL] = { "null", "pwrite" };

#define NK 8
static const long kinsn[NK] = { 500, 1000, 2000, 5000, 10000, 20000, 50000,
				100000 };

struct res {
	double work;	/* TSC ticks per segment */
	double other;	/* TSC ticks per call outside the segments */
	double total;	/* TSC ticks per segment, everything */
	double cross;	/* crossings per call (xsc stats) */
};

struct pstate {
	struct xsc *x[NCFG];
	int fd;
	long off;		/* sync pwrite offset */
	long pos;		/* file position of the io_uring writes */
	bool bad;
	struct res best[NCALL][NCFG][NK];
};

static char pw_buf[PW_LEN];
static uint64_t *table, mask, wx = 88172645463325252ULL;

/* The user work: a walk over the table where each load's address depends
 * on the previous load (a hash-table probe chain), so evicted lines and
 * TLB entries cost their full miss latency.  Keep INSN_PER_UNIT in step. */
__attribute__((noinline)) static void work(long units)
{
	uint64_t x = wx, *t = table, m = mask;

	for (long i = 0; i < units; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		uint64_t *p = &t[(x >> 33) & m];
		uint64_t v = *p + x;
		*p = v;
		x ^= v >> 17;
	}
	wx = x;
}

/* Takes every entry of the current batch and checks its result. */
static void drain(struct pstate *ps, struct xsc *x, int call, int *ids, int n)
{
	long ret;

	for (int i = 0; i < n; i++) {
		if (ids[i] < 0 || xsc_take(x, ids[i], &ret) < 0 ||
		    (call == PWRITE ? ret != PW_LEN : ret < 0))
			ps->bad = true;
	}
	if (call == PWRITE && ps->pos >= REGION) {
		xsc__sys3(SYS_lseek, ps->fd, 0, SEEK_SET);
		ps->pos = 0;
	}
}

static int post(struct pstate *ps, struct xsc *x, int call, int cfg)
{
	if (call == NUL)
		return cfg == WORKER ? xsc_post(x, SYS_getppid) : xsc_post(x, XSC_NR_NOP);
	if (cfg == WORKER) {
		ps->off = (ps->off + PW_LEN) % REGION;
		return xsc_post(x, SYS_pwrite64, (long)ps->fd, (long)pw_buf,
				(long)PW_LEN, ps->off);
	}
	ps->pos += PW_LEN;
	return xsc_post(x, SYS_write, (long)ps->fd, (long)pw_buf, (long)PW_LEN);
}

/* One measurement: segs segments of `units` steps with a call after each. */
static struct res run(struct pstate *ps, int call, int cfg, long units, long segs)
{
	struct xsc *x = ps->x[cfg];
	struct xsc_stats s0 = { 0 }, s1 = { 0 };
	struct res r = { 0, 0, 0, 0 };
	uint64_t work_t = 0;
	int ids[BATCH], n = 0;

	if (x)
		xsc_stats_get(x, &s0);
	uint64_t t0 = bench_tsc();
	for (long s = 0; s < segs; s++) {
		uint64_t a = bench_tsc();
		work(units);
		work_t += bench_tsc() - a;
		if (cfg == NONE)
			continue;
		if (cfg == SYNC) {
			long ret;
			if (call == NUL) {
				ret = xsc__sys0(SYS_getppid);
			} else {
				ps->off = (ps->off + PW_LEN) % REGION;
				ret = xsc__sys4(SYS_pwrite64, ps->fd, pw_buf, PW_LEN,
						ps->off) == PW_LEN ? 0 : -1;
			}
			ps->bad |= ret < 0;
			continue;
		}
		ids[n++] = post(ps, x, call, cfg);
		if (cfg != URING)
			xsc_flush(x);	/* the other core starts on it now */
		if (n == BATCH) {
			drain(ps, x, call, ids, n);
			n = 0;
		}
	}
	if (n)
		drain(ps, x, call, ids, n);
	uint64_t total = bench_tsc() - t0;
	if (x)
		xsc_stats_get(x, &s1);
	r.work = (double)work_t / (double)segs;
	r.total = (double)total / (double)segs;
	r.other = cfg == NONE ? 0 : (double)(total - work_t) / (double)segs;
	r.cross = cfg == SYNC ? 1 : (double)(s1.crossings - s0.crossings) / (double)segs;
	return r;
}

static void keep(struct res *b, struct res r)
{
	if (b->work == 0 || r.work < b->work)
		b->work = r.work, b->cross = r.cross;
	if (b->total == 0 || r.total < b->total)
		b->total = r.total, b->other = r.other;
}

static int open_x(struct pstate *ps, int cfg, int other)
{
	struct xsc_config c;
	const char *why = "";

	xsc_config_init(&c);
	c.flags = XSC_NO_ENV | XSC_QUIET;
	c.backend = cfg == URING ? XSC_BACKEND_URING :
		    cfg == SQPOLL ? XSC_BACKEND_SQPOLL : XSC_BACKEND_WORKER;
	c.syscall_cpu = cfg == URING ? -1 : other;
	c.sq_idle_ms = 2000;
	/* uring: never spin against our own executor.  Other core: keep the
	 * syscall core awake across the longest segment (~55 us), as FlexSC
	 * dedicates it; with the default 20 us every post past K ~ 40,000
	 * would cost a futex wake. */
	c.spin_ns = cfg == URING ? 0 : 200000;
	if (xsc_open(&ps->x[cfg], &c) < 0)
		return -1;
	long nr = cfg == WORKER ? SYS_pwrite64 : XSC_NR_NOP;
	int want = cfg == URING ? XSC_BACKEND_URING :
		   cfg == SQPOLL ? XSC_BACKEND_SQPOLL : XSC_BACKEND_WORKER;
	if (xsc_route(ps->x[cfg], nr, &why) != want ||
	    (cfg != WORKER && xsc_route(ps->x[cfg], SYS_write, &why) != want)) {
		fprintf(stderr, "bench pollution: %s unavailable: %s\n",
			cfg_name[cfg], why);
		xsc_close(ps->x[cfg]);
		ps->x[cfg] = NULL;
		return -1;
	}
	return 0;
}

/* Whether hardware counters work here: the reason they are not used. */
static const char *counters(void)
{
	struct perf_event_attr a = { .type = PERF_TYPE_HARDWARE,
				     .size = sizeof(a),
				     .config = PERF_COUNT_HW_CPU_CYCLES,
				     .disabled = 1, .exclude_kernel = 1 };
	long fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);

	if (fd < 0)
		return strerror(errno);
	close((int)fd);
	return NULL;
}

static const char usage[] =
	"usage: xsc bench pollution [--quick] [--rounds N] [--out DIR] [--ws KIB]\n"
	"                           [--calibrate STEPS]\n"
	"  Slowdown of user work interleaved with a null call or a pwrite every K\n"
	"  instructions (K = 500..100000): sync vs xsc uring (batches of 32), SQPOLL\n"
	"  and a syscall thread on the other core.  --calibrate runs STEPS work\n"
	"  steps and exits (run it under callgrind to count instructions).\n"
	"  Writes DIR/pollution.csv and DIR/pollution.png.\n";

static void report(struct pstate *ps, FILE *f, double ghz)
{
	printf("%7s %-6s %-12s %10s %9s %11s %10s %10s\n", "K insn", "call",
	       "config", "work ns", "slowdown", "ns/call*", "whole-run", "cross/call");
	for (int k = 0; k < NK; k++) {
		double base = ps->best[NUL][NONE][k].work;
		printf("%7ld %-6s %-12s %10.1f %8s%% %11s %10s %10s\n", kinsn[k], "-",
		       "none", base / ghz, "0.0", "-", "-", "0");
		for (int c = 0; c < NCALL; c++)
			for (int g = SYNC; g < NCFG; g++) {
				struct res *r = &ps->best[c][g][k];
				if (!ps->x[g] && g != SYNC)
					continue;
				double sl = 100 * (r->work / base - 1);
				double whole = 100 * (r->total / base - 1);
				printf("%7ld %-6s %-12s %10.1f %8.1f%% %11.1f %9.1f%% %10.4f\n",
				       kinsn[k], call_name[c], cfg_name[g], r->work / ghz,
				       sl, r->other / ghz, whole, r->cross);
				if (f)
					fprintf(f, "%ld,%.0f,%s,%s,%.2f,%.2f,%.2f,%.2f,%.2f,%.4f\n",
						kinsn[k], kinsn[k] / INSN_PER_UNIT,
						call_name[c], cfg_name[g], r->work / ghz,
						base / ghz, sl, r->other / ghz, whole, r->cross);
			}
	}
}

/* One inline data block per series (comma-separated, as bench_plot sets
 * the separator): lines stay connected (the CSV is in
 * long form, which gnuplot would draw as broken lines). */
static void plot(const struct bench_opts *o, struct pstate *ps)
{
	size_t len = 16384, n = 0;
	char *s = malloc(len);

	if (!s)
		return;
#define ADD(...) (n += (size_t)snprintf(s + n, n < len ? len - n : 0, __VA_ARGS__))
	for (int c = 0; c < NCALL; c++)
		for (int g = SYNC; g < NCFG; g++) {
			ADD("$s%d%d << EOD\nK,slowdown\n", c, g);	/* columnhead */
			for (int k = 0; k < NK && (ps->x[g] || g == SYNC); k++)
				ADD("%ld,%.2f\n", kinsn[k], 100 * (ps->best[c][g][k].work /
						ps->best[NUL][NONE][k].work - 1));
			ADD("EOD\n");
		}
	ADD("set title 'User-work slowdown vs syscall interval (xsc bench pollution)'\n"
	    "set logscale x\nset xrange [400:125000]\n"
	    "set xlabel 'instructions of user work between calls (K)'\n"
	    "set ylabel 'slowdown of the user work itself, %%'\nset key top right\nplot ");
	for (int c = 0; c < NCALL; c++)
		for (int g = SYNC; g < NCFG; g++)
			if (ps->x[g] || g == SYNC)
				ADD("%s$s%d%d using 1:2 with linespoints lw 2 dt %d "
				    "title '%s %s'", c + g > SYNC ? ", " : "", c, g,
				    c ? 2 : 1, call_name[c], cfg_name[g]);
#undef ADD
	if (n < len)
		bench_plot(o, "pollution", s);
	free(s);
}

/* Options: ours (--ws, --calibrate) taken out before bench_parse sees
 * the rest; -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, struct bench_opts *o, long *ws_kib,
		      long *calib)
{
	char *rest[argc + 1];
	int nrest = 0;

	for (int a = 0; a < argc; a++) {
		if (!strcmp(argv[a], "--ws") && a + 1 < argc)
			*ws_kib = atol(argv[++a]);
		else if (!strcmp(argv[a], "--calibrate") && a + 1 < argc)
			*calib = atol(argv[++a]);
		else
			rest[nrest++] = argv[a];
	}
	rest[nrest] = NULL;
	int i = bench_parse(nrest, rest, o, usage);
	if (i < 0)
		return i == -2 ? 0 : 2;
	if (i < nrest) {
		fprintf(stderr, "xsc bench pollution: unexpected argument %s\n%s",
			rest[i], usage);
		return 2;
	}
	if (*ws_kib < 4 || (*ws_kib & (*ws_kib - 1))) {
		fprintf(stderr, "xsc bench pollution: --ws must be a power of two >= 4\n");
		return 2;
	}
	return -1;
}

/* Every round: at each interval K, the work alone and with each call on
 * each configuration, total_insn instructions of work each. */
static void rounds(struct pstate *ps, const struct bench_opts *o, double total_insn)
{
	int64_t t0 = bench_now_ns();
	int steps = o->rounds * NK, step = 0;

	for (int r = 0; r < o->rounds; r++)
		for (int k = 0; k < NK; k++, step++) {
			long units = (long)(kinsn[k] / INSN_PER_UNIT + 0.5);
			long segs = (long)(total_insn / kinsn[k]);
			bench_progress("bench pollution", step, steps, t0);
			keep(&ps->best[NUL][NONE][k], run(ps, NUL, NONE, units, segs));
			for (int c = 0; c < NCALL; c++)
				for (int g = SYNC; g < NCFG; g++)
					if (g == SYNC || ps->x[g])
						keep(&ps->best[c][g][k],
						     run(ps, c, g, units, segs));
		}
	bench_progress_done();
}

/* What was measured and how, the table, the notes under it, the CSV and
 * the plot; 0, or 1 when the CSV could not be written. */
static int results(struct pstate *ps, const struct bench_opts *o, double ghz,
		   double total_insn, long ws_kib)
{
	const char *why = counters();

	printf("User-work slowdown from interleaved syscalls (best of %d rounds; "
	       "%.0fM instructions of work per measurement; working set %ld KiB)\n",
	       o->rounds, total_insn / 1e6, ws_kib);
	printf("Hardware counters: %s%s.  Measured instead: TSC time (%.0f MHz) "
	       "of the user work alone; 1 step = %.0f instructions (callgrind).\n",
	       why ? "unavailable, perf_event_open(cycles): " : "available but not "
	       "used (the slowdown is the IPC drop)", why ? why : "", ghz * 1000,
	       INSN_PER_UNIT);
	FILE *f = bench_csv_open(o, "pollution", "k_insn,units,call,config,work_ns,"
				 "base_work_ns,user_slowdown_pct,other_ns_per_call,"
				 "whole_run_slowdown_pct,crossings_per_call");
	report(ps, f, ghz);
	printf("* ns/call = time per call outside the work segments on this core "
	       "(the call, or posting + reaping for xsc).\n"
	       "null on io_uring = IORING_OP_NOP; pwrite on io_uring = write() at "
	       "the file position (pwrite64 runs on xsc's syscall threads).\n"
	       "cross/call near 1 on io_uring pwrite rows: buffered writes answer "
	       "RWF_NOWAIT with -EAGAIN here, and xsc then checks the fd with fcntl "
	       "and resubmits (src/uring.c, xsc__nowait_done).\n"
	       "Paper (Core i7, user-mode IPC): Xalan -65%% at a pwrite every "
	       "1,000-2,000 instructions; 20-60%% at the rates of server workloads; "
	       "SPEC-JBB -45%%.\n");
	if (!f || bench_csv_close(o, "pollution", f, true) != 0)
		return 1;
	plot(o, ps);
	printf("wrote %s/pollution.csv\n", o->out);
	return 0;
}

int xsc_bench_pollution(int argc, char **argv)
{
	struct bench_opts o;
	struct pstate *ps;
	long ws_kib = 512, calib = 0;
	char path[] = "/var/tmp/xsc-pollution.XXXXXX";
	int ncpu = bench_ncpu(), other = ncpu > 1 ? 1 : 0;
	int ret = parse_args(argc, argv, &o, &ws_kib, &calib);

	if (ret >= 0)
		return ret;
	ret = 1;
	size_t ws = (size_t)ws_kib << 10;
	table = mmap(NULL, ws, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ps = calloc(1, sizeof(*ps));
	if (table == MAP_FAILED || !ps) {
		fprintf(stderr, "xsc bench pollution: out of memory\n");
		free(ps);
		return 1;
	}
	mask = ws / sizeof(uint64_t) - 1;
	memset(table, 1, ws);
	if (calib > 0) {	/* for callgrind: Ir(work) / calib = INSN_PER_UNIT */
		work(calib);
		ret = 0;
		goto out_unmap;
	}

	ps->fd = mkstemp(path);
	if (ps->fd < 0 || unlink(path) || pwrite(ps->fd, table, REGION, 0) != REGION) {
		fprintf(stderr, "xsc bench pollution: tmp file: %s\n", strerror(errno));
		goto out_close;
	}
	bench_pin(0);
	for (int g = URING; g < NCFG; g++)
		if ((g != URING && ncpu < 2) || open_x(ps, g, other) < 0)
			fprintf(stderr, "bench pollution: %s skipped\n", cfg_name[g]);
	double ghz = bench_tsc_per_ns(o.quick ? 20 : 100);
	double total_insn = o.quick ? 3e6 : 40e6;

	rounds(ps, &o, total_insn);
	if (ps->bad)
		fprintf(stderr, "xsc bench pollution: a call returned a wrong result\n");
	else
		ret = results(ps, &o, ghz, total_insn, ws_kib);
out_close:
	for (int g = 0; g < NCFG; g++)
		if (ps->x[g])
			xsc_close(ps->x[g]);
	if (ps->fd >= 0)
		close(ps->fd);
out_unmap:
	munmap(table, ws);
	free(ps);
	return ret;
}
