/* xsc_cancel racing calls that are finishing: the cancel reaches the
 * entry it names and no other, and is never lost.
 *
 * Each round: a read A waits on an empty pipe; a read B, never canceled,
 * is queued behind it on another pipe.  With one syscall thread
 * (max_workers = 1) the thread that finishes A runs B next.  The owner
 * feeds A's pipe and cancels A after a random delay, so the cancel lands
 * before, during and after A's completion, then feeds B.  Checked:
 *  - B returns 1 with its byte: a -EINTR there is a cancel that hit a
 *    call nobody canceled (a signal aimed at A's thread by its tid);
 *  - A returns 1 and consumed its byte, or -EINTR / -ECANCELED and the
 *    byte is still in the pipe; a result other than 1 needs a cancel
 *    that returned 0;
 *  - every eighth round a read C that never gets data is canceled right
 *    after its flush, when the call may be about to start: it must end,
 *    with -EINTR or -ECANCELED, within 5 s (a signal that lands just
 *    before the call starts must not be lost).
 * Runs for about 2 s (shorter under sanitizers) and prints the outcomes,
 * so a run shows the races were taken.  Inline runs every call during
 * the flush: nothing is in flight to race, so it skips.
 * xsc-test: per-backend
 * xsc-test: timeout=60 */
#include <fcntl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"
#include "xsc.h"

static uint64_t rng = 88172645463325252ULL;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Up to ~20 us of busy waiting: sweeps the cancel across the completion. */
static void jitter(void)
{
	for (unsigned n = next() % 2048; n; n--)
		__builtin_ia32_pause();
}

/* Bytes left in a pipe (its read end is non-blocking). */
static int drain(int fd)
{
	char c;
	int n = 0;

	while (read(fd, &c, 1) == 1)
		n++;
	return n;
}

int main(void)
{
	struct xsc_config cfg;
	struct xsc *x;
	int fds0 = count_fds(), pa[2], pb[2], pc[2];
	long nA[3] = { 0 }, nC[2] = { 0 }, late = 0, rounds = 0;
	double end;

	if (!strcmp(test_backend(), "inline"))
		skip("inline runs every call during the flush: nothing in "
		     "flight to cancel");
	xsc_config_init(&cfg);
	cfg.max_workers = 1;	/* the thread that finishes A runs B */
	cfg.flags |= XSC_QUIET;	/* B waits for A at the pool's bound */
	CHECK_EQ(xsc_open(&x, &cfg), 0);
	CHECK_EQ(pipe(pa), 0);
	CHECK_EQ(pipe(pb), 0);
	CHECK_EQ(pipe(pc), 0);

	end = now_s() + (test_sanitized() ? 1.0 : 2.0);
	while (now_s() < end || rounds < 200) {
		char ca = 0, cb = 0, cc = 0;
		long ra, rb;
		int a, b, r;

		a = xsc_post(x, SYS_read, pa[0], &ca, 1);
		CHECK_GE(a, 0);
		xsc_flush(x);
		b = xsc_post(x, SYS_read, pb[0], &cb, 1);
		CHECK_GE(b, 0);
		xsc_flush(x);
		jitter();
		CHECK_EQ(write(pa[1], "a", 1), 1);
		jitter();
		r = xsc_cancel(x, a);
		CHECK(r == 0 || r == -EALREADY);
		late += r == -EALREADY;
		CHECK_EQ(write(pb[1], "b", 1), 1);

		CHECK_EQ(xsc_take(x, b, &rb), 0);
		if (rb != 1)
			fprintf(stderr, "round %ld: uncanceled read returned %ld "
				"(A: cancel %d)\n", rounds, rb, r);
		CHECK_EQ(rb, 1);
		CHECK_EQ(cb, 'b');
		CHECK_EQ(xsc_take(x, a, &ra), 0);
		/* non-blocking only while the test itself looks */
		CHECK_EQ(fcntl(pa[0], F_SETFL, O_NONBLOCK), 0);
		if (ra == 1) {
			CHECK_EQ(ca, 'a');
			CHECK_EQ(drain(pa[0]), 0);
			nA[0]++;
		} else {
			CHECK(ra == -EINTR || ra == -ECANCELED);
			CHECK_EQ(r, 0);
			CHECK_EQ(ca, 0);
			CHECK_EQ(drain(pa[0]), 1);	/* nothing consumed */
			nA[ra == -EINTR ? 1 : 2]++;
		}
		CHECK_EQ(fcntl(pa[0], F_SETFL, 0), 0);

		if (rounds % 8 == 0) {
			int c = xsc_post(x, SYS_read, pc[0], &cc, 1);
			long rc;

			CHECK_GE(c, 0);
			xsc_flush(x);
			jitter();
			CHECK_EQ(xsc_cancel(x, c), 0);
			rc = take_within(x, c, 5.0);
			CHECK(rc == -EINTR || rc == -ECANCELED);
			nC[rc == -EINTR ? 0 : 1]++;
		}
		rounds++;
	}
	printf("%ld rounds (%s): A read %ld, -EINTR %ld, -ECANCELED %ld, "
	       "done before its cancel %ld; C -EINTR %ld, -ECANCELED %ld\n",
	       rounds, test_backend(), nA[0], nA[1], nA[2], late, nC[0], nC[1]);
	finish_handle(x, pa, fds0 + 4);
	close(pb[0]);
	close(pb[1]);
	close(pc[0]);
	close(pc[1]);
	CHECK_EQ(count_fds(), fds0);
	return 0;
}
