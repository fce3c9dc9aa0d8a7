/* Large writes between two threads of one process: a writer sends 1 MiB
 * and 16 MiB through a pipe and through a UNIX socketpair while a reader
 * takes them in 64 KiB pieces and checks every byte.  Under `xsc run -t 1`
 * both threads are fibers of ONE kernel thread: the rest of a short write
 * must go out without blocking that thread, or the reader never runs.
 * xsc-tp: run-opts=-t 1 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define BIG (16L << 20)
static unsigned char *src;

struct job { int fd; long len; int sock; long ret; };

static void *writer(void *arg)
{
	struct job *j = arg;
	j->ret = j->sock ? send(j->fd, src, (size_t)j->len, 0)
			 : write(j->fd, src, (size_t)j->len);
	return NULL;
}

static int check(int rfd, long len)
{
	static unsigned char buf[64 * 1024];
	long got = 0;

	while (got < len) {
		ssize_t n = read(rfd, buf, sizeof(buf));
		if (n <= 0) {
			printf("read at %ld of %ld: %zd\n", got, len, n);
			return 1;
		}
		if (memcmp(buf, src + got, (size_t)n) != 0) {
			printf("bytes differ in [%ld, %ld)\n", got, got + (long)n);
			return 1;
		}
		got += n;
	}
	return 0;
}

int main(void)
{
	int bad = 0;

	src = malloc(BIG);
	if (!src)
		return 2;
	for (long i = 0; i < BIG; i++)
		src[i] = (unsigned char)(i * 131 + (i >> 10));
	for (int sock = 0; sock < 2; sock++)
		for (long len = 1L << 20; len <= BIG; len *= 16) {
			int fd[2];
			pthread_t t;
			if (sock ? socketpair(AF_UNIX, SOCK_STREAM, 0, fd) : pipe(fd))
				return 2;
			struct job j = { sock ? fd[0] : fd[1], len, sock, 0 };
			pthread_create(&t, NULL, writer, &j);
			bad |= check(sock ? fd[1] : fd[0], len);
			pthread_join(t, NULL);
			printf("%s %ld: wrote %ld%s\n", sock ? "socketpair" : "pipe", len,
			       j.ret, j.ret == len ? "" : " (short)");
			bad |= j.ret != len;
			close(fd[0]);
			close(fd[1]);
		}
	free(src);
	return bad;
}
