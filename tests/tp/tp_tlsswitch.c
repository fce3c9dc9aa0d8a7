/* Thread pairs passing a byte back and forth over pipes: every round trip
 * parks and resumes both threads of a pair, so under `xsc run` each one
 * is a few switches between fibers with TLS blocks of their own.  Each
 * thread checks a __thread value and errno of its own at every round.
 * tests/t_tlsload.sh counts the thread pointer loads that enter the
 * kernel (arch_prctl) where FSGSBASE is not used.
 *   tp_tlsswitch [PAIRS [ROUNDS]]   (default 8 pairs, 300 rounds) */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int rounds = 300;
static __thread long mine;

struct pair {
	int ab[2], ba[2];
	long id;
};

static void check(long want, const char *who)
{
	if (mine != want || errno != (int)(want % 100)) {
		fprintf(stderr, "%s %ld: TLS %ld errno %d\n", who, want, mine, errno);
		exit(1);
	}
}

static void *side_a(void *arg)
{
	struct pair *p = arg;
	char c = 'a';

	mine = 2 * p->id;
	errno = (int)(mine % 100);
	for (int r = 0; r < rounds; r++) {
		if (write(p->ab[1], &c, 1) != 1 || read(p->ba[0], &c, 1) != 1)
			exit(1);
		check(2 * p->id, "a");
	}
	return NULL;
}

static void *side_b(void *arg)
{
	struct pair *p = arg;
	char c;

	mine = 2 * p->id + 1;
	errno = (int)(mine % 100);
	for (int r = 0; r < rounds; r++) {
		if (read(p->ab[0], &c, 1) != 1 || write(p->ba[1], &c, 1) != 1)
			exit(1);
		check(2 * p->id + 1, "b");
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 8;
	pthread_t *t;
	struct pair *p;

	if (argc > 2)
		rounds = atoi(argv[2]);
	t = calloc(2 * (size_t)n, sizeof(*t));
	p = calloc((size_t)n, sizeof(*p));
	if (!t || !p || n < 1 || rounds < 1)
		return 1;
	for (int i = 0; i < n; i++) {
		p[i].id = i + 1;
		if (pipe(p[i].ab) || pipe(p[i].ba) ||
		    pthread_create(&t[2 * i], NULL, side_b, &p[i]) ||
		    pthread_create(&t[2 * i + 1], NULL, side_a, &p[i]))
			return 1;
	}
	for (int i = 0; i < 2 * n; i++)
		pthread_join(t[i], NULL);
	printf("%d pairs, %d round trips each: ok\n", n, rounds);
	return 0;
}
