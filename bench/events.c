/*
 * events.c - `xsc bench events`: event-driven servers, Debian's packages
 * unmodified, natively and under `xsc run` side by side: redis-server
 * (redis-benchmark), memcached with one and with four worker threads
 * (memcslap) and nginx with one worker (wrk).  A thread that runs an
 * event loop has little to batch with: this measures what `xsc run`
 * costs or saves such servers, in time and in kernel entries.
 *
 * Rules:
 *  - loopback only; the server and all its threads on core 0 (memcached
 *    -t 4 is then four event loops sharing one core), the client on
 *    core 1;
 *  - three instances of each server run at once, each on a port and in
 *    a directory of its own: native, under `xsc run` with its default
 *    settings, and under `xsc run` with the host profile of an expensive
 *    host forced (XSC_HOST_PROFILE: the "dear-host-profile" of
 *    tests/run.sh, a system call 1,100 ns and a posted one 100 ns in a
 *    batch; update both together).  The timed runs take the three in
 *    turn inside each round, each starting elsewhere.  An instance's
 *    figures are the medians of its rounds; a ratio is the median of the
 *    rounds' ratios, each of two runs of one round (at most one other
 *    run between them), printed with the lowest and highest (on a shared host a server's own speed
 *    drifts between runs by more than the targets' margins: pairing
 *    runs within a round takes out the slow drift);
 *  - a run is bounded: a count of operations (redis-benchmark -n,
 *    memcslap --execute-number) or of seconds (wrk -d), a few seconds;
 *  - CPU per operation: utime+stime of the server's process tree, from
 *    /proc, over the operations the server served in the run;
 *  - kernel entries per operation (entries.c): one more run of each
 *    instance after the rounds, counted by the kernel, never in a timed
 *    run (XSC_BENCH_ENTRIES=off leaves it out).  Counts mean the same on
 *    every host; the times of the forced-profile instance only say what
 *    its choices cost on this one;
 *  - correctness, after the load: each instance reads back a value
 *    (redis SET then GET, memcached set then get, nginx the file it
 *    serves, byte for byte), then SIGTERM must end it; how it ended is
 *    printed beside native's;
 *  - a server or client that is not installed skips its row with a
 *    line naming the Debian package; a run that fails (a client error,
 *    a server that died or answered wrong) is reported in the table and
 *    makes the experiment exit 1.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "entries.h"
#include "harness.h"

int xsc_run_find_preload(char *out, size_t n);	/* tools/run.c */
int xsc_bench_events(int argc, char **argv);

#define CONC 50			/* client connections (threads for memcslap) */
#define FILE_BYTES 4096		/* the file nginx serves */
#define FILE_NAME "file.html"
#define MAX_ROUNDS 32		/* --rounds at most */
/* the targets: never slower (throughput, CPU per operation), and
 * loops that share a core at most half native's kernel entries */
#define MIN_OPS 0.97
#define MAX_CPU 1.03
#define MAX_ENTRIES 0.5
#define MIN_JUDGED 3		/* rounds a verdict on the first two needs */

static const char usage[] =
	"usage: xsc bench events [--quick] [--rounds N] [--out DIR]\n"
	"  Debian's redis-server (--io-threads 1; redis-benchmark -c 50 -t set,get),\n"
	"  memcached -t 1 and -t 4 (memcslap --concurrency=50) and nginx (one\n"
	"  worker; wrk -c 50), natively, under `xsc run`, and under `xsc run` with\n"
	"  an expensive host's profile forced; server on core 0, client on core 1;\n"
	"  N rounds (default 3; --quick: 1): medians, and the median of the rounds'\n"
	"  ratios with their range; then one more run of each\n"
	"  with the server's kernel entries per operation counted\n"
	"  (XSC_BENCH_ENTRIES=tracefs|strace|off); every instance reads back a\n"
	"  value and is stopped with SIGTERM.  Writes DIR/events.csv and\n"
	"  DIR/events.png.\n";

enum { NATIVE, XRUN, DEAR, NMODE };
static const char *const mode_name[NMODE] = { "native", "xsc run", "xsc run, dear host" };
static const char *const mode_key[NMODE] = { "native", "xsc-run", "xsc-run-dear" };

struct ctx {
	struct bench_opts o;
	char tmp[64], self[PATH_MAX], dear[96];
	int srv_cpu, cli_cpu;
	long redis_n;		/* redis-benchmark -n */
	long mc_n;		/* memcslap --execute-number (per thread) */
	int wrk_s;		/* wrk -d */
	const char *method;	/* how entries were counted; NULL: not */
};

/* One instance of a server. */
struct inst {
	pid_t pid;
	int port;
	char dir[128];		/* its own: logs, pid file, nginx's root */
	bool have;		/* a timed run finished */
	double ops_s, cpu_us;	/* medians of the rounds; cpu_us per operation */
	int nr;			/* rounds measured */
	double r_ops[MAX_ROUNDS], r_cpu[MAX_ROUNDS];	/* each round's */
	struct bench_per_op ent;
	char check[96];		/* "ok", or what was wrong; "" not checked */
	char term[48];		/* how SIGTERM ended it */
};

/* What one load run did: the operations the server served (what CPU and
 * entries are divided by) and the client's throughput. */
struct load {
	double ops, ops_s;
};

/* An argv built in place: strings formatted into buf. */
struct args {
	char *v[40];
	int n, nb;
	char buf[8][PATH_MAX];
};

