/*
 * tp_direct: the calls an event loop's thread makes directly under `xsc
 * run` when posting gains nothing (sched/syscalls.c made_here) give
 * exactly the kernel's results, whichever way each goes:
 *   nonblock  reads and writes on descriptors made non-blocking by their
 *             flags (socketpair, pipe2, eventfd), by fcntl(F_SETFL) and by
 *             ioctl(FIONBIO): data, then EAGAIN;
 *   cleared   the flag cleared again (fcntl, ioctl): a read waits for the
 *             byte another thread writes 30 ms later, never EAGAIN (made
 *             directly, it would hold the one vcpu of t_direct.sh's run
 *             that the writer needs);
 *   reused    a non-blocking descriptor closed and its number reused by a
 *             blocking pipe: the read waits, never EAGAIN;
 *   dontwait  recv(MSG_DONTWAIT) on a blocking socket: EAGAIN at once;
 *   epoll     a wait with events ready returns them at once; with none it
 *             times out after its timeout; one a signal handler of the
 *             thread interrupts returns EINTR, for a signal to the process
 *             (setitimer) and one sent to the thread (pthread_kill);
 *   busy      the same reads while another thread keeps yielding (run on
 *             one vcpu by t_direct.sh: the reads are batched then);
 *   disk      (only, with the argument "disk") calls that wait for nothing
 *             but the disk: a pread and an fstat of a regular file the
 *             thread has looked at, an open of it, its fstat, a read and
 *             the close, 1,000 times each: the bytes read;
 *   sleeper   (only, with the argument "sleeper") a thread sleeps 20 ms
 *             at a time, by nanosleep and by pthread_cond_timedwait, while
 *             the main thread waits in epoll_wait, with events ready, then
 *             with none: the sleeper is woken on time (at most 4 of its 20
 *             sleeps end 5 ms late or more, unless TP_SLEEPER_UNTIMED is
 *             set; t_direct.sh: on one vcpu the
 *             waits are made by the main thread itself all the same, in
 *             slices that end before the sleep does);
 *   transfer  (only, with the argument "transfer") two threads pass a
 *             byte back and forth 1,000 times through blocking pipes,
 *             then through a blocking socket pair: each read waits for
 *             the other thread (t_direct.sh: each thread alone on its
 *             vcpu makes them itself);
 *   parked    (only, with the argument "parked") a thread waits on a
 *             condition variable, then a server thread waits in
 *             epoll_wait with a 10 s timeout on the same vcpu (made after
 *             it, while that vcpu idles: t_direct.sh, two vcpus); the
 *             main thread signals the condition 20 times, 20 ms apart,
 *             and each time the waiting thread must answer through a
 *             pipe within 2 s (made whole, the server's wait holds the
 *             vcpu: a thread readied there stops it); then the server
 *             reads a blocking pipe, and the same 20 signals are
 *             answered while it waits there; then it is told to end;
 *             with the argument "parkedmask", the same with every
 *             signal blocked in every thread (the stop of such a call is
 *             a signal: such a call must not be made whole then);
 *   inflight  (only, with the argument "inflight") a thread waits in
 *             a read of a blocking pipe while the main thread waits in
 *             epoll_wait, with a 10 s timeout, on another pipe: 40
 *             times a child process writes a byte to main's pipe, 10 ms
 *             after main asks, then 5 times to the first pipe, whose
 *             reader passes it on to main's; each wait must end with its
 *             byte within 2 s (t_direct.sh, one vcpu: main's waits are
 *             made whole beside the read in flight on the ring, and the
 *             read's completion must stop such a wait: ringwatch.c);
 *   live      (only, with the argument "live") a second thread reads an
 *             empty non-blocking pipe 3,000 times (EAGAIN), then waits in
 *             a read that never ends; the process exits with it alive, as
 *             a server that a signal ends does (t_direct.sh: `xsc run -v`
 *             counts its calls all the same).
 * Prints one line per case; exit 0.  t_transparent compares the output
 * with the native run's, t_direct.sh also which way the calls went.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 2000

static int fails;

static void check(const char *what, int ok)
{
	if (!ok) {
		printf("FAIL %s (errno %d)\n", what, errno);
		fails++;
	}
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* ROUNDS writes of one byte to w, each read back from r; then r is empty. */
static void pingpong(const char *name, int w, int r)
{
	char c, got;
	int ok = 1;

	for (int i = 0; i < ROUNDS && ok; i++) {
		c = (char)i;
		ok = write(w, &c, 1) == 1 && read(r, &got, 1) == 1 && got == c;
	}
	check(name, ok);
	errno = 0;
	check(name, read(r, &got, 1) == -1 && errno == EAGAIN);
	printf("%s ok\n", name);
}

