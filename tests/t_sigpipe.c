/* SIGPIPE through a handle: a call that fails with EPIPE on a pipe with no
 * reader or a socket whose peer is gone sends SIGPIPE to the thread that
 * made it, as natively, exactly once (none with MSG_NOSIGNAL, none for
 * EPIPE from a file that is neither).  A syscall thread, the SQPOLL
 * poller or io_uring's sends (MSG_NOSIGNAL added) took it for the caller,
 * which saw EPIPE and no signal.  Each call natively, then through xsc:
 * a handle's call, and a fiber's (xsc threads, one kernel thread).
 * xsc-test: per-backend */
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "testlib.h"
#include "xsc.h"

static volatile sig_atomic_t hits, wrong_thread;
static pid_t me;

static void on_pipe(int sig)
{
	(void)sig;
	hits++;
	if ((pid_t)syscall(SYS_gettid) != me)
		wrong_thread++;
}

enum { WRITE, WRITEV, SEND, SENDTO, SENDMSG, NOSIGNAL, SPLICE, TEE, VMSPLICE,
       SENDFILE, NCASES };
static const char *const names[NCASES] = {
	"write", "writev", "send", "sendto", "sendmsg", "send MSG_NOSIGNAL",
	"splice", "tee", "vmsplice", "sendfile",
};

#define FIBER ((struct xsc *)1)

/* One call of kind k onto a dead pipe or socket: natively (x NULL),
 * through x, or from a fiber (x FIBER).  Returns the result (-errno) and the signals it brought. */
static long one(struct xsc *x, int k, int *sigs)
{
	static char c = 'x';
	static struct iovec io = { &c, 1 };
	static struct msghdr mh = { .msg_iov = &io, .msg_iovlen = 1 };
	int p[2], q[2], s[2], src;
	long nr, a[6] = { 0 }, r;
	bool sock = k >= SEND && k <= NOSIGNAL;

	CHECK_EQ(pipe2(p, O_CLOEXEC), 0);
	CHECK_EQ(pipe2(q, O_CLOEXEC), 0);
	CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, s), 0);
	close(p[0]);
	close(s[1]);
	CHECK_EQ(write(q[1], "z", 1), 1);
	src = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	CHECK_GE(src, 0);
	int out = sock ? s[0] : p[1];
	switch (k) {
	case WRITE: nr = SYS_write; a[0] = out; a[1] = (long)&c; a[2] = 1; break;
	case WRITEV: nr = SYS_writev; a[0] = out; a[1] = (long)&io; a[2] = 1; break;
	case SEND: nr = SYS_sendto; a[0] = out; a[1] = (long)&c; a[2] = 1; break;
	case SENDTO: nr = SYS_sendto; a[0] = out; a[1] = (long)&c; a[2] = 1; break;
	case SENDMSG: nr = SYS_sendmsg; a[0] = out; a[1] = (long)&mh; break;
	case NOSIGNAL: nr = SYS_sendto; a[0] = out; a[1] = (long)&c; a[2] = 1;
		a[3] = MSG_NOSIGNAL; break;
	case SPLICE: nr = SYS_splice; a[0] = q[0]; a[2] = out; a[4] = 1; break;
	case TEE: nr = SYS_tee; a[0] = q[0]; a[1] = out; a[2] = 1; break;
	case VMSPLICE: nr = SYS_vmsplice; a[0] = out; a[1] = (long)&io; a[2] = 1; break;
	default: nr = SYS_sendfile; a[0] = out; a[1] = src; a[3] = 1; break;
	}
	hits = 0;
	wrong_thread = 0;
	if (x == FIBER)
		r = xsc_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	else if (x)
		r = xsc_call(x, nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	else {
		r = syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
		if (r < 0)
			r = -errno;
	}
	*sigs = hits;
	CHECK_EQ(wrong_thread, 0);
	close(p[1]);
	close(q[0]);
	close(q[1]);
	close(s[0]);
	close(src);
	return r;
}

static int compare(struct xsc *x, const char *how)
{
	int bad = 0;

	for (int k = 0; k < NCASES; k++) {
		int ns, xs;
		long n = one(NULL, k, &ns), r = one(x, k, &xs);

		printf("%-18s native %ld, %d SIGPIPE; %s %ld, %d SIGPIPE\n",
		       names[k], n, ns, how, r, xs);
		bad |= n != r || ns != xs;
	}
	return bad;
}

static int in_fiber(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return compare(FIBER, "fiber");
}

int main(void)
{
	struct xsc_runtime_config cfg;
	struct sigaction sa;
	struct xsc *x;
	int p[2], fds0, bad = 0;

	me = (pid_t)syscall(SYS_gettid);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_pipe;
	CHECK_EQ(sigaction(SIGPIPE, &sa, NULL), 0);
	fds0 = count_fds();
	CHECK_EQ(pipe(p), 0);
	CHECK_EQ(xsc_open(&x, NULL), 0);
	bad = compare(x, "handle");
	CHECK_EQ(bad, 0);
	finish_handle(x, p, fds0);
	/* the calling thread becomes the one kernel thread */
	xsc_runtime_config_init(&cfg);
	cfg.nthreads = 1;
	CHECK_EQ(xsc_main(in_fiber, 0, NULL, &cfg), 0);
	printf("ok\n");
	return 0;
}
