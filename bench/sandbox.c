/*
 * sandbox.c - `xsc bench sandbox`: what following the program's sandbox
 * costs (docs/security.md, "Costs").
 *
 * A seccomp filter that allows everything but mkdir is installed in the
 * middle of each run, so the same process measures before and after:
 *
 *   call      one 64-byte write to /dev/null at a time: xsc_call on an
 *             auto handle (library), or one fiber's call (fibers);
 *   batch32   32 writes in flight: 32 posts, one flush, 32 reaps
 *             (library), or 32 fibers writing (fibers);
 *   change    the sandbox change itself: xsc_sandbox_changed after the
 *             filter went in natively (library), or the seccomp call
 *             made by a fiber, which xsc installs with TSYNC (fibers);
 *             its native column is installing the filter natively.
 *
 * A mkdir after the change must get the filter's EPERM, or the part
 * fails.  After the change, library calls run in the caller (synchronous) and
 * fibers' calls on syscall threads; io_uring is not used again.  Every
 * row's native columns are plain write(2) in a process of its own, before
 * and after the same filter (a filter costs natively too).  Each part
 * runs in a forked child (a filter cannot be removed), reports through a
 * pipe, and is killed as a hang after 60 s.  ns per call, best of rounds.
 *
 *   xsc bench sandbox [--quick] [--rounds N] [--out DIR]
 *
 * Writes DIR/sandbox.csv: metric,mode,xsc_before_ns,xsc_after_ns,
 * after_over_before,native_before_ns,native_after_ns.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "harness.h"
#include "xsc.h"

int xsc_bench_sandbox(int argc, char **argv);

#define BATCH 32
#define TIMEOUT_S 60

enum { CALL, BATCH32, CHANGE, NMETRIC };
static const char *const mname[NMETRIC] = { "call", "batch32", "change" };

struct part {			/* one child's report, ns */
	double before[NMETRIC], after[NMETRIC];
	char err[160];
};

static long ncalls;		/* calls per measurement */
static int nrounds;
static int devnull;
static const char msg[64] = "xsc bench sandbox: 64 bytes to /dev/null, each call";

static struct sock_filter deny_mkdir[] = {
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mkdir, 0, 1),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};
static struct sock_fprog prog = { sizeof(deny_mkdir) / sizeof(deny_mkdir[0]), deny_mkdir };

static void fail(struct part *p, const char *what, long err)
{
	if (!p->err[0])
		snprintf(p->err, sizeof(p->err), "%s: %s", what, strerror((int)-err));
}

/* ---- native ---------------------------------------------------------------------- */

static double native_loop(struct part *p)
{
	double best = 1e30;

	for (int r = 0; r < nrounds; r++) {
		int64_t t0 = bench_now_ns();
		for (long i = 0; i < ncalls; i++)
			if (write(devnull, msg, sizeof(msg)) != (ssize_t)sizeof(msg)) {
				fail(p, "write", -errno);
				return 0;
			}
		double ns = (double)(bench_now_ns() - t0) / (double)ncalls;
		best = ns < best ? ns : best;
	}
	return best;
}

static void native_part(void *arg)
{
	struct part *p = arg;
	p->before[CALL] = p->before[BATCH32] = native_loop(p);
	int64_t t0 = bench_now_ns();
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog)) {
		fail(p, "seccomp", -errno);
		return;
	}
	p->after[CHANGE] = (double)(bench_now_ns() - t0);
	p->after[CALL] = p->after[BATCH32] = native_loop(p);
}

/* ---- library mode ------------------------------------------------------------------ */

static double lib_call(struct part *p, struct xsc *x)
{
	double best = 1e30;

	for (int r = 0; r < nrounds; r++) {
		int64_t t0 = bench_now_ns();
		for (long i = 0; i < ncalls; i++) {
			long w = xsc_call(x, SYS_write, devnull, msg, sizeof(msg));
			if (w != (long)sizeof(msg)) {
				fail(p, "xsc_call(write)", w < 0 ? w : -EIO);
				return 0;
			}
		}
		double ns = (double)(bench_now_ns() - t0) / (double)ncalls;
		best = ns < best ? ns : best;
	}
	return best;
}

