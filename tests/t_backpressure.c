/* Full pages: -EAGAIN on a non-blocking handle, -ENOBUFS when every entry
 * holds an untaken result, and with a completion callback, posting far
 * more than the pages hold waits for completions: every call completes
 * exactly once, none lost, none doubled.
 * xsc-test: per-backend */
#include <sys/syscall.h>
#include <unistd.h>

#include "testlib.h"
#include "xsc.h"

#define N 20000
static unsigned char seen[N];
static long ppid;

static void done(void *arg, int id, long ret, uint64_t tag)
{
	(void)arg;
	(void)id;
	CHECK(tag < N);
	CHECK_EQ(ret, ppid);
	CHECK_EQ(seen[tag], 0);
	seen[tag] = 1;
}

int main(void)
{
	struct xsc_config cfg;
	struct xsc *x;
	struct xsc_stats st;
	long a[6] = { 0 };

	ppid = getppid();
	xsc_config_init(&cfg);
	cfg.npages = 1;
	cfg.flags = XSC_NONBLOCK;
	CHECK_EQ(xsc_open(&x, &cfg), 0);
	for (int i = 0; i < XSC_ENTRIES_PER_PAGE; i++)
		CHECK_GE(xsc_post(x, SYS_getppid), 0);
	CHECK_EQ(xsc_post(x, SYS_getppid), -EAGAIN);
	CHECK_EQ(xsc_close(x), 0);

	cfg.flags = 0;
	CHECK_EQ(xsc_open(&x, &cfg), 0);
	for (int i = 0; i < XSC_ENTRIES_PER_PAGE; i++)
		CHECK_GE(xsc_post(x, SYS_getppid), 0);
	CHECK_EQ(xsc_post(x, SYS_getppid), -ENOBUFS);
	CHECK_EQ(xsc_close(x), 0);

	cfg.done_cb = done;
	cfg.batch_threshold = 16;
	CHECK_EQ(xsc_open(&x, &cfg), 0);
	for (uint64_t i = 0; i < N; i++)
		CHECK_GE(xsc_post_args(x, SYS_getppid, a, i), 0);
	while (xsc_wait(x, 1) > 0)
		;
	for (int i = 0; i < N; i++)
		CHECK_EQ(seen[i], 1);
	xsc_stats_get(x, &st);
	CHECK_EQ(st.completed, N);
	printf("%llu back-pressure waits, %llu flushes\n",
	       (unsigned long long)st.full_waits, (unsigned long long)st.flushes);
	CHECK_EQ(xsc_call(x, SYS_getppid), -EINVAL);	/* callback owns results */
	CHECK_EQ(xsc_close(x), 0);
	return 0;
}
