/* A handle belongs to the thread that opened it (include/xsc.h).  Used
 * from another thread, or in a forked child, it must answer -EBADFD at
 * once, run nothing and never hand back an earlier call's result, and the
 * owner must go on as before:
 *  - another thread: xsc_call(write) gives -EBADFD and nothing is written;
 *    xsc_flush, xsc_wait and xsc_poll give -EBADFD; the owner's next call
 *    writes, and xsc_close returns;
 *  - xsc_close from another thread: of a handle whose read of an empty
 *    pipe is in flight while its owner lives, 0 on syscall threads (the
 *    read is cancelled), -EBUSY with the read in a ring (only the owner
 *    can cancel it; the owner's close then works); with nothing in
 *    flight, 0; after the owner has exited with the read in flight, 0.
 *    Each time the read took nothing (a byte written afterwards stays
 *    in the pipe), the process is back to its descriptors and threads,
 *    and the closing thread's own handles keep their rings;
 *  - a forked child: xsc_call gives -EBADFD without hanging (worker: the
 *    syscall threads are not in the child), xsc_close returns, and the
 *    child's exit is clean; the parent's handle works afterwards.
 * xsc-test: per-backend
 * xsc-test: timeout=60 */
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testlib.h"
#include "xsc.h"
#include "rawio.h"	/* xsc__status_field */

static struct xsc *x;
static int p[2];

static long pipe_bytes(void)
{
	int n = 0;
	CHECK_EQ(ioctl(p[0], FIONREAD, &n), 0);
	return n;
}

static struct xsc *y;
static long closer_ret;

/* Closes y, which another thread owns, with handles of its own open: its
 * own rings must not suffer (a registered ring is found by an index into
 * the calling thread's table; the same index in another thread's table
 * is another ring). */
static void *closer(void *arg)
{
	struct xsc_stats s0, s1;
	struct xsc *mine[3];
	int pp[2], r = test_read_route();
	char b[8];

	(void)arg;
	CHECK_EQ(pipe(pp), 0);
	for (int h = 0; h < 3; h++) {	/* the first indexes of its table */
		CHECK_EQ(xsc_open(&mine[h], NULL), 0);
		CHECK_EQ(xsc_call(mine[h], SYS_write, pp[1], "mine", 4), 4);
		CHECK_EQ(xsc_call(mine[h], SYS_read, pp[0], b, 8), 4);
	}
	closer_ret = xsc_close(y);
	for (int h = 0; h < 3; h++) {
		CHECK_EQ(xsc_stats_get(mine[h], &s0), 0);
		for (int i = 0; i < 10; i++) {
			CHECK_EQ(xsc_call(mine[h], SYS_write, pp[1], "mine", 4), 4);
			CHECK_EQ(xsc_call(mine[h], SYS_read, pp[0], b, 8), 4);
		}
		CHECK_EQ(xsc_stats_get(mine[h], &s1), 0);
		/* on the same executor as before: its ring is not lost */
		if (r == XSC_BACKEND_URING || r == XSC_BACKEND_SQPOLL)
			CHECK_EQ(s1.by_backend[r] - s0.by_backend[r], 20);
		CHECK_EQ(xsc_close(mine[h]), 0);
	}
	close(pp[0]);
	close(pp[1]);
	return NULL;
}

static int count_threads(void)
{
	return (int)xsc__status_field("Threads");
}

/* Back to fds0 descriptors and at most threads0 threads (the kernel's
 * io_uring workers of earlier calls may leave too), and the read posted
 * on q took nothing: a byte written now stays in the pipe. */
static void check_gone(const int q[2], int fds0, int threads0)
{
	char c = 0;

	for (int i = 0; i < 400 && count_fds() != fds0; i++)
		usleep(5000);
	CHECK_EQ(count_fds(), fds0);
	for (int i = 0; i < 400 && count_threads() > threads0; i++)
		usleep(5000);
	CHECK(count_threads() <= threads0);
	usleep(20000);
	CHECK_EQ(write(q[1], "z", 1), 1);
	usleep(20000);
	int n = 0;
	CHECK_EQ(ioctl(q[0], FIONREAD, &n), 0);
	if (n != 1) {
		fprintf(stderr, "a read of a closed handle took the byte\n");
		exit(1);
	}
	CHECK_EQ(read(q[0], &c, 1), 1);
	CHECK_EQ(c, 'z');
}

/* y posts a read of the empty pipe q and flushes it. */
static int post_read(struct xsc *h, const int q[2])
{
	static char buf[4];
	long r;
	int id;

	CHECK_GE(id = xsc_post(h, SYS_read, q[0], buf, 1), 0);
	CHECK_GE(xsc_flush(h), 0);
	usleep(20000);			/* the read is waiting in its executor */
	CHECK_EQ(xsc_poll(h), 0);
	CHECK_EQ(xsc_result(h, id, &r), -EINPROGRESS);
	return id;
}

static int q2[2];
static struct xsc *orphan;

static void *open_and_exit(void *arg)
{
	(void)arg;
	CHECK_EQ(xsc_open(&orphan, NULL), 0);
	post_read(orphan, q2);
	return NULL;			/* exits with the read in flight */
}

