/*
 * httpd.c - a thread-per-connection HTTP/1.1 static file server, written
 * in plain blocking style, built twice from this one source:
 *
 *   httpd-nptl   one pthread per connection, plain libc calls
 *   httpd-xsc    one xsc thread (fiber) per connection; every blocking
 *                call becomes an exception-less one (FlexSC-Threads)
 *
 * compat.h is the only difference between the two (see its top).
 *
 *   httpd --root DIR [--port N] [--bind ADDR] [--backlog N] [--cpu N]
 *         [--threads N] [--entries N] [--timeout SEC]
 *
 * --port 0 binds an ephemeral port; the first line on stdout is always
 * "httpd-<flavor>: listening on ADDR:PORT", so scripts learn the port.
 *
 * Per connection: read a request head into an 8 KiB buffer, parse it
 * (request.c), open the file under the root with openat, fstat it, answer
 * with one writev (headers + first chunk of the file), then read+write
 * loops for the rest; keep the leftover bytes for pipelined requests.
 * Per request that is read, openat, fstat, read, writev, close: ordinary
 * blocking system calls, on purpose (no sendfile, no caching of fds), so
 * the two builds compare the cost of making them.
 *
 * HTTP: GET and HEAD; other methods 405 with Allow; HTTP/1.1 keep-alive
 * by default, HTTP/1.0 only with "Connection: keep-alive"; "Connection:
 * close" honoured; a request body (Content-Length) is read and discarded;
 * 400 for malformed requests, 414/431 for an oversized request line /
 * head (and the connection is closed after every 4xx that leaves the
 * stream in doubt).  A directory serves its index.html, never a listing.
 *
 * Safety: request targets are percent-decoded before ".." is looked for,
 * so no encoding escapes the root.  Symbolic links INSIDE the root are
 * followed, including ones pointing outside it: whoever can create links
 * in the root already chooses what is served (use a root without such
 * links; openat2 RESOLVE_BENEATH would close this, but it is not one of
 * the calls this example exists to exercise).  Opening a FIFO placed in
 * the root blocks only that connection's thread.
 *
 * A client that disconnects mid-request or mid-response ends its thread:
 * its fd and buffers are released on that path like on every other.
 * Idle keep-alive connections time out after --timeout seconds (60) via
 * SO_RCVTIMEO on the NPTL build; whether the xsc executors honour it
 * depends on the executor.
 */
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "compat.h"
#include "request.h"
#include "server.h"


/* One per connection, on the heap: fiber stacks stay small. */
struct conn {
	int fd;
	size_t len;		/* bytes buffered in head[] */
	struct srv_date date;
	char head[HT_HEAD_MAX];
	char path[HT_HEAD_MAX];
	char hdr[512];		/* response head */
	char io[SRV_IO_BUF];
};

/* ---- output ---------------------------------------------------------- */

/* Writes every byte of iov[0..n) (adjusting iov); 0 or -errno. */
static long write_all(int fd, struct iovec *iov, int n)
{
	while (n > 0) {
		long r = n == 1 ? ht_write(fd, iov->iov_base, iov->iov_len)
				: ht_writev(fd, iov, n);
		if (r < 0)
			return r == -EINTR ? 0 : r;
		while (n > 0 && (size_t)r >= iov->iov_len) {
			r -= (long)iov->iov_len;
			iov++, n--;
		}
		if (n > 0) {
			iov->iov_base = (char *)iov->iov_base + r;
			iov->iov_len -= (size_t)r;
		}
	}
	return 0;
}

static size_t format_head(struct conn *c, int status, const char *type,
			  long long length, bool keep, const char *extra)
{
	return srv_format_head(c->hdr, sizeof(c->hdr), &c->date, status, type,
			       length, keep, extra);
}

