/*
 * fibers.c - `xsc bench fibers`: xsc threads (fibers on the M:N runtime)
 * against NPTL threads, side by side in one run:
 *
 *   create     create + join of many threads that return at once, ns each
 *   switch     two threads ping-pong over a semaphore while LOAD others are
 *              blocked in read(), ns per switch (a round trip is two)
 *   mem-*      resident memory per thread: N threads blocked in read() of
 *              one empty pipe, or idle on a semaphore; KiB per thread from
 *              VmRSS before and after (the fiber rows also with 16 KiB
 *              stacks)
 *   pingpong   N pairs, each over its own UNIX socketpair: A writes a byte
 *              and reads the answer, B answers; round trips per second of
 *              all pairs together, N = 10 .. as many as RLIMIT_NOFILE
 *              allows (two descriptors a pair), at least 5 round trips a
 *              pair (the start of 20,000 threads is not what is measured)
 *
 *   xsc bench fibers [--quick] [--out DIR]
 *
 * The memory rows also measure Go's goroutines, the usual anchor of cheap
 * threads, when `go` is installed (Debian's golang-go): the program in
 * bench/go/fibers.go, carried inside xsc (go_src.S), built into a
 * temporary directory and run once per row.
 *
 * Every measurement runs in a child process of its own (fork), so memory
 * figures start from the same state and a thread kind that cannot start
 * that many threads (NPTL: vm.max_map_count, threads-max) is reported as
 * such for that row only.  An xsc child that does not finish in time is a
 * hang and fails the experiment.  Prints a table, writes DIR/fibers.csv
 * (metric,n,xsc,nptl,xsc_over_nptl,go; empty where one side could not
 * run) and DIR/fibers.png (ping-pong throughput against N).
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "harness.h"
#include "xsc.h"

int xsc_bench_fibers(int argc, char **argv);

enum impl { XSC, XSC_SMALL, NPTL };

/* ---- one thread API over both kinds ----------------------------------- */

static enum impl kind;

struct th {
	xsc_thread_t x;
	pthread_t p;
};

static int th_create(struct th *t, void *(*fn)(void *), void *arg)
{
	if (kind == NPTL) {
		pthread_attr_t a;
		int r;

		pthread_attr_init(&a);
		pthread_attr_setstacksize(&a, 64 * 1024);	/* room for 100k */
		r = pthread_create(&t->p, &a, fn, arg);
		pthread_attr_destroy(&a);
		return -r;
	}
	return xsc_thread_create(&t->x, NULL, fn, arg);
}

static void th_join(struct th *t)
{
	if (kind == NPTL)
		pthread_join(t->p, NULL);
	else
		xsc_thread_join(t->x, NULL);
}

static long th_read(int fd, void *b, size_t n)
{
	if (kind == NPTL) {
		ssize_t r = read(fd, b, n);
		return r < 0 ? -errno : r;
	}
	return xsc_read(fd, b, n);
}

static long th_write(int fd, const void *b, size_t n)
{
	if (kind == NPTL) {
		ssize_t r = write(fd, b, n);
		return r < 0 ? -errno : r;
	}
	return xsc_write(fd, b, n);
}

struct sema {
	sem_t p;
	xsc_sem_t x;
};

static void sema_init(struct sema *s)
{
	if (kind == NPTL)
		sem_init(&s->p, 0, 0);
	else
		xsc_sem_init(&s->x, 0);
}

static void sema_wait(struct sema *s)
{
	if (kind == NPTL)
		while (sem_wait(&s->p) && errno == EINTR)
			;
	else
		xsc_sem_wait(&s->x);
}

static void sema_post(struct sema *s)
{
	if (kind == NPTL)
		sem_post(&s->p);
	else
		xsc_sem_post(&s->x);
}

/* ---- the measurements (in the child) ------------------------------------ */

