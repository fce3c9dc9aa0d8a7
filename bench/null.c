/*
 * null.c - `xsc bench null`: the cost of a null system call against batch
 * size (FlexSC Figures 9/10, WSC Figure 3), and the WSC cost model.
 *
 * For batch sizes 1..256 and in one run, interleaved round by round (best
 * of N rounds, since this machine is shared and noisy):
 *   sync          getppid() with a raw syscall instruction
 *   inline        getppid through xsc's inline executor
 *   worker-same   getppid on a syscall thread pinned to the caller's core
 *   worker-other  getppid on a syscall thread on the other core
 *   uring         IORING_OP_NOP through xsc (one io_uring_enter per batch)
 *   raw-uring     IORING_OP_NOP straight through liburing, same ring flags:
 *                 the baseline that shows xsc's own overhead
 *   sqpoll-same   IORING_OP_NOP on an SQPOLL ring, poller on the caller's core
 *   sqpoll-other  the same with the poller on the other core
 * The io_uring paths have no getppid opcode; NOP is io_uring's null call.
 *
 * Cost model (WSC eq. 5): M > Tsys / (Tsys - (Tgen + Tsched + Tsync + Treq))
 * with Tsys = sync null call, Treq = posting one request into the pages
 * (post + release, no flush), Tsync = collecting one completion (reap +
 * status check), Tgen = Tsched = 0 on this path (no thread per call: the
 * fiber runtime adds them).  The measured break-even M is the smallest
 * batch at which xsc's uring executor beats the sync call per call.
 */
#include <errno.h>
#include <liburing.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "harness.h"
#include "rawsys.h"
#include "xsc.h"

enum { SYNC, INLINE, WSAME, WOTHER, URING, RAW, SQSAME, SQOTHER, NCFG };
static const char *const cfg_name[NCFG] = {
	"sync", "inline", "worker-same", "worker-other", "uring", "raw-uring",
	"sqpoll-same", "sqpoll-other" };

#define NB 9
static const int batches[NB] = { 1, 2, 4, 8, 16, 32, 64, 128, 256 };

struct cfgstate {
	struct xsc *x;
	struct io_uring ring;
	bool ok;
	double best[NB];	/* ns per call */
	double cross[NB];	/* crossings per call */
};

/* SQPOLL pollers spin for sq_idle_ms after their last submission; a
 * poller still spinning on core 0 would steal the next configuration's
 * core (bench null runs every configuration on core 0, interleaved).  So
 * pollers idle fast and the bench waits them out (poller_rest). */
#define SQ_IDLE_MS 2

static void poller_rest(void)
{
	usleep(3 * SQ_IDLE_MS * 1000);
}

static int open_xsc(struct cfgstate *c, int backend, int cpu, bool spin)
{
	struct xsc_config cfg;

	xsc_config_init(&cfg);
	cfg.backend = backend;
	cfg.syscall_cpu = cpu;
	cfg.flags = XSC_NO_ENV | XSC_QUIET;
	cfg.npages = 4;	/* 256 entries: the largest batch */
	if (!spin)
		cfg.spin_ns = 0;	/* never spin against our own executor */
	cfg.sq_idle_ms = SQ_IDLE_MS;
	if (xsc_open(&c->x, &cfg) < 0)
		return -1;
	if (backend == XSC_BACKEND_SQPOLL) {
		struct xsc_probe p;
		xsc_probe_get(c->x, &p);
		if (!p.sqpoll) {
			fprintf(stderr, "bench null: SQPOLL unavailable: %s\n",
				p.sqpoll_reason);
			xsc_close(c->x);
			return -1;
		}
	}
	return 0;
}

static double run_sync(long calls)
{
	int64_t t0 = bench_now_ns();
	for (long i = 0; i < calls; i++)
		xsc__sys0(SYS_getppid);
	return (double)(bench_now_ns() - t0) / (double)calls;
}

static double run_xsc(struct cfgstate *c, long nr, int b, long iters, double *cross)
{
	int ids[256];
	struct xsc_stats s0, s1;
	int64_t t0;

	xsc_stats_get(c->x, &s0);
	t0 = bench_now_ns();
	for (long it = 0; it < iters; it++) {
		for (int i = 0; i < b; i++)
			ids[i] = xsc_post(c->x, nr);
		xsc_flush(c->x);
		if (xsc_wait(c->x, (unsigned)b) < b)
			return -1;
		for (int i = 0; i < b; i++)
			xsc_release(c->x, ids[i]);
	}
	double ns = (double)(bench_now_ns() - t0) / (double)(iters * b);
	xsc_stats_get(c->x, &s1);
	*cross = (double)(s1.crossings - s0.crossings) / (double)(iters * b);
	return ns;
}

static double run_raw(struct io_uring *ring, int b, long iters)
{
	struct io_uring_cqe *cqe;
	unsigned head, n;
	int64_t t0 = bench_now_ns();

	for (long it = 0; it < iters; it++) {
		for (int i = 0; i < b; i++)
			io_uring_prep_nop(io_uring_get_sqe(ring));
		io_uring_submit_and_wait(ring, (unsigned)b);
		n = 0;
		io_uring_for_each_cqe(ring, head, cqe)
			n++;
		io_uring_cq_advance(ring, n);
	}
	return (double)(bench_now_ns() - t0) / (double)(iters * b);
}

