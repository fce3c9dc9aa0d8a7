/*
 * tp_dns.c - name resolution in an unmodified threaded program:
 * getaddrinfo("localhost", "80") with AF_INET hints from main and from 4
 * threads at once (all must agree: 127.0.0.1 port 80), and a name under
 * the reserved .invalid domain that must fail with an EAI_ code.
 * Exit 0 on success, 1 on any detected error.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#define NT 4
#define ROUNDS 25

struct res { char addr[INET_ADDRSTRLEN]; int port; int err; };

static pthread_barrier_t bar;

static int lookup(const char *host, const char *svc, struct res *r)
{
	struct addrinfo hints, *ai = NULL;
	const struct sockaddr_in *sin;

	memset(&hints, 0, sizeof(hints));
	memset(r, 0, sizeof(*r));
	hints.ai_family = AF_INET;
	hints.ai_socktype = SOCK_STREAM;
	r->err = getaddrinfo(host, svc, &hints, &ai);
	if (r->err != 0)
		return -1;
	if (!ai || ai->ai_family != AF_INET || ai->ai_addrlen != sizeof(*sin)) {
		freeaddrinfo(ai);
		r->err = 1;
		return -1;
	}
	sin = (const struct sockaddr_in *)ai->ai_addr;
	if (!inet_ntop(AF_INET, &sin->sin_addr, r->addr, sizeof(r->addr)))
		r->err = 1;
	r->port = ntohs(sin->sin_port);
	freeaddrinfo(ai);
	return r->err ? -1 : 0;
}

static void *thr(void *arg)
{
	struct res *out = arg, r;

	pthread_barrier_wait(&bar);
	for (int i = 0; i < ROUNDS; i++) {
		if (lookup("localhost", "80", &r) < 0 || strcmp(r.addr, "127.0.0.1") || r.port != 80) {
			fprintf(stderr, "tp_dns: thread lookup failed: %s '%s' %d\n",
				r.err ? gai_strerror(r.err) : "", r.addr, r.port);
			return (void *)1;
		}
	}
	*out = r;
	return NULL;
}

int main(void)
{
	struct res r, tr[NT];
	pthread_t t[NT];
	int bad = 0;

	if (lookup("localhost", "80", &r) < 0) {
		fprintf(stderr, "tp_dns: getaddrinfo(localhost): %s\n", gai_strerror(r.err));
		return 1;
	}
	printf("localhost: %s port %d\n", r.addr, r.port);
	if (strcmp(r.addr, "127.0.0.1") || r.port != 80) {
		fprintf(stderr, "tp_dns: unexpected localhost result\n");
		return 1;
	}

	if (pthread_barrier_init(&bar, NULL, NT))
		return 1;
	for (int i = 0; i < NT; i++)
		if (pthread_create(&t[i], NULL, thr, &tr[i])) {
			fprintf(stderr, "tp_dns: pthread_create\n");
			return 1;
		}
	for (int i = 0; i < NT; i++) {
		void *ret;
		if (pthread_join(t[i], &ret) || ret)
			bad++;
		else if (strcmp(tr[i].addr, r.addr) || tr[i].port != r.port)
			bad++;
	}
	if (bad) {
		fprintf(stderr, "tp_dns: %d threads failed or disagreed\n", bad);
		return 1;
	}
	printf("threads: %d x %d lookups agree\n", NT, ROUNDS);

	if (lookup("no-such-host.invalid", "80", &r) == 0) {
		fprintf(stderr, "tp_dns: no-such-host.invalid resolved to %s\n", r.addr);
		return 1;
	}
	if (r.err == 0) {
		fprintf(stderr, "tp_dns: no error code for no-such-host.invalid\n");
		return 1;
	}
	fprintf(stderr, "tp_dns: no-such-host.invalid: %s (%d)\n", gai_strerror(r.err), r.err);
	printf("invalid fails\n");
	return 0;
}
