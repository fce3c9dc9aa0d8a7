/*
 * acceptd.c - an HTTP server whose threads all block in accept on one
 * listening socket: many waiters on one descriptor, as a real program
 * has them.  Plain libc and pthreads, no xsc API: tests/t_accept_wrk.sh
 * runs it natively and under `xsc run` and drives it with wrk.
 *
 *   acceptd [THREADS [SECONDS]]	(default 1,000 threads, 120 s)
 *
 * Listens on 127.0.0.1, port 0, and prints "listening on
 * 127.0.0.1:PORT" once every thread has started.  Each thread loops:
 * accept4, then serve that connection until the peer closes it (HTTP/1.1
 * keep-alive, as wrk uses it), answering every complete GET request with
 * the same small 200 response; after a request with "Connection: close"
 * (wrk -H 'Connection: close': one accept per request) the server closes
 * it.  A request that is not a GET, or larger than the buffer, gets a
 * 400 and the connection is closed.  Then back to accept.
 *
 * SIGTERM or SIGINT, or SECONDS passing, ends it: a shutdown of the
 * listening socket ends every accept with EINVAL, the threads are joined
 * (alarm(10) bounds that: a thread that never returns is a lost wake-up),
 * and the last line is "served R requests on C connections by T of N
 * threads, E errors".  Exit 0, or 1 on any error seen.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BUFSZ 4096

/* tests/t_accept_wrk.sh's probe expects these bytes: update both together. */
static const char ok_reply[] =
	"HTTP/1.1 200 OK\r\n"
	"Content-Type: text/plain\r\n"
	"Content-Length: 13\r\n"
	"\r\n"
	"hello, world\n";
static const char ok_close[] =
	"HTTP/1.1 200 OK\r\n"
	"Content-Type: text/plain\r\n"
	"Content-Length: 13\r\n"
	"Connection: close\r\n"
	"\r\n"
	"hello, world\n";
static const char bad_reply[] =
	"HTTP/1.1 400 Bad Request\r\n"
	"Content-Length: 0\r\n"
	"Connection: close\r\n"
	"\r\n";

static int lfd;
static atomic_long requests, connections;
static atomic_int errors, busy_threads;

static void err(const char *what, int e)
{
	fprintf(stderr, "acceptd: %s: %s\n", what, strerror(e));
	atomic_fetch_add(&errors, 1);
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Whether the request head buf[0..n), which ends in an empty line, asks
 * to close the connection after the response. */
static bool wants_close(char *buf, size_t n)
{
	char last = buf[n - 1];
	bool yes;

	buf[n - 1] = 0;		/* the head's last '\n', put back below */
	yes = strcasestr(buf, "\nConnection: close\r") != NULL;
	buf[n - 1] = last;
	return yes;
}

/* Answers the complete requests at the start of buf[0..*len), keeps the
 * rest.  Returns 1 to go on reading, 0 to close, or a negative errno. */
static int answer(int fd, char *buf, size_t *len)
{
	char *end;
	bool close_after;
	int rc;

	while ((end = memmem(buf, *len, "\r\n\r\n", 4)) != NULL) {
		size_t n = (size_t)(end + 4 - buf);

		if (memcmp(buf, "GET ", 4) != 0) {
			rc = write_all(fd, bad_reply, sizeof(bad_reply) - 1);
			return rc < 0 ? rc : 0;
		}
		close_after = wants_close(buf, n);
		rc = close_after ? write_all(fd, ok_close, sizeof(ok_close) - 1) :
				   write_all(fd, ok_reply, sizeof(ok_reply) - 1);
		if (rc < 0)
			return rc;
		atomic_fetch_add_explicit(&requests, 1, memory_order_relaxed);
		if (close_after)
			return 0;
		memmove(buf, buf + n, *len - n);
		*len -= n;
	}
	if (*len == BUFSZ) {	/* a head that does not fit */
		rc = write_all(fd, bad_reply, sizeof(bad_reply) - 1);
		return rc < 0 ? rc : 0;
	}
	return 1;
}

/* Serves one connection until the peer closes it. */
static void serve(int fd)
{
	char buf[BUFSZ];
	size_t len = 0;
	int rc = 1;

	while (rc > 0) {
		ssize_t r = read(fd, buf + len, BUFSZ - len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			/* a peer that resets its connection is not our error */
			if (r < 0 && errno != ECONNRESET)
				err("read", errno);
			break;
		}
		len += (size_t)r;
		rc = answer(fd, buf, &len);
		if (rc < 0 && rc != -ECONNRESET && rc != -EPIPE)
			err("write", -rc);
	}
	close(fd);
}

static void *acceptor(void *arg)
{
	bool served = false;

	(void)arg;
	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno != EINVAL)	/* EINVAL: the shutdown at the end */
				err("accept4", errno);
			return NULL;
		}
		if (!served)
			atomic_fetch_add(&busy_threads, 1);
		served = true;
		atomic_fetch_add_explicit(&connections, 1, memory_order_relaxed);
		serve(fd);
	}
}

static int listen_loopback(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	int one = 1;

	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(lfd, (struct sockaddr *)&a, sizeof(a)) || listen(lfd, 1024) ||
	    getsockname(lfd, (struct sockaddr *)&a, &alen)) {
		err("listen", errno);
		return -1;
	}
	return ntohs(a.sin_port);
}

int main(int argc, char **argv)
{
	int nthreads = argc > 1 ? atoi(argv[1]) : 1000;
	int seconds = argc > 2 ? atoi(argv[2]) : 120;
	struct timespec limit = { .tv_sec = seconds };
	pthread_attr_t at;
	pthread_t *ts;
	sigset_t stop;
	int port, rc;

	if (nthreads < 1 || seconds < 1) {
		fprintf(stderr, "usage: acceptd [THREADS [SECONDS]]\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	/* blocked in every thread: main takes them with sigtimedwait */
	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	pthread_sigmask(SIG_BLOCK, &stop, NULL);
	port = listen_loopback();
	ts = calloc((size_t)nthreads, sizeof(*ts));
	if (port < 0 || !ts)
		return 1;
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 64 * 1024);
	for (int i = 0; i < nthreads; i++) {
		rc = pthread_create(&ts[i], &at, acceptor, NULL);
		if (rc) {
			err("pthread_create", rc);
			return 1;
		}
	}
	pthread_attr_destroy(&at);
	printf("listening on 127.0.0.1:%d with %d threads in accept\n", port, nthreads);

	while (sigtimedwait(&stop, NULL, &limit) < 0 && errno == EINTR)
		;
	alarm(10);	/* default action: a thread that never returns kills us */
	if (shutdown(lfd, SHUT_RD))
		err("shutdown", errno);
	for (int i = 0; i < nthreads; i++)
		pthread_join(ts[i], NULL);
	close(lfd);
	free(ts);
	printf("served %ld requests on %ld connections by %d of %d threads, %d errors\n",
	       atomic_load(&requests), atomic_load(&connections),
	       atomic_load(&busy_threads), nthreads, atomic_load(&errors));
	return atomic_load(&errors) ? 1 : 0;
}