static double measure(struct cfgstate *cs, int k, int bi, long calls)
{
	int b = batches[bi];
	long iters = calls / b > 0 ? calls / b : 1;
	double cross = 1;
	double ns;

	switch (k) {
	case SYNC: ns = run_sync(iters * b); break;
	case RAW: ns = run_raw(&cs[k].ring, b, iters); cross = 1.0 / b; break;
	case INLINE: case WSAME: case WOTHER:
		ns = run_xsc(&cs[k], SYS_getppid, b, iters, &cross); break;
	default:
		ns = run_xsc(&cs[k], XSC_NR_NOP, b, iters, &cross); break;
	}
	if (ns < cs[k].best[bi] || cs[k].best[bi] == 0) {
		cs[k].best[bi] = ns;
		cs[k].cross[bi] = cross;
	}
	return ns;
}

/* Treq and Tsync, per entry, on the uring handle (see the top). */
static void model_parts(struct cfgstate *u, double *treq, double *tsync)
{
	int ids[256];
	const int b = 256, iters = 400;
	int64_t t0 = bench_now_ns(), tp = 0, tw = 0;

	for (int it = 0; it < iters; it++) {
		int64_t a = bench_now_ns();
		for (int i = 0; i < b; i++)
			ids[i] = xsc_post(u->x, XSC_NR_NOP);
		int64_t c = bench_now_ns();
		xsc_flush(u->x);
		int64_t d = bench_now_ns();
		xsc_wait(u->x, b);
		for (int i = 0; i < b; i++)
			xsc_release(u->x, ids[i]);
		int64_t e = bench_now_ns();
		tp += c - a;
		tw += e - d;
	}
	(void)t0;
	*treq = (double)tp / (iters * b);
	*tsync = (double)tw / (iters * b);
}

static const char usage[] =
	"usage: xsc bench null [--quick] [--rounds N] [--out DIR]\n"
	"  Null-call cost vs batch size for every executor, the raw liburing\n"
	"  baseline, and the WSC cost model.  Writes DIR/null.csv, DIR/null.png.\n";

/* Every configuration this machine has, opened: cs[k].ok where it is. */
static void open_all(struct cfgstate *cs)
{
	int ncpu = bench_ncpu(), other = ncpu > 1 ? 1 : 0;

	cs[SYNC].ok = true;
	cs[INLINE].ok = open_xsc(&cs[INLINE], XSC_BACKEND_INLINE, -1, false) == 0;
	cs[WSAME].ok = open_xsc(&cs[WSAME], XSC_BACKEND_WORKER, 0, false) == 0;
	cs[WOTHER].ok = ncpu > 1 && open_xsc(&cs[WOTHER], XSC_BACKEND_WORKER, other, true) == 0;
	cs[URING].ok = open_xsc(&cs[URING], XSC_BACKEND_URING, -1, false) == 0;
	cs[SQSAME].ok = open_xsc(&cs[SQSAME], XSC_BACKEND_SQPOLL, 0, false) == 0;
	cs[SQOTHER].ok = ncpu > 1 && open_xsc(&cs[SQOTHER], XSC_BACKEND_SQPOLL, other, true) == 0;
	cs[RAW].ok = bench_raw_ring(&cs[RAW].ring, 1024) == 0;
	if (cs[URING].ok) {
		const char *why;
		if (xsc_route(cs[URING].x, XSC_NR_NOP, &why) != XSC_BACKEND_URING) {
			fprintf(stderr, "bench null: io_uring unavailable: %s\n", why);
			xsc_close(cs[URING].x);
			cs[URING].ok = false;
		}
	}
}

static void close_all(struct cfgstate *cs)
{
	for (int k = 0; k < NCFG; k++)
		if (cs[k].ok && cs[k].x)
			xsc_close(cs[k].x);
	if (cs[RAW].ok)
		io_uring_queue_exit(&cs[RAW].ring);
}

/* Warm up, then rounds interleaving every configuration. */
static void run_rounds(struct cfgstate *cs, const struct bench_opts *o, long calls)
{
	int64_t t0 = bench_now_ns();
	int steps = o->rounds * NB, step = 0;

	for (int r = 0; r < o->rounds; r++)
		for (int bi = 0; bi < NB; bi++, step++) {
			bench_progress("bench null", step, steps, t0);
			for (int k = 0; k < NCFG; k++)
				if (cs[k].ok) {
					measure(cs, k, bi, k == SQSAME || k == WSAME ?
						calls / 4 : calls);
					if (k == SQSAME || k == SQOTHER)
						poller_rest();
				}
		}
	bench_progress_done();
}

/* results/null.png's script: the configurations that ran (a column of
 * nothing made gnuplot warn on the terminal). */