static void nonblock(void)
{
	int s[2], p[2], e;
	uint64_t v;

	check("socketpair", socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, s) == 0);
	pingpong("socketpair", s[0], s[1]);
	close(s[0]);
	close(s[1]);
	check("pipe2", pipe2(p, O_NONBLOCK) == 0);
	pingpong("pipe2", p[1], p[0]);
	close(p[0]);
	close(p[1]);
	check("socketpair", socketpair(AF_UNIX, SOCK_STREAM, 0, s) == 0);
	check("fcntl", fcntl(s[1], F_SETFL, fcntl(s[1], F_GETFL) | O_NONBLOCK) == 0);
	pingpong("fcntl", s[0], s[1]);
	close(s[0]);
	close(s[1]);
	check("socketpair", socketpair(AF_UNIX, SOCK_STREAM, 0, s) == 0);
	check("ioctl", ioctl(s[1], FIONBIO, &(int){ 1 }) == 0);
	pingpong("ioctl", s[0], s[1]);
	close(s[0]);
	close(s[1]);
	e = eventfd(0, EFD_NONBLOCK);
	check("eventfd", e >= 0);
	v = 3;
	check("eventfd write", write(e, &v, 8) == 8);
	check("eventfd read", read(e, &v, 8) == 8 && v == 3);
	errno = 0;
	check("eventfd empty", read(e, &v, 8) == -1 && errno == EAGAIN);
	close(e);
	printf("eventfd ok\n");
}

/* A byte written to fd 30 ms from now, by another thread. */
static void *late_writer(void *arg)
{
	usleep(30000);
	check("late write", write((int)(long)arg, "x", 1) == 1);
	return NULL;
}

static void read_waits(const char *name, int w, int r)
{
	pthread_t t;
	char c = 0;

	pthread_create(&t, NULL, late_writer, (void *)(long)w);
	usleep(5000);	/* the writer sleeps: nothing else is runnable */
	errno = 0;
	check(name, read(r, &c, 1) == 1 && c == 'x');
	pthread_join(t, NULL);
	printf("%s ok\n", name);
}

static void cleared(void)
{
	int s[2], p[2], q[2];

	check("socketpair", socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, s) == 0);
	check("fcntl clear", fcntl(s[1], F_SETFL, fcntl(s[1], F_GETFL) & ~O_NONBLOCK) == 0);
	read_waits("fcntl cleared", s[0], s[1]);
	check("ioctl clear", ioctl(s[0], FIONBIO, &(int){ 0 }) == 0);
	read_waits("ioctl cleared", s[1], s[0]);
	close(s[0]);
	close(s[1]);
	/* a non-blocking pair closed; a blocking pipe gets its numbers */
	check("pipe2", pipe2(p, O_NONBLOCK) == 0);
	close(p[0]);
	close(p[1]);
	check("pipe", pipe(q) == 0);
	check("reused numbers", q[0] == p[0] || q[0] == p[1]);
	read_waits("reused", q[1], q[0]);
	close(q[0]);
	close(q[1]);
}

