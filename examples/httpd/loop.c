/*
 * loop.c - httpd-uring: the server of httpd.c hand-written as ONE io_uring
 * event loop on one thread (liburing), the reference `xsc bench http`
 * measures xsc threads against: what the blocking style costs over code written
 * around the ring by hand.
 *
 * Same work per request as httpd.c: recv the head, openat (io_uring),
 * fstat (directly: a fstat through io_uring is punted to a kernel worker,
 * and the xsc build routes it inline too), read a chunk (io_uring), writev
 * headers + chunk (io_uring), close the file (io_uring).  Same responses
 * byte for byte (server.c formats the heads), same request parser
 * (request.c), keep-alive and pipelining, bodies read and discarded, a
 * directory's index.html.  Each connection is a small state machine with
 * at most one request in flight; every loop iteration submits all queued
 * SQEs and waits for at least one completion in the same io_uring_enter.
 * Accept is multishot.  The ring: SINGLE_ISSUER | DEFER_TASKRUN (what a
 * hand-written loop on a 6.x kernel uses), 4096 SQEs, 16384 CQEs.
 *
 * Left out on purpose (a benchmark reference, not a product): idle
 * timeouts (httpd.c's SO_RCVTIMEO), --threads/--entries (one thread).
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "request.h"
#include "server.h"

#define SQ_DEPTH 4096

enum step { RECV, DISCARD, OPEN, READ, SEND, CLOSE_FILE, CLOSE_CONN };

struct conn {
	int fd, file;
	enum step step;
	bool head_only, keep, tried_index;
	size_t len;		/* bytes buffered in head[] */
	long long size, sent;	/* the file, bytes sent of it */
	long long body_left;	/* request body still to discard */
	int after_body;		/* 405 to answer after the body, else 0 */
	struct iovec iov[2];
	int niov;
	char head[HT_HEAD_MAX];
	char path[HT_HEAD_MAX];
	char hdr[512];
	char io[SRV_IO_BUF];
};

static struct io_uring ring;
static struct srv_date date;

static struct io_uring_sqe *sqe_for(struct conn *c)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

	if (!sqe) {	/* SQ full: hand over what is queued */
		io_uring_submit(&ring);
		sqe = io_uring_get_sqe(&ring);
	}
	if (!sqe) {
		fprintf(stderr, "httpd-uring: no SQE after a submit\n");
		exit(1);
	}
	io_uring_sqe_set_data(sqe, c);
	return sqe;
}

static void arm_accept(void)
{
	io_uring_prep_multishot_accept(sqe_for(NULL), listen_fd, NULL, NULL,
				       SOCK_CLOEXEC);
}

static void close_conn(struct conn *c)
{
	if (c->file >= 0) {
		close(c->file);	/* only on error paths */
		c->file = -1;
	}
	c->step = CLOSE_CONN;
	io_uring_prep_close(sqe_for(c), c->fd);
}

static void send_iov(struct conn *c)
{
	c->step = SEND;
	io_uring_prep_writev(sqe_for(c), c->fd, c->iov, (unsigned)c->niov, 0);
}

static void send_error(struct conn *c, int status, bool keep)
{
	/* body in io[] (free between requests) */
	int bl = snprintf(c->io, sizeof(c->io), "%d %s\n", status, req_reason(status));
	size_t hl = srv_format_head(c->hdr, sizeof(c->hdr), &date, status,
				    "text/plain", bl, keep,
				    status == 405 ? "Allow: GET, HEAD\r\n" : "");

	c->keep = keep;
	c->iov[0] = (struct iovec){ c->hdr, hl };
	c->iov[1] = (struct iovec){ c->io, (size_t)bl };
	c->niov = c->head_only ? 1 : 2;
	send_iov(c);
}

static void open_file(struct conn *c)
{
	c->step = OPEN;
	io_uring_prep_openat(sqe_for(c), root_fd, c->path,
			     O_RDONLY | O_CLOEXEC | O_NOCTTY, 0);
}

static void read_chunk(struct conn *c)
{
	long long left = c->size - c->sent;

	c->step = READ;
	io_uring_prep_read(sqe_for(c), c->file, c->io,
			   left < SRV_IO_BUF ? (unsigned)left : SRV_IO_BUF, (uint64_t)-1);
}

static void next_request(struct conn *c);

/* Reads (and drops) the next piece of the request body. */
static void discard_more(struct conn *c)
{
	c->step = DISCARD;
	io_uring_prep_recv(sqe_for(c), c->fd, c->io,
			   c->body_left < SRV_IO_BUF ? (size_t)c->body_left : SRV_IO_BUF, 0);
}

/* A response is complete (file closed if there was one). */
static void after_response(struct conn *c)
{
	if (!c->keep)
		return close_conn(c);
	next_request(c);
}

/* The body is gone: answer. */
static void answer(struct conn *c)
{
	if (c->after_body)
		send_error(c, c->after_body, c->keep);
	else
		open_file(c);
}

/* A whole head of n bytes is in head[]. */
static void handle_head(struct conn *c, size_t n)
{
	struct request rq;
	int st = req_parse(c->head, n, &rq);
	size_t have;

	c->head_only = rq.head;
	c->tried_index = false;
	if (!st)
		st = req_path(&rq, c->path, sizeof(c->path));
	if (st && st != 405)
		return send_error(c, st, false);
	if (rq.content_length > SRV_BODY_MAX)
		return send_error(c, 413, false);
	c->keep = rq.keep_alive;
	c->after_body = st;
	if (st == 405)
		c->head_only = false;
	/* drop the head and what of the body is buffered */
	have = c->len - n < (size_t)rq.content_length ? c->len - n
						       : (size_t)rq.content_length;
	memmove(c->head, c->head + n + have, c->len - n - have);
	c->len -= n + have;
	c->body_left = rq.content_length - (long long)have;
	if (c->body_left > 0)
		return discard_more(c);
	answer(c);
}

