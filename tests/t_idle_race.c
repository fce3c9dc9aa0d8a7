/* A request for a vcpu's loop that arrives after the loop looked for one
 * but before the vcpu sleeps is not slept through.
 *
 * The loop looks, before it runs a fiber, for a signal's request to
 * cancel a fiber's blocked call (v->scan: an extension's ops->scan),
 * a sandbox and a credential change; then, with nothing to run, it
 * flushes, polls and goes idle.  idle() read the kick counter it sleeps
 * on only then: a request and its kick that came in between were slept
 * through, and the fiber's call was never cancelled (tp_forkrun's child
 * hung about once in 60 runs under load, its reader deaf to SIGUSR1).
 *
 * Made deterministic: the test registers an extension whose scan, run by
 * the loop's look, posts a second request and kicks, as another vcpu's
 * signal handler would right after the look.  The fiber then waits in a read of an empty
 * pipe that a plain thread fills after 3 s, posted (a second fiber waits
 * on the vcpu too: the only fiber of a vcpu would make the read itself).  The second request must be
 * looked at at once (here: within 1 s), not when that read completes.
 * xsc-test: per-backend */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"
#include "xsc.h"
#include "internal.h"
#include "sched/sched.h"

static _Atomic int scans;
static double first, second;
static int p[2], q[2];

static void scan_hook(struct xsc_vcpu *v)
{
	int n = ++scans;

	if (n == 1) {
		first = now_s();
		/* a request right after the look, as a signal taken by
		 * another vcpu makes one (transparent mode's interrupt()) */
		atomic_store(&v->scan, 1);
		xsc__kick(v->x);
	} else if (n == 2) {
		second = now_s();
	}
}

static const struct xsc_rt_ops ops = { .scan = scan_hook };

static void *filler(void *arg)
{
	struct timespec d = { 3, 0 };

	(void)arg;
	nanosleep(&d, NULL);
	if (write(p[1], "x", 1) != 1 || write(q[1], "y", 1) != 1)
		abort();
	return NULL;
}

static void *other(void *arg)
{
	char c;

	(void)arg;
	CHECK_EQ(xsc_read(q[0], &c, 1), 1);
	return NULL;
}

static int body(int argc, char **argv)
{
	xsc_thread_t t;
	char c;

	(void)argc;
	(void)argv;
	CHECK_EQ(xsc_thread_create(&t, NULL, other, NULL), 0);
	atomic_store(&xsc__vcpu()->scan, 1);	/* the first request */
	CHECK_EQ(xsc_read(p[0], &c, 1), 1);	/* parks: the loop looks */
	CHECK_EQ(xsc_thread_join(t, NULL), 0);
	return 42;
}

int main(void)
{
	struct xsc_runtime_config cfg;
	pthread_t th;

	if (test_read_route() == XSC_BACKEND_INLINE)
		skip("inline runs the read in the fiber's kernel thread: it "
		     "never goes idle");
	CHECK_EQ(pipe(p), 0);
	CHECK_EQ(pipe(q), 0);
	CHECK_EQ(pthread_create(&th, NULL, filler, NULL), 0);
	xsc_runtime_config_init(&cfg);
	cfg.nthreads = 1;
	xsc__rt_extend(&ops);
	CHECK_EQ(xsc_main(body, 0, NULL, &cfg), 42);
	CHECK_EQ(pthread_join(th, NULL), 0);
	CHECK_GE(scans, 2);
	printf("the request after the look was taken %.3f s after it\n",
	       second - first);
	CHECK(second - first < 1.0);
	printf("ok (%s)\n", test_backend());
	return 0;
}
