/* Thread pairs talking over pipes: in each pair, thread B blocks in a read
 * until thread A writes a byte, answers it, and A checks the answer; three
 * rounds, every byte checked.  All the B threads start first, so they are
 * all blocked at once.  Run with no argument: 100 pairs; tests/
 * t_transparent.sh also runs it with 4,900 pairs (9,800 threads), where
 * the blocked readers outnumber a kernel thread's syscall entries and
 * its syscall threads.
 * xsc-tp: run-opts=-t 2 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct pair {
	int a_wr, a_rd, b_rd, b_wr;
	unsigned id;
};

static void *side_a(void *arg)
{
	struct pair *p = arg;
	unsigned char c = (unsigned char)p->id, got;

	for (int r = 0; r < 3; r++, c += 2)
		if (write(p->a_wr, &c, 1) != 1 || read(p->a_rd, &got, 1) != 1 ||
		    got != (unsigned char)(c + 1)) {
			fprintf(stderr, "pair %u: bad answer\n", p->id);
			exit(1);
		}
	return NULL;
}

static void *side_b(void *arg)
{
	struct pair *p = arg;
	unsigned char want = (unsigned char)p->id, c;

	for (int r = 0; r < 3; r++, want += 2) {
		if (read(p->b_rd, &c, 1) != 1 || c != want) {
			fprintf(stderr, "pair %u: bad byte\n", p->id);
			exit(1);
		}
		c++;
		if (write(p->b_wr, &c, 1) != 1)
			exit(1);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100;
	struct pair *ps = calloc((size_t)n, sizeof(*ps));
	pthread_t *t = calloc((size_t)n * 2, sizeof(*t));
	pthread_attr_t at;

	if (!ps || !t || n < 1)
		return 2;
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 64 * 1024);
	for (int i = 0; i < n; i++) {
		int ab[2], ba[2];
		if (pipe(ab) || pipe(ba)) {
			perror("pipe");
			return 2;
		}
		ps[i] = (struct pair){ ab[1], ba[0], ab[0], ba[1], (unsigned)i };
	}
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[2 * i + 1], &at, side_b, &ps[i]))
			return 2;
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[2 * i], &at, side_a, &ps[i]))
			return 2;
	for (int i = 0; i < 2 * n; i++)
		pthread_join(t[i], NULL);
	printf("%d threads in %d pairs: every answer right\n", 2 * n, n);
	return 0;
}