static void dontwait(void)
{
	int s[2];
	char c;

	check("socketpair", socketpair(AF_UNIX, SOCK_STREAM, 0, s) == 0);
	errno = 0;
	check("dontwait empty", recv(s[1], &c, 1, MSG_DONTWAIT) == -1 && errno == EAGAIN);
	check("dontwait send", send(s[0], "y", 1, MSG_DONTWAIT) == 1);
	check("dontwait data", recv(s[1], &c, 1, MSG_DONTWAIT) == 1 && c == 'y');
	close(s[0]);
	close(s[1]);
	printf("dontwait ok\n");
}

static volatile sig_atomic_t alarms;

static void on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

/* pthread_kill(arg, SIGALRM) 30 ms from now, from another thread */
static void *killer(void *arg)
{
	usleep(30000);
	pthread_kill((pthread_t)arg, SIGALRM);
	return NULL;
}

/* An epoll set watching s[1] of a new non-blocking socket pair s: its fd. */
static int epoll_pair(int s[2])
{
	struct epoll_event ev = { .events = EPOLLIN };
	int ep = epoll_create1(0);

	check("socketpair", socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, s) == 0);
	ev.data.fd = s[1];
	check("epoll_ctl", epoll_ctl(ep, EPOLL_CTL_ADD, s[1], &ev) == 0);
	return ep;
}

/* ROUNDS waits on ep, each with a byte ready on s[1] (written to s[0]):
 * the event at once, then the byte. */
static void epoll_ready(int ep, const int s[2])
{
	struct epoll_event out[4];
	char c;

	for (int i = 0; i < ROUNDS; i++) {
		check("write", write(s[0], "z", 1) == 1);
		int n = epoll_wait(ep, out, 4, 1000);
		check("epoll ready", n == 1 && out[0].data.fd == s[1]);
		check("read", read(s[1], &c, 1) == 1);
	}
}

static void epoll(void)
{
	struct epoll_event out[4];
	struct sigaction sa;
	int s[2], ep = epoll_pair(s);
	double t0;
	int n;

	epoll_ready(ep, s);
	t0 = now_ms();
	n = epoll_wait(ep, out, 4, 40);
	check("epoll timeout", n == 0 && now_ms() - t0 >= 39);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &(struct itimerval){ { 0, 0 }, { 0, 30000 } }, NULL);
	t0 = now_ms();
	errno = 0;
	n = epoll_wait(ep, out, 4, 5000);
	if (n != -1 || errno != EINTR || now_ms() - t0 >= 4000)
		printf("epoll EINTR: %d after %.0f ms, signals handled %d\n", n,
		       now_ms() - t0, (int)alarms);
	check("epoll EINTR", n == -1 && errno == EINTR && now_ms() - t0 < 4000);
	pthread_t k;
	pthread_create(&k, NULL, killer, (void *)pthread_self());
	t0 = now_ms();
	errno = 0;
	n = epoll_wait(ep, out, 4, 5000);
	check("epoll EINTR by pthread_kill", n == -1 && errno == EINTR && now_ms() - t0 < 4000);
	pthread_join(k, NULL);
	close(ep);
	close(s[0]);
	close(s[1]);
	printf("epoll ok\n");
}

static atomic_int stop;

static void *yielder(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop))
		sched_yield();
	return NULL;
}

static void busy(void)
{
	pthread_t t;
	int s[2];

	pthread_create(&t, NULL, yielder, NULL);
	check("socketpair", socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, s) == 0);
	pingpong("busy", s[0], s[1]);
	atomic_store(&stop, 1);
	pthread_join(t, NULL);
	close(s[0]);
	close(s[1]);
}

static void disk(void)
{
	char path[] = "/tmp/tp_direct.XXXXXX", c;
	int fd = mkstemp(path);
	long sum = 0, bad = 0;
	struct stat st;

	if (fd < 0 || write(fd, "0123456789", 10) != 10 || fstat(fd, &st) != 0) {
		printf("disk: setup failed: %s\n", strerror(errno));
		fails++;
		return;
	}
	for (int i = 0; i < 1000; i++) {
		int g;
		if (pread(fd, &c, 1, i % 10) != 1 || fstat(fd, &st) != 0 || st.st_size != 10 ||
		    (g = open(path, O_RDONLY)) < 0) {
			bad++;
			continue;
		}
		sum += c - '0';
		if (fstat(g, &st) != 0 || read(g, &c, 1) != 1 || c != '0')
			bad++;
		if (close(g) != 0)
			bad++;
	}
	printf("disk: read %ld, %ld calls failed\n", sum, bad);
	fails += bad != 0 || sum != 4500;
	unlink(path);
	close(fd);
}