/* An error response: a one-line text body ("404 Not Found\n"). */
static long send_error(struct conn *c, int status, bool head, bool keep)
{
	char body[64];
	int bl = snprintf(body, sizeof(body), "%d %s\n", status, req_reason(status));
	size_t hl = format_head(c, status, "text/plain", bl, keep,
				status == 405 ? "Allow: GET, HEAD\r\n" : "");
	struct iovec iov[2] = { { c->hdr, hl }, { body, (size_t)bl } };

	return write_all(c->fd, iov, head ? 1 : 2);
}

/* ---- files ----------------------------------------------------------- */

/* Opens path (relative to the root) as a regular file, trying index.html
 * for a directory.  Returns the fd with *st filled, or -status. */
static long open_file(struct conn *c, struct stat *st)
{
	for (int tries = 0; tries < 2; tries++) {
		long fd = ht_openat(root_fd, c->path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
		if (fd < 0)
			return -srv_open_status(fd);
		if (ht_fstat((int)fd, st) < 0) {
			ht_close((int)fd);
			return -500;
		}
		if (S_ISREG(st->st_mode))
			return fd;
		ht_close((int)fd);
		size_t n = strlen(c->path);
		if (!S_ISDIR(st->st_mode) || n + sizeof("/index.html") > sizeof(c->path))
			return -(S_ISDIR(st->st_mode) ? 404 : 403);
		memcpy(c->path + n, "/index.html", sizeof("/index.html"));
	}
	return -404;	/* index.html is itself a directory */
}

/* Sends the headers, then size bytes of fd.  Returns 0 or -errno (the
 * connection must close). */
static long send_file(struct conn *c, int fd, size_t hl, long long size)
{
	struct iovec iov[2] = { { c->hdr, hl }, { c->io, 0 } };
	long long sent = 0;
	long r;

	do {
		size_t want = size - sent < SRV_IO_BUF ? (size_t)(size - sent) : SRV_IO_BUF;
		r = want ? ht_read(fd, c->io, want) : 0;
		if (r == -EINTR)
			continue;
		/* A read error or a file that shrank: the promised length
		 * cannot be kept, so the connection must close (returning
		 * 1 after a partial response is the same as -EIO). */
		if (r < 0 || (r == 0 && want))
			return -EIO;
		iov[1].iov_base = c->io;
		iov[1].iov_len = (size_t)r;
		r = iov[0].iov_len ? write_all(c->fd, iov, 2)
				   : write_all(c->fd, iov + 1, 1);
		if (r < 0)
			return r;
		iov[0].iov_len = 0;
		sent += (long long)iov[1].iov_len;
	} while (sent < size);
	return 0;
}

/* Answers one parsed request for the file c->path.  Returns 0 to go on,
 * 1 to close after a complete response, -errno if the connection is
 * broken. */
static long serve(struct conn *c, const struct request *rq, bool keep)
{
	struct stat st;
	long fd, r;

	fd = open_file(c, &st);
	if (fd < 0) {
		keep = keep && fd != -503 && fd != -500;
		r = send_error(c, (int)-fd, rq->head, keep);
		return r ? r : !keep;
	}
	size_t hl = format_head(c, 200, req_mime(c->path), (long long)st.st_size,
				keep, "");
	r = rq->head ? write_all(c->fd, &(struct iovec){ c->hdr, hl }, 1)
		     : send_file(c, (int)fd, hl, (long long)st.st_size);
	ht_close((int)fd);
	return r ? r : !keep;
}

/* ---- input ----------------------------------------------------------- */

/* Reads until c->head holds a whole request head.  Returns its length,
 * 0 on end of stream or error, or -status (414/431) when it cannot fit. */
static long read_head(struct conn *c)
{
	size_t end;

	for (;;) {
		size_t skip = req_skip_blank(c->head, c->len);
		if (skip) {
			memmove(c->head, c->head + skip, c->len - skip);
			c->len -= skip;
		}
		if ((end = req_head_end(c->head, c->len)) != 0)
			return (long)end;
		if (c->len == sizeof(c->head))
			return memchr(c->head, '\n', c->len) ? -431 : -414;
		long r = ht_read(c->fd, c->head + c->len, sizeof(c->head) - c->len);
		if (r == -EINTR)
			continue;
		if (r <= 0)
			return 0;
		c->len += (size_t)r;
	}
}

/* Drops the head (n bytes) and a body of len bytes from the stream.
 * Returns 0, or -1 if the body could not be read. */
static int consume(struct conn *c, size_t n, long long len)
{
	size_t have = c->len - n < (size_t)len ? c->len - n : (size_t)len;

	n += have;
	len -= (long long)have;
	memmove(c->head, c->head + n, c->len - n);
	c->len -= n;
	while (len > 0) {
		long r = ht_read(c->fd, c->io, len < SRV_IO_BUF ? (size_t)len : SRV_IO_BUF);
		if (r <= 0 && r != -EINTR)
			return -1;
		len -= r > 0 ? r : 0;
	}
	return 0;
}

/* One request: 0 to go on with the next one, nonzero to close. */
static long handle_one(struct conn *c)
{
	struct request rq;
	long n = read_head(c), r;
	int st;

	if (n <= 0)
		return n < 0 ? (send_error(c, (int)-n, false, false), 1) : 1;
	st = req_parse(c->head, (size_t)n, &rq);
	/* Map the target now: it points into c->head, which consume() is
	 * about to shift over with the next pipelined request. */
	if (!st)
		st = req_path(&rq, c->path, sizeof(c->path));
	if (st && st != 405)
		return send_error(c, st, rq.head, false), 1;
	if (rq.content_length > SRV_BODY_MAX)
		return send_error(c, 413, rq.head, false), 1;
	/* The body goes before we answer: with keep-alive it must not be
	 * read as the next request, and leaving it unread makes close()
	 * reset the connection under the response. */
	if (consume(c, (size_t)n, rq.content_length) < 0)
		return 1;
	if (st == 405) {
		r = send_error(c, 405, false, rq.keep_alive);
		return r ? r : !rq.keep_alive;
	}
	return serve(c, &rq, rq.keep_alive);
}

static void *conn_main(void *arg)
{
	struct conn *c = arg;
	int one = 1;
	struct timeval tv = { .tv_sec = opt.timeout, .tv_usec = 0 };

	ht_setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (opt.timeout > 0) {
		ht_setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		ht_setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	}
	while (handle_one(c) == 0)
		;
	ht_close(c->fd);
	free(c);
	return NULL;
}

/* ---- accept loop and setup ------------------------------------------- */

static void start_conn(int fd)
{
	struct conn *c = malloc(sizeof(*c));
	ht_thread_t t;

	if (!c) {
		ht_close(fd);
		return;
	}
	c->fd = fd;
	c->len = 0;
	c->date.sec = 0;
	if (ht_thread_create(&t, conn_main, c) < 0) {
		ht_close(fd);
		free(c);
		return;
	}
	ht_thread_detach(t);
}

static int server_main(int argc, char **argv)
{
	(void)argc, (void)argv;
	for (;;) {
		long fd = ht_accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd >= 0) {
			start_conn((int)fd);
		} else if (fd == -EMFILE || fd == -ENFILE || fd == -ENOBUFS ||
			   fd == -ENOMEM) {
			ht_usleep(10000);	/* out of fds: let connections end */
		} else if (fd != -EINTR && fd != -ECONNABORTED && fd != -EAGAIN &&
			   fd != -EPROTO && fd != -EPERM) {
			fprintf(stderr, "httpd: accept: %s\n", strerror((int)-fd));
			return 1;
		}
	}
}

int main(int argc, char **argv)
{
	struct ht_runtime rt;
	int r = srv_parse_args(argc, argv, HT_FLAVOR);

	if (r)
		return r == 1 ? 0 : r;
	if (srv_setup(HT_FLAVOR) < 0)
		return 1;
	rt.threads = opt.threads;
	rt.entries = opt.entries;
	rt.cpu = opt.cpu;
	rt.syscall_cpu = opt.syscall_cpu;
	return ht_run(server_main, argc, argv, &rt);
}
