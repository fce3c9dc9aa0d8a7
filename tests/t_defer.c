/* XSC_DEFER_TASKRUN: the ring posts completions only when the owner
 * enters the kernel, so xsc_poll must enter when the kernel says work is
 * pending; xsc_wait must be woken by a completion that another thread
 * causes; results stay exactly the synchronous ones.
 * xsc-test: per-backend */
#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"
#include "xsc.h"

static int wfd;

static void *late_writer(void *arg)
{
	(void)arg;
	usleep(50000);	/* the owner is asleep in xsc_wait by now */
	if (write(wfd, "later", 5) != 5)
		abort();
	return NULL;
}

int main(void)
{
	struct xsc_config cfg;
	struct xsc *x;
	int p[2], id, fds0 = count_fds();
	char buf[16] = { 0 };
	long ret;
	pthread_t t;

	if (strcmp(test_backend(), "inline") == 0)
		skip("inline runs each read in the caller: nothing to defer, "
		     "and a read of an empty pipe would block the flush");
	xsc_config_init(&cfg);
	cfg.flags |= XSC_DEFER_TASKRUN;
	CHECK_EQ(xsc_open(&x, &cfg), 0);
	CHECK_EQ(pipe(p), 0);

	CHECK_EQ(xsc_call(x, SYS_getppid), getppid());
	CHECK_EQ(xsc_call(x, SYS_close, 12345), -EBADF);

	/* A read that must wait; the data comes from a plain write(2), so
	 * only entering the kernel can post the completion on a deferred
	 * ring.  Polling (never waiting) has to get it, within 5 s. */
	id = xsc_post(x, SYS_read, p[0], buf, sizeof(buf));
	CHECK_GE(id, 0);
	CHECK_EQ(xsc_flush(x), 1);
	CHECK_EQ(xsc_poll(x), 0);
	CHECK_EQ(xsc_result(x, id, &ret), -EINPROGRESS);
	CHECK_EQ(write(p[1], "hello", 5), 5);
	double end = now_s() + 5;
	while (xsc_poll(x) == 0 && now_s() < end)
		;
	CHECK_EQ(xsc_result(x, id, &ret), 0);
	CHECK_EQ(ret, 5);
	CHECK(memcmp(buf, "hello", 5) == 0);
	CHECK_EQ(xsc_release(x, id), 0);

	/* asleep in xsc_wait, woken by a write from another thread */
	wfd = p[1];
	id = xsc_post(x, SYS_read, p[0], buf, sizeof(buf));
	CHECK_GE(id, 0);
	CHECK_EQ(pthread_create(&t, NULL, late_writer, NULL), 0);
	CHECK_EQ(xsc_wait(x, 1), 1);
	CHECK_EQ(xsc_take(x, id, &ret), 0);
	CHECK_EQ(ret, 5);
	CHECK(memcmp(buf, "later", 5) == 0);
	CHECK_EQ(pthread_join(t, NULL), 0);

	/* a batch: every result the synchronous one */
	int ids[3];
	ids[0] = xsc_post(x, SYS_write, p[1], "abc", 3);
	ids[1] = xsc_post(x, SYS_read, 9999, buf, 1);
	ids[2] = xsc_post(x, SYS_getppid);
	CHECK_EQ(xsc_wait(x, 3), 3);
	CHECK_EQ(xsc_take(x, ids[0], &ret), 0);
	CHECK_EQ(ret, 3);
	CHECK_EQ(xsc_take(x, ids[1], &ret), 0);
	CHECK_EQ(ret, -EBADF);
	CHECK_EQ(xsc_take(x, ids[2], &ret), 0);
	CHECK_EQ(ret, getppid());

	finish_handle(x, p, fds0);
	return 0;
}
