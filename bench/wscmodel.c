/*
 * wscmodel.c - `xsc bench wsc-model`: the terms of the WSC/CEFOS cost
 * model measured on this machine (WSC, Table 2 and section 3), the
 * break-even batch size it predicts, and the one measured.
 *
 * WSC eq. (5): batching M calls pays off when
 *	M > Tsys / (Tsys - (Tgen + Tsched + Tsync + Treq))
 * with one thread created (Tgen), scheduled (Tsched) and synchronised
 * (Tsync) per call, one request buffered per call (Treq) and one kernel
 * entry (Tsys) per batch.  Measured here, each as a mean over a loop,
 * best of N interleaved rounds:
 *   Tsys    getppid through a raw `syscall` (WSC used lmbench's null call)
 *   Tgen    pthread: pthread_create + pthread_join of an empty thread (the
 *           paper's "thread"); fiber: a stack from the pool, a context
 *           made, switched in, run to its end and the stack given back
 *   Tsched  pthread: one sched_yield hand-off between two threads pinned
 *           to one core; fiber: one one-way xsc context switch
 *   Tsync   pthread: an uncontended mutex lock+unlock pair; fiber: the
 *           completion check of a posted call (xsc_result on a DONE
 *           entry); batch path: reaping one completion (wait + release,
 *           per entry, as bench/null.c measures it)
 *   Treq    xsc_post + xsc_release of IORING_OP_NOP without a flush: one
 *           request written into the syscall page and taken back
 * Three predictions follow: with kernel threads, with fibers, and for
 * the path `xsc bench null` measures (no thread per call: Tgen = Tsched
 * = 0).  The measured break-even is that of the last: the smallest batch
 * at which xsc's uring executor (IORING_OP_NOP) costs less per call than
 * the synchronous getppid, both measured here, interleaved.
 *
 * The paper's model charges one Tsys per batch.  On io_uring one
 * io_uring_enter costs more than a null call and every op has its own
 * kernel cost, so the refined model (harness.h, bench_refined_model) is
 * printed beside it, as `xsc bench null` does.
 */
#include <errno.h>
#include <liburing.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <x86intrin.h>

#include "harness.h"
#include "rawsys.h"
#include "xsc.h"

#if __has_include("fiber/ctx.h")
#include "fiber/ctx.h"
#define HAVE_FIBER 1
#endif

int xsc_bench_wscmodel(int argc, char **argv);

enum { SYS, GEN_PT, GEN_FIB, SCHED_PT, SCHED_FIB, SYNC_MUTEX, SYNC_CHECK,
       SYNC_REAP, REQ, NQ };
static const char *const q_name[NQ][2] = {
	{ "Tsys", "getppid" },	{ "Tgen", "pthread" },	{ "Tgen", "fiber" },
	{ "Tsched", "pthread-yield" },	{ "Tsched", "fiber-switch" },
	{ "Tsync", "mutex" },	{ "Tsync", "completion-check" },
	{ "Tsync", "reap" },	{ "Treq", "post+release" } };
/* WSC Table 2 (Intel Core Duo 1.62 GHz, clocks); Tsys from its Table 1. */
static const int paper_cd[NQ] = { 464, 61, 61, 30, 30, 19, 19, 19, 29 };

#define NB 9
static const int batches[NB] = { 1, 2, 4, 8, 16, 32, 64, 128, 256 };

/* ---- the terms, each in TSC ticks per operation ---------------------- */

static double t_sys(long n)
{
	uint64_t t0 = bench_tsc();
	for (long i = 0; i < n; i++)
		xsc__sys0(SYS_getppid);
	return (double)(bench_tsc() - t0) / (double)n;
}

static void *empty(void *a)
{
	return a;
}

static double t_gen_pthread(long n)
{
	pthread_t t;
	uint64_t t0 = bench_tsc();

	for (long i = 0; i < n; i++) {
		if (pthread_create(&t, NULL, empty, NULL))
			return -1;
		pthread_join(t, NULL);
	}
	return (double)(bench_tsc() - t0) / (double)n;
}

