/*
 * switch.c - `xsc bench switch`: the cost of one user-space context
 * switch, xsc's (src/arch/x86_64/switch.S) against glibc's swapcontext,
 * measured in the same run so the ratio is what counts.
 *
 *   xsc bench switch [-n SWITCHES] [-r RUNS]     (defaults 10000000, 5)
 *
 * Two contexts ping-pong; a round trip is two one-way switches, and the
 * figure is elapsed time / switches, best of RUNS.  swapcontext makes an
 * rt_sigprocmask system call per switch, so it gets a tenth of the
 * switches.  Prints one human line and one CSV line, and writes the CSV
 * (with a header) to results/switch.csv under the current directory.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <ucontext.h>

#include "fiber/ctx.h"
#include "harness.h"

int xsc_bench_switch(int argc, char **argv);

static struct xsc_ctx x_main, x_fib;
static ucontext_t u_main, u_fib;
static volatile int x_stop;

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void x_fiber(void *arg)
{
	(void)arg;
	while (!x_stop)
		xsc__ctx_switch(&x_fib, &x_main);
}

static void x_done(struct xsc_ctx *self)
{
	xsc__ctx_exit(self, &x_main);
}

/* ns per one-way switch, or a negative errno. */
static double run_xsc(struct xsc_stack *st, long rounds)
{
	double t0, t1;
	int err;

	x_stop = 0;
	err = xsc__ctx_make(&x_fib, st->lo, (char *)st->hi - (char *)st->lo,
			    x_fiber, NULL, x_done);
	if (err)
		return err;
	xsc__ctx_switch(&x_main, &x_fib);	/* warm: first entry */
	t0 = now_ns();
	for (long i = 0; i < rounds; i++)
		xsc__ctx_switch(&x_main, &x_fib);
	t1 = now_ns();
	x_stop = 1;
	xsc__ctx_switch(&x_main, &x_fib);	/* let it return */
	return (t1 - t0) / (2.0 * rounds);
}

static void u_fiber(void)
{
	for (;;)
		swapcontext(&u_fib, &u_main);
}

static double run_ucontext(struct xsc_stack *st, long rounds)
{
	double t0, t1;

	if (getcontext(&u_fib))
		return -errno;
	u_fib.uc_stack.ss_sp = st->lo;
	u_fib.uc_stack.ss_size = (size_t)((char *)st->hi - (char *)st->lo);
	u_fib.uc_link = &u_main;
	makecontext(&u_fib, u_fiber, 0);
	swapcontext(&u_main, &u_fib);
	t0 = now_ns();
	for (long i = 0; i < rounds; i++)
		swapcontext(&u_main, &u_fib);
	t1 = now_ns();
	return (t1 - t0) / (2.0 * rounds);
}

static const char usage[] =
	"usage: xsc bench switch [--quick] [--rounds N] [--out DIR] [-n SWITCHES]\n"
	"  One-way fiber context-switch cost vs ucontext swapcontext, in one run.\n"
	"  Writes DIR/switch.csv.\n";

int xsc_bench_switch(int argc, char **argv)
{
	struct bench_opts o;
	long switches, runs;
	double best_x = 1e30, best_u = 1e30, t;
	struct xsc_stack *st;
	char row[160];
	FILE *f;
	int err, i = bench_parse(argc, argv, &o, usage);

	if (i < 0)
		return i == -2 ? 0 : 2;
	switches = o.quick ? 1000000 : 10000000;
	runs = o.rounds;
	for (; i < argc; i++) {
		if (i + 1 < argc && !strcmp(argv[i], "-n")) {
			switches = atol(argv[++i]);
		} else {
			fprintf(stderr, "xsc bench switch: unexpected %s\n%s", argv[i], usage);
			return 2;
		}
	}
	if (switches < 20) {
		fprintf(stderr, "%s", usage);
		return 2;
	}
	err = xsc__stack_get(0, &st);
	if (err) {
		fprintf(stderr, "xsc bench switch: no stack: %s\n", strerror(-err));
		return 1;
	}
	for (long r = 0; r < runs; r++) {
		/* Interleaved, so drift on a noisy machine hits both alike. */
		t = run_xsc(st, switches / 2);
		if (t < 0)
			goto out_put;
		best_x = t < best_x ? t : best_x;
		t = run_ucontext(st, switches / 20);
		if (t < 0)
			goto out_put;
		best_u = t < best_u ? t : best_u;
	}
	xsc__stack_put(st);
	printf("switch: xsc %.2f ns/switch, ucontext %.2f ns/switch, "
	       "ucontext/xsc %.1fx (one-way, best of %ld x %ld switches)\n",
	       best_x, best_u, best_u / best_x, runs, switches);
	snprintf(row, sizeof(row), "switch,%ld,%ld,%.3f,%.3f,%.2f", switches,
		 runs, best_x, best_u, best_u / best_x);
	printf("%s\n", row);
	f = bench_csv_open(&o, "switch", "bench,switches,runs,xsc_ns,ucontext_ns,ratio");
	if (!f)
		return 1;
	fprintf(f, "%s\n", row);
	return bench_csv_close(&o, "switch", f, true) == 0 ? 0 : 1;

out_put:
	xsc__stack_put(st);
	fprintf(stderr, "xsc bench switch: %s\n", strerror((int)-t));
	return 1;
}

#ifdef XSC_BENCH_MAIN
int main(int argc, char **argv)
{
	return xsc_bench_switch(argc, argv);
}
#endif
