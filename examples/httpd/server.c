/*
 * server.c - command line, process setup and response heads shared by
 * the httpd flavors (see server.h).  Runs before any server thread exists
 * (setup) or formats into caller-owned buffers (heads): no system calls
 * on the request path except time(2), which is a vDSO read.
 */
#include "server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "request.h"

struct options opt = {
	.root = NULL, .bind = "127.0.0.1", .port = 8080, .backlog = 4096,
	.cpu = -1, .threads = 0, .entries = 0, .timeout = 60, .syscall_cpu = -1,
};
int root_fd = -1, listen_fd = -1;

static void usage(FILE *f, const char *flavor)
{
	fprintf(f,
		"usage: httpd-%s --root DIR [--port N] [--bind ADDR] [--backlog N]\n"
		"       [--cpu N] [--threads N] [--entries N] [--timeout SEC]\n"
		"       [--syscall-cpu N]\n"
		"  --port 0 picks a free port; the first stdout line names it.\n"
		"  --threads, --entries: kernel threads and syscall entries of the xsc\n"
		"  runtime (ignored by the other builds).  --cpu pins the process.\n",
		flavor);
}

static int parse_int(const char *s, int lo, int hi, int *out)
{
	char *e;
	long v = strtol(s, &e, 10);

	if (!*s || *e || v < lo || v > hi)
		return -1;
	*out = (int)v;
	return 0;
}

int srv_parse_args(int argc, char **argv, const char *flavor)
{
	static const struct { const char *name; int *v; int lo, hi; } iopt[] = {
		{ "--port", &opt.port, 0, 65535 }, { "--backlog", &opt.backlog, 1, 1 << 20 },
		{ "--cpu", &opt.cpu, 0, 4095 }, { "--threads", &opt.threads, 0, 4096 },
		{ "--entries", &opt.entries, 0, 1 << 20 },
		{ "--syscall-cpu", &opt.syscall_cpu, 0, 4095 },
		{ "--timeout", &opt.timeout, 0, 86400 },
	};
	for (int i = 1; i < argc; i++) {
		bool ok = false, val = i + 1 < argc;
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return usage(stdout, flavor), 1;
		if (val && !strcmp(argv[i], "--root"))
			opt.root = argv[++i], ok = true;
		else if (val && !strcmp(argv[i], "--bind"))
			opt.bind = argv[++i], ok = true;
		for (size_t k = 0; !ok && k < sizeof(iopt) / sizeof(iopt[0]); k++)
			if (val && !strcmp(argv[i], iopt[k].name)) {
				ok = parse_int(argv[++i], iopt[k].lo, iopt[k].hi, iopt[k].v) == 0;
				if (!ok)
					fprintf(stderr, "httpd: bad value for %s\n", iopt[k].name);
			}
		if (!ok) {
			fprintf(stderr, "httpd: bad argument %s\n", argv[i]);
			return usage(stderr, flavor), 2;
		}
	}
	if (!opt.root) {
		fprintf(stderr, "httpd: --root DIR is required\n");
		return usage(stderr, flavor), 2;
	}
	return 0;
}

/* Binds and listens; prints the address line.  0 or -1. */
static int open_listener(const char *flavor)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(opt.port) };
	socklen_t sl = sizeof(sa);
	int one = 1;

	if (inet_pton(AF_INET, opt.bind, &sa.sin_addr) != 1) {
		fprintf(stderr, "httpd: --bind needs an IPv4 address: %s\n", opt.bind);
		return -1;
	}
	listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (listen_fd < 0 ||
	    setsockopt(listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(listen_fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(listen_fd, opt.backlog) ||
	    getsockname(listen_fd, (struct sockaddr *)&sa, &sl)) {
		fprintf(stderr, "httpd: listen on %s:%d: %s\n", opt.bind, opt.port,
			strerror(errno));
		return -1;
	}
	printf("httpd-%s: listening on %s:%d root=%s\n", flavor, opt.bind,
	       ntohs(sa.sin_port), opt.root);
	fflush(stdout);
	return 0;
}

/* Process-wide setup before any thread exists: fd limit (one per
 * connection plus one per open file), SIGPIPE (a reset peer is an error
 * return, not a signal), pinning, the root directory. */
int srv_setup(const char *flavor)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	signal(SIGPIPE, SIG_IGN);
	if (opt.cpu >= 0) {
		cpu_set_t s;
		CPU_ZERO(&s);
		CPU_SET(opt.cpu, &s);
		/* the xsc runtime pins its kernel thread to --cpu itself and
		 * its SQPOLL poller to --syscall-cpu: the process needs both */
		if (opt.syscall_cpu >= 0)
			CPU_SET(opt.syscall_cpu, &s);
		if (sched_setaffinity(0, sizeof(s), &s))
			fprintf(stderr, "httpd: --cpu %d: %s\n", opt.cpu, strerror(errno));
	}
	root_fd = open(opt.root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root_fd < 0) {
		fprintf(stderr, "httpd: --root %s: %s\n", opt.root, strerror(errno));
		return -1;
	}
	return open_listener(flavor);
}

const char *srv_date(struct srv_date *d)
{
	time_t now = time(NULL);
	struct tm tm;

	if (now != d->sec) {
		gmtime_r(&now, &tm);
		strftime(d->text, sizeof(d->text), "%a, %d %b %Y %H:%M:%S GMT", &tm);
		d->sec = now;
	}
	return d->text;
}

size_t srv_format_head(char *hdr, size_t len, struct srv_date *d, int status,
		       const char *type, long long length, bool keep,
		       const char *extra)
{
	int n = snprintf(hdr, len,
			 "HTTP/1.1 %d %s\r\nServer: xsc-httpd\r\nDate: %s\r\n"
			 "Content-Type: %s\r\nContent-Length: %lld\r\n"
			 "Connection: %s\r\n%s\r\n",
			 status, req_reason(status), srv_date(d), type, length,
			 keep ? "keep-alive" : "close", extra);
	return n > 0 && (size_t)n < len ? (size_t)n : 0;
}

int srv_open_status(long err)
{
	switch (-err) {
	case ENOENT: case ENOTDIR: case ELOOP: case ENAMETOOLONG: return 404;
	case EACCES: case EPERM: return 403;
	case EMFILE: case ENFILE: case ENOMEM: return 503;
	default: return 500;
	}
}
