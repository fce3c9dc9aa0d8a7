/* tp_sigcancel: pthread_cancel of a thread blocked in a cancellation
 * point ends it there, as glibc does natively: its cleanup handlers run
 * (they open, close, write and wait for a mutex main holds) and
 * pthread_join returns PTHREAD_CANCELED.  One case per blocking call:
 * the functions xsc interposes (read, write, recv, accept, poll,
 * epoll_wait, the sleeps, the open of a FIFO) and ones inside libc (a
 * stdio read, pause, sigwait, a condition wait, a join, sem_wait,
 * waitpid); then a cancel made before the call (it acts at the call,
 * without blocking) and one made while cancellation is disabled (the
 * read returns its byte, and the cancel acts at the next point).  The
 * cancel reaches a blocked thread as glibc's SIGCANCEL, sent because
 * the call turned asynchronous cancellation on.  A thread the cancel
 * does not end is reported after 3 s.  Afterwards two threads still pass
 * a byte back and forth 1,000 times.  One vcpu: the cleanup's wait for
 * main's mutex must park, not hold the vcpu main needs.
 * xsc-tp: run-opts=-t 1
 * xsc-tp: +auto */
#include "tp.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int failures;
static int rd[2];		/* a pipe nobody writes */
static int full[2];		/* a full pipe */
static int done[2];		/* the cleanup handlers' reports */
static int sp[2];		/* a socketpair nobody writes */
static int fv[2];		/* the pipe the thread `forever` reads */
static int lsn = -1;		/* a listening socket nobody connects to */
static char fifo[64];
static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;	/* main's, during a cancel */
static pthread_mutex_t cm = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static sem_t sem;
static pthread_t forever;	/* a thread that never ends by itself */
static pid_t child;
static int go, disabled_read = -2;

/* The cancelled thread's cleanup: calls, and a wait for the mutex main
 * holds until after the cancel. */
static void cleanup(void *arg)
{
	char c = *(const char *)arg;
	int fd = open("/dev/null", O_RDONLY);

	if (fd >= 0)
		close(fd);
	pthread_mutex_lock(&held);
	pthread_mutex_unlock(&held);
	if (write(done[1], &c, 1) != 1)
		failures++;
}

static void cond_unlock(void *arg)
{
	(void)arg;
	pthread_mutex_unlock(&cm);
}

static void *block_forever(void *arg)
{
	char c;

	(void)arg;
	return (void *)(long)read(fv[0], &c, 1);
}

static void *victim(void *arg)
{
	const char *k = arg;
	char c = k[0], b;

	pthread_cleanup_push(cleanup, &c);
	if (!strcmp(k, "read")) {
		read(rd[0], &b, 1);
	} else if (!strcmp(k, "write")) {
		write(full[1], "x", 1);
	} else if (!strcmp(k, "recv")) {
		recv(sp[0], &b, 1, 0);
	} else if (!strcmp(k, "accept")) {
		accept(lsn, NULL, NULL);
	} else if (!strcmp(k, "poll")) {
		struct pollfd p = { rd[0], POLLIN, 0 };
		poll(&p, 1, -1);
	} else if (!strcmp(k, "epoll_wait")) {
		struct epoll_event e = { .events = EPOLLIN }, out;
		int ep = epoll_create1(EPOLL_CLOEXEC);
		epoll_ctl(ep, EPOLL_CTL_ADD, rd[0], &e);
		epoll_wait(ep, &out, 1, -1);
	} else if (!strcmp(k, "sleep")) {
		sleep(100);
	} else if (!strcmp(k, "usleep")) {
		usleep(100000000);
	} else if (!strcmp(k, "nanosleep")) {
		struct timespec ts = { 100, 0 };
		nanosleep(&ts, NULL);
	} else if (!strcmp(k, "clock_nanosleep")) {
		struct timespec ts = { 100, 0 };
		clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
	} else if (!strcmp(k, "open_fifo")) {
		open(fifo, O_RDONLY);
	} else if (!strcmp(k, "fgetc")) {
		FILE *f = fdopen(dup(rd[0]), "r");
		if (f)
			fgetc(f);
	} else if (!strcmp(k, "pause")) {
		pause();
	} else if (!strcmp(k, "sigwait")) {
		sigset_t s;
		int sig;
		sigemptyset(&s);
		sigaddset(&s, SIGUSR1);
		pthread_sigmask(SIG_BLOCK, &s, NULL);
		sigwait(&s, &sig);
	} else if (!strcmp(k, "cond_wait")) {
		pthread_mutex_lock(&cm);
		pthread_cleanup_push(cond_unlock, NULL);
		for (;;)
			pthread_cond_wait(&cv, &cm);
		pthread_cleanup_pop(1);
	} else if (!strcmp(k, "join")) {
		pthread_join(forever, NULL);
	} else if (!strcmp(k, "sem_wait")) {
		sem_wait(&sem);
	} else if (!strcmp(k, "waitpid")) {
		waitpid(child, NULL, 0);
	} else if (!strcmp(k, "before")) {
		/* cancelled before its call, which then acts at once */
		while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE))
			sched_yield();
		read(rd[0], &b, 1);
	} else if (!strcmp(k, "disabled")) {
		pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
		disabled_read = (int)read(rd[0], &b, 1);
		pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
		pthread_testcancel();
	}
	pthread_cleanup_pop(0);
	return NULL;
}

