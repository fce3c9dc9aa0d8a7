/*
 * http.c - `xsc bench http` (FlexSC Figures 11 and 13) and `xsc bench
 * sensitivity` (FlexSC Figure 16).  The servers, the method and the
 * figures: docs/experiments.md, "http" and "sensitivity".
 *
 * http: wrk (-t1, core 1) on loopback against httpd-nptl, httpd-xsc,
 * httpd-uring and nginx (core 0) serving one file from one directory.
 * Rules:
 *  - every server starts once and stays up; runs are interleaved server
 *    by server inside each round, each figure the best of the rounds,
 *    metric by metric (this machine is shared and noisy);
 *  - CPU per request is the server's utime+stime delta from /proc over
 *    the requests wrk completed;
 *  - kernel entries (entries.c) are counted in one more run per server
 *    and concurrency after the rounds, never in a timed run
 *    (XSC_BENCH_ENTRIES=off leaves it out);
 *  - missing wrk or nginx: a message naming the Debian package, exit 2;
 *    the CSV is written only when every run succeeded.
 * sensitivity: httpd-xsc at concurrency 2048 with 64..1024 syscall entries
 * per kernel thread (--entries).
 * Binaries: --bin-dir DIR, else DIR/examples/httpd or
 * DIR/../examples/httpd of the build this xsc binary lives in.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "entries.h"
#include "harness.h"

int xsc_run_find_preload(char *out, size_t n);	/* tools/run.c */

#define MAXCONC 8
#define FILE_NAME "file.html"

enum { NPTL, XSCT, XSCSQ, NGINX, XRUN, ULOOP, NSERV };
static const char *const serv_name[NSERV] = { "httpd-nptl", "httpd-xsc",
					      "httpd-xsc-sq", "nginx",
					      "httpd-nptl+xsc-run", "httpd-uring" };

struct result {
	double rps, p50_us, p99_us, cpu_us;	/* per request */
	long requests, errors;
};

struct server {
	const char *name;
	char bin[1100];
	bool avail, nginx;
	bool sq;		/* httpd-xsc on SQPOLL with its poller on the
				   other core (core specialization) */
	bool xrun;		/* the unmodified binary under `xsc run -t 1` */
	bool tree;		/* CPU of the process and all its descendants
				   (a forking server: apache) */
	pid_t pid;
	int port;
	struct result best[MAXCONC];
	struct bench_per_op ent[MAXCONC];	/* kernel entries per request */
};

struct ctx {
	struct bench_opts o;
	char bindir[1024];	/* sizes keep gcc's truncation check quiet */
	char tmp[64];
	int dur;		/* seconds per run */
	int size;		/* bytes of the served file */
	int srv_cpu, wrk_cpu;
	const char *ent_method;	/* how entries were counted; NULL: not */
};

/* ---- processes ------------------------------------------------------- */

/* Forks argv pinned to cpu, stdout into a pipe whose read end goes to
 * *out (or /dev/null if out is NULL).  Returns the pid or -1. */
static pid_t spawn(char *const argv[], int cpu, int *out)
{
	int p[2] = { -1, -1 };
	pid_t pid;

	if (out && pipe2(p, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid == 0) {
		int nul = open("/dev/null", O_RDWR);
		cpu_set_t s;
		CPU_ZERO(&s);
		CPU_SET(cpu, &s);
		if (cpu >= 0)	/* -1: the server pins its own threads */
			sched_setaffinity(0, sizeof(s), &s);
		dup2(nul, 0);
		dup2(out ? p[1] : nul, 1);
		execvp(argv[0], argv);
		_exit(127);
	}
	if (out) {
		close(p[1]);
		if (pid < 0)
			close(p[0]);
		else
			*out = p[0];
	}
	return pid;
}

/* Reads fd until EOF, buf full or timeout_ms; NUL-terminates.  Returns
 * the byte count. */
static size_t read_all(int fd, char *buf, size_t len, int timeout_ms, bool line)
{
	size_t n = 0;
	int64_t end = bench_now_ns() + (int64_t)timeout_ms * 1000000;

	while (n + 1 < len) {
		struct pollfd pf = { .fd = fd, .events = POLLIN };
		int left = (int)((end - bench_now_ns()) / 1000000);
		if (left <= 0 || poll(&pf, 1, left) <= 0)
			break;
		ssize_t r = read(fd, buf + n, len - 1 - n);
		if (r <= 0)
			break;
		n += (size_t)r;
		if (line && memchr(buf, '\n', n))
			break;
	}
	buf[n] = '\0';
	return n;
}

/* SIGTERM, up to 3 s to exit, then SIGKILL. */
static void stop(pid_t pid)
{
	if (pid <= 0)
		return;
	kill(pid, SIGTERM);
	for (int i = 0; i < 300; i++) {
		if (waitpid(pid, NULL, WNOHANG) == pid)
			return;
		usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static bool in_path(const char *name)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", name);
	return system(cmd) == 0;
}

/* utime+stime of the whole process, in clock ticks; -1 if gone. */
static long cpu_ticks(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long ut, st;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "r")))
		return -1;
	p = fgets(buf, sizeof(buf), f);
	fclose(f);
	if (!p || !(p = strrchr(buf, ')')))
		return -1;
	/* fields 3..13 after the comm, then utime (14) and stime (15) */
	if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
		   &ut, &st) != 2)
		return -1;
	return (long)(ut + st);
}

/* cpu_ticks of pid and of every process below it (children are listed
 * per thread: under xsc run a fork is made by whichever kernel thread
 * ran the forking fiber); -1 if pid is gone. */
static long tree_ticks(pid_t pid, int depth)
{
	long sum = cpu_ticks(pid);
	char path[64], list[4096];
	DIR *d;
	struct dirent *e;

	if (sum < 0 || depth > 4)
		return sum;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if (!(d = opendir(path)))
		return sum;
	while ((e = readdir(d)) != NULL) {
		char cp[300];
		FILE *f;
		if (e->d_name[0] == '.')
			continue;
		snprintf(cp, sizeof(cp), "/proc/%d/task/%s/children", (int)pid, e->d_name);
		if (!(f = fopen(cp, "r")))
			continue;
		size_t n = fread(list, 1, sizeof(list) - 1, f);
		fclose(f);
		list[n] = 0;
		for (char *s = strtok(list, " \n"); s; s = strtok(NULL, " \n")) {
			long t = tree_ticks((pid_t)atoi(s), depth + 1);
			if (t > 0)
				sum += t;
		}
	}
	closedir(d);
	return sum;
}

