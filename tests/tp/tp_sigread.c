/* tp_sigread: a signal sent to a thread that waits in a read of a pipe,
 * a recv of a socket or an accept interrupts the wait, as the kernel's
 * does: with an SA_RESTART handler the handler runs during the wait and
 * the call goes on until the peer comes; without, it fails with EINTR.
 * The signals come from another thread (pthread_kill: thread-directed).
 * The waiting thread is alone on its vcpu where it can be (two vcpus),
 * where xsc makes such a call in the thread's own kernel thread
 * (sched/syscalls.c made_here, call_sole); else it is posted.  Last, a
 * thread made while the waiter waits in a read must run although its
 * maker keeps its own vcpu busy (sched_yield in a loop): it writes what
 * the waiter reads.  Placed on the waiter's vcpu, it would wait behind
 * the read for good.
 * xsc-tp: run-opts=-t 2
 * xsc-tp: +auto */
#include "tp.h"

#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum kind { PIPE, SOCK, ACCEPT };
static const char *names[] = { "read of a pipe", "recv of a socket", "accept" };

static pthread_t waiter;
static volatile sig_atomic_t got;
static int fd[2], lsn = -1;
static struct sockaddr_in addr;

static void on_usr1(int sig)
{
	(void)sig;
	got++;
}

struct plan {
	enum kind k;
	int peer;	/* the peer comes after the signal */
};

/* the other thread: a signal to the waiter, then (peer) what it waits for */
static void *killer(void *arg)
{
	const struct plan *p = arg;

	tp_nap(60);
	pthread_kill(waiter, SIGUSR1);
	tp_nap(60);
	if (!p->peer)
		return NULL;
	if (p->k == ACCEPT) {
		int c = socket(AF_INET, SOCK_STREAM, 0);
		if (c < 0 || connect(c, (struct sockaddr *)&addr, sizeof(addr)) != 0)
			printf("killer: connect failed: %s\n", strerror(errno));
		tp_nap(20);
		if (c >= 0)
			close(c);
	} else if (write(fd[1], "x", 1) != 1) {
		printf("killer: write failed: %s\n", strerror(errno));
	}
	return NULL;
}

static void round_of(enum kind k, int restart)
{
	struct plan p = { k, restart };
	pthread_t t;
	char c = 0;
	long r;
	int e;

	tp_on_signal(SIGUSR1, on_usr1, restart ? SA_RESTART : 0);
	got = 0;
	waiter = pthread_self();
	pthread_create(&t, NULL, killer, &p);
	if (k == ACCEPT)
		r = accept(lsn, NULL, NULL);
	else if (k == SOCK)
		r = recv(fd[0], &c, 1, 0);
	else
		r = read(fd[0], &c, 1);
	e = errno;
	if (r >= 0 && k == ACCEPT)
		printf("%s, SA_RESTART %d: went on after %d handler(s)\n", names[k],
		       restart, (int)got);
	else if (r >= 0)
		printf("%s, SA_RESTART %d: went on after %d handler(s), read %c\n", names[k],
		       restart, (int)got, c);
	else
		printf("%s, SA_RESTART %d: failed: %s after %d handler(s)\n", names[k],
		       restart, strerror(e), (int)got);
	if (k == ACCEPT && r >= 0)
		close((int)r);
	pthread_join(t, NULL);
}

static volatile int written;

static void *writer(void *arg)
{
	(void)arg;
	if (write(fd[1], "w", 1) != 1)
		printf("writer: %s\n", strerror(errno));
	written = 1;
	return NULL;
}

/* makes a writer four times, spinning until each has written */
static void *maker(void *arg)
{
	(void)arg;
	tp_nap(60);	/* the waiter waits in its read by now */
	for (int i = 0; i < 4; i++) {
		pthread_t w;
		written = 0;
		pthread_create(&w, NULL, writer, NULL);
		while (!written)
			sched_yield();
		pthread_join(w, NULL);
	}
	return NULL;
}

static void *nothing(void *arg)
{
	return arg;
}

int main(void)
{
	socklen_t len = sizeof(addr);
	pthread_t t;

	setvbuf(stdout, NULL, _IOLBF, 0);	/* a hung run still shows where */
	/* a second thread starts the runtime of `xsc run`: the descriptors
	 * below are made under it */
	pthread_create(&t, NULL, nothing, NULL);
	pthread_join(t, NULL);
	addr.sin_family = AF_INET;
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lsn = socket(AF_INET, SOCK_STREAM, 0);
	if (lsn < 0 || bind(lsn, (struct sockaddr *)&addr, sizeof(addr)) != 0 ||
	    listen(lsn, 4) != 0 || getsockname(lsn, (struct sockaddr *)&addr, &len) != 0) {
		perror("listen");
		return 1;
	}
	for (int k = PIPE; k <= ACCEPT; k++) {
		if (k == PIPE ? pipe(fd) != 0 : k == SOCK ? socketpair(AF_UNIX, SOCK_STREAM, 0, fd) != 0 : 0) {
			perror("pipe");
			return 1;
		}
		round_of((enum kind)k, 1);
		round_of((enum kind)k, 0);
		if (k != ACCEPT) {
			close(fd[0]);
			close(fd[1]);
		}
	}
	close(lsn);
	if (pipe(fd) != 0) {
		perror("pipe");
		return 1;
	}
	pthread_create(&t, NULL, maker, NULL);
	int n = 0;
	char c;
	for (int i = 0; i < 4; i++)
		n += (int)read(fd[0], &c, 1);
	pthread_join(t, NULL);
	printf("threads made while a read waits: read %d\n", n);
	return 0;
}