/* xsc_close works from any thread. */
static void close_elsewhere(void)
{
	int q[2], fds0, threads0, route = test_read_route();
	pthread_t th;

	if (route == XSC_BACKEND_INLINE)
		return;		/* the read would block its owner in xsc_flush */
	/* 1. the owner lives and a read is in flight: syscall threads'
	 * calls are cancelled; the ring's can be cancelled by its owner
	 * alone: -EBUSY, nothing changes, and the owner closes it */
	CHECK_EQ(pipe(q), 0);
	fds0 = count_fds();
	threads0 = count_threads();
	CHECK_EQ(xsc_open(&y, NULL), 0);
	post_read(y, q);
	alarm(20);			/* a hang is a failure */
	CHECK_EQ(pthread_create(&th, NULL, closer, NULL), 0);
	CHECK_EQ(pthread_join(th, NULL), 0);
	if (route == XSC_BACKEND_WORKER) {
		CHECK_EQ(closer_ret, 0);
	} else {
		CHECK_EQ(closer_ret, -EBUSY);
		CHECK_EQ(xsc_close(y), 0);
	}
	alarm(0);
	check_gone(q, fds0, threads0);

	/* 2. nothing in flight: closed from another thread */
	CHECK_EQ(xsc_open(&y, NULL), 0);
	CHECK_EQ(xsc_call(y, SYS_getppid), getppid());
	CHECK_EQ(pthread_create(&th, NULL, closer, NULL), 0);
	CHECK_EQ(pthread_join(th, NULL), 0);
	CHECK_EQ(closer_ret, 0);
	check_gone(q, fds0, threads0);
	close(q[0]);
	close(q[1]);

	/* 3. the owner has exited with a read in flight */
	CHECK_EQ(pipe(q2), 0);
	fds0 = count_fds();
	threads0 = count_threads();
	CHECK_EQ(pthread_create(&th, NULL, open_and_exit, NULL), 0);
	CHECK_EQ(pthread_join(th, NULL), 0);
	alarm(20);
	CHECK_EQ(xsc_close(orphan), 0);
	alarm(0);
	check_gone(q2, fds0, threads0);
	close(q2[0]);
	close(q2[1]);
}

static void *other(void *arg)
{
	(void)arg;
	CHECK_EQ(xsc_call(x, SYS_write, p[1], "other", 5), -EBADFD);
	CHECK_EQ(xsc_flush(x), -EBADFD);
	CHECK_EQ(xsc_wait(x, 1), -EBADFD);
	CHECK_EQ(xsc_poll(x), -EBADFD);
	return NULL;
}

int main(void)
{
	pthread_t th;
	char buf[16];
	int status;

	CHECK_EQ(xsc_open(&x, NULL), 0);
	CHECK_EQ(pipe(p), 0);
	CHECK_EQ(xsc_call(x, SYS_write, p[1], "owner", 5), 5);
	CHECK_EQ(read(p[0], buf, sizeof(buf)), 5);

	CHECK_EQ(pthread_create(&th, NULL, other, NULL), 0);
	CHECK_EQ(pthread_join(th, NULL), 0);
	CHECK_EQ(pipe_bytes(), 0);		/* nothing ran */
	CHECK_EQ(xsc_call(x, SYS_write, p[1], "again", 5), 5);
	CHECK_EQ(read(p[0], buf, sizeof(buf)), 5);
	CHECK(memcmp(buf, "again", 5) == 0);

	close_elsewhere();

	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		alarm(10);	/* a hang is a failure, not a stuck test */
		if (xsc_call(x, SYS_write, p[1], "child", 5) != -EBADFD)
			_exit(3);
		/* its own handles first: the parent's copy's registered
		 * index is one of the child's table too */
		struct xsc *own[2];
		struct xsc_stats s0, s1;
		int r = test_read_route();
		for (int h = 0; h < 2; h++)
			if (xsc_open(&own[h], NULL) != 0 ||
			    xsc_call(own[h], SYS_getppid) != getppid())
				_exit(5);
		if (xsc_close(x) != 0)
			_exit(4);
		for (int h = 0; h < 2; h++) {
			xsc_stats_get(own[h], &s0);
			if (xsc_call(own[h], SYS_write, p[1], "c", 1) != 1 ||
			    read(p[0], buf, 1) != 1)
				_exit(5);
			xsc_stats_get(own[h], &s1);
			if ((r == XSC_BACKEND_URING || r == XSC_BACKEND_SQPOLL) &&
			    s1.by_backend[r] != s0.by_backend[r] + 1)
				_exit(6);
			if (xsc_close(own[h]) != 0)
				_exit(5);
		}
		_exit(0);
	}
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "child: status %#x (3: not -EBADFD, 4: close failed, "
			"5: its own handles failed, 6: its own ring lost, "
			"SIGALRM: hung)\n", status);
		return 1;
	}
	CHECK_EQ(pipe_bytes(), 0);
	CHECK_EQ(xsc_call(x, SYS_write, p[1], "after", 5), 5);
	CHECK_EQ(read(p[0], buf, sizeof(buf)), 5);
	CHECK(memcmp(buf, "after", 5) == 0);
	CHECK_EQ(xsc_close(x), 0);
	printf("ok (%s)\n", test_backend());
	return 0;
}