/* ---- servers --------------------------------------------------------- */

int bench_free_port(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port = -1;

	if (fd >= 0 && !bind(fd, (struct sockaddr *)&sa, sizeof(sa)) &&
	    !getsockname(fd, (struct sockaddr *)&sa, &sl))
		port = ntohs(sa.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

bool bench_port_open(int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	bool ok = fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;

	if (fd >= 0)
		close(fd);
	return ok;
}

int bench_nginx_conf(const char *dir, int port, bool master, char *conf, size_t len)
{
	FILE *f;

	snprintf(conf, len, "%s/nginx.conf", dir);
	if (!(f = fopen(conf, "w")))
		return -1;
	fprintf(f,
		"daemon off;\nmaster_process %s;\nworker_processes 1;\n"
		"worker_rlimit_nofile 20000;\npid %s/nginx.pid;\n"
		"error_log %s/nginx-error.log warn;\n"
		"events { worker_connections 10000; }\n"
		"http {\n  access_log off;\n  sendfile off;\n  tcp_nodelay on;\n"
		"  keepalive_requests 100000000;\n  keepalive_timeout 60s;\n"
		"  client_body_temp_path %s/body;\n"
		"  types { text/html html; }\n  default_type application/octet-stream;\n"
		"  server {\n    listen 127.0.0.1:%d backlog=4096;\n    root %s/root;\n"
		"  }\n}\n", master ? "on" : "off", dir, dir, dir, port, dir);
	return fclose(f) ? -1 : 0;
}

static int write_nginx_conf(const struct ctx *c, int port, char *conf, size_t len)
{
	return bench_nginx_conf(c->tmp, port, false, conf, len);
}

static int start_nginx(const struct ctx *c, struct server *s)
{
	char conf[PATH_MAX], elog[PATH_MAX];

	s->port = bench_free_port();
	if (s->port < 0 || write_nginx_conf(c, s->port, conf, sizeof(conf)))
		return -1;
	snprintf(elog, sizeof(elog), "%s/nginx-stderr.log", c->tmp);
	char *argv[] = { s->bin, "-c", conf, "-p", (char *)c->tmp, "-e", elog, NULL };
	s->pid = spawn(argv, c->srv_cpu, NULL);
	for (int i = 0; s->pid > 0 && i < 500; i++) {	/* up to 5 s */
		if (bench_port_open(s->port))
			return 0;
		if (waitpid(s->pid, NULL, WNOHANG) == s->pid)
			break;
		usleep(10000);
	}
	fprintf(stderr, "bench http: nginx did not start; see %s/nginx-error.log\n", c->tmp);
	return -1;
}

/* httpd prints "httpd-X: listening on 127.0.0.1:PORT ..." first. */
static int start_httpd(const struct ctx *c, struct server *s, int entries)
{
	char root[PATH_MAX], cpu[16], ent[16], line[256], *p;
	int fd = -1;

	snprintf(root, sizeof(root), "%s/root", c->tmp);
	snprintf(cpu, sizeof(cpu), "%d", c->srv_cpu);
	snprintf(ent, sizeof(ent), "%d", entries);
	char sqcpu[16];
	snprintf(sqcpu, sizeof(sqcpu), "%d", c->wrk_cpu);
	char *argv[] = { s->bin, "--port", "0", "--root", root, "--cpu", cpu,
			 "--backlog", "4096", "--threads", "1",
			 "--syscall-cpu", sqcpu,
			 entries ? "--entries" : NULL, ent, NULL };
	if (!s->sq)	/* drop the --syscall-cpu pair */
		memmove(&argv[11], &argv[13], 3 * sizeof(argv[0]));
	char self[PATH_MAX], *xargv[24] = { self, "run", "-t", "1", "--" };
	if (s->xrun) {	/* the same command line behind `xsc run` */
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		int k = 0;
		if (n <= 0)
			return -1;
		self[n] = 0;
		while (argv[k] && k < 18) {
			xargv[5 + k] = argv[k];
			k++;
		}
		xargv[5 + k] = NULL;
	}
	if (s->sq)
		setenv("XSC_BACKEND", "sqpoll", 1);
	/* the SQPOLL variant pins its kernel thread itself (--cpu) and its
	 * poller to the other core: the process must be allowed both */
	s->pid = spawn(s->xrun ? xargv : argv, s->sq ? -1 : c->srv_cpu, &fd);
	if (s->sq)
		unsetenv("XSC_BACKEND");
	if (s->pid < 0)
		return -1;
	read_all(fd, line, sizeof(line), 5000, true);
	close(fd);
	p = strstr(line, "127.0.0.1:");
	s->port = p ? atoi(p + 10) : 0;
	if (s->port > 0 && bench_port_open(s->port))
		return 0;
	fprintf(stderr, "bench http: %s did not start (said: %s)\n", s->name, line);
	stop(s->pid);
	s->pid = 0;
	return -1;
}

/* ---- wrk ------------------------------------------------------------- */

/* "5.83ms" -> 5830 (µs); -1 if unparsable. */
static double to_us(const char *s)
{
	char *e;
	double v = strtod(s, &e);

	if (e == s)
		return -1;
	if (!strncmp(e, "us", 2))
		return v;
	if (!strncmp(e, "ms", 2))
		return v * 1e3;
	if (*e == 's')
		return v * 1e6;
	if (!strncmp(e, "m", 1))
		return v * 60e6;
	return -1;
}

static long field_after(const char *out, const char *key)
{
	const char *p = strstr(out, key);
	return p ? strtol(p + strlen(key), NULL, 10) : 0;
}

static int parse_wrk(const char *out, struct result *r)
{
	const char *p50 = strstr(out, "     50%"), *p99 = strstr(out, "     99%");
	const char *rps = strstr(out, "Requests/sec:"), *req = strstr(out, " requests in ");

	if (!p50 || !p99 || !rps || !req)
		return -1;
	r->p50_us = to_us(p50 + 8 + strspn(p50 + 8, " "));
	r->p99_us = to_us(p99 + 8 + strspn(p99 + 8, " "));
	r->rps = strtod(rps + 13, NULL);
	while (req > out && req[-1] != '\n')
		req--;
	r->requests = strtol(req, NULL, 10);
	r->errors = field_after(out, "Non-2xx or 3xx responses:") +
		    field_after(out, "Socket errors: connect ") +
		    field_after(out, ", read ") + field_after(out, ", write ");
	return r->p50_us < 0 || r->p99_us < 0 || r->requests <= 0 ? -1 : 0;
}

/* Reaps the server if it exited, saying how.  True if it is gone. */
static bool server_died(struct server *s)
{
	int st;

	if (waitpid(s->pid, &st, WNOHANG) != s->pid)
		return false;
	if (WIFSIGNALED(st))
		fprintf(stderr, "bench http: %s was killed by signal %d (%s)\n",
			s->name, WTERMSIG(st), strsignal(WTERMSIG(st)));
	else
		fprintf(stderr, "bench http: %s exited with status %d\n", s->name,
			WEXITSTATUS(st));
	s->pid = 0;
	return true;
}

/* One wrk run against s at concurrency conc for dur seconds.  Returns 0,
 * -1 if the server is gone, -2 if wrk completed no request. */
static int run_wrk(const struct ctx *c, struct server *s, int conc, int dur,
		   struct result *r)
{
	char cs[16], ds[16], url[128], out[8192];
	int fd = -1;
	long t0, t1;

	snprintf(cs, sizeof(cs), "%d", conc);
	snprintf(ds, sizeof(ds), "%ds", dur);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/" FILE_NAME, s->port);
	char *argv[] = { "wrk", "-t1", "-c", cs, "-d", ds, "--latency",
			 "--timeout", "10s", url, NULL };
	t0 = s->tree ? tree_ticks(s->pid, 0) : cpu_ticks(s->pid);
	pid_t pid = spawn(argv, c->wrk_cpu, &fd);
	if (pid < 0)
		return -1;
	read_all(fd, out, sizeof(out), (dur + 30) * 1000, false);
	close(fd);
	stop(pid);	/* normally exited already: reaps it */
	t1 = s->tree ? tree_ticks(s->pid, 0) : cpu_ticks(s->pid);
	if (t0 < 0 || t1 < 0 || server_died(s))
		return -1;
	if (parse_wrk(out, r))
		return -2;
	r->cpu_us = (double)(t1 - t0) * 1e6 / (double)sysconf(_SC_CLK_TCK) /
		    (double)r->requests;
	if (r->errors)
		fprintf(stderr, "bench http: %s at %d: %ld errors or non-2xx "
			"responses\n", s->name, conc, r->errors);
	return 0;
}

/* run_wrk, retried twice when wrk completed nothing.  Rarely, on this
 * shared machine, a run right after another server's high-concurrency run
 * completes no request at all (wrk reports "0 requests" and overruns its
 * duration); a second try always worked.  Say so, never hide it. */
static int run_wrk_retry(const struct ctx *c, struct server *s, int conc, int dur,
			 struct result *r)
{
	int ret = -2;

	for (int t = 0; t < 3 && ret == -2; t++) {
		if (t) {
			fprintf(stderr, "bench http: %s at concurrency %d: wrk completed "
				"no request; retrying\n", s->name, conc);
			sleep(1);
		}
		ret = run_wrk(c, s, conc, dur, r);
	}
	if (ret == -2)
		fprintf(stderr, "bench http: %s at concurrency %d: no usable wrk "
			"result\n", s->name, conc);
	return ret;
}

/* run_wrk with s's kernel entries counted, into *ent; retried as
 * run_wrk_retry does, each try counted afresh.  Returns run_wrk's
 * answer, or 1 when no count could be started (ent says why). */
static int count_wrk(struct ctx *c, struct server *s, int conc, struct bench_per_op *ent)
{
	struct bench_counter *bc;
	struct bench_entries e;
	struct result r;
	int ret = -2;

	for (int t = 0; t < 3 && ret == -2; t++) {
		if (bench_counter_start(&bc, s->pid, &e)) {
			bench_per_op_na(e.why, ent);
			return 1;
		}
		ret = run_wrk(c, s, conc, c->dur, &r);
		bench_counter_stop(bc, &e);
	}
	if (ret == -2)
		fprintf(stderr, "bench http: %s at concurrency %d: no usable wrk "
			"result while counting entries\n", s->name, conc);
	if (ret == 0) {
		bench_per_op(&e, (double)r.requests, ent);
		c->ent_method = e.method;
	}
	return ret;
}

/* After the measured rounds: one counted run per server and concurrency.
 * When no count can be started, every figure is n/a with the reason and
 * no run is made. */
static int count_all(struct ctx *c, struct server *sv, int ns, const int *conc, int nc)
{
	int64_t t0 = bench_now_ns();

	for (int k = 0; k < nc; k++)
		for (int s = 0; s < ns; s++) {
			int r;
			if (!sv[s].avail)
				continue;
			bench_progress("bench http: counting kernel entries", k * ns + s,
				       nc * ns, t0);
			r = count_wrk(c, &sv[s], conc[k], &sv[s].ent[k]);
			if (r == 1) {
				for (int kk = 0; kk < nc; kk++)
					for (int ss = 0; ss < ns; ss++)
						sv[ss].ent[kk] = sv[s].ent[k];
				break;
			}
			if (r)
				return -1;
			usleep(300000);
		}
	bench_progress_done();
	return 0;
}

/* The line under a table that says what entries/req is. */
static void say_entries(const struct ctx *c)
{
	if (c->ent_method)
		printf("entries/req: system call entries of the server's threads and "
		       "children per request (calls trapped with SIGSYS included), "
		       "counted with %s in one more %d s run of each, apart from the "
		       "timed runs; then the calls that make most of them\n",
		       c->ent_method, c->dur);
}

/* Keeps the best of each metric separately. */
static void keep_best(struct result *b, const struct result *r)
{
	if (!b->requests) {
		*b = *r;
		return;
	}
	if (r->rps > b->rps)
		b->rps = r->rps, b->requests = r->requests;
	if (r->p50_us < b->p50_us)
		b->p50_us = r->p50_us;
	if (r->p99_us < b->p99_us)
		b->p99_us = r->p99_us;
	if (r->cpu_us < b->cpu_us)
		b->cpu_us = r->cpu_us;
	if (r->errors < b->errors)
		b->errors = r->errors;
}

/* ---- setup shared by both experiments ---------------------------------- */

static void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 9000)
		fprintf(stderr, "bench http: RLIMIT_NOFILE is %lu; 4096 connections "
			"need ~9000 (ulimit -Hn)\n", (unsigned long)rl.rlim_cur);
}