static long rss_kib(void)
{
	char line[256];
	long kib = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

static void *nothing(void *arg)
{
	return arg;
}

static _Atomic long started;
static int gate[2];
static struct sema idle_sem;

/* Blocked in read() of the shared empty pipe until its writer closes. */
static void *blocked_reader(void *arg)
{
	char c;

	atomic_fetch_add(&started, 1);
	return (void *)th_read(gate[0], &c, 1) == 0 ? arg : NULL;
}

static void *idle_waiter(void *arg)
{
	atomic_fetch_add(&started, 1);
	sema_wait(&idle_sem);
	return arg;
}

/* Waits until all n have started and had time to block. */
static void settle(long n)
{
	while (atomic_load(&started) < n)
		if (kind == NPTL)
			usleep(1000);
		else
			xsc_yield();
	for (int i = 0; i < 20; i++)	/* let the last ones reach their wait */
		if (kind == NPTL)
			usleep(1000);
		else
			xsc_yield();
	if (kind == NPTL)
		usleep(50000);
	else
		xsc_usleep(50000);
}

/* Starts n threads running fn; how many started (fewer: the error in *err). */
static long start_many(struct th *t, long n, void *(*fn)(void *), int *err)
{
	for (long i = 0; i < n; i++) {
		int r = th_create(&t[i], fn, NULL);
		if (r) {
			*err = r;
			return i;
		}
	}
	return n;
}

struct result {
	double v;
	char err[96];
};

static void m_create(long n, struct result *r)
{
	struct th *t = calloc((size_t)n, sizeof(*t));
	int err = 0;
	int64_t t0 = bench_now_ns();
	long got = start_many(t, n, nothing, &err);

	for (long i = 0; i < got; i++)
		th_join(&t[i]);
	if (got < n)
		snprintf(r->err, sizeof(r->err), "only %ld threads started (%s)", got,
			 strerror(-err));
	else
		r->v = (double)(bench_now_ns() - t0) / (double)n;
	free(t);
}

static struct sema ping, pong;
static long rounds;

static void *ponger(void *arg)
{
	for (long i = 0; i < rounds; i++) {
		sema_wait(&ping);
		sema_post(&pong);
	}
	return arg;
}

static void m_switch(long load, long nrounds, struct result *r)
{
	struct th *t = calloc((size_t)load + 1, sizeof(*t));
	int err = 0;
	long got;
	int64_t t0;

	if (pipe(gate))
		abort();
	got = start_many(t, load, blocked_reader, &err);
	if (got < load) {
		snprintf(r->err, sizeof(r->err), "only %ld threads started (%s)", got,
			 strerror(-err));
	} else {
		settle(load);
		sema_init(&ping);
		sema_init(&pong);
		rounds = nrounds;
		if (th_create(&t[load], ponger, NULL))
			abort();
		t0 = bench_now_ns();
		for (long i = 0; i < rounds; i++) {
			sema_post(&ping);
			sema_wait(&pong);
		}
		r->v = (double)(bench_now_ns() - t0) / (2.0 * (double)rounds);
		th_join(&t[load]);
	}
	close(gate[1]);
	for (long i = 0; i < got; i++)
		th_join(&t[i]);
	close(gate[0]);
	free(t);
}

static void m_mem(long n, bool blocked, struct result *r)
{
	struct th *t = calloc((size_t)n, sizeof(*t));
	int err = 0;
	long before, after, got;

	if (pipe(gate))
		abort();
	sema_init(&idle_sem);
	before = rss_kib();
	got = start_many(t, n, blocked ? blocked_reader : idle_waiter, &err);
	if (got < n) {
		snprintf(r->err, sizeof(r->err), "only %ld threads started (%s)", got,
			 strerror(-err));
	} else {
		settle(n);
		after = rss_kib();
		r->v = (double)(after - before) / (double)n;
	}
	close(gate[1]);
	for (long i = 0; i < got; i++)
		sema_post(&idle_sem);
	for (long i = 0; i < got; i++)
		th_join(&t[i]);
	close(gate[0]);
	free(t);
}

struct pair {
	int a, b;		/* the socketpair's two ends */
	long bad;
};

static void *side_a(void *arg)
{
	struct pair *p = arg;
	unsigned char c = (unsigned char)(p->a * 7), got;

	atomic_fetch_add(&started, 1);
	if (th_read(gate[0], &got, 1) != 0)	/* the start: the gate closes */
		p->bad++;
	for (long i = 0; i < rounds; i++, c++) {
		if (th_write(p->a, &c, 1) != 1 || th_read(p->a, &got, 1) != 1 ||
		    got != (unsigned char)~c)
			p->bad++;
	}
	return NULL;
}

static void *side_b(void *arg)
{
	struct pair *p = arg;
	unsigned char c;

	for (long i = 0; i < rounds; i++) {
		if (th_read(p->b, &c, 1) != 1)
			p->bad++;
		c = (unsigned char)~c;
		if (th_write(p->b, &c, 1) != 1)
			p->bad++;
	}
	return NULL;
}

static void m_pingpong(long n, long nrounds, struct result *r)
{
	struct pair *p = calloc((size_t)n, sizeof(*p));
	struct th *t = calloc((size_t)n * 2, sizeof(*t));
	long made = 0, got = 0, bad = 0;
	int err = 0;
	int64_t t0;

	rounds = nrounds;
	if (pipe(gate))
		abort();
	for (; made < n; made++) {
		int sv[2];
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
			err = -errno;
			break;
		}
		p[made].a = sv[0];
		p[made].b = sv[1];
	}
	if (made == n) {
		for (; got < 2 * n; got++) {
			err = th_create(&t[got], got % 2 ? side_b : side_a, &p[got / 2]);
			if (err)
				break;
		}
	}
	if (made < n || got < 2 * n) {
		snprintf(r->err, sizeof(r->err), "only %ld pairs (%s)",
			 made < n ? made : got / 2, strerror(-err));
		rounds = 0;	/* the started ones finish at once */
		close(gate[1]);
	} else {
		settle(n);
		t0 = bench_now_ns();
		close(gate[1]);
		for (long i = 0; i < got; i++)
			th_join(&t[i]);
		r->v = (double)n * (double)rounds * 1e9 / (double)(bench_now_ns() - t0);
		got = 0;
	}
	for (long i = 0; i < got; i++)
		th_join(&t[i]);
	for (long i = 0; i < made; i++) {
		bad += p[i].bad;
		close(p[i].a);
		close(p[i].b);
	}
	if (bad && !r->err[0])
		snprintf(r->err, sizeof(r->err), "%ld wrong or short transfers", bad);
	close(gate[0]);
	free(p);
	free(t);
}

