/* xsc_stats.crossings counts the owner's kernel crossings exactly: a
 * batch of N io_uring NOPs flushed once is ONE io_uring_enter on the
 * uring backend (at most one on SQPOLL: a wakeup of a sleeping poller;
 * at most one on the syscall threads: a wake), none inline (a NOP makes
 * no system call there); N getppid calls, which have no io_uring form,
 * are N inline crossings on every backend but the syscall threads'.
 * xsc-test: per-backend */
#include <sys/syscall.h>
#include <unistd.h>

#include "testlib.h"
#include "xsc.h"

#define N 16

static uint64_t crossings(struct xsc *x)
{
	struct xsc_stats s;

	xsc_stats_get(x, &s);
	return s.crossings;
}

/* Posts N calls of nr, flushes once; crossings of the flush alone in
 * *flush, of the flush and the wait in the return value. */
static uint64_t batch(struct xsc *x, long nr, uint64_t *flush)
{
	int ids[N];
	long ret;
	uint64_t c0 = crossings(x);

	for (int i = 0; i < N; i++)
		CHECK_GE(ids[i] = xsc_post(x, nr), 0);
	CHECK_EQ(crossings(x), c0);	/* posting is plain stores */
	CHECK_EQ(xsc_flush(x), N);
	*flush = crossings(x) - c0;
	CHECK_GE(xsc_wait(x, N), N);
	for (int i = 0; i < N; i++) {
		CHECK_EQ(xsc_take(x, ids[i], &ret), 0);
		CHECK_EQ(ret, nr == SYS_getppid ? getppid() : 0);
	}
	return crossings(x) - c0;
}

int main(void)
{
	int fds0 = count_fds(), p[2];
	const char *be = test_backend();
	uint64_t flush, all;
	struct xsc_probe pr;
	struct xsc *x;

	CHECK_EQ(xsc_open(&x, NULL), 0);
	CHECK_EQ(pipe(p), 0);
	xsc_probe_get(x, &pr);
	for (int round = 0; round < 3; round++) {
		all = batch(x, XSC_NR_NOP, &flush);
		printf("%d NOPs: %llu crossings to flush, %llu with the wait\n", N,
		       (unsigned long long)flush, (unsigned long long)all);
		if (!strcmp(be, "uring") && pr.uring) {
			CHECK_EQ(flush, 1);
			CHECK_EQ(all, 1);	/* NOPs complete inside that enter */
		}
		else if (!strcmp(be, "inline"))
			CHECK_EQ(all, 0);
		else
			CHECK(flush <= 1);
		all = batch(x, SYS_getppid, &flush);
		printf("%d getppid: %llu crossings to flush, %llu with the wait\n", N,
		       (unsigned long long)flush, (unsigned long long)all);
		if (strcmp(be, "worker"))
			CHECK_EQ(flush, N);
	}
	finish_handle(x, p, fds0);
	return 0;
}
