/*
 * tp_poll: poll of one descriptor, whose pollfd xsc reads where it
 * describes the call and whose revents it writes back (plainly on the
 * caller's own stack, with a checked copy elsewhere).  A second thread
 * stays blocked in a read, so that a poll that finds nothing ready is
 * posted rather than made whole.  Cases, each with its pollfd on the
 * stack and on the heap:
 *   ready     data already there: 1, POLLIN;
 *   later     data written by another thread 20 ms into a 2 s poll: 1,
 *             POLLIN;
 *   timeout   nothing comes: 0 after its 30 ms, revents 0;
 *   hangup    the write end closed during the poll: 1, POLLHUP.
 * Prints one line per case; exit 0.  t_transparent compares the output
 * with the native run's, on one vcpu (the reader's read in flight there,
 * a poll that finds nothing is posted).  xsc-tp: run-opts=-t 1
 */
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int fails;

struct later {
	int fd;
	int close;	/* close it instead of writing */
};

static void *write_later(void *arg)
{
	struct later *l = arg;
	struct timespec ts = { 0, 20000000 };

	nanosleep(&ts, NULL);
	if (l->close)
		close(l->fd);
	else if (write(l->fd, "x", 1) != 1)
		fails++;
	return NULL;
}

static void *reader(void *arg)
{
	int *p = arg;
	char c;

	return (void *)(long)read(p[0], &c, 1);	/* until main writes */
}

static void one(const char *what, struct pollfd *pfd, int want_r, short want_rev,
		int timeout)
{
	int r = poll(pfd, 1, timeout);

	printf("%-28s %d %#x\n", what, r, (unsigned)pfd->revents);
	if (r != want_r || pfd->revents != want_rev) {
		fprintf(stderr, "tp_poll: %s: %d %#x, want %d %#x\n", what, r,
			(unsigned)pfd->revents, want_r, (unsigned)want_rev);
		fails++;
	}
}

static void cases(const char *where, struct pollfd *pfd)
{
	int p[2];
	char c, name[64];
	pthread_t t;
	struct later l;

	if (pipe(p))
		exit(1);
	*pfd = (struct pollfd){ .fd = p[0], .events = POLLIN };
	if (write(p[1], "r", 1) != 1)
		exit(1);
	snprintf(name, sizeof(name), "ready (%s)", where);
	one(name, pfd, 1, POLLIN, 2000);
	if (read(p[0], &c, 1) != 1)
		exit(1);

	l = (struct later){ p[1], 0 };
	pthread_create(&t, NULL, write_later, &l);
	pfd->revents = 0x7777;
	snprintf(name, sizeof(name), "later (%s)", where);
	one(name, pfd, 1, POLLIN, 2000);
	pthread_join(t, NULL);
	if (read(p[0], &c, 1) != 1)
		exit(1);

	pfd->revents = 0x7777;
	snprintf(name, sizeof(name), "timeout (%s)", where);
	one(name, pfd, 0, 0, 30);

	l = (struct later){ p[1], 1 };
	pthread_create(&t, NULL, write_later, &l);
	snprintf(name, sizeof(name), "hangup (%s)", where);
	one(name, pfd, 1, POLLHUP, 2000);
	pthread_join(t, NULL);
	close(p[0]);
}

int main(void)
{
	struct pollfd on_stack, *on_heap = malloc(sizeof(*on_heap));
	int hold[2];
	pthread_t t;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!on_heap || pipe(hold))
		return 1;
	pthread_create(&t, NULL, reader, hold);	/* starts xsc run's runtime */
	cases("stack", &on_stack);
	cases("heap", on_heap);
	if (write(hold[1], "q", 1) != 1)
		return 1;
	pthread_join(t, NULL);
	free(on_heap);
	return fails ? 1 : 0;
}