/* ---- running one measurement in a child ---------------------------------- */

enum metric { M_CREATE, M_SWITCH, M_MEM_BLOCKED, M_MEM_IDLE, M_PINGPONG };
static const char *const mname[] = { "create", "switch", "mem-blocked", "mem-idle",
				     "pingpong" };
static const char *const munit[] = { "ns/thread", "ns/switch", "KiB/thread",
				     "KiB/thread", "round trips/s" };

struct job {
	enum metric m;
	long n, arg;
	struct result r;
};

static struct job *cur_job;

static void measure(struct job *j)
{
	switch (j->m) {
	case M_CREATE: m_create(j->n, &j->r); break;
	case M_SWITCH: m_switch(j->n, j->arg, &j->r); break;
	case M_MEM_BLOCKED: m_mem(j->n, true, &j->r); break;
	case M_MEM_IDLE: m_mem(j->n, false, &j->r); break;
	case M_PINGPONG: m_pingpong(j->n, j->arg, &j->r); break;
	}
}

static int xsc_first(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	measure(cur_job);
	return 0;
}

/* The child's side of run_job: kind and cur_job say what to measure. */
static void job_child(void *arg)
{
	struct job *j = arg;
	struct xsc_runtime_config cfg;
	int r;

	if (kind == NPTL) {
		measure(j);
		return;
	}
	xsc_runtime_config_init(&cfg);
	if (kind == XSC_SMALL)
		cfg.stack_size = 16 * 1024;
	r = xsc_main(xsc_first, 0, NULL, &cfg);
	if (r < 0)
		snprintf(j->r.err, sizeof(j->r.err), "xsc_main: %s", strerror(-r));
}

/* Runs j with thread kind k in a child; false when it failed to report in
 * time (a hang) or died.  j->r.err says why a row has no value.  Only
 * xsc's failures fail the experiment: NPTL's (ASan's allocator gives out
 * under 100,000 threads) are the row's note. */
static bool run_job(struct job *j, enum impl k, int timeout_s)
{
	memset(&j->r, 0, sizeof(j->r));
	kind = k;		/* read by the child only */
	cur_job = j;
	if (bench_in_child(job_child, j, &j->r, sizeof(j->r), timeout_s, j->r.err,
			   sizeof(j->r.err)))
		return true;
	fprintf(stderr, "xsc bench fibers: %s n=%ld on %s: %s\n", mname[j->m], j->n,
		k == NPTL ? "NPTL" : "xsc", j->r.err);
	return false;
}

/* ---- Go's goroutines ------------------------------------------------------ */

extern const char bench_go_src[];	/* bench/go/fibers.go (go_src.S) */
static char go_dir[64];			/* the built anchor's directory */