static int tx[2][2];	/* transfer: main -> echo, echo -> main */

static void *echo(void *arg)
{
	char c;

	(void)arg;
	while (read(tx[0][0], &c, 1) == 1)
		if (write(tx[1][1], &c, 1) != 1)
			break;
	return NULL;
}

/* 1,000 round trips through tx, made by pipe() or socketpair() */
static void round_trips(const char *what, bool sock)
{
	pthread_t t;
	long sum = 0;

	for (int i = 0; i < 2; i++)
		if ((sock ? socketpair(AF_UNIX, SOCK_STREAM, 0, tx[i]) : pipe(tx[i])) != 0) {
			printf("transfer: %s: %s\n", what, strerror(errno));
			fails++;
			return;
		}
	pthread_create(&t, NULL, echo, NULL);
	for (int i = 0; i < 1000; i++) {
		char x = (char)(i % 100), y = 0;
		if (write(tx[0][1], &x, 1) != 1 || read(tx[1][0], &y, 1) != 1)
			break;
		sum += y;
	}
	close(tx[0][1]);
	pthread_join(t, NULL);
	close(tx[0][0]);
	close(tx[1][0]);
	close(tx[1][1]);
	printf("transfer: 1000 round trips through %s, sum %ld\n", what, sum);
	fails += sum != 49500;
}

#define SLEEPS 20
#define SLEEP_MS 20

static atomic_int slept;	/* the sleeper is done */
static int late;		/* its sleeps that ended 5 ms late or more */

static void *sleeper(void *arg)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t c = PTHREAD_COND_INITIALIZER;
	struct timespec ts;

	(void)arg;
	for (int i = 0; i < SLEEPS; i++) {
		double t0 = now_ms();
		if (i % 2) {
			nanosleep(&(struct timespec){ 0, SLEEP_MS * 1000000L }, NULL);
		} else {
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += SLEEP_MS * 1000000L;
			ts.tv_sec += ts.tv_nsec / 1000000000;
			ts.tv_nsec %= 1000000000;
			pthread_mutex_lock(&m);
			int r = pthread_cond_timedwait(&c, &m, &ts);
			pthread_mutex_unlock(&m);
			check("pthread_cond_timedwait times out", r == ETIMEDOUT);
		}
		double t = now_ms() - t0;
		check("slept its time", t >= SLEEP_MS - 0.5);
		late += t >= SLEEP_MS + 5;
	}
	atomic_store(&slept, 1);
	return NULL;
}

static void sleepers(void)
{
	struct epoll_event out[4];
	int s[2], ep = epoll_pair(s);
	pthread_t t;

	pthread_create(&t, NULL, sleeper, NULL);
	epoll_ready(ep, s);
	while (!atomic_load(&slept))
		check("epoll times out", epoll_wait(ep, out, 4, 30) == 0);
	pthread_join(t, NULL);
	if (getenv("TP_SLEEPER_UNTIMED"))	/* t_direct.sh: an SQPOLL ring's */
		late = 0;
	if (late > 4)
		printf("sleeper: %d of %d sleeps of %d ms ended 5 ms late or more\n", late,
		       SLEEPS, SLEEP_MS);
	close(ep);
	close(s[0]);
	close(s[1]);
	printf("sleeper %s\n", late > 4 ? "late" : "ok");
}

#define PARKED_WAKES 20
static pthread_mutex_t pk_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pk_cond = PTHREAD_COND_INITIALIZER;
static int pk_asked, pk_answer[2], pk_server[2], pk_block[2];

