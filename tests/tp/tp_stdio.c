/*
 * tp_stdio.c - stdio's FILE lock across threads of an unmodified program.
 *
 * 16 threads each fprintf 2000 lines to one shared FILE* (a mkstemp file),
 * once full-buffered and once line-buffered.  The main thread then reads
 * the file back and checks every line is intact (no interleaving inside a
 * line: each line carries its thread, its number, a payload derived from
 * both and its own length), each thread's lines are all there and in the
 * order it wrote them.  Prints totals only.  Exit 0 on success, 1 on any
 * detected error.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NT 16
#define NL 2000

static FILE *shared;
static pthread_barrier_t bar;

/* The payload of line j of thread t: 1..180 characters from a-z. */
static int payload(int t, int j, char *out)
{
	unsigned x = (unsigned)(t * 7919 + j * 104729 + 1);
	int n = 1 + (int)((x * 2654435761u) >> 8) % 180;

	for (int k = 0; k < n; k++)
		out[k] = (char)('a' + (x + (unsigned)k * 7u + (unsigned)t) % 26);
	out[n] = 0;
	return n;
}

static void *writer(void *arg)
{
	int t = (int)(long)arg;
	char pl[200];

	pthread_barrier_wait(&bar);
	for (int j = 0; j < NL; j++) {
		int n = payload(t, j, pl);
		if (fprintf(shared, "T%02d L%04d N%03d %s END\n", t, j, n, pl) < 0)
			return (void *)1;
		if (j % 97 == 0)
			sched_yield();
	}
	return NULL;
}

static int run(int mode, const char *name)
{
	char path[] = "/tmp/tp_stdio.XXXXXX", line[512], pl[200], got[256];
	int fd, counts[NT] = { 0 }, bad = 0;
	long lines = 0, bytes = 0;
	pthread_t th[NT];

	fd = mkstemp(path);
	if (fd < 0) {
		perror("tp_stdio: mkstemp");
		return -1;
	}
	unlink(path);
	shared = fdopen(fd, "w+");
	if (!shared) {
		perror("tp_stdio: fdopen");
		return -1;
	}
	if (setvbuf(shared, NULL, mode, 4096) != 0) {
		fprintf(stderr, "tp_stdio: setvbuf failed\n");
		return -1;
	}
	if (pthread_barrier_init(&bar, NULL, NT))
		return -1;
	for (long t = 0; t < NT; t++)
		if (pthread_create(&th[t], NULL, writer, (void *)t)) {
			fprintf(stderr, "tp_stdio: pthread_create\n");
			return -1;
		}
	for (int t = 0; t < NT; t++) {
		void *r;
		if (pthread_join(th[t], &r) || r) {
			fprintf(stderr, "tp_stdio: writer %d failed\n", t);
			bad++;
		}
	}
	pthread_barrier_destroy(&bar);
	if (fflush(shared) != 0 || fseek(shared, 0, SEEK_SET) != 0) {
		perror("tp_stdio: fflush/fseek");
		return -1;
	}
	while (fgets(line, sizeof(line), shared)) {
		int t, j, n, end = -1;
		size_t len = strlen(line);

		lines++;
		bytes += (long)len;
		if (len == 0 || line[len - 1] != '\n' ||
		    sscanf(line, "T%2d L%4d N%3d %255s END%n", &t, &j, &n, got, &end) != 4 ||
		    end < 0 || line[end] != '\n' || t < 0 || t >= NT) {
			if (bad++ < 5)
				fprintf(stderr, "tp_stdio: %s: mangled line %ld: %s", name, lines, line);
			continue;
		}
		if (j != counts[t] || payload(t, j, pl) != n || strcmp(pl, got) != 0) {
			if (bad++ < 5)
				fprintf(stderr, "tp_stdio: %s: line %ld: thread %d line %d "
					"(expected line %d) wrong or out of order\n",
					name, lines, t, j, counts[t]);
		}
		counts[t] = j + 1;
	}
	if (ferror(shared)) {
		perror("tp_stdio: reading back");
		bad++;
	}
	for (int t = 0; t < NT; t++)
		if (counts[t] != NL) {
			fprintf(stderr, "tp_stdio: %s: thread %d has %d lines\n", name, t, counts[t]);
			bad++;
		}
	if (lines != (long)NT * NL) {
		fprintf(stderr, "tp_stdio: %s: %ld lines\n", name, lines);
		bad++;
	}
	if (fclose(shared) != 0) {
		perror("tp_stdio: fclose");
		bad++;
	}
	printf("%s: %ld lines, %ld bytes, %d threads x %d lines intact\n",
	       name, lines, bytes, NT, NL);
	return bad ? -1 : 0;
}

int main(void)
{
	int rc = 0;

	if (run(_IOFBF, "full-buffered") < 0)
		rc = 1;
	if (run(_IOLBF, "line-buffered") < 0)
		rc = 1;
	if (rc == 0)
		printf("stdio ok\n");
	return rc;
}