/* Builds the Go anchor; false (with a note) when go is missing or fails. */
static bool go_build(void)
{
	char path[128], cmd[512];
	FILE *f;

	if (system("command -v go >/dev/null 2>&1") != 0) {
		printf("  (Go not installed: no goroutine column; apt-get install golang-go)\n");
		return false;
	}
	snprintf(go_dir, sizeof(go_dir), "/tmp/xsc-bench-go.XXXXXX");
	if (!mkdtemp(go_dir))
		return false;
	snprintf(path, sizeof(path), "%s/fibers.go", go_dir);
	f = fopen(path, "w");
	if (!f || fputs(bench_go_src, f) < 0 || fclose(f)) {
		if (f)
			fclose(f);
		return false;
	}
	snprintf(cmd, sizeof(cmd), "cd %s && GOCACHE=%s/cache GOPATH=%s/gopath GOFLAGS= "
		 "go build -o fibers-go fibers.go >build.log 2>&1", go_dir, go_dir, go_dir);
	if (system(cmd) != 0) {
		printf("  (go build failed: see %s/build.log; no goroutine column)\n", go_dir);
		return false;
	}
	return true;
}

/* KiB per goroutine, blocked or idle, n of them; < 0 when it failed. */
static double go_mem(bool blocked, long n)
{
	char cmd[256], out[64];
	FILE *p;
	double v = -1;

	snprintf(cmd, sizeof(cmd), "timeout 180 %s/fibers-go %s %ld", go_dir,
		 blocked ? "blocked" : "idle", n);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	if (fgets(out, sizeof(out), p) && sscanf(out, "%lf", &v) != 1)
		v = -1;
	if (pclose(p) != 0)
		v = -1;
	return v;
}

static void go_clean(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", go_dir);
	if (system(cmd) != 0)
		fprintf(stderr, "xsc bench fibers: could not remove %s\n", go_dir);
}

/* ---- the experiment ------------------------------------------------------ */

static void put(FILE *csv, const char *label, enum metric m, long n, const struct result *x,
		const struct result *p, double go)
{
	char xs[32], ps[32], rs[32], gs[32];
	bool hx = !x->err[0], hp = p && !p->err[0];

	snprintf(xs, sizeof(xs), hx ? "%.1f" : "-", x->v);
	snprintf(ps, sizeof(ps), hp ? "%.1f" : "-", p ? p->v : 0);
	snprintf(rs, sizeof(rs), hx && hp && p->v > 0 ? "%.3gx" : "-",
		 hx && hp && p->v > 0 ? x->v / p->v : 0);
	snprintf(gs, sizeof(gs), go > 0 ? "%.1f" : "-", go);
	printf("  %-30s %9ld %14s %14s %8s %8s  %s\n", label, n, xs, ps, rs, gs, munit[m]);
	if (x->err[0])
		printf("    xsc: %s\n", x->err);
	if (p && p->err[0])
		printf("    NPTL: %s\n", p->err);
	fprintf(csv, "%s,%ld,", label, n);
	if (hx)
		fprintf(csv, "%.3f", x->v);
	fputc(',', csv);
	if (hp)
		fprintf(csv, "%.3f", p->v);
	fputc(',', csv);
	if (hx && hp && p->v > 0)
		fprintf(csv, "%.4f", x->v / p->v);
	fputc(',', csv);
	if (go > 0)
		fprintf(csv, "%.3f", go);
	fputc('\n', csv);
}

/* What a run of the experiment shares: its sizes, the CSV, whether the
 * Go column can be measured, whether every xsc job so far succeeded. */
struct run {
	FILE *csv;
	long ncreate, nswitch, load, nptl_max;
	long nofile, maxpairs;	/* RLIMIT_NOFILE, and the pairs it allows */
	int nmem, timeout;
	bool quick, have_go, ok;
};

/* A row of xsc against NPTL for job s (label: as put() prints it). */
static void pair_row(struct run *R, const char *label, struct job s)
{
	struct job x = s, p = s;

	R->ok &= run_job(&x, XSC, R->timeout);
	run_job(&p, NPTL, R->timeout);
	put(R->csv, label, s.m, s.n, &x.r, &p.r, 0);
}

/* Memory per thread, blocked then idle, for each count: xsc, xsc with
 * 16 KiB stacks, NPTL (up to nptl_max) and Go. */