/* Waits on the condition; answers each signal through pk_answer. */
static void *pk_waiter(void *arg)
{
	int seen = 0;

	(void)arg;
	for (;;) {
		pthread_mutex_lock(&pk_lock);
		while (pk_asked == seen)
			pthread_cond_wait(&pk_cond, &pk_lock);
		seen = pk_asked;
		pthread_mutex_unlock(&pk_lock);
		if (seen < 0 || write(pk_answer[1], &seen, sizeof(seen)) != sizeof(seen))
			return NULL;
	}
}

/* Waits in epoll_wait, 10 s at a time, until told to go on; then in a
 * read of a blocking pipe. */
static void *pk_serve(void *arg)
{
	struct epoll_event ev = { .events = EPOLLIN }, out;
	int ep = epoll_create1(0), n = 0;
	char c;

	(void)arg;
	epoll_ctl(ep, EPOLL_CTL_ADD, pk_server[0], &ev);
	while ((n = epoll_wait(ep, &out, 1, 10000)) == 0 ||
	       (n < 0 && errno == EINTR))
		;
	close(ep);
	if (read(pk_server[0], &c, 1) != 1 || read(pk_block[0], &c, 1) != 1)
		return (void *)1L;
	return NULL;
}

/* PARKED_WAKES signals of the condition, each answered within 2 s; the
 * number that were not. */
static int pk_wakes(const char *where)
{
	int got;

	for (int i = 1; i <= PARKED_WAKES; i++) {
		struct pollfd p = { .fd = pk_answer[0], .events = POLLIN };
		pthread_mutex_lock(&pk_lock);
		pk_asked++;
		pthread_cond_signal(&pk_cond);
		pthread_mutex_unlock(&pk_lock);
		if (poll(&p, 1, 2000) != 1) {
			printf("parked: wake %d beside %s not answered within 2 s\n", i, where);
			return 1;
		}
		check("answer", read(pk_answer[0], &got, sizeof(got)) == sizeof(got) &&
				got == pk_asked);
		usleep(20000);
	}
	return 0;
}

static void parked(void)
{
	pthread_t w, s;
	void *sr = NULL;
	int late;

	check("pipe", pipe(pk_answer) == 0 && pipe(pk_server) == 0 && pipe(pk_block) == 0);
	pthread_create(&w, NULL, pk_waiter, NULL);
	usleep(50000);	/* it waits; its vcpu idles */
	pthread_create(&s, NULL, pk_serve, NULL);
	usleep(50000);	/* the server waits beside it */
	late = pk_wakes("a wait");
	check("the server goes on", write(pk_server[1], "x", 1) == 1);
	usleep(50000);	/* it reads the blocking pipe */
	late += !late && pk_wakes("a read");
	pthread_mutex_lock(&pk_lock);
	pk_asked = -1;
	pthread_cond_signal(&pk_cond);
	pthread_mutex_unlock(&pk_lock);
	check("end the server", write(pk_block[1], "x", 1) == 1);
	pthread_join(w, NULL);
	pthread_join(s, &sr);
	check("the server's reads", sr == NULL);
	fails += late;
	printf("parked: %s\n", late ? "a wake waited" : "every wake answered");
}

#define INFLIGHT_DIRECT 40
#define INFLIGHT_PASSED 5
static int if_ask[2], if_in[2], if_out[2];

/* Passes each byte of if_in on to if_out, until EOF. */
static void *if_reader(void *arg)
{
	char c;

	(void)arg;
	while (read(if_in[0], &c, 1) == 1)
		if (write(if_out[1], &c, 1) != 1)
			break;
	return NULL;
}

