/* xsc_config.spin_ns: 0 is "never spin", XSC_SPIN_DEFAULT is what
 * xsc_config_init() puts there, any other value is kept.  Seen from the
 * handle's configuration and from its behaviour on the worker backend:
 * a syscall thread that has gone to sleep needs a futex wake (a crossing
 * counted in xsc_stats) for the next call, one still spinning does not. */
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "testlib.h"

/* Opens a worker-backend handle with this spin_ns, makes one call, lets
 * the syscall thread go idle for 100 ms, and returns the crossings the
 * next call made; *spin gets the handle's resolved spin time. */
static long wake_crossings(unsigned spin_ns, unsigned *spin)
{
	struct timespec idle = { 0, 100 * 1000 * 1000 };
	struct xsc_config cfg;
	struct xsc_stats a, b;
	struct xsc *x;

	xsc_config_init(&cfg);
	cfg.backend = XSC_BACKEND_WORKER;
	cfg.flags |= XSC_NO_ENV | XSC_QUIET;
	cfg.spin_ns = spin_ns;
	CHECK_EQ(xsc_open(&x, &cfg), 0);
	*spin = x->cfg.spin_ns;
	CHECK_EQ(xsc_call(x, SYS_getppid), getppid());
	nanosleep(&idle, NULL);
	xsc_stats_get(x, &a);
	CHECK_EQ(xsc_call(x, SYS_getppid), getppid());
	xsc_stats_get(x, &b);
	CHECK_EQ(b.workers, 1);
	CHECK_EQ(xsc_close(x), 0);
	return (long)(b.crossings - a.crossings);
}

int main(void)
{
	struct xsc_config d;
	unsigned spin;
	long n;

	xsc_config_init(&d);
	CHECK(d.spin_ns != XSC_SPIN_DEFAULT);

	n = wake_crossings(0, &spin);
	printf("spin_ns=0: handle spins %u ns, %ld crossings after idle\n", spin, n);
	CHECK_EQ(spin, 0);
	CHECK_GE(n, 1);		/* the thread slept: woken by a futex */

	/* an unresolved sentinel would spin for 4.3 s */
	n = wake_crossings(XSC_SPIN_DEFAULT, &spin);
	printf("spin_ns=XSC_SPIN_DEFAULT: handle spins %u ns (default %u), "
	       "%ld crossings after idle\n", spin, d.spin_ns, n);
	CHECK_EQ(spin, d.spin_ns);
	CHECK_GE(n, 1);

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		printf("one core: a spinning thread would hold it; done\n");
		return 0;
	}
	n = wake_crossings(2000u * 1000 * 1000, &spin);	/* 2 s */
	printf("spin_ns=2e9: handle spins %u ns, %ld crossings after idle\n", spin, n);
	CHECK_EQ(spin, 2000u * 1000 * 1000);
	CHECK_EQ(n, 0);		/* still spinning: no wake, no owner sleep */
	return 0;
}