static atomic_int yield_go;

static void *yielder(void *a)
{
	long n = (long)a;

	/* pairs with the release store in t_sched_pthread */
	while (!atomic_load_explicit(&yield_go, memory_order_acquire))
		sched_yield();
	for (long i = 0; i < n; i++)
		sched_yield();
	return NULL;
}

/* Two threads on core 0 (inherited affinity) yielding to each other:
 * every yield hands the core over, so a hand-off is time / 2n. */
static double t_sched_pthread(long n)
{
	pthread_t t;

	atomic_store_explicit(&yield_go, 0, memory_order_relaxed);
	if (pthread_create(&t, NULL, yielder, (void *)n))
		return -1;
	uint64_t t0 = bench_tsc();
	atomic_store_explicit(&yield_go, 1, memory_order_release);
	for (long i = 0; i < n; i++)
		sched_yield();
	pthread_join(t, NULL);
	return (double)(bench_tsc() - t0) / (double)(2 * n);
}

static double t_mutex(long n)
{
	static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	uint64_t t0 = bench_tsc();

	for (long i = 0; i < n; i++) {
		pthread_mutex_lock(&m);
		__asm__ volatile("" ::: "memory");
		pthread_mutex_unlock(&m);
	}
	return (double)(bench_tsc() - t0) / (double)n;
}

#ifdef HAVE_FIBER
static struct xsc_ctx f_main, f_fib;
static volatile int f_stop;

static void f_empty(void *a)
{
	(void)a;
}

static void f_loop(void *a)
{
	(void)a;
	while (!f_stop)
		xsc__ctx_switch(&f_fib, &f_main);
}

static void f_exit(struct xsc_ctx *self)
{
	xsc__ctx_exit(self, &f_main);
}

/* Tgen: take a stack, make a context, run it to its end, give it back. */
static double t_gen_fiber(long n)
{
	struct xsc_stack *st;
	uint64_t t0 = bench_tsc();

	for (long i = 0; i < n; i++) {
		if (xsc__stack_get(0, &st))
			return -1;
		xsc__ctx_make(&f_fib, st->lo, (size_t)((char *)st->hi - (char *)st->lo),
			      f_empty, NULL, f_exit);
		xsc__ctx_switch(&f_main, &f_fib);
		xsc__stack_put(st);
	}
	return (double)(bench_tsc() - t0) / (double)n;
}

/* Tsched: one one-way switch (a round trip is two). */
static double t_sched_fiber(long n)
{
	struct xsc_stack *st;

	if (xsc__stack_get(0, &st))
		return -1;
	f_stop = 0;
	xsc__ctx_make(&f_fib, st->lo, (size_t)((char *)st->hi - (char *)st->lo),
		      f_loop, NULL, f_exit);
	xsc__ctx_switch(&f_main, &f_fib);
	uint64_t t0 = bench_tsc();
	for (long i = 0; i < n; i++)
		xsc__ctx_switch(&f_main, &f_fib);
	double r = (double)(bench_tsc() - t0) / (double)(2 * n);
	f_stop = 1;
	xsc__ctx_switch(&f_main, &f_fib);
	xsc__stack_put(st);
	return r;
}
#endif

/* Treq: post + release (cancels the SUBMITTED entry), no flush. */
static double t_req(struct xsc *x, long n)
{
	uint64_t t0 = bench_tsc();

	for (long i = 0; i < n; i++) {
		int id = xsc_post(x, XSC_NR_NOP);
		if (id < 0 || xsc_release(x, id) < 0)
			return -1;
	}
	return (double)(bench_tsc() - t0) / (double)n;
}