static void inflight(void)
{
	struct epoll_event ev = { .events = EPOLLIN }, out;
	pthread_t t;
	pid_t child;
	int ep, late = 0, status;
	char c;

	check("pipe", pipe(if_ask) == 0 && pipe(if_in) == 0 && pipe(if_out) == 0);
	child = fork();
	if (child == 0) {	/* each ask: a byte, 10 ms later, where asked */
		close(if_in[0]);
		close(if_ask[1]);
		while (read(if_ask[0], &c, 1) == 1) {
			usleep(10000);
			if (write(c == 'd' ? if_out[1] : if_in[1], &c, 1) != 1)
				_exit(1);
		}
		_exit(0);
	}
	check("fork", child > 0);
	close(if_ask[0]);
	close(if_in[1]);
	ep = epoll_create1(0);
	check("epoll_ctl", epoll_ctl(ep, EPOLL_CTL_ADD, if_out[0], &ev) == 0);
	pthread_create(&t, NULL, if_reader, NULL);
	for (int i = 1; i <= INFLIGHT_DIRECT + INFLIGHT_PASSED && !late; i++) {
		double t0 = now_ms();
		int n;

		check("ask", write(if_ask[1], i <= INFLIGHT_DIRECT ? "d" : "r", 1) == 1);
		while ((n = epoll_wait(ep, &out, 1, 10000)) < 0 && errno == EINTR)
			;
		if (n != 1 || now_ms() - t0 > 2000) {
			printf("inflight: round %d: the wait ended after %.0f ms with %d\n",
			       i, now_ms() - t0, n);
			late = 1;
		}
		check("passed on", read(if_out[0], &c, 1) == 1);
	}
	close(if_ask[1]);	/* the child ends, and with it the reader */
	check("child", waitpid(child, &status, 0) == child && WIFEXITED(status) &&
			WEXITSTATUS(status) == 0);
	pthread_join(t, NULL);
	close(ep);
	fails += late;
	printf("inflight: %s\n", late ? "a wait went on" : "every wait ended with its byte");
}

#define LIVE_READS 3000
static int live_nb[2], live_told[2], live_never[2];

static void *live_reader(void *arg)
{
	char c;
	int again = 0;

	(void)arg;
	for (int i = 0; i < LIVE_READS; i++)
		again += read(live_nb[0], &c, 1) == -1 && errno == EAGAIN;
	if (write(live_told[1], &again, sizeof(again)) != sizeof(again))
		return NULL;
	return (void *)(long)read(live_never[0], &c, 1);	/* never returns */
}

static void live(void)
{
	pthread_t t;
	int again = -1;

	check("pipe2", pipe2(live_nb, O_NONBLOCK) == 0);
	check("pipe", pipe(live_told) == 0 && pipe(live_never) == 0);
	pthread_create(&t, NULL, live_reader, NULL);
	check("told", read(live_told[0], &again, sizeof(again)) == sizeof(again));
	printf("live: %d of %d reads of an empty pipe gave EAGAIN\n", again, LIVE_READS);
	fails += again != LIVE_READS;
}

static void *nothing(void *arg)
{
	return arg;
}

int main(int argc, char **argv)
{
	pthread_t t;

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* a second thread starts the runtime of `xsc run` */
	pthread_create(&t, NULL, nothing, NULL);
	pthread_join(t, NULL);
	if (argc > 1 && !strcmp(argv[1], "disk")) {
		disk();
		return fails ? 1 : 0;
	}
	if (argc > 1 && !strcmp(argv[1], "sleeper")) {
		sleepers();
		return fails ? 1 : 0;
	}
	if (argc > 1 && !strcmp(argv[1], "parked")) {
		parked();
		return fails ? 1 : 0;
	}
	if (argc > 1 && !strcmp(argv[1], "parkedmask")) {
		sigset_t all;
		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, NULL);	/* the threads inherit it */
		parked();
		return fails ? 1 : 0;
	}
	if (argc > 1 && !strcmp(argv[1], "inflight")) {
		inflight();
		return fails ? 1 : 0;
	}
	if (argc > 1 && !strcmp(argv[1], "live")) {
		live();
		return fails ? 1 : 0;	/* its reader still waits */
	}
	if (argc > 1 && !strcmp(argv[1], "transfer")) {
		round_trips("blocking pipes", false);
		round_trips("a blocking socket pair", true);
		return fails ? 1 : 0;
	}
	nonblock();
	cleared();
	dontwait();
	epoll();
	busy();
	return fails ? 1 : 0;
}
