/*
 * tp_sigintr.c - a signal sent to a thread interrupts the call it is
 * blocked in, as the kernel's does (signal(7)).
 *
 * A thread blocks in read() of an empty pipe, then in epoll_wait();
 * main sends it SIGUSR1 with pthread_kill:
 *   - handler without SA_RESTART: read fails with EINTR, the handler ran
 *     in that thread (a __thread counter says so);
 *   - handler with SA_RESTART: the handler runs, the read goes on and
 *     returns the bytes main writes afterwards;
 *   - epoll_wait with SA_RESTART: EINTR all the same;
 *   - SIGUSR2 (no SA_RESTART) sent to the process, which only that thread
 *     accepts: its read fails with EINTR (under xsc run the handler may
 *     run on a vcpu between threads, so only the count in all is shown).
 * This is how Apache's worker MPM wakes its listener thread to stop it;
 * under xsc run the call was not interrupted, the thread never stopped,
 * and Apache tore down its memory under it (SIGSEGV on SIGTERM).
 * Prints what the thread saw.  Exit 0 on success, 1 on any detected error.
 */
#include "tp.h"

#include <sys/epoll.h>

static int p[2], ep;
static volatile sig_atomic_t stage;	/* what the thread is about to do */
static volatile sig_atomic_t usr2;
static __thread volatile sig_atomic_t mine;
static char out[4][96];

static void on_usr1(int s)
{
	(void)s;
	mine++;
}

static void on_usr2(int s)
{
	(void)s;
	usr2++;
}

static void *blocked(void *arg)
{
	char buf[16] = "";
	struct epoll_event ev;
	ssize_t r;
	int e;

	(void)arg;
	stage = 1;
	r = read(p[0], buf, sizeof(buf) - 1);
	e = errno;
	snprintf(out[0], sizeof(out[0]), "read %zd %s, handler ran %d time(s) here",
		 r, r < 0 ? strerror(e) : buf, (int)mine);
	stage = 2;
	r = read(p[0], buf, sizeof(buf) - 1);
	e = errno;
	if (r >= 0)
		buf[r] = 0;
	snprintf(out[1], sizeof(out[1]), "read %zd %s, handler ran %d time(s) here",
		 r, r < 0 ? strerror(e) : buf, (int)mine);
	stage = 3;
	r = epoll_wait(ep, &ev, 1, -1);
	e = errno;
	snprintf(out[2], sizeof(out[2]), "epoll_wait %zd %s, handler ran %d time(s) here",
		 r, r < 0 ? strerror(e) : "", (int)mine);
	sigset_t u;
	sigemptyset(&u);
	sigaddset(&u, SIGUSR2);
	pthread_sigmask(SIG_UNBLOCK, &u, NULL);
	stage = 4;
	r = read(p[0], buf, sizeof(buf) - 1);
	e = errno;
	snprintf(out[3], sizeof(out[3]), "read %zd %s after a signal to the process, its handler ran %d time(s)",
		 r, r < 0 ? strerror(e) : "", (int)usr2);
	return NULL;
}

int main(void)
{
	pthread_t t;
	int bad;

	if (pipe(p) || (ep = epoll_create1(0)) < 0)
		return 1;
	struct epoll_event ev = { .events = EPOLLIN };
	epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev);
	sigset_t u;
	tp_on_signal(SIGUSR2, on_usr2, 0);
	sigemptyset(&u);
	sigaddset(&u, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &u, NULL);	/* only the thread takes it */
	tp_on_signal(SIGUSR1, on_usr1, 0);
	pthread_create(&t, NULL, blocked, NULL);
	tp_when(&stage, 1);
	pthread_kill(t, SIGUSR1);
	tp_when(&stage, 2);
	tp_on_signal(SIGUSR1, on_usr1, SA_RESTART);
	pthread_kill(t, SIGUSR1);
	usleep(50 * 1000);
	if (write(p[1], "data", 4) != 4)
		return 1;
	tp_when(&stage, 3);
	pthread_kill(t, SIGUSR1);
	tp_when(&stage, 4);
	kill(getpid(), SIGUSR2);
	pthread_join(t, NULL);
	for (int i = 0; i < 4; i++)
		printf("%s\n", out[i]);
	bad = strcmp(out[0], "read -1 Interrupted system call, handler ran 1 time(s) here") ||
	      strcmp(out[1], "read 4 data, handler ran 2 time(s) here") ||
	      strcmp(out[2], "epoll_wait -1 Interrupted system call, handler ran 3 time(s) here") ||
	      strcmp(out[3], "read -1 Interrupted system call after a signal to the process, "
		     "its handler ran 1 time(s)");
	printf("%s\n", bad ? "FAILED" : "interrupted as natively");
	return bad;
}
