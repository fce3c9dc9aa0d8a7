/* A program that uses io_uring itself, through liburing, from a thread
 * and from main: a plain ring, a SINGLE_ISSUER ring with a registered
 * ring fd, and a DEFER_TASKRUN ring, each reading a pipe.  io_uring calls
 * belong to the calling thread (a single-issuer ring to the task that
 * made it, registered ring fds to the task): under `xsc run` they must
 * run on the thread that makes them, or the second and third rings fail
 * with EEXIST/EINVAL.
 * xsc-tp: needs=io_uring */
#define _GNU_SOURCE
#include <liburing.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int rings(const char *who)
{
	static const unsigned flags[] = { 0, IORING_SETUP_SINGLE_ISSUER,
		IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN };
	int bad = 0;

	for (int m = 0; m < 3; m++) {
		struct io_uring r;
		struct io_uring_params p;
		struct io_uring_cqe *c;
		char buf[8] = { 0 };
		int fd[2], ret;

		memset(&p, 0, sizeof(p));
		p.flags = flags[m];
		ret = io_uring_queue_init_params(8, &r, &p);
		if (ret < 0) {
			printf("%s ring %d: init %s\n", who, m, strerror(-ret));
			bad = 1;
			continue;
		}
		if (m)
			io_uring_register_ring_fd(&r);
		if (pipe(fd) || write(fd[1], "abc", 3) != 3)
			return 1;
		io_uring_prep_read(io_uring_get_sqe(&r), fd[0], buf, 3, 0);
		ret = io_uring_submit_and_wait(&r, 1);
		int w = io_uring_wait_cqe(&r, &c);
		printf("%s ring %d: submit %d wait %d res %d data %s\n", who, m, ret, w,
		       w ? -1 : c->res, buf);
		bad |= ret != 1 || w != 0 || c->res != 3 || strcmp(buf, "abc");
		if (!w)
			io_uring_cqe_seen(&r, c);
		io_uring_queue_exit(&r);
		close(fd[0]);
		close(fd[1]);
	}
	return bad;
}

static void *thread(void *arg)
{
	return (void *)(long)rings(arg);
}

int main(void)
{
	pthread_t t;
	void *r;
	int bad;

	pthread_create(&t, NULL, thread, "thread");
	pthread_join(t, &r);
	bad = (int)(long)r | rings("main");
	return bad;
}