/* The directory holding httpd-nptl: --bin-dir, or next to this binary. */
static int find_bindir(struct ctx *c, const char *given)
{
	char exe[900], *slash, try[1100];
	ssize_t n;

	if (given) {
		if (strlen(given) >= 900)
			return -1;
		snprintf(c->bindir, sizeof(c->bindir), "%s", given);
		return 0;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return -1;
	exe[n] = '\0';
	if ((slash = strrchr(exe, '/')))
		*slash = '\0';
	static const char *const rel[] = { "/examples/httpd", "/../examples/httpd" };
	for (int i = 0; i < 2; i++) {
		snprintf(try, sizeof(try), "%s%s/httpd-nptl", exe, rel[i]);
		if (access(try, X_OK) == 0) {
			snprintf(c->bindir, sizeof(c->bindir), "%s%s", exe, rel[i]);
			return 0;
		}
	}
	return -1;
}

/* Temp dir with root/file.html of c->size bytes of HTML-ish text. */
static int make_tmp(struct ctx *c)
{
	char path[PATH_MAX + 32];
	FILE *f;

	snprintf(c->tmp, sizeof(c->tmp), "/tmp/xsc-bench-http.XXXXXX");
	if (!mkdtemp(c->tmp))
		return -1;
	snprintf(path, sizeof(path), "%s/root", c->tmp);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/body", c->tmp);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/root/" FILE_NAME, c->tmp);
	if (!(f = fopen(path, "w")))
		return -1;
	for (int i = 0; i < c->size; i++)
		fputc(i % 64 == 63 ? '\n' : 'a' + i % 26, f);
	return fclose(f);
}

