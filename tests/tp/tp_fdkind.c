/* A descriptor number that was a regular file and is a pipe now.  A short
 * non-blocking read of a regular file is finished in the blocking form
 * (read(2) would have waited for the pages), of a pipe it is returned as
 * it is; under xsc run the kind is taken from the program's own fstat and
 * kept until the descriptor is closed (src/sched/fdkind.c).  A kind kept
 * past close, dup2, dup3 or close_range would make the read of the pipe
 * wait for bytes that never come (alarm: exit 2).  Then two threads race:
 * one fstats the number over and over while the other puts a file and a
 * pipe on it in turn and reads each short. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/close_range.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static char path[64];
static int num;			/* the descriptor number both threads use */
static atomic_int stop;

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static int file_on(int fd)	/* a regular file of 10 bytes on fd, fstat'ed */
{
	struct stat st;
	int f = open(path, O_RDONLY);

	if (f < 0)
		die("open");
	if (f != fd && (dup2(f, fd) < 0 || close(f) < 0))
		die("dup2 file");
	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		die("fstat");
	return fd;
}

static void short_read(int fd, long want, const char *what)
{
	char buf[100];
	long n = read(fd, buf, sizeof(buf));

	if (n != want) {
		fprintf(stderr, "%s: read %ld, want %ld\n", what, n, want);
		exit(1);
	}
}

static int pipe_on(int fd, int *w)	/* a pipe's read end on fd, 3 bytes in it */
{
	int p[2];

	if (pipe(p))
		die("pipe");
	if (p[0] != fd && (dup2(p[0], fd) < 0 || close(p[0]) < 0))
		die("dup2 pipe");
	if (write(p[1], "abc", 3) != 3)
		die("write");
	*w = p[1];
	return fd;
}

static void *stat_loop(void *arg)
{
	struct stat st;

	(void)arg;
	while (!atomic_load(&stop))
		fstat(num, &st);
	return NULL;
}

int main(void)
{
	int fd, w, p[2];
	pthread_t t;

	alarm(30);
	snprintf(path, sizeof(path), "/tmp/tp_fdkind.%d", (int)getpid());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, "0123456789", 10) != 10 || close(fd))
		die("make file");

	/* close: the number comes back as a pipe */
	fd = file_on(open(path, O_RDONLY));
	short_read(fd, 10, "file");
	close(fd);
	if (pipe(p) || p[0] != fd)
		die("pipe on the closed number");
	if (write(p[1], "abc", 3) != 3)
		die("write");
	short_read(fd, 3, "pipe after close");
	close(p[0]);
	close(p[1]);
	printf("close: ok\n");

	/* dup2 and dup3 put a pipe on a file's number */
	fd = file_on(open(path, O_RDONLY));
	short_read(fd, 10, "file");
	pipe_on(fd, &w);
	short_read(fd, 3, "pipe after dup2");
	close(w);
	file_on(fd);
	short_read(fd, 10, "file again");
	if (pipe(p) || dup3(p[0], fd, O_CLOEXEC) < 0 || write(p[1], "abc", 3) != 3)
		die("dup3");
	short_read(fd, 3, "pipe after dup3");
	close(p[0]);
	close(p[1]);
	printf("dup2, dup3: ok\n");

	/* close_range */
	file_on(fd);
	short_read(fd, 10, "file");
	if (syscall(SYS_close_range, fd, fd + 10, 0))
		die("close_range");
	if (pipe(p) || p[0] != fd || write(p[1], "abc", 3) != 3)
		die("pipe after close_range");
	short_read(fd, 3, "pipe after close_range");
	close(p[1]);
	printf("close_range: ok\n");

	/* a thread stats the number while this one swaps what is on it */
	num = fd;
	if (pthread_create(&t, NULL, stat_loop, NULL))
		die("pthread_create");
	for (int i = 0; i < 1000; i++) {
		file_on(fd);
		short_read(fd, 10, "raced file");
		pipe_on(fd, &w);
		short_read(fd, 3, "raced pipe");
		close(w);
	}
	atomic_store(&stop, 1);
	pthread_join(t, NULL);
	printf("race: ok\n");
	unlink(path);
	return 0;
}