/* Tsync, fiber flavour: checking an entry that is DONE. */
static double t_check(struct xsc *x, long n)
{
	long ret, bad = 0;
	int id = xsc_post(x, XSC_NR_NOP);

	if (id < 0 || xsc_wait(x, 1) < 1)
		return -1;
	uint64_t t0 = bench_tsc();
	for (long i = 0; i < n; i++)
		bad |= xsc_result(x, id, &ret) | ret;
	double r = (double)(bench_tsc() - t0) / (double)n;
	xsc_release(x, id);
	return bad ? -1 : r;
}

/* Tsync, batch flavour: wait + release per entry after a flush of 256
 * (as model_parts in bench/null.c). */
static double t_reap(struct xsc *x, long n)
{
	int ids[256];
	uint64_t tw = 0;
	long iters = n / 256 > 0 ? n / 256 : 1;

	for (long it = 0; it < iters; it++) {
		for (int i = 0; i < 256; i++)
			ids[i] = xsc_post(x, XSC_NR_NOP);
		xsc_flush(x);
		uint64_t t0 = bench_tsc();
		if (xsc_wait(x, 256) < 256)
			return -1;
		for (int i = 0; i < 256; i++)
			xsc_release(x, ids[i]);
		tw += bench_tsc() - t0;
	}
	return (double)tw / (double)(iters * 256);
}

/* ---- the batch curves ------------------------------------------------ */

static double b_uring(struct xsc *x, int b, long n)
{
	int ids[256];
	long iters = n / b > 0 ? n / b : 1;
	uint64_t t0 = bench_tsc();

	for (long it = 0; it < iters; it++) {
		for (int i = 0; i < b; i++)
			ids[i] = xsc_post(x, XSC_NR_NOP);
		xsc_flush(x);
		if (xsc_wait(x, (unsigned)b) < b)
			return -1;
		for (int i = 0; i < b; i++)
			xsc_release(x, ids[i]);
	}
	return (double)(bench_tsc() - t0) / (double)(iters * b);
}

static double b_raw(struct io_uring *ring, int b, long n)
{
	struct io_uring_cqe *cqe;
	unsigned head, got;
	long iters = n / b > 0 ? n / b : 1;
	uint64_t t0 = bench_tsc();

	for (long it = 0; it < iters; it++) {
		for (int i = 0; i < b; i++)
			io_uring_prep_nop(io_uring_get_sqe(ring));
		io_uring_submit_and_wait(ring, (unsigned)b);
		got = 0;
		io_uring_for_each_cqe(ring, head, cqe)
			got++;
		io_uring_cq_advance(ring, got);
	}
	return (double)(bench_tsc() - t0) / (double)(iters * b);
}

static void keep_min(double *best, double v, bool *bad)
{
	if (v < 0)
		*bad = true;
	else if (v < *best)
		*best = v;
}

/* One round: every term and every batch point, once each. */
static void round_once(struct xsc *x, struct io_uring *ring, bool quick,
		       double *q, double *sync_b, double *ur_b, double *raw_b,
		       bool *bad)
{
	long n = quick ? 20000 : 200000;

	keep_min(&q[SYS], t_sys(n), bad);
	keep_min(&q[GEN_PT], t_gen_pthread(quick ? 200 : 2000), bad);
	keep_min(&q[SCHED_PT], t_sched_pthread(quick ? 5000 : 50000), bad);
	keep_min(&q[SYNC_MUTEX], t_mutex(n), bad);
#ifdef HAVE_FIBER
	keep_min(&q[GEN_FIB], t_gen_fiber(n / 10), bad);
	keep_min(&q[SCHED_FIB], t_sched_fiber(n), bad);
#endif
	keep_min(&q[SYNC_CHECK], t_check(x, n), bad);
	keep_min(&q[SYNC_REAP], t_reap(x, n), bad);
	keep_min(&q[REQ], t_req(x, n), bad);
	for (int bi = 0; bi < NB; bi++) {
		keep_min(&sync_b[bi], t_sys(n), bad);
		keep_min(&ur_b[bi], b_uring(x, batches[bi], n), bad);
		keep_min(&raw_b[bi], b_raw(ring, batches[bi], n), bad);
	}
}

