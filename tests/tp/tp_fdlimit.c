/*
 * tp_fdlimit.c - descriptor numbers and RLIMIT_NOFILE as the program
 * sees them: a daemon relies on its first open getting the lowest free
 * number, and a program run with a small `ulimit -n` on getting every
 * descriptor up to the limit.
 *
 * The main thread prints the lowest free number, then a second thread
 * lowers the soft limit to 4 above it and opens /dev/null until EMFILE,
 * printing every number it got and the error that ended it; then the
 * same again with the limit 32 above, closing every descriptor after.
 * Nothing is printed that differs between runs of the same environment,
 * so stdout must be byte-identical natively and under `xsc run`.
 * Exit 0 on success, 1 on an unexpected error.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static int lowest;

static int fill(int room)
{
	struct rlimit rl;
	int fds[64], n = 0, fd, err;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return 1;
	rl.rlim_cur = (rlim_t)(lowest + room);
	if (setrlimit(RLIMIT_NOFILE, &rl) != 0) {
		perror("tp_fdlimit: setrlimit");
		return 1;
	}
	printf("limit lowest+%d:", room);
	while (n < 64 && (fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0) {
		printf(" %d", fd);
		fds[n++] = fd;
	}
	err = errno;
	printf(" -> %d opened, then %s\n", n, n < 64 ? strerror(err) : "stop");
	while (n > 0)
		close(fds[--n]);
	return 0;
}

static void *run(void *arg)
{
	(void)arg;
	return (void *)(long)(fill(4) | fill(32));
}

int main(void)
{
	pthread_t t;
	void *rc;

	lowest = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (lowest < 0)
		return 1;
	close(lowest);
	printf("lowest free descriptor: %d\n", lowest);
	fflush(stdout);
	if (pthread_create(&t, NULL, run, NULL) != 0 || pthread_join(t, &rc) != 0)
		return 1;
	return rc ? 1 : 0;
}