static double lib_batch(struct part *p, struct xsc *x)
{
	double best = 1e30;
	int id[BATCH];

	for (int r = 0; r < nrounds; r++) {
		int64_t t0 = bench_now_ns();
		for (long i = 0; i < ncalls; i += BATCH) {
			for (int k = 0; k < BATCH; k++)
				if ((id[k] = xsc_post(x, SYS_write, devnull, msg, sizeof(msg))) < 0) {
					fail(p, "xsc_post", id[k]);
					return 0;
				}
			xsc_flush(x);
			for (int k = 0; k < BATCH; k++) {
				long w;
				int e = xsc_take(x, id[k], &w);
				if (e < 0 || w != (long)sizeof(msg)) {
					fail(p, "xsc_take(write)", e < 0 ? e : -EIO);
					return 0;
				}
			}
		}
		double ns = (double)(bench_now_ns() - t0) / (double)(ncalls / BATCH * BATCH);
		best = ns < best ? ns : best;
	}
	return best;
}

static void lib_part(void *arg)
{
	struct part *p = arg;
	struct xsc *x;
	long r;

	if ((r = xsc_open(&x, NULL)) != 0) {
		fail(p, "xsc_open", r);
		return;
	}
	p->before[CALL] = lib_call(p, x);
	p->before[BATCH32] = lib_batch(p, x);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog)) {
		fail(p, "seccomp", -errno);
		return;
	}
	int64_t t0 = bench_now_ns();
	if ((r = xsc_sandbox_changed(x)) != 0) {
		fail(p, "xsc_sandbox_changed", r);
		return;
	}
	p->after[CHANGE] = (double)(bench_now_ns() - t0);
	if ((r = xsc_call(x, SYS_mkdir, "/proc/xsc-bench-sandbox", 0700)) != -EPERM) {
		fail(p, "mkdir through the handle after the filter (want EPERM)", r < 0 ? r : -EIO);
		return;
	}
	p->after[CALL] = lib_call(p, x);
	p->after[BATCH32] = lib_batch(p, x);
	xsc_close(x);
}

/* ---- xsc threads ------------------------------------------------------------------ */

static struct part *fib_p;

static void *writer(void *arg)
{
	long n = (long)arg;

	for (long i = 0; i < n; i++) {
		long w = xsc_syscall(SYS_write, devnull, msg, sizeof(msg));
		if (w != (long)sizeof(msg)) {
			fail(fib_p, "write from a fiber", w < 0 ? w : -EIO);
			break;
		}
	}
	return NULL;
}

static double fib_call(void)
{
	double best = 1e30;

	for (int r = 0; r < nrounds; r++) {
		int64_t t0 = bench_now_ns();
		writer((void *)ncalls);
		double ns = (double)(bench_now_ns() - t0) / (double)ncalls;
		best = ns < best ? ns : best;
	}
	return best;
}

static double fib_batch(void)
{
	double best = 1e30;
	xsc_thread_t t[BATCH];

	for (int r = 0; r < nrounds; r++) {
		int64_t t0 = bench_now_ns();
		for (int k = 0; k < BATCH; k++)
			if (xsc_thread_create(&t[k], NULL, writer, (void *)(ncalls / BATCH)) != 0) {
				fail(fib_p, "xsc_thread_create", -EAGAIN);
				return 0;
			}
		for (int k = 0; k < BATCH; k++)
			xsc_thread_join(t[k], NULL);
		double ns = (double)(bench_now_ns() - t0) / (double)(ncalls / BATCH * BATCH);
		best = ns < best ? ns : best;
	}
	return best;
}

static int fib_first(int argc, char **argv)
{
	struct part *p = fib_p;
	long r;

	(void)argc;
	(void)argv;
	p->before[CALL] = fib_call();
	p->before[BATCH32] = fib_batch();
	if ((r = xsc_syscall(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) != 0) {
		fail(p, "prctl(NO_NEW_PRIVS) from a fiber", r);
		return 1;
	}
	int64_t t0 = bench_now_ns();
	if ((r = xsc_syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog)) != 0) {
		fail(p, "seccomp from a fiber", r);
		return 1;
	}
	p->after[CHANGE] = (double)(bench_now_ns() - t0);
	if ((r = xsc_syscall(SYS_mkdir, "/proc/xsc-bench-sandbox", 0700)) != -EPERM) {
		fail(p, "mkdir from a fiber after the filter (want EPERM)", r < 0 ? r : -EIO);
		return 1;
	}
	p->after[CALL] = fib_call();
	p->after[BATCH32] = fib_batch();
	return 0;
}