/* eq. (5); 0 when the denominator is not positive (never pays off). */
static void row(FILE *f, const char *q, const char *v, double ns, double ticks,
		const char *paper)
{
	if (ns > 0)
		printf("  %-8s %-18s %12.2f %12.1f   %s\n", q, v, ns, ticks, paper);
	else
		printf("  %-8s %-18s %12s %12s   %s\n", q, v, "never", "never", paper);
	if (f && ns > 0)
		fprintf(f, "%s,%s,%.3f,%.2f\n", q, v, ns, ticks);
	else if (f)
		fprintf(f, "%s,%s,,\n", q, v);
}

static const char usage[] =
	"usage: xsc bench wsc-model [--quick] [--rounds N] [--out DIR]\n"
	"  The WSC cost model: Tgen, Tsched, Tsync, Treq, Tsys measured, the\n"
	"  break-even batch M predicted by eq. (5) and the one measured.\n"
	"  Writes DIR/wsc-model.csv.\n";

/* The measured terms (q) and the per-call cost at each batch size:
 * sync, xsc's uring executor, raw liburing; TSC ticks. */
struct meas {
	double q[NQ], sb[NB], ub[NB], rb[NB];
};

/* The terms as measured, beside the paper's. */
static void print_terms(FILE *f, const struct meas *m, double ghz)
{
	printf("  %-8s %-18s %12s %12s   %s\n", "term", "variant", "ns", "ticks",
	       "paper, Core Duo 1.62 GHz (clocks)");
	for (int k = 0; k < NQ; k++) {
		char paper[32];
		snprintf(paper, sizeof(paper), "%d", paper_cd[k]);
		if (m->q[k] > 0)
			row(f, q_name[k][0], q_name[k][1], m->q[k] / ghz, m->q[k], paper);
	}
}

/* eq. (5), three ways, the refined model, and the break-even measured on
 * the batch path. */
static void print_breakeven(FILE *f, const struct meas *m, double ghz)
{
	const double *q = m->q;
	double sys = q[SYS];
	double m_pt = bench_wsc_m(sys, q[GEN_PT] + q[SCHED_PT] + q[SYNC_MUTEX] + q[REQ]);
	double m_fib = bench_wsc_m(sys, q[GEN_FIB] + q[SCHED_FIB] + q[SYNC_CHECK] + q[REQ]);
	double m_b = bench_wsc_m(sys, q[SYNC_REAP] + q[REQ]);
	struct bench_refined rm = bench_refined_model(m->rb[0], m->rb[NB - 1], sys,
						      q[REQ] + q[SYNC_REAP]);
	double m_ref = rm.m, tenter = rm.tenter, top = rm.top;
	int measured = 0;

	for (int b = 0; b < NB && !measured; b++)
		if (m->ub[b] < m->sb[b])
			measured = batches[b];
	printf("  break-even M, eq. (5) M > Tsys / (Tsys - (Tgen+Tsched+Tsync+Treq)):\n");
	row(f, "M", "predicted-pthread", m_pt, m_pt, "1.42 (P4 1.24, Celeron 3.4)");
	if (q[GEN_FIB] > 0)
		row(f, "M", "predicted-fiber", m_fib, m_fib, "");
	row(f, "M", "predicted-batch", m_b, m_b, "(Tgen = Tsched = 0)");
	row(f, "M", "refined-batch", m_ref, m_ref, "Tenter/(Tsys-Top-Treq-Tsync)");
	row(f, "M", "measured-batch", measured, measured, "2 (P4, Core Duo), 4 (Celeron)");
	printf("  refined model: Tenter = %.1f ns (one io_uring_enter), Top = %.1f ns "
	       "(kernel work per NOP), from raw liburing at batch 1 and 256\n",
	       tenter / ghz, top / ghz);
}