static void memory_rows(struct run *R)
{
	static const long mem_n[3] = { 10000, 100000, 1000000 };

	for (int i = 0; i < R->nmem && R->ok; i++) {
		for (int b = 1; b >= 0 && R->ok; b--) {
			struct job s = { .m = b ? M_MEM_BLOCKED : M_MEM_IDLE, .n = mem_n[i] };
			struct job x = s, p = s;
			char label[64];

			R->ok &= run_job(&x, XSC, R->timeout);
			R->ok &= run_job(&s, XSC_SMALL, R->timeout);
			/* NPTL up to 100,000 (vm.max_map_count stops it first;
			 * --quick: 10,000) */
			if (mem_n[i] <= R->nptl_max)
				run_job(&p, NPTL, R->timeout);
			snprintf(label, sizeof(label), "%s", mname[x.m]);
			put(R->csv, label, x.m, mem_n[i], &x.r,
			    mem_n[i] <= R->nptl_max ? &p.r : NULL,
			    R->have_go ? go_mem(b, mem_n[i]) : 0);
			snprintf(label, sizeof(label), "%s (16 KiB stacks)", mname[x.m]);
			put(R->csv, label, x.m, mem_n[i], &s.r, NULL, 0);
		}
	}
}

/* N ping-pong pairs, N = 10..100,000, as many as the descriptors allow. */
static void pingpong_rows(struct run *R)
{
	for (long n = 10; n <= 100000 && R->ok; n *= 10) {
		long pairs = n < R->maxpairs ? n : R->maxpairs;
		long total = R->quick ? 20000 : 200000;
		long r = total / pairs < 5 ? 5 : total / pairs;

		pair_row(R, "pingpong", (struct job){ .m = M_PINGPONG, .n = pairs, .arg = r });
		if (pairs < n) {
			printf("    (%ld pairs asked; RLIMIT_NOFILE %ld allows %ld)\n", n,
			       R->nofile, R->maxpairs);
			break;
		}
	}
}

int xsc_bench_fibers(int argc, char **argv)
{
	static const char usage[] = "usage: xsc bench fibers [--quick] [--out DIR]\n";
	struct bench_opts o;
	struct run R = { .ok = true };
	struct rlimit rl;
	int rc;

	if (!bench_args(argc, argv, &o, usage, &rc))
		return rc;
	/* as many descriptors as the hard limit allows: two a pair */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	getrlimit(RLIMIT_NOFILE, &rl);
	R.nofile = (long)rl.rlim_cur;
	R.maxpairs = (R.nofile - 64) / 2;
	R.quick = o.quick;
	R.ncreate = o.quick ? 5000 : 20000;
	R.nswitch = o.quick ? 20000 : 200000;
	R.load = o.quick ? 1000 : 10000;
	R.nmem = o.quick ? 2 : 3;
	R.nptl_max = o.quick ? 10000 : 100000;
	R.timeout = o.quick ? 60 : 180;
	R.csv = bench_csv_open(&o, "fibers", "metric,n,xsc,nptl,xsc_over_nptl,go");
	if (!R.csv)
		return 1;
	printf("xsc bench fibers: xsc threads (M:N fibers, default runtime) vs NPTL "
	       "threads (64 KiB stacks), each row in its own process\n");
	R.have_go = go_build();
	printf("  %-30s %9s %14s %14s %8s %8s\n", "", "n", "xsc", "NPTL", "xsc/NPTL", "Go");

	pair_row(&R, "create", (struct job){ .m = M_CREATE, .n = R.ncreate });
	pair_row(&R, "switch (others blocked)",
		 (struct job){ .m = M_SWITCH, .n = R.load, .arg = R.nswitch });
	memory_rows(&R);
	pingpong_rows(&R);
	if (R.have_go)
		go_clean();
	if (bench_csv_close(&o, "fibers", R.csv, R.ok) || !R.ok)
		return 1;
	bench_plot(&o, "fibers",
		   "set title 'N ping-pong pairs over UNIX sockets: xsc threads vs NPTL'\n"
		   "set logscale x\n"
		   "set xlabel 'pairs'\n"
		   "set ylabel 'round trips per second (all pairs)'\n"
		   "set key left top\n"
		   "set key noautotitle\n"
		   "plot '< grep ^pingpong '.DIR.'/fibers.csv' using 2:3 with linespoints "
		   "lw 2 title 'xsc threads', '' using 2:4 with linespoints lw 2 title 'NPTL'\n");
	return 0;
}
