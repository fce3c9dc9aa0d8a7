/* Large writes between two threads of one process: a writer sends 1 MiB
 * and 16 MiB through a pipe and through a UNIX socketpair while a reader
 * takes them in 64 KiB pieces and checks every byte.  Under `xsc run -t 1`
 * both threads are fibers of ONE kernel thread: the rest of a short write
 * must go out without blocking that thread, or the reader never runs.
 * Each size once more with the pipe or socket full when the write is made
 * and the reader 50 ms late: write(2) waits for room and goes on until
 * all is written, where io_uring's blocking form writes only what fits.
 * xsc-tp: run-opts=-t 1 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <unistd.h>

#define BIG (16L << 20)
#define PRE (4L << 20)	/* room for what fills a pipe or socket buffer */
static unsigned char *src;

struct job { int fd; long len; int sock, full; long pre, ret; };

static void *writer(void *arg)
{
	struct job *j = arg;
	long w;

	if (j->full) {	/* fill the buffer, the reader is not there yet */
		fcntl(j->fd, F_SETFL, O_NONBLOCK);
		while (j->pre < PRE - 512 &&
		       (w = write(j->fd, src + j->pre, 512)) > 0)
			j->pre += w;
		fcntl(j->fd, F_SETFL, 0);
	}
	j->ret = j->sock ? send(j->fd, src + j->pre, (size_t)j->len, 0)
			 : write(j->fd, src + j->pre, (size_t)j->len);
	close(j->fd);	/* the reader's end of file */
	return NULL;
}

/* Reads to the end (the writer closes its end), every byte checked;
 * returns the count read, or -1. */
static long check(int rfd)
{
	static unsigned char buf[64 * 1024];
	long got = 0;
	ssize_t n;

	while ((n = read(rfd, buf, sizeof(buf))) > 0) {
		if (got + n > BIG + PRE || memcmp(buf, src + got, (size_t)n)) {
			printf("bytes differ in [%ld, %ld)\n", got, got + (long)n);
			return -1;
		}
		got += n;
	}
	if (n < 0)
		printf("read at %ld: %m\n", got);
	return n < 0 ? -1 : got;
}

int main(void)
{
	int bad = 0;

	src = malloc(BIG + PRE);
	if (!src)
		return 2;
	for (long i = 0; i < BIG + PRE; i++)
		src[i] = (unsigned char)(i * 131 + (i >> 10));
	for (int full = 0; full < 2; full++)
	for (int sock = 0; sock < 2; sock++)
		for (long len = 1L << 20; len <= BIG; len *= 16) {
			struct timespec late = { 0, 50000000 };
			int fd[2];
			pthread_t t;
			if (sock ? socketpair(AF_UNIX, SOCK_STREAM, 0, fd) : pipe(fd))
				return 2;
			struct job j = { sock ? fd[0] : fd[1], len, sock, full, 0, 0 };
			pthread_create(&t, NULL, writer, &j);
			if (full)
				nanosleep(&late, NULL);
			long got = check(sock ? fd[1] : fd[0]);
			pthread_join(t, NULL);
			if (got != j.pre + j.ret) {
				printf("read %ld, written %ld + %ld\n", got, j.pre, j.ret);
				bad = 1;
			}
			printf("%s %ld%s: wrote %ld%s\n", sock ? "socketpair" : "pipe",
			       len, full ? " into a full buffer" : "", j.ret,
			       j.ret == len ? "" : " (short)");
			bad |= j.ret != len;
			close(sock ? fd[1] : fd[0]);
		}
	free(src);
	return bad;
}
