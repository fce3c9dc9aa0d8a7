/* Many threads waiting on shared descriptors.  First, 10,000 threads in
 * pairs share 100 pipe pairs: thread A writes a byte to pipe ab and reads
 * one from ba, thread B reads one from ab and writes one to ba, 3 rounds;
 * every byte is read exactly once, by whichever thread of the pipe's
 * pairs gets it.  Then 1,000 threads block in accept on one listening
 * socket, a client makes 2,000 connections one after another (a byte
 * out, the same byte back), and a shutdown of the listening socket ends
 * every accept with EINVAL.  Under xsc run every thread is a fiber; the
 * failure guarded against: waiters past half a kernel thread's entries
 * each with a readiness wait, one byte completing all of them, and the
 * reads they then post holding the entries the writers need (30,000
 * fibers on 4,000 pipe pairs stall).
 * Run with [PAIRS PIPES ACCEPTORS CONNECTIONS]; alarm(100) bounds it. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct pipes {
	int ab[2], ba[2];
};

static int lfd, nconn;
static _Atomic int served, accept_einval;

static void die(const char *what)
{
	fprintf(stderr, "%s: %s\n", what, strerror(errno));
	exit(1);
}

static void *side_a(void *arg)
{
	struct pipes *p = arg;
	char c;

	for (int r = 0; r < 3; r++)
		if (write(p->ab[1], "a", 1) != 1 || read(p->ba[0], &c, 1) != 1 || c != 'b')
			die("side a");
	return NULL;
}

static void *side_b(void *arg)
{
	struct pipes *p = arg;
	char c;

	for (int r = 0; r < 3; r++)
		if (read(p->ab[0], &c, 1) != 1 || c != 'a' || write(p->ba[1], "b", 1) != 1)
			die("side b");
	return NULL;
}

static void *acceptor(void *arg)
{
	(void)arg;
	for (;;) {
		int c = accept(lfd, NULL, NULL);
		char b;
		if (c < 0) {
			if (errno != EINVAL)
				die("accept");
			atomic_fetch_add(&accept_einval, 1);
			return NULL;
		}
		if (read(c, &b, 1) != 1 || write(c, &b, 1) != 1)
			die("serve");
		close(c);
		atomic_fetch_add(&served, 1);
	}
}

static pthread_t start(void *(*fn)(void *), void *arg)
{
	pthread_attr_t at;
	pthread_t t;

	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 64 * 1024);
	if (pthread_create(&t, &at, fn, arg) != 0) {
		fprintf(stderr, "pthread_create failed\n");
		exit(1);
	}
	pthread_attr_destroy(&at);
	return t;
}

static void pipes_round(int npairs, int npipes)
{
	struct pipes *pp = calloc((size_t)npipes, sizeof(*pp));
	pthread_t *ts = calloc((size_t)npairs * 2, sizeof(*ts));

	if (!pp || !ts)
		die("calloc");
	for (int i = 0; i < npipes; i++)
		if (pipe(pp[i].ab) || pipe(pp[i].ba))
			die("pipe");
	for (int i = 0; i < npairs; i++) {
		ts[2 * i + 1] = start(side_b, &pp[i % npipes]);
		ts[2 * i] = start(side_a, &pp[i % npipes]);
	}
	for (int i = 0; i < 2 * npairs; i++)
		pthread_join(ts[i], NULL);
	printf("%d threads on %d pipe pairs: 3 rounds each\n", 2 * npairs, npipes);
	free(pp);
	free(ts);
}

static void accept_round(int nacc)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	pthread_t *ts = calloc((size_t)nacc, sizeof(*ts));

	if (!ts)
		die("calloc");
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof(a)) ||
	    getsockname(lfd, (struct sockaddr *)&a, &len) || listen(lfd, 128))
		die("listen");
	for (int i = 0; i < nacc; i++)
		ts[i] = start(acceptor, NULL);
	for (int i = 0; i < nconn; i++) {
		int c = socket(AF_INET, SOCK_STREAM, 0);
		char b = (char)('A' + i % 26), got;
		if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof(a)) ||
		    write(c, &b, 1) != 1 || read(c, &got, 1) != 1 || got != b)
			die("client");
		close(c);
	}
	while (atomic_load(&served) < nconn)	/* the last one's close */
		usleep(1000);
	if (shutdown(lfd, SHUT_RD))
		die("shutdown");
	for (int i = 0; i < nacc; i++)
		pthread_join(ts[i], NULL);
	printf("%d threads in accept on one socket: %d connections served, "
	       "%d accepts ended with EINVAL\n", nacc, atomic_load(&served),
	       atomic_load(&accept_einval));
	close(lfd);
	free(ts);
}

int main(int argc, char **argv)
{
	int npairs = argc > 4 ? atoi(argv[1]) : 5000;
	int npipes = argc > 4 ? atoi(argv[2]) : 100;
	int nacc = argc > 4 ? atoi(argv[3]) : 1000;

	nconn = argc > 4 ? atoi(argv[4]) : 2000;
	alarm(100);
	setvbuf(stdout, NULL, _IOLBF, 0);
	pipes_round(npairs, npipes);
	accept_round(nacc);
	return 0;
}