struct row {
	const char *name, *key;	/* for people, for files and the CSV */
	int threads;		/* memcached -t */
	const char *(*missing)(void);	/* why it cannot run here, or NULL */
	int (*argv)(const struct ctx *, const struct row *, struct inst *, struct args *);
	int (*load)(const struct ctx *, int port, bool warm, struct load *, char *, size_t);
	int (*check)(struct inst *);
	const char *skip;	/* not measured: why */
	char fail[240];		/* measured, and something failed: what */
	struct inst in[NMODE];
};

/* ---- processes ----------------------------------------------------------- */

static void arg(struct args *a, const char *s)
{
	if (a->n < 38) {
		a->v[a->n++] = (char *)s;
		a->v[a->n] = NULL;
	}
}

static void __attribute__((format(printf, 2, 3))) argf(struct args *a, const char *fmt, ...)
{
	va_list ap;

	if (a->nb >= 8)
		return;
	va_start(ap, fmt);
	vsnprintf(a->buf[a->nb], sizeof(a->buf[0]), fmt, ap);
	va_end(ap);
	arg(a, a->buf[a->nb++]);
}

static bool in_path(const char *name)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", name);
	return system(cmd) == 0;
}

/* Runs a client pinned to the client core with its stdout into out;
 * kills it after timeout_s.  Its exit status, or -1 when it could not
 * start or was killed. */
static int run_client(const struct ctx *c, char *const argv[], char *out, size_t len,
		      int timeout_s)
{
	int fd = -1, st = 0;
	pid_t pid = bench_spawn(argv, c->cli_cpu, &fd);

	if (pid < 0)
		return -1;
	bench_read_all(fd, out, len, timeout_s * 1000);
	close(fd);
	for (int i = 0; i < 200; i++) {	/* it closed its stdout: 2 s to exit */
		if (waitpid(pid, &st, WNOHANG) == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
		usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return -1;
}

/* Says how the wait status st ended a process, into buf. */
static void say_status(int st, char *buf, size_t len)
{
	if (WIFEXITED(st))
		snprintf(buf, len, "exit %d", WEXITSTATUS(st));
	else
		snprintf(buf, len, "signal %d", WTERMSIG(st));
}

/* True when in's server has exited (reaped; in->term says how). */
static bool died(struct inst *in)
{
	int st;

	if (in->pid <= 0)
		return true;
	if (waitpid(in->pid, &st, WNOHANG) != in->pid)
		return false;
	say_status(st, in->term, sizeof(in->term));
	in->pid = 0;
	return true;
}

/* SIGTERM; in->term says how it ended (SIGKILL after 10 s). */
static void stop_inst(struct inst *in)
{
	if (in->pid <= 0)
		return;
	kill(in->pid, SIGTERM);
	for (int i = 0; i < 1000; i++) {
		if (died(in))
			return;
		usleep(10000);
	}
	kill(in->pid, SIGKILL);
	waitpid(in->pid, NULL, 0);
	snprintf(in->term, sizeof(in->term), "no exit in 10 s");
	in->pid = 0;
}

/* Sends req to 127.0.0.1:port, then reads the answer into buf until it
 * is want bytes long (0: until EOF) or 5 s pass; NUL-terminates.  The
 * bytes read, or -1. */
static ssize_t exchange(int port, const char *req, size_t len, char *buf, size_t cap,
			size_t want)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int64_t end = bench_now_ns() + 5000000000LL;
	size_t n = 0;

	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    write(fd, req, len) != (ssize_t)len) {
		close(fd);
		return -1;
	}
	while (n + 1 < cap && (!want || n < want)) {
		struct pollfd pf = { .fd = fd, .events = POLLIN };
		int left = (int)((end - bench_now_ns()) / 1000000);
		ssize_t r;
		if (left <= 0 || poll(&pf, 1, left) <= 0 ||
		    (r = read(fd, buf + n, cap - 1 - n)) <= 0)
			break;
		n += (size_t)r;
	}
	buf[n] = 0;
	close(fd);
	return (ssize_t)n;
}

/* in->check: "ok" when the answer to req is exactly want. */
static int expect(struct inst *in, const char *req, const char *want)
{
	char got[512] = "";
	ssize_t n = exchange(in->port, req, strlen(req), got, sizeof(got), strlen(want));

	if (n == (ssize_t)strlen(want) && !memcmp(got, want, (size_t)n)) {
		snprintf(in->check, sizeof(in->check), "ok");
		return 0;
	}
	for (char *p = got; *p; p++)	/* one line in the table */
		if (*p == '\r' || *p == '\n' || *p == ',')
			*p = ' ';
	snprintf(in->check, sizeof(in->check), "wrong answer: '%.60s'", n < 0 ? "(none)" : got);
	return -1;
}

/* ---- redis ----------------------------------------------------------------- */

static const char *redis_missing(void)
{
	if (!in_path("redis-server"))
		return "redis-server not found; install the Debian package redis-server";
	if (!in_path("redis-benchmark"))
		return "redis-benchmark not found; install the Debian package redis-tools";
	return NULL;
}

static int redis_argv(const struct ctx *c, const struct row *r, struct inst *in,
		      struct args *a)
{
	(void)c, (void)r;
	arg(a, "redis-server");
	arg(a, "--port");
	argf(a, "%d", in->port);
	arg(a, "--bind");
	arg(a, "127.0.0.1");
	arg(a, "--save");
	arg(a, "");
	arg(a, "--appendonly");
	arg(a, "no");
	arg(a, "--io-threads");
	arg(a, "1");
	arg(a, "--daemonize");
	arg(a, "no");
	arg(a, "--dir");
	arg(a, in->dir);
	arg(a, "--logfile");
	argf(a, "%s/redis.log", in->dir);
	return 0;
}