static void next_request(struct conn *c)
{
	size_t skip = req_skip_blank(c->head, c->len), end;

	if (skip) {
		memmove(c->head, c->head + skip, c->len - skip);
		c->len -= skip;
	}
	if ((end = req_head_end(c->head, c->len)) != 0)
		return handle_head(c, end);
	if (c->len == sizeof(c->head)) {
		c->head_only = false;
		return send_error(c, memchr(c->head, '\n', c->len) ? 431 : 414, false);
	}
	c->step = RECV;
	io_uring_prep_recv(sqe_for(c), c->fd, c->head + c->len,
			   sizeof(c->head) - c->len, 0);
}

/* openat completed with res. */
static void opened(struct conn *c, int res)
{
	struct stat st;

	if (res < 0) {
		int status = srv_open_status(res);
		return send_error(c, status, c->keep && status != 503 && status != 500);
	}
	if (fstat(res, &st) < 0) {
		close(res);
		return send_error(c, 500, false);
	}
	if (!S_ISREG(st.st_mode)) {
		size_t n = strlen(c->path);
		close(res);
		if (!S_ISDIR(st.st_mode) || c->tried_index ||
		    n + sizeof("/index.html") > sizeof(c->path))
			return send_error(c, S_ISDIR(st.st_mode) ? 404 : 403, c->keep);
		memcpy(c->path + n, "/index.html", sizeof("/index.html"));
		c->tried_index = true;
		return open_file(c);
	}
	c->file = res;
	c->size = st.st_size;
	c->sent = 0;
	size_t hl = srv_format_head(c->hdr, sizeof(c->hdr), &date, 200,
				    req_mime(c->path), (long long)st.st_size, c->keep, "");
	c->iov[0] = (struct iovec){ c->hdr, hl };
	c->niov = 1;
	if (c->head_only || c->size == 0)
		return send_iov(c);
	read_chunk(c);
}

/* A response's bytes are all written. */
static void sent_all(struct conn *c)
{
	if (c->file >= 0 && !c->head_only && c->sent < c->size)
		return read_chunk(c);
	if (c->file >= 0) {
		c->step = CLOSE_FILE;
		io_uring_prep_close(sqe_for(c), c->file);
		c->file = -1;
		return;
	}
	after_response(c);
}

static void complete(struct conn *c, int res)
{
	switch (c->step) {
	case RECV:
		if (res <= 0)
			return close_conn(c);
		c->len += (size_t)res;
		return next_request(c);
	case DISCARD:
		if (res <= 0)
			return close_conn(c);
		c->body_left -= res;
		return c->body_left > 0 ? discard_more(c) : answer(c);
	case OPEN:
		return opened(c, res);
	case READ:
		if (res <= 0)	/* the file shrank or failed: cannot keep the length */
			return close_conn(c);
		c->iov[c->niov] = (struct iovec){ c->io, (size_t)res };
		c->niov++;
		c->sent += res;
		return send_iov(c);
	case SEND: {
		size_t r = (size_t)res;
		int i = 0;

		if (res <= 0)
			return close_conn(c);
		while (i < c->niov && r >= c->iov[i].iov_len)
			r -= c->iov[i++].iov_len;
		if (i == c->niov) {
			c->niov = 0;
			return sent_all(c);
		}
		c->iov[i].iov_base = (char *)c->iov[i].iov_base + r;	/* short */
		c->iov[i].iov_len -= r;
		memmove(c->iov, c->iov + i, (size_t)(c->niov - i) * sizeof(c->iov[0]));
		c->niov -= i;
		return send_iov(c);
	}
	case CLOSE_FILE:
		return after_response(c);
	case CLOSE_CONN:
		free(c);
		return;
	}
}

static void accepted(int fd)
{
	struct conn *c;
	int one = 1;

	if (fd < 0)
		return;
	c = malloc(sizeof(*c));
	if (!c) {
		close(fd);
		return;
	}
	c->fd = fd;
	c->file = -1;
	c->len = 0;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	next_request(c);
}

int main(int argc, char **argv)
{
	struct io_uring_params p = { 0 };
	int r = srv_parse_args(argc, argv, "uring");

	if (r)
		return r == 1 ? 0 : r;
	if (srv_setup("uring") < 0)
		return 1;
	p.flags = IORING_SETUP_CQSIZE | IORING_SETUP_SINGLE_ISSUER |
		  IORING_SETUP_DEFER_TASKRUN;
	p.cq_entries = 4 * SQ_DEPTH;
	r = io_uring_queue_init_params(SQ_DEPTH, &ring, &p);
	if (r < 0) {
		fprintf(stderr, "httpd-uring: io_uring_queue_init: %s\n", strerror(-r));
		return 1;
	}
	arm_accept();
	for (;;) {
		struct io_uring_cqe *cqe;
		unsigned head, n = 0;

		r = io_uring_submit_and_wait(&ring, 1);
		if (r < 0 && r != -EINTR && r != -EBUSY) {
			fprintf(stderr, "httpd-uring: io_uring_enter: %s\n", strerror(-r));
			return 1;
		}
		io_uring_for_each_cqe(&ring, head, cqe) {
			struct conn *c = io_uring_cqe_get_data(cqe);
			n++;
			if (!c) {
				accepted(cqe->res);
				if (!(cqe->flags & IORING_CQE_F_MORE))
					arm_accept();
				continue;
			}
			complete(c, cqe->res);
		}
		io_uring_cq_advance(&ring, n);
	}
}
