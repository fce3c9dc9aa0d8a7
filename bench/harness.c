/*
 * harness.c - the shared bench harness (see harness.h).
 */
#include "harness.h"
#include "hostprof.h"

#include <errno.h>
#include <liburing.h>
#include <poll.h>
#include <signal.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "xsc.h"

int bench_parse(int argc, char **argv, struct bench_opts *o, const char *usage)
{
	int i;

	o->quick = false;
	o->out = "results";
	o->rounds = 0;
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick")) {
			o->quick = true;
		} else if (!strcmp(argv[i], "--out") && i + 1 < argc) {
			o->out = argv[++i];
		} else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) {
			o->rounds = atoi(argv[++i]);
			if (o->rounds < 1) {
				fprintf(stderr, "xsc bench: --rounds needs a number >= 1\n");
				return -1;
			}
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			printf("%s", usage);
			return -2;
		} else {
			break;	/* the experiment's own options, or an error it reports */
		}
	}
	if (!o->rounds)
		o->rounds = o->quick ? 3 : 5;
	return i;
}

bool bench_args(int argc, char **argv, struct bench_opts *o, const char *usage,
		int *rc)
{
	int i = bench_parse(argc, argv, o, usage);

	*rc = i == -2 ? 0 : 2;
	if (i < 0)
		return false;
	if (i < argc) {
		fprintf(stderr, "xsc bench %s: unexpected argument %s\n%s", argv[0],
			argv[i], usage);
		return false;
	}
	return true;
}

int64_t bench_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

double bench_tsc_per_ns(int ms)
{
	struct timespec d = { 0, ms * 1000000L };
	int64_t n0 = bench_now_ns();
	uint64_t c0 = bench_tsc();

	nanosleep(&d, NULL);
	return (double)(bench_tsc() - c0) / (double)(bench_now_ns() - n0);
}

int bench_pin(int cpu)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	return sched_setaffinity(0, sizeof(s), &s) ? -errno : 0;
}

int bench_ncpu(void)
{
	return (int)sysconf(_SC_NPROCESSORS_ONLN);
}

void bench_progress(const char *name, int i, int n, int64_t t0_ns)
{
	double el = (bench_now_ns() - t0_ns) / 1e9;
	double eta = i > 0 ? el / i * (n - i) : 0;

	if (!isatty(2))
		return;
	fprintf(stderr, "\r%s: step %d/%d, %.0fs elapsed, ETA %.0fs   ", name, i, n,
		el, eta);
}

void bench_progress_done(void)
{
	if (isatty(2))
		fprintf(stderr, "\r%60s\r", "");
}

const char *bench_path(const struct bench_opts *o, const char *file, char *buf,
		       size_t len)
{
	snprintf(buf, len, "%s/%s", o->out, file);
	return buf;
}

FILE *bench_csv_open(const struct bench_opts *o, const char *name,
		     const char *header)
{
	char path[512];
	FILE *f;

	mkdir(o->out, 0755);
	snprintf(path, sizeof(path), "%s/%s.csv.part", o->out, name);
	f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "xsc bench: cannot write %s: %s\n", path, strerror(errno));
		return NULL;
	}
	fprintf(f, "%s\n", header);
	return f;
}

int bench_csv_close(const struct bench_opts *o, const char *name, FILE *f,
		    bool ok)
{
	char part[512], path[512];

	snprintf(part, sizeof(part), "%s/%s.csv.part", o->out, name);
	snprintf(path, sizeof(path), "%s/%s.csv", o->out, name);
	if (fclose(f) != 0)
		ok = false;
	if (!ok) {
		unlink(part);
		return -1;
	}
	if (rename(part, path))
		return -errno;
	return bench_profile_save(o);
}

int bench_profile_save(const struct bench_opts *o)
{
	const struct xsc_hostprof *hp = xsc__hostprof(NULL);
	char path[512];
	int r;

	if (!hp)	/* a forced file it cannot use: xsc_open said so */
		return -EINVAL;
	r = xsc__hostprof_save(hp, bench_path(o, "host-profile.txt", path, sizeof(path)));
	if (r < 0)
		fprintf(stderr, "xsc bench: cannot write %s: %s\n", path, strerror(-r));
	return r;
}

int bench_csv_plot(const struct bench_opts *o, const char *name, FILE *f, const char *script)
{
	if (!f || bench_csv_close(o, name, f, true) != 0)
		return -1;
	bench_plot(o, name, script);
	return 0;
}

int bench_plot_cols(char *buf, size_t len, int first, const bool *on, int n)
{
	int k = 0;
	size_t at = 0;

	buf[0] = 0;
	for (int i = 0; i < n; i++)
		if (on[i]) {
			int w = snprintf(buf + at, len - at, "%s%d", k ? " " : "", first + i);
			if (w < 0 || (size_t)w >= len - at)
				break;
			at += (size_t)w;
			k++;
		}
	return k;
}