static void fib_part(void *arg)
{
	struct part *p = arg;
	struct xsc_runtime_config cfg;
	int r;

	fib_p = p;
	xsc_runtime_config_init(&cfg);
	if ((r = xsc_main(fib_first, 0, NULL, &cfg)) < 0)
		fail(p, "xsc_main", r);
}

/* ---- children ------------------------------------------------------------------ */

static bool run_part(void (*fn)(void *), struct part *p, const char *name)
{
	memset(p, 0, sizeof(*p));
	if (!bench_in_child(fn, p, p, sizeof(*p), TIMEOUT_S, p->err,
			    sizeof(p->err)) && !p->err[0])
		snprintf(p->err, sizeof(p->err), "no result");
	if (p->err[0]) {
		fprintf(stderr, "xsc bench sandbox: %s: %s\n", name, p->err);
		return false;
	}
	return true;
}

static const char usage[] =
	"usage: xsc bench sandbox [--quick] [--rounds N] [--out DIR]\n"
	"  The cost of following a seccomp filter installed mid-run: calls one at\n"
	"  a time and 32 in flight, before and after, library mode and xsc\n"
	"  threads, beside native write(2) with the same filter.\n"
	"  Writes DIR/sandbox.csv.\n";

int xsc_bench_sandbox(int argc, char **argv)
{
	struct bench_opts o;
	struct part nat, lib, fib;
	const struct part *xp[2] = { &lib, &fib };
	static const char *const mode[2] = { "library", "fibers" };
	int rc;
	bool ok;

	if (!bench_args(argc, argv, &o, usage, &rc))
		return rc;
	ncalls = o.quick ? 20000 : 200000;
	nrounds = o.rounds;
	devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (devnull < 0) {
		perror("xsc bench sandbox: /dev/null");
		return 1;
	}
	ok = run_part(native_part, &nat, "native");
	ok &= run_part(lib_part, &lib, "library");
	ok &= run_part(fib_part, &fib, "fibers");
	close(devnull);

	FILE *f = bench_csv_open(&o, "sandbox", "metric,mode,xsc_before_ns,xsc_after_ns,"
				 "after_over_before,native_before_ns,native_after_ns");
	if (!f)
		return 1;
	printf("Following a seccomp filter installed mid-run, ns per call (best of %d "
	       "rounds of %ld calls; change: ns once)\n", nrounds, ncalls);
	printf("  %-8s %-8s %12s %12s %8s %14s %14s\n", "metric", "mode", "xsc before",
	       "xsc after", "after/bef", "native before", "native after");
	for (int m = 0; m < NMETRIC; m++)
		for (int k = 0; k < 2; k++) {
			const struct part *p = xp[k];
			if (m == CHANGE) {
				printf("  %-8s %-8s %12s %12.0f %8s %14s %14.0f\n", mname[m], mode[k],
				       "-", p->after[m], "-", "-", nat.after[m]);
				fprintf(f, "%s,%s,,%.1f,,,%.1f\n", mname[m], mode[k], p->after[m],
					nat.after[m]);
				continue;
			}
			double q = p->before[m] > 0 ? p->after[m] / p->before[m] : 0;
			printf("  %-8s %-8s %12.1f %12.1f %8.2f %14.1f %14.1f\n", mname[m], mode[k],
			       p->before[m], p->after[m], q, nat.before[m], nat.after[m]);
			fprintf(f, "%s,%s,%.1f,%.1f,%.2f,%.1f,%.1f\n", mname[m], mode[k],
				p->before[m], p->after[m], q, nat.before[m], nat.after[m]);
		}
	if (bench_csv_close(&o, "sandbox", f, ok) != 0 || !ok)
		return 1;
	return 0;
}