/* The rps of test name in redis-benchmark --csv's output: a line
 * "\"SET\",\"123456.79\",...". */
static double csv_rps(const char *out, const char *name)
{
	char key[32];
	const char *p;

	snprintf(key, sizeof(key), "\"%s\",\"", name);
	p = strstr(out, key);
	return p ? strtod(p + strlen(key), NULL) : 0;
}

/* redis-benchmark -c 50 -t set,get -n N: its --csv output is -q's
 * figures without the progress lines. */
static int redis_load(const struct ctx *c, int port, bool warm, struct load *l,
		      char *why, size_t wlen)
{
	long n = warm ? c->redis_n / 10 : c->redis_n;
	char ps[16], ns[24], cs[16], out[4096];
	char *argv[] = { "redis-benchmark", "-h", "127.0.0.1", "-p", ps, "-c", cs,
			 "-t", "set,get", "-n", ns, "--csv", NULL };

	snprintf(ps, sizeof(ps), "%d", port);
	snprintf(ns, sizeof(ns), "%ld", n);
	snprintf(cs, sizeof(cs), "%d", CONC);
	int rc = run_client(c, argv, out, sizeof(out), 300);
	double set = csv_rps(out, "SET"), get = csv_rps(out, "GET");
	if (rc || set <= 0 || get <= 0) {
		snprintf(why, wlen, "redis-benchmark failed (exit %d): %.80s", rc, out);
		return -1;
	}
	l->ops = 2.0 * (double)n;
	l->ops_s = 2.0 / (1.0 / set + 1.0 / get);	/* n sets, then n gets */
	return 0;
}

static int redis_check(struct inst *in)
{
	char req[128], want[128], val[48];

	snprintf(val, sizeof(val), "value-read-back-on-port-%d", in->port);
	snprintf(req, sizeof(req), "SET xsc:check %s\r\nGET xsc:check\r\n", val);
	snprintf(want, sizeof(want), "+OK\r\n$%zu\r\n%s\r\n", strlen(val), val);
	return expect(in, req, want);
}

/* ---- memcached ------------------------------------------------------------- */

static const char *mc_missing(void)
{
	if (!in_path("memcached"))
		return "memcached not found; install the Debian package memcached";
	if (!in_path("memcslap"))
		return "memcslap not found; install the Debian package libmemcached-tools";
	return NULL;
}

/* As Debian runs it (-u memcache when root), UDP off. */
static int mc_argv(const struct ctx *c, const struct row *r, struct inst *in,
		   struct args *a)
{
	(void)c;
	arg(a, "memcached");
	arg(a, "-l");
	arg(a, "127.0.0.1");
	arg(a, "-p");
	argf(a, "%d", in->port);
	arg(a, "-U");
	arg(a, "0");
	arg(a, "-t");
	argf(a, "%d", r->threads);
	if (geteuid() == 0) {
		arg(a, "-u");
		arg(a, system("id memcache >/dev/null 2>&1") == 0 ? "memcache" : "nobody");
	}
	return 0;
}

/* memcslap's lines "Time to set 2000 keys:" (the keys a get test loads
 * first) and "Time to get 100000 keys by 50 threads: 1.456 seconds.":
 * every key is an operation of the server, the second kind are timed. */
static void mc_parse(const char *out, double *ops, double *timed, double *secs)
{
	for (const char *p = out; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		char verb[16];
		long n;
		int k = 0;
		if (sscanf(p, " Time to %15s %ld keys%n", verb, &n, &k) != 2 || !k ||
		    (strcmp(verb, "set") && strcmp(verb, "get")))
			continue;
		*ops += (double)n;
		if (!strncmp(p + k, " by ", 4) && strchr(p + k, ':')) {
			*timed += (double)n;
			*secs += strtod(strchr(p + k, ':') + 1, NULL);
		}
	}
}

/* memcslap --concurrency=50: a set test, then a get test, each of N
 * operations per thread. */
static int mc_load(const struct ctx *c, int port, bool warm, struct load *l, char *why,
		   size_t wlen)
{
	static const char *const test[] = { "--test=set", "--test=get" };
	char srv[48], cs[32], ns[48], out[4096];
	double ops = 0, timed = 0, secs = 0;

	snprintf(srv, sizeof(srv), "--servers=127.0.0.1:%d", port);
	snprintf(cs, sizeof(cs), "--concurrency=%d", CONC);
	snprintf(ns, sizeof(ns), "--execute-number=%ld", warm ? c->mc_n / 10 : c->mc_n);
	for (int t = 0; t < 2; t++) {
		char *argv[] = { "memcslap", srv, cs, (char *)test[t], ns, NULL };
		double before = timed;
		int rc = run_client(c, argv, out, sizeof(out), 300);
		mc_parse(out, &ops, &timed, &secs);
		if (rc || timed <= before) {
			snprintf(why, wlen, "memcslap %s failed (exit %d): %.80s", test[t] + 7,
				 rc, out);
			return -1;
		}
	}
	l->ops = ops;
	l->ops_s = secs > 0 ? timed / secs : 0;
	return 0;
}