/* The per-call cost at each batch size. */
static void print_batches(FILE *f, const struct meas *m, double ghz)
{
	printf("\n  per-call cost, ns: %6s %9s %9s %9s\n", "batch", "sync", "xsc-uring",
	       "raw-uring");
	for (int b = 0; b < NB; b++) {
		char v[16];
		printf("                     %6d %9.1f %9.1f %9.1f\n", batches[b],
		       m->sb[b] / ghz, m->ub[b] / ghz, m->rb[b] / ghz);
		snprintf(v, sizeof(v), "batch=%d", batches[b]);
		if (f) {
			fprintf(f, "per-call-sync,%s,%.3f,%.2f\n", v, m->sb[b] / ghz, m->sb[b]);
			fprintf(f, "per-call-xsc-uring,%s,%.3f,%.2f\n", v, m->ub[b] / ghz,
				m->ub[b]);
			fprintf(f, "per-call-raw-uring,%s,%.3f,%.2f\n", v, m->rb[b] / ghz,
				m->rb[b]);
		}
	}
}

/* Best of the rounds into m; false when a measurement failed. */
static bool measure_all(struct xsc *x, struct io_uring *ring, const struct bench_opts *o,
			struct meas *m)
{
	bool bad = false;

	for (int k = 0; k < NQ; k++)
		m->q[k] = 1e300;
	for (int b = 0; b < NB; b++)
		m->sb[b] = m->ub[b] = m->rb[b] = 1e300;
	int64_t t0 = bench_now_ns();
	for (int r = 0; r < o->rounds && !bad; r++) {
		bench_progress("bench wsc-model", r, o->rounds, t0);
		round_once(x, ring, o->quick, m->q, m->sb, m->ub, m->rb, &bad);
	}
	bench_progress_done();
	if (bad) {
		fprintf(stderr, "xsc bench wsc-model: a measurement failed\n");
		return false;
	}
#ifndef HAVE_FIBER
	m->q[GEN_FIB] = m->q[SCHED_FIB] = 0;
#endif
	return true;
}

int xsc_bench_wscmodel(int argc, char **argv)
{
	struct bench_opts o;
	struct bench_uring_pair u;
	struct meas m;
	int rc, ret = 1;

	if (!bench_args(argc, argv, &o, usage, &rc))
		return rc;
	bench_pin(0);
	double ghz = bench_tsc_per_ns(o.quick ? 20 : 100);
	/* 4 pages: 256 entries, the largest batch */
	if (bench_uring_pair_open(&u, 4, XSC_NR_NOP, 1024, "xsc bench wsc-model"))
		goto out;
#ifdef HAVE_FIBER
	xsc__stack_thread_init();
#endif
	if (!measure_all(u.x, &u.ring, &o, &m))
		goto out_fini;

	FILE *f = bench_csv_open(&o, "wsc-model", "quantity,variant,ns,ticks");
	printf("WSC cost model (best of %d rounds; TSC %.0f MHz, ticks are TSC "
	       "ticks, not core cycles)\n", o.rounds, ghz * 1000);
	print_terms(f, &m, ghz);
	print_breakeven(f, &m, ghz);
	print_batches(f, &m, ghz);
	printf("The io_uring paths run IORING_OP_NOP (io_uring's null call); sync "
	       "runs getppid.  The paper's Tgen/Tsched are CEFOS user-level threads; "
	       "the fiber rows are the analogue, the pthread rows the kernel-thread "
	       "bound.\n");
	ret = f && bench_csv_close(&o, "wsc-model", f, true) == 0 ? 0 : 1;
	if (!ret)
		printf("wrote %s/wsc-model.csv\n", o.out);
out_fini:
#ifdef HAVE_FIBER
	xsc__stack_thread_fini();
#endif
out:
	bench_uring_pair_close(&u);
	return ret;
}
