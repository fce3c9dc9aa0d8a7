/*
 * tp_echo.c - a thread-per-connection TCP echo server and its clients in
 * one unmodified program, over 127.0.0.1 on an ephemeral port.
 *
 * The acceptor thread accepts 32 connections and starts a thread for
 * each, which echoes until EOF and exits.  32 client threads connect and
 * each sends 200 messages of 1..16 KiB (sizes and bytes from a per-client
 * PRNG) with full write loops, reading every echo back completely and
 * comparing bytes.  Main joins everything and prints totals.  A watchdog
 * (alarm(60)) aborts a hang.  Exit 0 on success, 1 on any detected error.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tp_rnd.h"

#define NCLIENT 32
#define NMSG 200
#define MAXMSG 16384

static int lfd;
static struct sockaddr_in addr;
static atomic_int errors;
static atomic_long served_bytes;

#define ERR(...) do { fprintf(stderr, "tp_echo: " __VA_ARGS__); fputc('\n', stderr); \
	atomic_fetch_add(&errors, 1); } while (0)

static void watchdog(int sig)
{
	static const char msg[] = "tp_echo: watchdog: no progress in 60 s, aborting\n";
	(void)sig;
	if (write(2, msg, sizeof(msg) - 1) < 0) {
		/* nothing more to do */
	}
	abort();
}

static int write_all(int fd, const unsigned char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int read_all(int fd, unsigned char *p, size_t n)
{
	while (n > 0) {
		ssize_t r = read(fd, p, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

static void *conn_thr(void *arg)
{
	int fd = (int)(long)arg;
	unsigned char *buf = malloc(MAXMSG);
	long total = 0;

	if (!buf) {
		ERR("server: out of memory");
		close(fd);
		return NULL;
	}
	for (;;) {
		ssize_t r = read(fd, buf, MAXMSG);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			ERR("server: read: %s", strerror(errno));
			break;
		}
		if (r == 0)
			break;	/* the client is done */
		if (write_all(fd, buf, (size_t)r) < 0) {
			ERR("server: write: %s", strerror(errno));
			break;
		}
		total += r;
	}
	atomic_fetch_add(&served_bytes, total);
	free(buf);
	if (close(fd) != 0)
		ERR("server: close: %s", strerror(errno));
	return NULL;
}

static void *acceptor(void *arg)
{
	pthread_t t[NCLIENT];
	int n = 0;

	(void)arg;
	while (n < NCLIENT) {
		int fd = accept(lfd, NULL, NULL);
		if (fd < 0 && errno == EINTR)
			continue;
		if (fd < 0) {
			ERR("accept: %s", strerror(errno));
			break;
		}
		if (pthread_create(&t[n], NULL, conn_thr, (void *)(long)fd)) {
			ERR("pthread_create (server)");
			close(fd);
			break;
		}
		n++;
	}
	for (int i = 0; i < n; i++)
		if (pthread_join(t[i], NULL))
			ERR("pthread_join (server)");
	return (void *)(long)n;
}

struct client { int id; long bytes; uint64_t sum; };

static void *client(void *arg)
{
	struct client *c = arg;
	uint64_t s = 0x2545f4914f6cdd1dULL * (uint64_t)(c->id + 1);
	unsigned char *out = malloc(MAXMSG), *in = malloc(MAXMSG);
	int fd = -1, one = 1;

	if (!out || !in) {
		ERR("client: out of memory");
		goto done;
	}
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		ERR("client %d: socket: %s", c->id, strerror(errno));
		goto done;
	}
	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0)
		ERR("client %d: TCP_NODELAY: %s", c->id, strerror(errno));
	while (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0) {
		if (errno == EINTR)
			continue;
		ERR("client %d: connect: %s", c->id, strerror(errno));
		goto done;
	}
	for (int m = 0; m < NMSG; m++) {
		size_t n = 1 + (size_t)(rnd(&s) % MAXMSG);
		for (size_t k = 0; k < n; k += 8) {
			uint64_t v = rnd(&s);
			memcpy(out + k, &v, n - k < 8 ? n - k : 8);
		}
		if (write_all(fd, out, n) < 0) {
			ERR("client %d: write: %s", c->id, strerror(errno));
			goto done;
		}
		if (read_all(fd, in, n) < 0) {
			ERR("client %d message %d: short echo: %s", c->id, m,
			    errno ? strerror(errno) : "EOF");
			goto done;
		}
		if (memcmp(in, out, n) != 0) {
			ERR("client %d message %d: echo differs", c->id, m);
			goto done;
		}
		c->bytes += (long)n;
		for (size_t k = 0; k < n; k++)
			c->sum = c->sum * 31 + in[k];
	}
	if (shutdown(fd, SHUT_WR) != 0)
		ERR("client %d: shutdown: %s", c->id, strerror(errno));
	else if (read(fd, in, 1) != 0)
		ERR("client %d: no EOF from the server", c->id);
done:
	if (fd >= 0)
		close(fd);
	free(out);
	free(in);
	return NULL;
}

int main(void)
{
	struct client cl[NCLIENT];
	pthread_t acc, t[NCLIENT];
	socklen_t alen = sizeof(addr);
	long total = 0, accepted;
	uint64_t sum = 0;
	void *ret;

	signal(SIGALRM, watchdog);
	alarm(60);
	signal(SIGPIPE, SIG_IGN);

	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0) {
		perror("tp_echo: socket");
		return 1;
	}
	memset(&addr, 0, sizeof(addr));
	addr.sin_family = AF_INET;
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	addr.sin_port = 0;
	if (bind(lfd, (struct sockaddr *)&addr, sizeof(addr)) != 0 ||
	    getsockname(lfd, (struct sockaddr *)&addr, &alen) != 0 || listen(lfd, 64) != 0) {
		perror("tp_echo: bind/getsockname/listen");
		return 1;
	}
	if (addr.sin_port == 0) {
		fprintf(stderr, "tp_echo: no ephemeral port\n");
		return 1;
	}
	if (pthread_create(&acc, NULL, acceptor, NULL)) {
		fprintf(stderr, "tp_echo: pthread_create\n");
		return 1;
	}
	for (int i = 0; i < NCLIENT; i++) {
		cl[i] = (struct client){ .id = i };
		if (pthread_create(&t[i], NULL, client, &cl[i])) {
			fprintf(stderr, "tp_echo: pthread_create\n");
			return 1;
		}
	}
	for (int i = 0; i < NCLIENT; i++) {
		if (pthread_join(t[i], NULL))
			ERR("pthread_join (client)");
		total += cl[i].bytes;
		sum = sum * 1000003 + cl[i].sum;
	}
	if (pthread_join(acc, &ret))
		ERR("pthread_join (acceptor)");
	accepted = (long)ret;
	close(lfd);
	alarm(0);
	if (accepted != NCLIENT)
		ERR("%ld connections accepted", accepted);
	if (atomic_load(&served_bytes) != total)
		ERR("server echoed %ld bytes, clients got %ld", atomic_load(&served_bytes), total);
	if (atomic_load(&errors)) {
		fprintf(stderr, "tp_echo: %d errors\n", atomic_load(&errors));
		return 1;
	}
	printf("echo: %d clients x %d messages, %ld connections, %ld bytes each way\n",
	       NCLIENT, NMSG, accepted, total);
	printf("echo: checksum %016llx\n", (unsigned long long)sum);
	printf("echo ok\n");
	return 0;
}