static void rm_tmp(const struct ctx *c)
{
	char cmd[PATH_MAX + 16];

	if (c->tmp[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", c->tmp);
		if (system(cmd) != 0)
			fprintf(stderr, "bench http: could not remove %s\n", c->tmp);
	}
}

/* Takes this file's own options (--bin-dir, --duration, --size) out of
 * argv into c / *bindir, leaving the harness options in rest[].  Returns
 * the count left, or -1 for a missing value. */
static int own_options(int argc, char **argv, struct ctx *c, const char **bindir,
		       char **rest)
{
	int n = 0;

	for (int i = 0; i < argc; i++) {
		bool own = !strcmp(argv[i], "--bin-dir") || !strcmp(argv[i], "--duration") ||
			   !strcmp(argv[i], "--size");
		if (!own) {
			rest[n++] = argv[i];
			continue;
		}
		if (i + 1 >= argc)
			return -1;
		if (argv[i][2] == 'b')
			*bindir = argv[++i];
		else if (argv[i][2] == 'd')
			c->dur = atoi(argv[++i]);
		else
			c->size = atoi(argv[++i]);
	}
	rest[n] = NULL;
	return n;
}

/* Parses the options; returns 0, 1 for --help, -1 on bad input. */
static int parse(int argc, char **argv, struct ctx *c, const char *usage,
		 const char **bindir)
{
	char **rest = calloc((size_t)argc + 1, sizeof(*rest));
	bool rounds_given = false;
	int n, i = -1;

	memset(c, 0, sizeof(*c));
	c->size = 4096;
	n = rest ? own_options(argc, argv, c, bindir, rest) : -1;
	for (int k = 0; k < n; k++)
		rounds_given |= !strcmp(rest[k], "--rounds");
	if (n >= 0)
		i = bench_parse(n, rest, &c->o, usage);
	free(rest);
	if (i == -2)
		return 1;
	if (i < 0 || i < n || c->dur < 0 || c->dur > 600 || c->size < 0 ||
	    c->size > (64 << 20)) {
		fprintf(stderr, "xsc bench: bad arguments\n%s", usage);
		return -1;
	}
	if (!rounds_given)
		c->o.rounds = 2;
	if (!c->dur)
		c->dur = c->o.quick ? 2 : 5;
	c->srv_cpu = 0;
	c->wrk_cpu = bench_ncpu() > 1 ? 1 : 0;
	return 0;
}

/* Checks wrk (and nginx if want_nginx); exit status 2 on a missing tool. */
static int need_tools(bool want_nginx, char *nginx, size_t len)
{
	if (!in_path("wrk")) {
		fprintf(stderr, "xsc bench: wrk not found; install the Debian package "
			"wrk (apt-get install wrk) or run `make demo`\n");
		return -1;
	}
	if (!want_nginx)
		return 0;
	if (access("/usr/sbin/nginx", X_OK) == 0)
		snprintf(nginx, len, "/usr/sbin/nginx");
	else if (in_path("nginx"))
		snprintf(nginx, len, "nginx");
	else {
		fprintf(stderr, "xsc bench: nginx not found; install the Debian package "
			"nginx-light (apt-get install nginx-light) or run `make demo`\n");
		return -1;
	}
	return 0;
}

static void server_bin(const struct ctx *c, struct server *s, const char *name)
{
	s->name = name;
	snprintf(s->bin, sizeof(s->bin), "%s/%s", c->bindir, name);
	s->avail = access(s->bin, X_OK) == 0;
}

/* ---- xsc bench http ---------------------------------------------------- */

static const char http_usage[] =
	"usage: xsc bench http [--quick] [--rounds N] [--out DIR] [--bin-dir DIR]\n"
	"                      [--duration SEC] [--size BYTES]\n"
	"  wrk against httpd-nptl, httpd-xsc (if built), httpd-uring (the\n"
	"  hand-written io_uring loop, if built) and nginx at concurrency\n"
	"  16..4096 (--quick: 64, 256); server on core 0, wrk on core 1; best of\n"
	"  N rounds (default 2), then one more run of each with the server's kernel\n"
	"  entries per request counted (XSC_BENCH_ENTRIES=tracefs|strace|off).\n"
	"  Writes DIR/http.csv and DIR/http-*.png.\n";

static void print_table(const struct ctx *c, struct server *sv, int ns, const int *conc,
			int nc)
{
	char num[32];

	printf("%6s  %-18s %10s %10s %10s %12s %12s  %s\n", "conc", "server", "req/s",
	       "p50 ms", "p99 ms", "cpu us/req", "entries/req", "top calls per request");
	for (int k = 0; k < nc; k++)
		for (int s = 0; s < ns; s++) {
			struct result *r = &sv[s].best[k];
			if (!sv[s].avail)
				continue;
			printf("%6d  %-18s %10.0f %10.2f %10.2f %12.2f %s  %s%s\n", conc[k],
			       sv[s].name, r->rps, r->p50_us / 1e3, r->p99_us / 1e3,
			       r->cpu_us, bench_per_op_num(&sv[s].ent[k], 12, num, sizeof(num)),
			       sv[s].ent[k].text, r->errors ? "  (errors)" : "");
		}
	say_entries(c);
}

static void print_ratio(struct server *sv, int a, int b, const int *conc, int nc)
{
	if (!sv[a].avail || !sv[b].avail)
		return;
	printf("\n%s / %s:\n%6s %10s %12s %10s %12s\n", sv[a].name, sv[b].name, "conc",
	       "req/s", "cpu/req", "p99", "entries/req");
	for (int k = 0; k < nc; k++) {
		struct result *x = &sv[a].best[k], *y = &sv[b].best[k];
		struct bench_per_op *ex = &sv[a].ent[k], *ey = &sv[b].ent[k];
		printf("%6d %10.2f %12.2f %10.2f", conc[k], x->rps / y->rps,
		       x->cpu_us / y->cpu_us, x->p99_us / y->p99_us);
		if (ex->ok && ey->ok && ey->entries > 0)
			printf(" %12.2f\n", ex->entries / ey->entries);
		else
			printf(" %12s\n", "n/a");
	}
}

/* names[s]: sv[s]'s column name, also when it was not measured. */
static int write_http_csv(const struct ctx *c, const char *name, struct server *sv,
			  int ns, const char *const *names, const int *conc, int nc)
{
	/* update plot_http's column numbers with this order */
	static const char *const metric[] = { "req/s", "p50 us", "p99 us", "cpu us/req",
					      "entries/req", "top calls/req" };
	char hdr[2048] = "concurrency";
	FILE *f;

	for (int m = 0; m < 6; m++)
		for (int s = 0; s < ns; s++)
			snprintf(hdr + strlen(hdr), sizeof(hdr) - strlen(hdr), ",%s %s",
				 names[s], metric[m]);
	if (!(f = bench_csv_open(&c->o, name, hdr)))
		return -1;
	for (int k = 0; k < nc; k++) {
		fprintf(f, "%d", conc[k]);
		for (int m = 0; m < 6; m++)
			for (int s = 0; s < ns; s++) {
				struct result *r = &sv[s].best[k];
				double v[4] = { r->rps, r->p50_us, r->p99_us, r->cpu_us };
				if (!sv[s].avail)
					fprintf(f, ",");
				else if (m < 4)
					fprintf(f, ",%.2f", v[m]);
				else if (m == 4)
					bench_per_op_csv_num(f, &sv[s].ent[k]);
				else
					bench_per_op_csv_text(f, &sv[s].ent[k]);
			}
		fprintf(f, "\n");
	}
	return bench_csv_close(&c->o, name, f, true);
}

/* Whether s has a count of kernel entries at some concurrency. */
static bool counted(const struct server *s)
{
	for (int k = 0; k < MAXCONC; k++)
		if (s->ent[k].ok)
			return true;
	return false;
}

static void plot_http(const struct ctx *c, const char *name, struct server *sv, int ns)
{
	/* CSV columns: concurrency, then ns columns per metric (in
	 * write_http_csv's order).  Latency and CPU on a log scale: one
	 * server's figure can be several times the others' (httpd-xsc-sq's
	 * CPU per request counts its polling core), and on a linear scale it
	 * flattens them. */
	static const char *const what[][3] = {
		{ "throughput", "requests/s", "0" },
		{ "latency", "p99 latency, us", "2" },
		{ "cpu", "server CPU per request, us", "3" },
		{ "entries", "kernel entries per request", "4" },
	};
	char script[1024], cols[64], png[64];

	for (int i = 0; i < 4; i++) {
		bool on[NSERV];

		for (int s = 0; s < ns; s++)	/* only the servers measured */
			on[s] = sv[s].avail && (i < 3 || counted(&sv[s]));
		if (!bench_plot_cols(cols, sizeof(cols), 2 + atoi(what[i][2]) * ns, on, ns))
			continue;
		snprintf(png, sizeof(png), "%s-%s", name, what[i][0]);
		snprintf(script, sizeof(script),
			 "set title '%s vs concurrency (xsc bench %s)'\n"
			 "set logscale x 2\nset xlabel 'concurrent connections'\n"
			 "set ylabel '%s'\n%s"
			 "plot for [c in '%s'] DIR.'/%s.csv' using 1:(column(int(c))) title columnhead(int(c)) with linespoints lw 2",
			 what[i][1], name, what[i][1],
			 i == 1 || i == 2 ? "set logscale y\n" : "set yrange [0:*]\n", cols, name);
		bench_plot(&c->o, png, script);
	}
}

static int measure_all(struct ctx *c, struct server *sv, int ns, const int *conc, int nc)
{
	int64_t t0 = bench_now_ns();
	int steps = c->o.rounds * nc, step = 0;

	for (int s = 0; s < ns; s++) {	/* warm up: page cache, stacks */
		struct result w;
		if (sv[s].avail && run_wrk_retry(c, &sv[s], 64, 1, &w))
			return -1;
	}
	for (int r = 0; r < c->o.rounds; r++)
		for (int k = 0; k < nc; k++, step++) {
			bench_progress("bench http", step, steps, t0);
			for (int s = 0; s < ns; s++) {
				struct result res;
				if (!sv[s].avail)
					continue;
				if (run_wrk_retry(c, &sv[s], conc[k], c->dur, &res))
					return -1;
				keep_best(&sv[s].best[k], &res);
				usleep(300000);	/* let closed connections drain */
			}
		}
	bench_progress_done();
	return 0;
}

/* Starts the available servers, measures them at every concurrency,
 * prints the table and the ratios (server a / server b), writes NAME.csv
 * and the plots, stops the servers.  0 when every run succeeded, else 1. */
static int serve_and_measure(struct ctx *c, struct server *sv, const int *conc, int nc,
			     const char *name, const int (*ratios)[2], int nratio)
{
	int ok = 0;

	raise_nofile();
	signal(SIGPIPE, SIG_IGN);
	if (make_tmp(c))
		return 1;
	for (int s = 0; s < NSERV; s++)
		if (sv[s].avail && (sv[s].nginx ? start_nginx(c, &sv[s])
						: start_httpd(c, &sv[s], 0)))
			goto out;
	printf("%d s per run, %d rounds, %d-byte file, server on core %d, wrk -t1 on "
	       "core %d\n", c->dur, c->o.rounds, c->size, c->srv_cpu, c->wrk_cpu);
	if (measure_all(c, sv, NSERV, conc, nc) || count_all(c, sv, NSERV, conc, nc))
		goto out;
	print_table(c, sv, NSERV, conc, nc);
	for (int i = 0; i < nratio; i++)
		print_ratio(sv, ratios[i][0], ratios[i][1], conc, nc);
	ok = write_http_csv(c, name, sv, NSERV, serv_name, conc, nc) == 0;
	if (ok) {
		plot_http(c, name, sv, NSERV);
		printf("wrote %s/%s.csv and %s/%s-{throughput,latency,cpu%s}.png\n",
		       c->o.out, name, c->o.out, name, c->ent_method ? ",entries" : "");
	}
out:
	for (int s = 0; s < NSERV; s++)
		stop(sv[s].pid);
	rm_tmp(c);
	return ok ? 0 : 1;
}

/* What the http and transparent experiments do first: the options, wrk
 * (and nginx, found into nginx[len], when nginx is not NULL), the
 * directory of the httpd binaries.  -1 to go on, else the exit status. */
static int begin(int argc, char **argv, struct ctx *c, const char *usage,
		 const char *name, char *nginx, size_t len)
{
	const char *given = NULL;
	int r = parse(argc, argv, c, usage, &given);

	if (r)
		return r > 0 ? 0 : 2;
	if (need_tools(nginx != NULL, nginx, len))
		return 2;
	if (find_bindir(c, given)) {
		fprintf(stderr, "xsc bench %s: httpd-nptl not found next to this "
			"binary; build the tree or pass --bin-dir DIR\n", name);
		return 2;
	}
	return -1;
}

int xsc_bench_http(int argc, char **argv)
{
	static const int full[] = { 16, 64, 256, 1024, 4096 }, quick[] = { 64, 256 };
	struct server sv[NSERV];
	struct ctx c;
	int nc, r;

	memset(sv, 0, sizeof(sv));
	r = begin(argc, argv, &c, http_usage, "http", sv[NGINX].bin,
		  sizeof(sv[NGINX].bin));
	if (r >= 0)
		return r;
	const int *conc = c.o.quick ? quick : full;
	nc = c.o.quick ? 2 : 5;
	server_bin(&c, &sv[NPTL], serv_name[NPTL]);
	server_bin(&c, &sv[XSCT], serv_name[XSCT]);
	server_bin(&c, &sv[ULOOP], serv_name[ULOOP]);
	server_bin(&c, &sv[XSCSQ], serv_name[XSCT]);	/* same binary */
	sv[XSCSQ].name = serv_name[XSCSQ];
	sv[XSCSQ].sq = true;
	sv[NGINX].name = serv_name[NGINX];
	sv[NGINX].avail = sv[NGINX].nginx = true;
	if (!sv[NPTL].avail) {
		fprintf(stderr, "xsc bench http: %s missing (--bin-dir?)\n", sv[NPTL].bin);
		return 2;
	}
	if (!sv[XSCT].avail)
		printf("note: httpd-xsc not built (the xsc threads runtime is not in "
		       "this tree yet); measuring httpd-nptl and nginx\n");
	static const int ratios[][2] = { { XSCT, NPTL }, { XSCT, NGINX },
					 { XSCT, ULOOP }, { ULOOP, NGINX },
					 { XSCSQ, XSCT }, { NPTL, NGINX } };
	return serve_and_measure(&c, sv, conc, nc, "http", ratios, 6);
}

/* ---- xsc bench transparent ------------------------------------------- */

static const char tp_usage[] =
	"usage: xsc bench transparent [--quick] [--rounds N] [--out DIR]\n"
	"                             [--bin-dir DIR] [--duration SEC] [--size BYTES]\n"
	"  the unmodified httpd-nptl binary natively vs under `xsc run -t 1`, wrk at\n"
	"  concurrency 64..4096 (--quick: 64, 256); server on core 0, wrk on core 1;\n"
	"  best of N rounds (default 2), then one more run of each with its kernel\n"
	"  entries per request counted (XSC_BENCH_ENTRIES=tracefs|strace|off).\n"
	"  Writes DIR/transparent.csv and DIR/transparent-*.png.  Target: CPU per\n"
	"  request <= 0.6x native at >= 256.\n";

int xsc_bench_transparent(int argc, char **argv)
{
	static const int full[] = { 64, 256, 1024, 4096 }, quick[] = { 64, 256 };
	struct server sv[NSERV];
	char lib[1200];
	struct ctx c;
	int nc, r;

	memset(sv, 0, sizeof(sv));
	r = begin(argc, argv, &c, tp_usage, "transparent", NULL, 0);
	if (r >= 0)
		return r;
	const int *conc = c.o.quick ? quick : full;
	nc = c.o.quick ? 2 : 4;
	server_bin(&c, &sv[NPTL], serv_name[NPTL]);
	server_bin(&c, &sv[XRUN], serv_name[NPTL]);	/* the same binary */
	sv[XRUN].name = serv_name[XRUN];
	sv[XRUN].xrun = true;
	if (!sv[NPTL].avail) {
		fprintf(stderr, "xsc bench transparent: %s missing (--bin-dir?)\n",
			sv[NPTL].bin);
		return 2;
	}
	if (xsc_run_find_preload(lib, sizeof(lib)) < 0) {
		fprintf(stderr, "xsc bench transparent: libxsc-preload.so not built "
			"(ASan build?) or installed\n");
		return 2;
	}
	static const int ratios[][2] = { { XRUN, NPTL } };
	return serve_and_measure(&c, sv, conc, nc, "transparent", ratios, 1);
}

/* ---- xsc bench sensitivity --------------------------------------------- */

static const char sens_usage[] =
	"usage: xsc bench sensitivity [--quick] [--rounds N] [--out DIR]\n"
	"                             [--bin-dir DIR] [--duration SEC] [--size BYTES]\n"
	"  httpd-xsc requests/s vs syscall entries per kernel thread (64..1024)\n"
	"  at concurrency 2048 (FlexSC Fig. 16).  Writes DIR/sensitivity.csv/.png.\n";

int xsc_bench_sensitivity(int argc, char **argv)
{
	static const int entries[] = { 64, 128, 256, 512, 1024 };
	enum { NE = 5, CONC = 2048 };
	struct server sv[NE];
	struct result best[NE];
	const char *given = NULL;
	struct ctx c;
	int ok = 0, r = parse(argc, argv, &c, sens_usage, &given);
	FILE *f;

	if (r)
		return r > 0 ? 0 : 2;
	if (need_tools(false, NULL, 0))
		return 2;
	memset(sv, 0, sizeof(sv));
	memset(best, 0, sizeof(best));
	if (find_bindir(&c, given) == 0)
		for (int e = 0; e < NE; e++)
			server_bin(&c, &sv[e], serv_name[XSCT]);
	if (!sv[0].avail) {
		fprintf(stderr, "xsc bench sensitivity: httpd-xsc is not built (it "
			"needs the xsc threads runtime); nothing to measure\n");
		return 2;
	}
	raise_nofile();
	signal(SIGPIPE, SIG_IGN);
	if (make_tmp(&c))
		return 1;
	for (int e = 0; e < NE; e++)
		if (start_httpd(&c, &sv[e], entries[e]))
			goto out;
	int64_t t0 = bench_now_ns();
	for (int rd = 0; rd < c.o.rounds; rd++)
		for (int e = 0; e < NE; e++) {
			struct result res;
			bench_progress("bench sensitivity", rd * NE + e, c.o.rounds * NE, t0);
			if (run_wrk_retry(&c, &sv[e], CONC, c.dur, &res))
				goto out;
			keep_best(&best[e], &res);
			usleep(300000);
		}
	bench_progress_done();
	printf("httpd-xsc at concurrency %d, best of %d rounds\n%8s %10s %10s %12s\n",
	       CONC, c.o.rounds, "entries", "req/s", "p99 ms", "cpu us/req");
	for (int e = 0; e < NE; e++)
		printf("%8d %10.0f %10.2f %12.2f\n", entries[e], best[e].rps,
		       best[e].p99_us / 1e3, best[e].cpu_us);
	f = bench_csv_open(&c.o, "sensitivity", "entries,req/s,p99 us,cpu us/req");
	for (int e = 0; f && e < NE; e++)
		fprintf(f, "%d,%.2f,%.2f,%.2f\n", entries[e], best[e].rps,
			best[e].p99_us, best[e].cpu_us);
	ok = f && bench_csv_close(&c.o, "sensitivity", f, true) == 0;
	if (ok)
		bench_plot(&c.o, "sensitivity",
			   "set title 'httpd-xsc throughput vs syscall entries (concurrency 2048)'\n"
			   "set logscale x 2\nset xlabel 'syscall entries per kernel thread'\n"
			   "set ylabel 'requests/s'\nset yrange [0:*]\n"
			   "plot DIR.'/sensitivity.csv' using 1:2 with linespoints lw 2");
out:
	for (int e = 0; e < NE; e++)
		stop(sv[e].pid);
	rm_tmp(&c);
	return ok ? 0 : 1;
}

/* ---- xsc bench apache ---------------------------------------------------- */

static const char apache_usage[] =
	"usage: xsc bench apache [--quick] [--rounds N] [--out DIR]\n"
	"                        [--duration SEC] [--size BYTES]\n"
	"  Debian's apache2 (mpm_worker, one child of 1024 threads) as Debian runs\n"
	"  it (the control process forks the child; User www-data when root),\n"
	"  natively vs under `xsc run`, wrk at concurrency 64, 256, 1024 (--quick:\n"
	"  64, 256); server on core 0, wrk on core 1; CPU per request of the whole\n"
	"  process tree; best of N rounds (default 2) (FlexSC Figures 11 and 13);\n"
	"  then one more run of each with the tree's kernel entries per request\n"
	"  counted (XSC_BENCH_ENTRIES=tracefs|strace|off).\n"
	"  Writes DIR/apache.csv and DIR/apache-*.png.  Target: at 256\n"
	"  connections req/s >= 1.4x and CPU per request <= 0.7x native.\n";

enum { AP_NATIVE, AP_XRUN, NAP };
static const char *const ap_name[NAP] = { "apache", "apache+xsc-run" };
#define AP_THREADS 1024

/* Instance k's configuration (its own pid file and error log). */
static int write_apache_conf(const struct ctx *c, int k, int port, char *conf, size_t len)
{
	static const char *const mods = "/usr/lib/apache2/modules";
	FILE *f;

	snprintf(conf, len, "%s/apache-%d.conf", c->tmp, k);
	if (!(f = fopen(conf, "w")))
		return -1;
	fprintf(f,
		"ServerRoot %s\nPidFile %s/apache-%d.pid\nListen 127.0.0.1:%d\n"
		"LoadModule mpm_worker_module %s/mod_mpm_worker.so\n"
		"LoadModule authz_core_module %s/mod_authz_core.so\n"
		"ServerName localhost\n%s"
		"DocumentRoot %s/root\nErrorLog %s/apache-%d-error.log\nLogLevel warn\n"
		"StartServers 1\nServerLimit 1\nMinSpareThreads 1\n"
		"MaxSpareThreads %d\nThreadLimit %d\nThreadsPerChild %d\n"
		"MaxRequestWorkers %d\nMaxConnectionsPerChild 0\nListenBacklog 4096\n"
		"KeepAlive On\nMaxKeepAliveRequests 0\nKeepAliveTimeout 60\n"
		"EnableSendfile Off\nEnableMMAP On\n"
		"<Directory %s/root>\n  Require all granted\n</Directory>\n",
		c->tmp, c->tmp, k, port, mods, mods,
		geteuid() == 0 ? "User www-data\nGroup www-data\n" : "",
		c->tmp, c->tmp, k, AP_THREADS, AP_THREADS, AP_THREADS, AP_THREADS, c->tmp);
	return fclose(f) ? -1 : 0;
}

/* apache2 -DFOREGROUND: the control process stays our child (SIGTERM
 * stops it and its worker child) and still forks the worker child. */
static int start_apache(const struct ctx *c, struct server *s, int k)
{
	char conf[PATH_MAX], self[PATH_MAX];
	char *argv[] = { "/usr/sbin/apache2", "-f", conf, "-DFOREGROUND", NULL };
	char *xargv[] = { self, "run", "--", "/usr/sbin/apache2", "-f", conf,
			  "-DFOREGROUND", NULL };
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0)
		return -1;
	self[n] = 0;
	s->port = bench_free_port();
	if (s->port < 0 || write_apache_conf(c, k, s->port, conf, sizeof(conf)))
		return -1;
	s->pid = spawn(s->xrun ? xargv : argv, c->srv_cpu, NULL);
	for (int i = 0; s->pid > 0 && i < 1500; i++) {	/* up to 15 s */
		if (bench_port_open(s->port))
			return 0;
		if (waitpid(s->pid, NULL, WNOHANG) == s->pid)
			break;
		usleep(10000);
	}
	fprintf(stderr, "bench apache: %s did not start; see %s/apache-%d-error.log\n",
		s->name, c->tmp, k);
	return -1;
}