static void one(const char *k)
{
	struct timespec until;
	pthread_t t;
	void *r = NULL;
	char c = 0;

	pthread_mutex_lock(&held);
	if (pthread_create(&t, NULL, victim, (void *)k) != 0) {
		printf("%s: no thread\n", k);
		failures++;
		pthread_mutex_unlock(&held);
		return;
	}
	if (strcmp(k, "before"))
		tp_nap(30);	/* it blocks */
	pthread_cancel(t);
	__atomic_store_n(&go, 1, __ATOMIC_RELEASE);
	if (!strcmp(k, "disabled")) {
		tp_nap(30);
		if (write(rd[1], "d", 1) != 1)
			failures++;
	}
	tp_nap(10);		/* the cleanup waits for this mutex */
	pthread_mutex_unlock(&held);
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 3;
	if (pthread_timedjoin_np(t, &r, &until) != 0) {
		printf("%s: still blocked 3 s after the cancel\n", k);
		failures++;
		return;
	}
	__atomic_store_n(&go, 0, __ATOMIC_RELEASE);
	if (read(done[0], &c, 1) != 1)
		c = '?';
	printf("%s: %s, cleanup %s", k, r == PTHREAD_CANCELED ? "cancelled" : "returned",
	       c == k[0] ? "ran" : "did not run");
	if (!strcmp(k, "disabled"))
		printf(", its read returned %d", disabled_read);
	printf("\n");
	if (r != PTHREAD_CANCELED || c != k[0])
		failures++;
}

static void *echo(void *arg)
{
	int *fd = arg;
	char b;

	while (read(fd[0], &b, 1) == 1)
		if (write(fd[1], &b, 1) != 1)
			break;
	return NULL;
}

int main(int argc, char **argv)
{
	static const char *cases[] = {
		"read", "write", "recv", "accept", "poll", "epoll_wait", "sleep",
		"usleep", "nanosleep", "clock_nanosleep", "open_fifo", "fgetc",
		"pause", "sigwait", "cond_wait", "join", "sem_wait", "waitpid",
		"before", "disabled",
	};
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int a2b[2], b2a[2], efd[2];
	pthread_t e;
	long sum = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (pipe(rd) || pipe(fv) || pipe(full) || pipe(done) || pipe(a2b) || pipe(b2a) ||
	    socketpair(AF_UNIX, SOCK_STREAM, 0, sp) || sem_init(&sem, 0, 0)) {
		perror("setup");
		return 1;
	}
	fcntl(full[1], F_SETFL, O_NONBLOCK);
	while (write(full[1], "x", 1) == 1)
		;
	fcntl(full[1], F_SETFL, 0);
	lsn = socket(AF_INET, SOCK_STREAM, 0);
	if (lsn < 0 || bind(lsn, (struct sockaddr *)&a, sizeof(a)) || listen(lsn, 1)) {
		perror("listen");
		return 1;
	}
	snprintf(fifo, sizeof(fifo), "/tmp/tp_sigcancel.%d", (int)getpid());
	if (mkfifo(fifo, 0600)) {
		perror("mkfifo");
		return 1;
	}
	child = fork();
	if (child == 0) {
		pause();
		_exit(0);
	}
	pthread_create(&forever, NULL, block_forever, NULL);
	if (argc > 1)	/* the cases named, for a look at one */
		for (int i = 1; i < argc; i++)
			one(argv[i]);
	else
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
			one(cases[i]);
	unlink(fifo);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	/* the thread the join case waited for */
	close(fv[1]);
	pthread_join(forever, NULL);

	efd[0] = a2b[0];
	efd[1] = b2a[1];
	pthread_create(&e, NULL, echo, efd);
	for (int i = 0; i < 1000; i++) {
		char x = (char)i, y = 0;
		if (write(a2b[1], &x, 1) != 1 || read(b2a[0], &y, 1) != 1)
			break;
		sum += (unsigned char)y;
	}
	close(a2b[1]);
	pthread_join(e, NULL);
	printf("afterwards: 1000 round trips, sum %ld\n", sum);
	return failures || sum != 124716;
}