static int mc_check(struct inst *in)
{
	char req[160], want[160], val[48];

	snprintf(val, sizeof(val), "value-read-back-on-port-%d", in->port);
	snprintf(req, sizeof(req), "set xsc:check 0 0 %zu\r\n%s\r\nget xsc:check\r\n",
		 strlen(val), val);
	snprintf(want, sizeof(want), "STORED\r\nVALUE xsc:check 0 %zu\r\n%s\r\nEND\r\n",
		 strlen(val), val);
	return expect(in, req, want);
}

/* ---- nginx ----------------------------------------------------------------- */

static const char *nginx_missing(void)
{
	if (access("/usr/sbin/nginx", X_OK))
		return "nginx not found; install the Debian package nginx-light";
	if (!in_path("wrk"))
		return "wrk not found; install the Debian package wrk";
	return NULL;
}

/* The byte at i of the file nginx serves. */
static char file_byte(int i)
{
	return i % 64 == 63 ? '\n' : (char)('a' + i % 26);
}

/* As Debian runs it: a master process that forks the worker (which runs
 * as nobody when we are root: the directory must be open to it). */
static int nginx_argv(const struct ctx *c, const struct row *r, struct inst *in,
		      struct args *a)
{
	char path[PATH_MAX], conf[PATH_MAX];
	FILE *f;

	(void)c, (void)r;
	snprintf(path, sizeof(path), "%s/root", in->dir);
	if (mkdir(path, 0755))
		return -1;
	snprintf(path, sizeof(path), "%s/root/" FILE_NAME, in->dir);
	if (!(f = fopen(path, "w")))
		return -1;
	for (int i = 0; i < FILE_BYTES; i++)
		fputc(file_byte(i), f);
	if (fclose(f) || bench_nginx_conf(in->dir, in->port, true, conf, sizeof(conf)))
		return -1;
	arg(a, "/usr/sbin/nginx");
	arg(a, "-c");
	argf(a, "%s", conf);
	arg(a, "-p");
	arg(a, in->dir);
	arg(a, "-e");
	argf(a, "%s/nginx-stderr.log", in->dir);
	return 0;
}

/* wrk -t1 -c 50 -d S: "N requests in ...", "Requests/sec: R"; any error
 * or non-2xx response fails the run; -2 when it completed no request. */
static int nginx_load(const struct ctx *c, int port, bool warm, struct load *l,
		      char *why, size_t wlen)
{
	char cs[16], ds[16], url[64], out[8192];
	char *argv[] = { "wrk", "-t1", "-c", cs, "-d", ds, "--timeout", "10s", url, NULL };
	const char *req, *rps;

	snprintf(cs, sizeof(cs), "%d", CONC);
	snprintf(ds, sizeof(ds), "%ds", warm ? 1 : c->wrk_s);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/" FILE_NAME, port);
	int rc = run_client(c, argv, out, sizeof(out), c->wrk_s + 60);
	req = strstr(out, " requests in ");
	rps = strstr(out, "Requests/sec:");
	while (req && req > out && req[-1] != '\n')
		req--;
	if (rc || !req || !rps || strstr(out, "Non-2xx") || strstr(out, "Socket errors")) {
		snprintf(why, wlen, "wrk failed or saw errors (exit %d): %.100s", rc, out);
		return -1;
	}
	l->ops = strtod(req, NULL);
	l->ops_s = strtod(rps + 13, NULL);
	if (l->ops <= 0) {
		snprintf(why, wlen, "wrk completed no request in %s", ds);
		return -2;
	}
	return 0;
}

/* HTTP/1.0: the answer ends at EOF; a 200 with the file, byte for byte. */
static int nginx_check(struct inst *in)
{
	static const char req[] = "GET /" FILE_NAME " HTTP/1.0\r\nHost: localhost\r\n\r\n";
	char got[FILE_BYTES + 1024];
	ssize_t n = exchange(in->port, req, sizeof(req) - 1, got, sizeof(got), 0);
	const char *body = n > 0 ? strstr(got, "\r\n\r\n") : NULL;
	bool ok = body && !strncmp(got, "HTTP/1.1 200 ", 13) &&
		  got + n - (body + 4) == FILE_BYTES;

	for (int i = 0; ok && i < FILE_BYTES; i++)
		ok = body[4 + i] == file_byte(i);
	if (ok) {
		snprintf(in->check, sizeof(in->check), "ok");
		return 0;
	}
	snprintf(in->check, sizeof(in->check), "wrong answer: %zd bytes, '%.12s'", n,
		 n > 0 ? got : "");
	return -1;
}

/* ---- one row: three instances, the rounds, the counts, the checks ---------- */

