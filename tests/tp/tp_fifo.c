/* tp_fifo: two threads meet at a FIFO (named pipe), as shell pipelines
 * and supervisors do.  open(2) of one end waits for the other: the reader
 * thread opens first and waits there while the main thread, 100 ms
 * later, opens the write end and sends lines; the reader echoes them.
 * Then the other order (the writer waits for a reader), then the opens
 * that do not wait: O_WRONLY|O_NONBLOCK with no reader is ENXIO, O_RDWR
 * opens at once.  With one kernel thread under xsc run, a waiting open
 * must park its thread, not hold the kernel thread the other one needs.
 * xsc-tp: run-opts=-t 1
 * xsc-tp: +auto */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char path[64];

static void *reader(void *arg)
{
	char buf[256];
	FILE *f = fopen(path, "r");	/* waits for the writer */
	(void)arg;

	if (!f) {
		printf("reader: fopen: %s\n", strerror(errno));
		return NULL;
	}
	while (fgets(buf, sizeof(buf), f))
		printf("reader got: %s", buf);
	printf("reader: end of file\n");
	fclose(f);
	return NULL;
}

static void *late_reader(void *arg)
{
	char c;
	(void)arg;
	usleep(100000);
	int fd = open(path, O_RDONLY);
	if (fd < 0 || read(fd, &c, 1) != 1) {
		printf("late reader: failed\n");
		return NULL;
	}
	printf("late reader got: %c\n", c);
	close(fd);
	return NULL;
}

int main(void)
{
	pthread_t t;
	int fd;

	snprintf(path, sizeof(path), "/tmp/tp_fifo.%d", (int)getpid());
	unlink(path);
	if (mkfifo(path, 0600) != 0) {
		perror("mkfifo");
		return 1;
	}
	/* the reader waits in its open for a writer */
	pthread_create(&t, NULL, reader, NULL);
	usleep(100000);
	FILE *w = fopen(path, "w");
	if (!w) {
		perror("fopen w");
		return 1;
	}
	for (int i = 1; i <= 3; i++)
		fprintf(w, "line %d\n", i);
	fclose(w);
	pthread_join(t, NULL);

	/* the writer waits in its open for a reader */
	pthread_create(&t, NULL, late_reader, NULL);
	fd = open(path, O_WRONLY);
	if (fd < 0 || write(fd, "x", 1) != 1) {
		perror("writer");
		return 1;
	}
	pthread_join(t, NULL);
	close(fd);
	printf("writer waited for the late reader\n");

	/* opens that do not wait */
	fd = open(path, O_WRONLY | O_NONBLOCK);
	printf("O_WRONLY|O_NONBLOCK, no reader: %s\n", fd < 0 ? strerror(errno) : "opened");
	if (fd >= 0)
		close(fd);
	fd = open(path, O_RDWR);
	printf("O_RDWR: %s\n", fd < 0 ? strerror(errno) : "opened");
	if (fd >= 0) {
		int fl = fcntl(fd, F_GETFL);
		printf("O_RDWR flags: %s\n", (fl & O_NONBLOCK) ? "O_NONBLOCK" : "blocking");
		close(fd);
	}
	unlink(path);
	return 0;
}
