/*
 * harness.h - what every `xsc bench` experiment shares: options, a clock,
 * CPU pinning, a progress line with ETA, CSV files that appear only when
 * complete, and gnuplot plots.
 */
#ifndef XSC_BENCH_HARNESS_H
#define XSC_BENCH_HARNESS_H
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* One experiment (experiments.c): `xsc bench NAME`, in `xsc bench all`. */
struct bench_exp {
	const char *name;		/* as `xsc bench <name>` */
	int (*fn)(int, char **);	/* NULL: not built into this binary */
	const char *what;		/* one line for `xsc bench --help` */
	const char *figure;		/* what it reproduces */
	const char *paper;		/* the paper's numbers, quoted */
};
extern const struct bench_exp bench_exps[];
extern const int bench_nexps;

/* The WSC cost model, eq. (5): batching pays from M > Tsys / (Tsys -
 * per_req) calls on; 0 when it never does (per_req >= Tsys). */
double bench_wsc_m(double tsys, double per_req);

/* The refined model `null` and `wsc-model` print beside it: on io_uring
 * one io_uring_enter costs Tenter, more than a null call, and every op has
 * a kernel cost Top; both are fitted on raw liburing's NOP cost per call at
 * batch 1 (c1) and 256 (c256): cost(b) = Top + Tenter / b.  Batching pays
 * from M > Tenter / (Tsys - Top - per_req) on, when that is positive
 * (pays). */
struct bench_refined {
	double tenter, top, m;
	bool pays;
};
struct bench_refined bench_refined_model(double c1, double c256, double tsys,
					 double per_req);

struct bench_opts {
	bool quick;		/* seconds, not minutes */
	const char *out;	/* results directory (default "results") */
	int rounds;		/* best-of rounds */
};

/* Parses --quick, --out DIR, --rounds N from argv[1]; returns the argv
 * index of the first other argument (the experiment must accept or reject
 * it), -2 after printing usage for --help, -1 for a bad value. */
int bench_parse(int argc, char **argv, struct bench_opts *o, const char *usage);
/* bench_parse for experiments with no options of their own: false means
 * stop and return *rc (0 after --help, 2 for bad input, with a message
 * naming argv[0]). */
bool bench_args(int argc, char **argv, struct bench_opts *o, const char *usage,
		int *rc);

int64_t bench_now_ns(void);
/* Serialized TSC read, and TSC ticks per ns measured over `ms`. */
static inline uint64_t bench_tsc(void)
{
	__builtin_ia32_lfence();
	uint64_t t = __builtin_ia32_rdtsc();
	__builtin_ia32_lfence();
	return t;
}
double bench_tsc_per_ns(int ms);
/* Pins the calling thread to cpu; 0 or -errno. */
int bench_pin(int cpu);
int bench_ncpu(void);

/* Progress line on stderr: "name: step i/n, ETA 12s". */
void bench_progress(const char *name, int i, int n, int64_t t0_ns);
void bench_progress_done(void);

/* A CSV written to DIR/name.csv.part and renamed to DIR/name.csv by
 * bench_csv_close(ok=true): a failed run never leaves a CSV that looks
 * complete.  Beside the CSVs, DIR/host-profile.txt: the host profile
 * the run's routes were chosen by (src/hostprof.h), rewritten with
 * every complete CSV (the CSVs themselves stay plain for their
 * parsers). */
FILE *bench_csv_open(const struct bench_opts *o, const char *name,
		     const char *header);
int bench_csv_close(const struct bench_opts *o, const char *name, FILE *f,
		    bool ok);
/* Writes DIR/host-profile.txt; 0 or -errno. */
int bench_profile_save(const struct bench_opts *o);

/* Runs gnuplot on script (which may use DIR for the results directory);
 * writes DIR/name.png.  Returns 0, or -1 with a message naming the
 * package when gnuplot is missing. */
int bench_plot(const struct bench_opts *o, const char *name, const char *script);
/* Closes the CSV f (bench_csv_close, NULL: it never opened), then plots
 * it with script (bench_plot, under the same name); 0, or -1 when the
 * CSV was not written. */
int bench_csv_plot(const struct bench_opts *o, const char *name, FILE *f, const char *script);
/* "first+i ..." into buf for each of the n columns with on[i] (a plot's
 * `for [c in '...']`: a column of nothing would make gnuplot warn);
 * returns how many. */
int bench_plot_cols(char *buf, size_t len, int first, const bool *on, int n);

/* Processes and servers (http.c): argv forked and exec'd pinned to cpu
 * (-1: not pinned), stdout into a pipe whose read end goes to *out
 * (NULL: /dev/null); fd read to EOF, len full or timeout
 * (NUL-terminated); utime+stime in clock ticks of pid and every process
 * below it. */
pid_t bench_spawn(char *const argv[], int cpu, int *out);
size_t bench_read_all(int fd, char *buf, size_t len, int timeout_ms);
long bench_tree_ticks(pid_t pid);
/* A TCP port on 127.0.0.1 free now (-1 if none); whether one accepts a
 * connection. */
int bench_free_port(void);
bool bench_port_open(int port);
/* Writes DIR/nginx.conf into conf: nginx in the foreground with one
 * worker (forked by a master process when master, else none), serving
 * DIR/root on 127.0.0.1:port with keep-alive and no access log; pid,
 * error log and temp files in DIR.  0 or -1. */
int bench_nginx_conf(const char *dir, int port, bool master, char *conf, size_t len);

/* Runs fn(arg) in a forked child, which then sends the len bytes at out
 * back through a pipe; waits for them at most timeout_s seconds.  True
 * when they came.  Else the child is killed if it still runs, out is
 * zeroed and why says what happened (a hang, a signal, an exit status). */
bool bench_in_child(void (*fn)(void *), void *arg, void *out, size_t len, int timeout_s,
		    char *why, size_t whylen);

/* The two io_uring paths the cost experiments (null, read-cost,
 * wsc-model) compare.  bench_raw_ring: the raw liburing baseline, a ring
 * of `entries` with the flags xsc sets (single issuer, cooperative task
 * running) and its fd registered, as xsc does; 0 or -errno.
 * bench_uring_pair_open: that ring, and an xsc handle on the uring
 * executor that never spins, with npages pages (0: the default), whose
 * route for call nr is io_uring; 0, or -1 with the reason on stderr after
 * `who`.  bench_uring_pair_close closes what was opened, also after a
 * failed open. */
struct xsc;
#include <liburing.h>
int bench_raw_ring(struct io_uring *ring, unsigned entries);
struct bench_uring_pair {
	struct xsc *x;
	struct io_uring ring;
	bool have_ring;
};
int bench_uring_pair_open(struct bench_uring_pair *p, int npages, long nr,
			  unsigned entries, const char *who);
void bench_uring_pair_close(struct bench_uring_pair *p);

/* Path of DIR/file in buf. */
const char *bench_path(const struct bench_opts *o, const char *file, char *buf,
		       size_t len);
#endif
