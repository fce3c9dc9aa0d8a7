/* SIGPIPE: a write into a pipe with no reader, or onto a socket whose
 * peer is gone, fails with EPIPE and sends SIGPIPE to the thread that
 * made it (not with MSG_NOSIGNAL).  Under xsc run a syscall thread, the
 * SQPOLL poller or io_uring's own send (which adds MSG_NOSIGNAL) made the
 * call, the signal went there and was lost: the program saw EPIPE and
 * went on where natively it is stopped.  From a second thread, each call
 * prints its result, how many SIGPIPEs its handler saw and on which
 * thread; a write made in a signal handler; then with SIGPIPE blocked (it
 * stays pending for the thread); then a forked child with the default
 * action, killed by it. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t hits, wrong_thread;
static volatile pid_t writer_tid;
static char big[1 << 20];

static void on_pipe(int sig)
{
	(void)sig;
	hits++;
	if ((pid_t)syscall(SYS_gettid) != writer_tid)
		wrong_thread++;
}

/* a write in a handler (SIGUSR1): its SIGPIPE comes during the handler */
static volatile long in_handler_ret;
static volatile int in_handler_hits;

static void on_usr1(int sig)
{
	int p[2];

	(void)sig;
	if (pipe(p) != 0)
		return;
	close(p[0]);
	in_handler_ret = write(p[1], "x", 1) < 0 ? -errno : 0;
	in_handler_hits = hits;
	close(p[1]);
}

static void report(const char *what, long r)
{
	printf("%-26s %ld %-12s SIGPIPEs %d%s\n", what, r, r < 0 ? strerror(errno) : "",
	       (int)hits, wrong_thread ? " (on another thread)" : "");
	hits = 0;
	wrong_thread = 0;
}

/* a pipe whose read end is closed, a stream socket whose peer is closed */
static void dead_pipe(int p[2])
{
	if (pipe2(p, O_CLOEXEC) == 0)
		close(p[0]);
}

static int dead_socket(void)
{
	int s[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, s) != 0)
		return -1;
	close(s[1]);
	return s[0];
}

static void *writer(void *arg)
{
	char c = 'x';
	struct iovec io = { &c, 1 };
	struct msghdr mh = { .msg_iov = &io, .msg_iovlen = 1 };
	int p[2], q[2], s;
	sigset_t pipe_set, pend;

	(void)arg;
	writer_tid = (pid_t)syscall(SYS_gettid);
	dead_pipe(p);
	report("write, pipe", write(p[1], "x", 1));
	report("writev, pipe", writev(p[1], &io, 1));
	report("write 1 MiB, pipe", write(p[1], big, sizeof(big)));
	if (pipe2(q, O_CLOEXEC) == 0 && write(q[1], "z", 1) == 1) {
		report("splice, pipe", splice(q[0], NULL, p[1], NULL, 1, 0));
		report("tee, pipe", tee(q[0], p[1], 1, 0));
		close(q[0]);
		close(q[1]);
	}
	report("vmsplice, pipe", vmsplice(p[1], &io, 1, 0));
	close(p[1]);
	s = dead_socket();
	report("write, socket", write(s, "x", 1));
	report("send, socket", send(s, "x", 1, 0));
	report("sendto, socket", sendto(s, "x", 1, 0, NULL, 0));
	report("sendmsg, socket", sendmsg(s, &mh, 0));
	report("send MSG_NOSIGNAL, socket", send(s, "x", 1, MSG_NOSIGNAL));
	report("sendmsg MSG_NOSIGNAL", sendmsg(s, &mh, MSG_NOSIGNAL));
	raise(SIGUSR1);
	printf("write in a handler: %ld, SIGPIPEs during it %d\n", in_handler_ret,
	       in_handler_hits);
	report("after the handler", 0);

	/* blocked: EPIPE, and SIGPIPE pending for this thread */
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, NULL);
	report("send, SIGPIPE blocked", send(s, "x", 1, 0));
	sigpending(&pend);
	printf("pending while blocked: %s\n", sigismember(&pend, SIGPIPE) ? "SIGPIPE" : "none");
	{
		struct timespec zero = { 0, 0 };
		int got = sigtimedwait(&pipe_set, NULL, &zero);
		printf("taken with sigtimedwait: %s\n", got == SIGPIPE ? "SIGPIPE" : "none");
	}
	pthread_sigmask(SIG_UNBLOCK, &pipe_set, NULL);
	close(s);
	return NULL;
}

int main(void)
{
	struct sigaction sa;
	pthread_t t;
	pid_t pid;
	int status;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_pipe;
	sigaction(SIGPIPE, &sa, NULL);
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	if (pthread_create(&t, NULL, writer, NULL) != 0 || pthread_join(t, NULL) != 0)
		return 2;

	/* the default action stops the process */
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		signal(SIGPIPE, SIG_DFL);
		if (pthread_create(&t, NULL, writer, NULL) != 0)	/* a runtime again */
			_exit(2);
		pthread_join(t, NULL);	/* killed in its first write */
		_exit(3);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return 2;
	printf("child with the default action: %s\n",
	       WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "exited");
	return 0;
}
