/*
 * server.h - what the httpd flavors share besides request parsing: the
 * command line, the process setup (fd limit, SIGPIPE, pinning, root
 * directory, listener) and the response head.  The thread-per-connection
 * server (httpd.c, built as httpd-nptl and httpd-xsc) and the hand-written
 * io_uring event loop (loop.c, httpd-uring) answer byte for byte alike.
 */
#ifndef HTTPD_SERVER_H
#define HTTPD_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#define SRV_IO_BUF (32 * 1024)	/* file chunk per read/write */
#define SRV_BODY_MAX (1 << 20)	/* largest request body read and discarded */

struct options {
	const char *root, *bind;
	int port, backlog, cpu, threads, entries, timeout, syscall_cpu;
};

extern struct options opt;
extern int root_fd, listen_fd;

/* Parses the command line into opt.  0 to go on, 1 after --help (exit
 * 0), 2 on a bad argument (message printed). */
int srv_parse_args(int argc, char **argv, const char *flavor);

/* Raises the fd limit, ignores SIGPIPE, pins to opt.cpu, opens the root
 * and the listener; prints "httpd-<flavor>: listening on ADDR:PORT ...".
 * 0 or -1 (message printed). */
int srv_setup(const char *flavor);

/* The Date header value, reformatted at most once a second. */
struct srv_date {
	time_t sec;
	char text[40];
};
const char *srv_date(struct srv_date *d);

/* Formats a response head into hdr[0..len); returns its length (0 if it
 * does not fit).  extra: more header lines, each ending in CRLF. */
size_t srv_format_head(char *hdr, size_t len, struct srv_date *d, int status,
		       const char *type, long long length, bool keep,
		       const char *extra);

/* The status for an openat error (404, 403, 503, 500). */
int srv_open_status(long err);
#endif