static const char *plot_script(const struct cfgstate *cs, char *cmd, size_t len)
{
	char cols[64];
	bool on[NCFG];

	for (int k = 0; k < NCFG; k++)
		on[k] = cs[k].ok;
	bench_plot_cols(cols, sizeof(cols), 2, on, NCFG);
	snprintf(cmd, len,
		 "set title 'Null call cost vs batch size (xsc bench null)'\n"
		 "set logscale xy 2\nset xlabel 'batch size'\n"
		 "set ylabel 'ns per call'\n"
		 "plot for [c in '%s'] DIR.'/null.csv' using 1:(column(int(c))) "
		 "with linespoints lw 2 title columnhead(int(c))", cols);
	return cmd;
}

/* The cost table, a row per batch size, on stdout and into f (when it
 * opened); returns the measured break-even batch (0: none). */
static int print_table(const struct cfgstate *cs, FILE *f)
{
	int breakeven = 0;

	printf("%6s", "batch");
	for (int k = 0; k < NCFG; k++)
		printf(" %12s", cfg_name[k]);
	printf("  %9s %9s\n", "uring/sync", "xsc/raw");
	for (int bi = 0; bi < NB; bi++) {
		printf("%6d", batches[bi]);
		if (f)
			fprintf(f, "%d", batches[bi]);
		for (int k = 0; k < NCFG; k++) {
			if (cs[k].ok)
				printf(" %12.1f", cs[k].best[bi]);
			else
				printf(" %12s", "n/a");
			if (f)
				fprintf(f, cs[k].ok ? ",%.2f" : ",", cs[k].best[bi]);
		}
		if (f)
			fprintf(f, ",%.4f\n", cs[URING].cross[bi]);
		if (cs[URING].ok && cs[RAW].ok) {
			printf("  %9.2f %9.2f\n", cs[URING].best[bi] / cs[SYNC].best[bi],
			       cs[URING].best[bi] / cs[RAW].best[bi]);
			if (!breakeven && cs[URING].best[bi] < cs[SYNC].best[bi])
				breakeven = batches[bi];
		} else {
			printf("\n");
		}
	}
	return breakeven;
}

/* The WSC cost model and the refined one against the measured
 * break-even, and the targets (needs the uring configuration). */
static void print_model(struct cfgstate *cs, int breakeven)
{
	double treq, tsync, tsys = cs[SYNC].best[0];

	model_parts(&cs[URING], &treq, &tsync);
	double m = bench_wsc_m(tsys, treq + tsync);
	printf("\nWSC cost model (ns): Tsys=%.1f Treq=%.1f Tsync=%.1f Tgen=0 "
	       "Tsched=0 (no thread per call on this path)\n", tsys, treq, tsync);
	if (m > 0)
		printf("  predicted break-even M > %.2f, measured break-even "
		       "batch = %d\n", m, breakeven);
	else
		printf("  predicted: never (per-request cost >= Tsys); measured "
		       "break-even batch = %d\n", breakeven);
	/* The paper's model charges one Tsys per batch; the refined
	 * one (harness.h) an enter per batch and a cost per op. */
	struct bench_refined rm = bench_refined_model(cs[RAW].best[0],
			cs[RAW].best[NB - 1], tsys, treq + tsync);
	printf("Refined model: Tenter=%.1f (one io_uring_enter) Top=%.1f (kernel "
	       "work per op): M > Tenter / (Tsys - Top - Treq - Tsync) = ",
	       rm.tenter, rm.top);
	if (rm.pays)
		printf("%.2f\n", rm.m);
	else
		printf("never\n");
	int b32 = 5;
	printf("Targets: uring/sync at batch 32 = %.2f (<= 0.5), xsc/raw "
	       "overhead at batch 32 = %+.1f%% (<= 10%%), break-even = %d (<= 2)\n",
	       cs[URING].best[b32] / cs[SYNC].best[b32],
	       100.0 * (cs[URING].best[b32] / cs[RAW].best[b32] - 1), breakeven);
	printf("uring crossings per call at batch 256: %.4f (sync: 1)\n",
	       cs[URING].cross[NB - 1]);
}

int xsc_bench_null(int argc, char **argv)
{
	struct bench_opts o;
	struct cfgstate cs[NCFG];
	int rc;
	long calls;

	if (!bench_args(argc, argv, &o, usage, &rc))
		return rc;
	calls = o.quick ? 20000 : 200000;
	memset(cs, 0, sizeof(cs));
	bench_pin(0);
	open_all(cs);
	run_rounds(cs, &o, calls);

	FILE *f = bench_csv_open(&o, "null", "batch,sync,inline,worker-same,"
				 "worker-other,uring,raw-uring,sqpoll-same,sqpoll-other,"
				 "uring-crossings-per-call");
	printf("Null-call cost, ns per call (best of %d rounds; %ld calls each)\n",
	       o.rounds, calls);
	int breakeven = print_table(cs, f);
	if (cs[URING].ok)
		print_model(cs, breakeven);
	char script[512];
	int ok = bench_csv_plot(&o, "null", f, plot_script(cs, script, sizeof(script))) == 0;
	close_all(cs);
	printf("wrote %s/null.csv and %s/null.png\n", o.out, o.out);
	return ok ? 0 : 1;
}