/* SIGTERM to the control process, which stops its child: up to 15 s. */
static void stop_apache(pid_t pid)
{
	if (pid <= 0)
		return;
	kill(pid, SIGTERM);
	for (int i = 0; i < 1500; i++) {
		if (waitpid(pid, NULL, WNOHANG) == pid)
			return;
		usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

int xsc_bench_apache(int argc, char **argv)
{
	static const int full[] = { 64, 256, 1024 }, quick[] = { 64, 256 };
	const char *given = NULL;
	struct server sv[NAP];
	char lib[1200];
	struct ctx c;
	int nc, r, ok = 0;

	memset(sv, 0, sizeof(sv));
	r = parse(argc, argv, &c, apache_usage, &given);
	if (r)
		return r > 0 ? 0 : 2;
	if (given)
		fprintf(stderr, "xsc bench apache: --bin-dir is not used\n");
	if (need_tools(false, NULL, 0))
		return 2;
	if (access("/usr/sbin/apache2", X_OK) != 0) {
		fprintf(stderr, "xsc bench apache: apache2 not found; install the Debian "
			"package apache2 (apt-get install apache2) or run `make demo`\n");
		return 2;
	}
	if (xsc_run_find_preload(lib, sizeof(lib)) < 0) {
		fprintf(stderr, "xsc bench apache: libxsc-preload.so not built "
			"(ASan build?) or installed\n");
		return 2;
	}
	const int *conc = c.o.quick ? quick : full;
	nc = c.o.quick ? 2 : 3;
	for (int s = 0; s < NAP; s++) {
		sv[s].name = ap_name[s];
		sv[s].avail = sv[s].tree = true;
	}
	sv[AP_XRUN].xrun = true;
	raise_nofile();
	signal(SIGPIPE, SIG_IGN);
	if (make_tmp(&c))
		return 1;
	/* the worker child runs as www-data: it must reach the files */
	chmod(c.tmp, 0755);
	for (int s = 0; s < NAP; s++)
		if (start_apache(&c, &sv[s], s))
			goto out;
	printf("%d s per run, %d rounds, %d-byte file, Apache mpm_worker (1 child, "
	       "%d threads) on core %d, wrk -t1 on core %d\n", c.dur, c.o.rounds,
	       c.size, AP_THREADS, c.srv_cpu, c.wrk_cpu);
	if (measure_all(&c, sv, NAP, conc, nc) || count_all(&c, sv, NAP, conc, nc))
		goto out;
	print_table(&c, sv, NAP, conc, nc);
	print_ratio(sv, AP_XRUN, AP_NATIVE, conc, nc);
	for (int k = 0; k < nc; k++)
		if (conc[k] == 256) {
			double rps = sv[AP_XRUN].best[k].rps / sv[AP_NATIVE].best[k].rps;
			double cpu = sv[AP_XRUN].best[k].cpu_us / sv[AP_NATIVE].best[k].cpu_us;
			printf("\ntarget at 256 connections: req/s >= 1.40x (%.2fx: %s), "
			       "CPU per request <= 0.70x (%.2fx: %s)\n", rps,
			       rps >= 1.4 ? "met" : "not met", cpu,
			       cpu <= 0.7 ? "met" : "not met");
		}
	ok = write_http_csv(&c, "apache", sv, NAP, ap_name, conc, nc) == 0;
	if (ok) {
		plot_http(&c, "apache", sv, NAP);
		printf("wrote %s/apache.csv and %s/apache-{throughput,latency,cpu%s}.png\n",
		       c.o.out, c.o.out, c.ent_method ? ",entries" : "");
	}
out:
	for (int s = 0; s < NAP; s++)
		stop_apache(sv[s].pid);
	rm_tmp(&c);
	return ok ? 0 : 1;
}

/* ---- for the other experiments that run servers (oltp.c) ------------------ */

pid_t bench_spawn(char *const argv[], int cpu, int *out)
{
	return spawn(argv, cpu, out);
}

size_t bench_read_all(int fd, char *buf, size_t len, int timeout_ms)
{
	return read_all(fd, buf, len, timeout_ms, false);
}

long bench_tree_ticks(pid_t pid)
{
	return tree_ticks(pid, 0);
}
