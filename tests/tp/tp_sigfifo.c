/* tp_sigfifo: a signal sent to a thread that waits in open(2) of a FIFO
 * interrupts the wait, as the kernel's does: with an SA_RESTART handler
 * the handler runs during the wait and the open goes on until a writer
 * comes; without, the open fails with EINTR.  The signals come from
 * another thread (pthread_kill: thread-directed).  The waiting thread
 * is made alone on its vcpu where it can be (two vcpus), where xsc makes
 * such an open in the thread's own kernel thread (sched/syscalls.c
 * call_sole); else it is posted.
 * xsc-tp: run-opts=-t 2
 * xsc-tp: +auto */
#include "tp.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char path[64];
static pthread_t waiter;
static volatile sig_atomic_t got;

static void on_usr1(int sig)
{
	(void)sig;
	got++;
}

/* the other thread: a signal to the waiter, then (want_writer) a writer */
static void *killer(void *arg)
{
	int want_writer = *(int *)arg;

	tp_nap(150);
	pthread_kill(waiter, SIGUSR1);
	tp_nap(150);
	printf("killer: handlers run while the open waits: %d\n", (int)got);
	if (want_writer) {
		int fd = open(path, O_WRONLY);
		if (fd < 0 || write(fd, "x", 1) != 1)
			printf("killer: writer failed: %s\n", strerror(errno));
		if (fd >= 0)
			close(fd);
	} else {
		/* no reader is left in an open: ENXIO, as natively */
		int fd = open(path, O_WRONLY | O_NONBLOCK);
		printf("killer: open for writing without a reader: %s\n",
		       fd < 0 ? strerror(errno) : "opened");
		if (fd >= 0)
			close(fd);
	}
	return NULL;
}

static int round_of(int restart)
{
	pthread_t t;
	int want_writer = restart;
	char c = 0;

	tp_on_signal(SIGUSR1, on_usr1, restart ? SA_RESTART : 0);
	got = 0;
	waiter = pthread_self();
	pthread_create(&t, NULL, killer, &want_writer);
	int fd = open(path, O_RDONLY);	/* waits for a writer */
	int e = errno;
	if (fd >= 0) {
		if (read(fd, &c, 1) != 1)
			c = '?';
		close(fd);
		printf("SA_RESTART %d: open went on after %d handler(s), read %c\n",
		       restart, (int)got, c);
	} else {
		printf("SA_RESTART %d: open failed: %s after %d handler(s)\n", restart,
		       strerror(e), (int)got);
	}
	pthread_join(t, NULL);
	return 0;
}


int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);	/* a hung run still shows where */
	snprintf(path, sizeof(path), "/tmp/tp_sigfifo.%d", (int)getpid());
	unlink(path);
	if (mkfifo(path, 0600) != 0) {
		perror("mkfifo");
		return 1;
	}
	round_of(1);
	round_of(0);
	unlink(path);
	return 0;
}