int bench_plot(const struct bench_opts *o, const char *name, const char *script)
{
	char cmd[256];
	FILE *p;

	if (system("command -v gnuplot >/dev/null 2>&1") != 0) {
		fprintf(stderr, "xsc bench: gnuplot not found, no plot for %s "
			"(apt-get install gnuplot-nox, or run `make demo`)\n", name);
		return -1;
	}
	snprintf(cmd, sizeof(cmd), "gnuplot");
	p = popen(cmd, "w");
	if (!p)
		return -1;
	fprintf(p, "DIR='%s'\nset terminal pngcairo size 900,560 noenhanced\n"
		"set output DIR.'/%s.png'\nset datafile separator ','\n"
		"set key autotitle columnhead\nset grid\n%s\n", o->out, name, script);
	return pclose(p) == 0 ? 0 : -1;
}

double bench_wsc_m(double tsys, double per_req)
{
	return tsys - per_req > 0 ? tsys / (tsys - per_req) : 0;
}

struct bench_refined bench_refined_model(double c1, double c256, double tsys,
					 double per_req)
{
	struct bench_refined r;
	double den;

	r.tenter = (c1 - c256) * 256.0 / 255.0;
	r.top = c1 - r.tenter;
	den = tsys - (r.top + per_req);
	r.pays = den > 0;
	r.m = r.pays ? r.tenter / den : 0;
	return r;
}

/* Reads len bytes from fd within timeout_s seconds; how many it got. */
static size_t read_full(int fd, void *buf, size_t len, int timeout_s)
{
	int64_t end = bench_now_ns() + timeout_s * 1000000000LL;
	size_t got = 0;

	while (got < len) {
		struct pollfd p = { fd, POLLIN, 0 };
		int64_t left = (end - bench_now_ns()) / 1000000;
		ssize_t r;

		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			break;
		r = read(fd, (char *)buf + got, len - got);
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	return got;
}

bool bench_in_child(void (*fn)(void *), void *arg, void *out, size_t len, int timeout_s,
		    char *why, size_t whylen)
{
	int fd[2], st;
	pid_t pid;
	size_t got;

	if (pipe(fd)) {
		snprintf(why, whylen, "pipe: %s", strerror(errno));
		return false;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		snprintf(why, whylen, "fork: %s", strerror(errno));
		close(fd[0]);
		close(fd[1]);
		return false;
	}
	if (pid == 0) {
		close(fd[0]);
		fn(arg);
		_exit(write(fd[1], out, len) == (ssize_t)len ? 0 : 1);
	}
	close(fd[1]);
	got = read_full(fd[0], out, len, timeout_s);
	close(fd[0]);
	if (got == len) {
		waitpid(pid, &st, 0);
		return true;
	}
	bool hung = waitpid(pid, &st, WNOHANG) == 0;
	if (hung) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
	}
	memset(out, 0, len);
	if (hung)
		snprintf(why, whylen, "no result in %d s (a hang)", timeout_s);
	else if (WIFSIGNALED(st))
		snprintf(why, whylen, "died: %s", strsignal(WTERMSIG(st)));
	else
		snprintf(why, whylen, "died: exit status %d", WEXITSTATUS(st));
	return false;
}

int bench_raw_ring(struct io_uring *ring, unsigned entries)
{
	struct io_uring_params p = { .flags = IORING_SETUP_SINGLE_ISSUER |
					      IORING_SETUP_COOP_TASKRUN };
	int ret = io_uring_queue_init_params(entries, ring, &p);

	if (ret < 0)
		return ret;
	io_uring_register_ring_fd(ring);
	return 0;
}

int bench_uring_pair_open(struct bench_uring_pair *p, int npages, long nr,
			  unsigned entries, const char *who)
{
	struct xsc_config cfg;
	const char *why = "";

	xsc_config_init(&cfg);
	cfg.backend = XSC_BACKEND_URING;
	cfg.flags = XSC_NO_ENV | XSC_QUIET;
	if (npages)
		cfg.npages = npages;
	cfg.spin_ns = 0;
	p->x = NULL;
	p->have_ring = false;
	if (xsc_open(&p->x, &cfg) < 0 || xsc_route(p->x, nr, &why) != XSC_BACKEND_URING) {
		fprintf(stderr, "%s: io_uring unavailable%s%s\n", who, *why ? ": " : "", why);
		return -1;
	}
	if (bench_raw_ring(&p->ring, entries) < 0) {
		fprintf(stderr, "%s: io_uring_queue_init failed\n", who);
		return -1;
	}
	p->have_ring = true;
	return 0;
}

void bench_uring_pair_close(struct bench_uring_pair *p)
{
	if (p->have_ring)
		io_uring_queue_exit(&p->ring);
	if (p->x)
		xsc_close(p->x);
	p->x = NULL;
	p->have_ring = false;
}