#define ROW(n, k, t, f)                                                             \
	{ .name = n, .key = k, .threads = t, .missing = f##_missing, .argv = f##_argv, \
	  .load = f##_load, .check = f##_check }
static struct row rows[] = {
	ROW("redis", "redis", 1, redis),
	ROW("memcached -t 1", "memcached-t1", 1, mc),
	ROW("memcached -t 4", "memcached-t4", 4, mc),
	ROW("nginx", "nginx", 1, nginx),
};
#define NROW ((int)(sizeof(rows) / sizeof(rows[0])))

/* The first failure of a row is the one it reports. */
static void __attribute__((format(printf, 2, 3))) row_fail(struct row *r, const char *fmt, ...)
{
	va_list ap;

	if (r->fail[0])
		return;
	va_start(ap, fmt);
	vsnprintf(r->fail, sizeof(r->fail), fmt, ap);
	va_end(ap);
}

/* Forks the instance m of row r, pinned to the server core, and waits up
 * to 10 s for its port.  The dear-host instance gets XSC_HOST_PROFILE;
 * the others whatever the caller's environment says. */
static int start_inst(struct ctx *c, struct row *r, int m)
{
	struct inst *in = &r->in[m];
	const char *old = getenv("XSC_HOST_PROFILE");
	char keep[PATH_MAX] = "";
	struct args a = { .n = 0 };

	snprintf(in->dir, sizeof(in->dir), "%s/%s-%s", c->tmp, r->key, mode_key[m]);
	in->port = bench_free_port();
	if (m != NATIVE) {
		arg(&a, c->self);
		arg(&a, "run");
		arg(&a, "--");
	}
	if (in->port < 0 || mkdir(in->dir, 0755) || r->argv(c, r, in, &a)) {
		row_fail(r, "%s: cannot set up %s: %s", mode_name[m], in->dir, strerror(errno));
		return -1;
	}
	if (old)
		snprintf(keep, sizeof(keep), "%s", old);
	if (m == DEAR)
		setenv("XSC_HOST_PROFILE", c->dear, 1);
	in->pid = bench_spawn(a.v, c->srv_cpu, NULL);
	if (m == DEAR && old)
		setenv("XSC_HOST_PROFILE", keep, 1);
	else if (m == DEAR)
		unsetenv("XSC_HOST_PROFILE");
	for (int i = 0; in->pid > 0 && i < 1000; i++) {
		if (bench_port_open(in->port))
			return 0;
		if (died(in))
			break;
		usleep(10000);
	}
	row_fail(r, "%s did not start (%s); see %s", mode_name[m],
		 in->term[0] ? in->term : "no port in 10 s", in->dir);
	return -1;
}

/* r->load, tried up to three times when it completed no operation (-2).
 * On this shared machine, in a burst of load from others, a 1 s wrk run
 * rarely completes no request at all (bench/http.c saw it too); a second
 * try worked.  Say so, never hide it. */
static int load(const struct ctx *c, const struct row *r, int m, bool warm,
		struct load *l, char *why, size_t wlen)
{
	int rc = -2;

	for (int t = 0; t < 3 && rc == -2; t++) {
		if (t)
			fprintf(stderr, "bench events: %s, %s: %s; trying again\n", r->name,
				mode_name[m], why);
		rc = r->load(c, r->in[m].port, warm, l, why, wlen);
	}
	return rc;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The median of v[0..n), n > 0 (v is left as it was). */
static double median(const double *v, int n)
{
	double w[MAX_ROUNDS];

	memcpy(w, v, (size_t)n * sizeof(*w));
	qsort(w, (size_t)n, sizeof(*w), cmp_double);
	return n % 2 ? w[n / 2] : (w[n / 2 - 1] + w[n / 2]) / 2;
}

/* One timed run of instance m: its throughput and CPU per op. */
static int timed(struct ctx *c, struct row *r, int m)
{
	struct inst *in = &r->in[m];
	struct load l = { 0, 0 };
	char why[200];
	long a = bench_tree_ticks(in->pid);
	int rc = load(c, r, m, false, &l, why, sizeof(why));
	long b = bench_tree_ticks(in->pid);

	if (died(in)) {
		row_fail(r, "%s: the server ended (%s) during the load", mode_name[m], in->term);
		return -1;
	}
	if (rc || a < 0 || b < 0 || l.ops <= 0) {
		row_fail(r, "%s: %s", mode_name[m], rc ? why : "no CPU time from /proc");
		return -1;
	}
	double cpu = (double)(b - a) * 1e6 / (double)sysconf(_SC_CLK_TCK) / l.ops;
	if (in->nr < MAX_ROUNDS) {
		in->r_ops[in->nr] = l.ops_s;
		in->r_cpu[in->nr++] = cpu;
	}
	in->ops_s = median(in->r_ops, in->nr);
	in->cpu_us = median(in->r_cpu, in->nr);
	in->have = true;
	return 0;
}

/* One more run of instance m with its kernel entries counted. */
static int counted(struct ctx *c, struct row *r, int m)
{
	struct inst *in = &r->in[m];
	struct bench_counter *bc;
	struct bench_entries e;
	struct load l = { 0, 0 };
	char why[200];
	int rc = -2;

	for (int t = 0; t < 3 && rc == -2; t++) {	/* as load(), each try counted afresh */
		if (t)
			fprintf(stderr, "bench events: %s, %s: %s; trying again\n", r->name,
				mode_name[m], why);
		if (bench_counter_start(&bc, in->pid, &e)) {
			bench_per_op_na(e.why, &in->ent);
			return 0;
		}
		rc = r->load(c, in->port, false, &l, why, sizeof(why));
		bench_counter_stop(bc, &e);
	}
	if (rc || died(in)) {
		row_fail(r, "%s, counting entries: %s", mode_name[m],
			 rc ? why : "the server ended");
		return -1;
	}
	bench_per_op(&e, l.ops, &in->ent);
	if (e.ok)
		c->method = e.method;
	return 0;
}

/* Starts the three instances of r, warms each up, runs the rounds, the
 * counted runs and the checks, and stops them; r->fail says what failed. */
static void measure_row(struct ctx *c, struct row *r, int64_t t0, int *step, int steps)
{
	struct load l;
	char why[200];
	int m;

	for (m = 0; m < NMODE; m++)
		if (start_inst(c, r, m))
			goto out;
	for (m = 0; m < NMODE; m++)	/* page cache, allocators, connections */
		if (load(c, r, m, true, &l, why, sizeof(why))) {
			row_fail(r, "%s, warming up: %s", mode_name[m], why);
			goto out;
		}
	for (int k = 0; k < c->o.rounds; k++)
		for (int i = 0; i < NMODE; i++) {	/* each round starts elsewhere */
			bench_progress("bench events", (*step)++, steps, t0);
			if (timed(c, r, (i + k) % NMODE))
				goto out;
		}
	for (m = 0; m < NMODE; m++) {
		bench_progress("bench events: counting kernel entries", (*step)++, steps, t0);
		if (counted(c, r, m))
			goto out;
	}
	for (m = 0; m < NMODE; m++)
		if (r->check(&r->in[m]))
			row_fail(r, "%s: %s", mode_name[m], r->in[m].check);
out:
	for (m = 0; m < NMODE; m++)
		stop_inst(&r->in[m]);
	for (m = 1; m < NMODE; m++)
		if (r->in[m].term[0] && strcmp(r->in[m].term, r->in[NATIVE].term))
			row_fail(r, "SIGTERM: %s %s, native %s", mode_name[m], r->in[m].term,
				 r->in[NATIVE].term);
}

/* ---- output ---------------------------------------------------------------- */

static void print_instances(const struct ctx *c)
{
	char num[32];

	printf("%-15s %-19s %10s %10s %11s  %-5s %-9s  %s\n", "server", "instance", "ops/s",
	       "cpu us/op", "entries/op", "check", "SIGTERM", "top calls per operation");
	for (int i = 0; i < NROW; i++) {
		const struct row *r = &rows[i];
		if (r->skip) {
			printf("%-15s skipped: %s\n", r->name, r->skip);
			continue;
		}
		for (int m = 0; m < NMODE; m++) {
			const struct inst *in = &r->in[m];
			printf("%-15s %-19s %10.0f %10.2f %s  %-5s %-9s  %s\n", r->name,
			       mode_name[m], in->ops_s, in->cpu_us,
			       bench_per_op_num(&in->ent, 11, num, sizeof(num)),
			       in->check[0] ? (strcmp(in->check, "ok") ? "WRONG" : "ok") : "-",
			       in->term[0] ? in->term : "-", in->ent.text);
		}
		if (r->fail[0])
			printf("%-15s FAILED: %s\n", r->name, r->fail);
	}
	if (c->method)
		printf("entries/op: system call entries of the server's threads and children "
		       "per operation (calls trapped with SIGSYS included), counted with %s "
		       "in one more run of each, apart from the timed runs; then the calls "
		       "that make most of them\n", c->method);
}

static double ratio(double a, double b)
{
	return b > 0 ? a / b : 0;
}

/* The rounds' ratios of a over b, round by round: their median, lowest
 * and highest. */
struct spread {
	double med, lo, hi;
};

static struct spread round_ratios(const double *a, const double *b, int n)
{
	double v[MAX_ROUNDS];
	struct spread s = { 0, 0, 0 };

	for (int k = 0; k < n; k++) {
		v[k] = ratio(a[k], b[k]);
		if (!k || v[k] < s.lo)
			s.lo = v[k];
		if (!k || v[k] > s.hi)
			s.hi = v[k];
	}
	if (n > 0)
		s.med = median(v, n);
	return s;
}

static struct spread ops_ratio(const struct row *r)
{
	const struct inst *x = &r->in[XRUN], *n = &r->in[NATIVE];
	return round_ratios(x->r_ops, n->r_ops, x->nr < n->nr ? x->nr : n->nr);
}

static struct spread cpu_ratio(const struct row *r)
{
	const struct inst *x = &r->in[XRUN], *n = &r->in[NATIVE];
	return round_ratios(x->r_cpu, n->r_cpu, x->nr < n->nr ? x->nr : n->nr);
}

/* Side by side: xsc run against native, the rounds' ratios (median,
 * lowest-highest); entries under all three. */
static void print_ratios(void)
{
	char n0[32], n1[32], n2[32], ro[32], rc[32];

	printf("\n%-15s %10s %10s %18s %18s   %-30s\n", "", "ops/s", "ops/s", "ops/s ratio",
	       "cpu/op ratio", "kernel entries per operation");
	printf("%-15s %10s %10s %18s %18s   %9s %9s %11s\n", "server", "native", "xsc run",
	       "(rounds: range)", "(rounds: range)", "native", "xsc run", "dear host");
	for (int i = 0; i < NROW; i++) {
		const struct row *r = &rows[i];
		const struct inst *x = &r->in[XRUN], *n = &r->in[NATIVE];
		if (r->skip || !n->have || !x->have) {
			printf("%-15s %s\n", r->name, r->skip ? "skipped" : "failed");
			continue;
		}
		struct spread o = ops_ratio(r), u = cpu_ratio(r);
		snprintf(ro, sizeof(ro), "%.2f (%.2f-%.2f)", o.med, o.lo, o.hi);
		snprintf(rc, sizeof(rc), "%.2f (%.2f-%.2f)", u.med, u.lo, u.hi);
		printf("%-15s %10.0f %10.0f %18s %18s   %s %s %s\n", r->name, n->ops_s,
		       x->ops_s, ro, rc, bench_per_op_num(&n->ent, 9, n0, sizeof(n0)),
		       bench_per_op_num(&x->ent, 9, n1, sizeof(n1)),
		       bench_per_op_num(&r->in[DEAR].ent, 11, n2, sizeof(n2)));
	}
	printf("ops/s and cpu/op of an instance: the medians of its rounds; a ratio: the "
	       "median of the rounds' ratios (the two runs of a round at most one run "
	       "apart), then the lowest and highest\n");
}

/* A target against the rounds: met when every round meets it, not met
 * when every round misses it, else not settled (the rounds straddle it). */
static const char *verdict(bool all_meet, bool all_miss)
{
	return all_meet ? "met" : all_miss ? "not met" : "not settled";
}

/* The targets (never slower; memcached -t 4 at half native's entries),
 * judged by the rounds, with nginx's spread beside them: its one worker
 * thread runs natively under xsc run (the runtime starts at a second
 * thread), so its rounds' ratios are what the host does to two
 * identical servers. */
static void print_verdicts(const struct ctx *c)
{
	printf("\nnever slower (ops/s >= %.2fx and cpu/op <= %.2fx native), judged by the "
	       "rounds:", MIN_OPS, MAX_CPU);
	if (c->o.rounds < MIN_JUDGED)
		printf(" not judged (%d round%s; a verdict needs %d or more)", c->o.rounds,
		       c->o.rounds > 1 ? "s" : "", MIN_JUDGED);
	printf("\n");
	for (int i = 0; i < NROW; i++) {
		const struct row *r = &rows[i];
		if (c->o.rounds < MIN_JUDGED || r->skip || !r->in[NATIVE].have ||
		    !r->in[XRUN].have)
			continue;
		struct spread o = ops_ratio(r), u = cpu_ratio(r);
		bool native = r->load == nginx_load;
		printf("  %-15s ops/s %-11s cpu/op %s%s\n", r->name,
		       verdict(o.lo >= MIN_OPS, o.hi < MIN_OPS),
		       verdict(u.hi <= MAX_CPU, u.lo > MAX_CPU),
		       native ? "  (natively under xsc run: its ranges are the host's noise)" : "");
	}
	/* the target is an expensive host's: judged with its profile forced
	 * (the dear-host instance), the default instance beside it (this
	 * host's profile: a call alone may be cheaper made directly) */
	for (int i = 0; i < NROW; i++) {
		const struct row *r = &rows[i];
		const struct bench_per_op *n = &r->in[NATIVE].ent;
		if (r->threads < 2 || r->skip || !n->ok || n->entries <= 0)
			continue;
		printf("%s at most %.1fx native's kernel entries per operation (one counted run "
		       "each):", r->name, MAX_ENTRIES);
		for (int m = DEAR; m >= XRUN; m--) {
			const struct bench_per_op *x = &r->in[m].ent;
			printf("%s %s: %s", m == DEAR ? "" : ";",
			       m == DEAR ? "with an expensive host's profile forced" :
					   "with this host's",
			       !x->ok ? "not counted" :
			       x->entries / n->entries <= MAX_ENTRIES ? "met" : "not met");
			if (x->ok)
				printf(" (%.2fx)", x->entries / n->entries);
		}
		printf("\n");
	}
}

/* A CSV text field, prefix then s: commas made semicolons. */
static void csv_text(FILE *f, const char *prefix, const char *s)
{
	fprintf(f, ",%s", prefix);
	for (; *s; s++)
		fputc(*s == ',' ? ';' : *s, f);
}

/* One line per server; a skipped or failed one has empty figures and
 * says why in its note.  Update plot() with the column order. */
static int write_csv(const struct ctx *c)
{
	FILE *f = bench_csv_open(&c->o, "events",
		"server,native ops/s,xsc-run ops/s,ops/s ratio,native cpu us/op,"
		"xsc-run cpu us/op,cpu/op ratio,native entries/op,xsc-run entries/op,"
		"xsc-run-dear entries/op,xsc-run-dear ops/s,xsc-run-dear cpu us/op,"
		"native top calls/op,xsc-run top calls/op,xsc-run-dear top calls/op,"
		"native check,xsc-run check,xsc-run-dear check,native sigterm,"
		"xsc-run sigterm,xsc-run-dear sigterm,note,rounds,ops/s ratio lowest,"
		"ops/s ratio highest,cpu/op ratio lowest,cpu/op ratio highest");

	for (int i = 0; f && i < NROW; i++) {
		const struct row *r = &rows[i];
		const struct inst *n = &r->in[NATIVE], *x = &r->in[XRUN], *d = &r->in[DEAR];
		fprintf(f, "%s", r->name);
		if (r->skip || !n->have || !x->have || !d->have)
			fprintf(f, ",,,,,,,,,,,,,,");
		else
			fprintf(f, ",%.1f,%.1f,%.3f,%.3f,%.3f,%.3f", n->ops_s, x->ops_s,
				ops_ratio(r).med, n->cpu_us, x->cpu_us, cpu_ratio(r).med);
		if (!r->skip && n->have && x->have && d->have) {
			for (int m = 0; m < NMODE; m++)
				bench_per_op_csv_num(f, &r->in[m].ent);
			fprintf(f, ",%.1f,%.3f", d->ops_s, d->cpu_us);
			for (int m = 0; m < NMODE; m++)
				bench_per_op_csv_text(f, &r->in[m].ent);
		}
		for (int m = 0; m < NMODE; m++)
			csv_text(f, "", r->skip ? "" : r->in[m].check);
		for (int m = 0; m < NMODE; m++)
			csv_text(f, "", r->skip ? "" : r->in[m].term);
		csv_text(f, r->skip ? "skipped: " : "", r->skip ? r->skip : r->fail);
		if (!r->skip && n->have && x->have) {
			struct spread o = ops_ratio(r), u = cpu_ratio(r);
			fprintf(f, ",%d,%.3f,%.3f,%.3f,%.3f", n->nr < x->nr ? n->nr : x->nr,
				o.lo, o.hi, u.lo, u.hi);
		} else {
			fprintf(f, ",,,,,");
		}
		fputc('\n', f);
	}
	return f ? bench_csv_close(&c->o, "events", f, true) : -1;
}

/* Kernel entries per operation, the three instances side by side. */
static void plot(const struct ctx *c)
{
	bench_plot(&c->o, "events",
		   "set title 'kernel entries per operation (xsc bench events)'\n"
		   "set datafile separator ','\nset style data histograms\n"
		   "set style histogram clustered gap 1\nset style fill solid 0.8 border -1\n"
		   "set ylabel 'kernel entries per operation'\nset yrange [0:*]\n"
		   "set key top left\n"
		   "plot DIR.'/events.csv' using 8:xtic(1) title 'native', "
		   "'' using 9 title 'xsc run', '' using 10 title 'xsc run, dear host'");
}

/* ---- xsc bench events -------------------------------------------------------- */

/* An expensive host's profile: tests/run.sh writes the same one (its
 * "dear-host-profile"); update both together. */
static int write_dear(struct ctx *c)
{
	FILE *f;

	snprintf(c->dear, sizeof(c->dear), "%s/dear-host-profile", c->tmp);
	if (!(f = fopen(c->dear, "w")))
		return -1;
	fprintf(f, "null_syscall_ns 1100\nposted_batch1_ns 1250\nposted_batch32_ns 100\n"
		"posted_async_batch32_ns 400\ntls_switch_ns 1100\nthread_switch_ns 4000\n"
		"cross_core_wake_ns 30000\nxsave_bytes 2696\nxsavec 1\n");
	return fclose(f);
}

/* The options, this binary's path, the preload library, the temporary
 * directory.  -1 to go on, else the exit status. */
static int setup(int argc, char **argv, struct ctx *c)
{
	char lib[PATH_MAX];
	bool rounds_given = false;
	int rc;

	for (int i = 1; i < argc; i++)
		rounds_given |= !strcmp(argv[i], "--rounds");
	if (!bench_args(argc, argv, &c->o, usage, &rc))
		return rc;
	if (!rounds_given)
		c->o.rounds = c->o.quick ? 1 : 3;
	if (c->o.rounds > MAX_ROUNDS) {
		fprintf(stderr, "xsc bench events: --rounds %d: at most %d\n", c->o.rounds,
			MAX_ROUNDS);
		return 1;
	}
	c->redis_n = c->o.quick ? 10000 : 50000;
	c->mc_n = c->o.quick ? 200 : 1000;
	c->wrk_s = c->o.quick ? 1 : 3;
	c->srv_cpu = 0;
	c->cli_cpu = bench_ncpu() > 1 ? 1 : 0;
	ssize_t n = readlink("/proc/self/exe", c->self, sizeof(c->self) - 1);
	if (n <= 0)
		return 1;
	c->self[n] = 0;
	if (xsc_run_find_preload(lib, sizeof(lib)) < 0) {
		fprintf(stderr, "xsc bench events: libxsc-preload.so not built (ASan "
			"build?) or installed\n");
		return 2;
	}
	snprintf(c->tmp, sizeof(c->tmp), "/tmp/xsc-bench-events.XXXXXX");
	/* nginx's worker runs as nobody when we are root: it must get in */
	if (!mkdtemp(c->tmp) || chmod(c->tmp, 0755) || write_dear(c)) {
		fprintf(stderr, "xsc bench events: cannot make %s\n", c->tmp);
		return 1;
	}
	return -1;
}

int xsc_bench_events(int argc, char **argv)
{
	struct ctx c;
	char cmd[128];
	int rc, steps = 0, step = 0, failed = 0;

	memset(&c, 0, sizeof(c));
	if ((rc = setup(argc, argv, &c)) >= 0)
		return rc;
	signal(SIGPIPE, SIG_IGN);
	for (int i = 0; i < NROW; i++)
		if (!(rows[i].skip = rows[i].missing()))
			steps += (c.o.rounds + 1) * NMODE;
	printf("%d round%s, then a counted run; server on core %d, client on core %d; "
	       "redis-benchmark -n %ld, memcslap --execute-number=%ld, wrk -d %ds; "
	       "%d connections\n", c.o.rounds, c.o.rounds > 1 ? "s" : "", c.srv_cpu,
	       c.cli_cpu, c.redis_n, c.mc_n, c.wrk_s, CONC);
	int64_t t0 = bench_now_ns();
	for (int i = 0; i < NROW; i++)
		if (!rows[i].skip) {
			measure_row(&c, &rows[i], t0, &step, steps);
			failed += rows[i].fail[0] != 0;
		}
	bench_progress_done();
	print_instances(&c);
	print_ratios();
	print_verdicts(&c);
	if (write_csv(&c) == 0) {
		plot(&c);
		printf("wrote %s/events.csv and %s/events.png\n", c.o.out, c.o.out);
	} else {
		failed++;
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", c.tmp);
	if (system(cmd) != 0)
		fprintf(stderr, "bench events: could not remove %s\n", c.tmp);
	return failed ? 1 : 0;
}
