/* Failures to start threads leave nothing half made:
 *  - a handle whose first syscall thread cannot start has no worker
 *    pool: its calls run inline, and a later call starts the pool once
 *    threads can be created again (a pool of no threads would queue calls
 *    that nothing runs);
 *  - xsc_main whose second kernel thread cannot start returns the error,
 *    closes the handles already opened (fds back to where they were) and
 *    can be called again (not -EBUSY).
 * Thread creation fails through this program's own pthread_create, which
 * the library's calls bind to (it is linked into this executable). */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "testlib.h"
#include "xsc.h"

/* pthread_create calls that still succeed; < 0: all of them */
static int creates_left = -1;

int pthread_create(pthread_t *t, const pthread_attr_t *attr,
		   void *(*fn)(void *), void *arg)
{
	static int (*real)(pthread_t *, const pthread_attr_t *,
			   void *(*)(void *), void *);

	if (creates_left == 0)
		return EAGAIN;
	if (creates_left > 0)
		creates_left--;
	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "pthread_create");
	return real(t, attr, fn, arg);
}

static void on_alarm(int sig)
{
	static const char msg[] = "t_start_fail: hung (a call nothing runs?)\n";

	(void)sig;
	(void)!write(2, msg, sizeof(msg) - 1);
	_exit(1);
}

static void first_worker_fails(void)
{
	struct xsc_config cfg;
	struct xsc_stats st;
	struct xsc *x;

	xsc_config_init(&cfg);
	cfg.backend = XSC_BACKEND_WORKER;
	cfg.flags |= XSC_NO_ENV | XSC_QUIET;
	CHECK_EQ(xsc_open(&x, &cfg), 0);
	creates_left = 0;
	for (int i = 0; i < 3; i++)	/* each tries to start the pool */
		CHECK_EQ(xsc_call(x, SYS_getppid), getppid());
	xsc_stats_get(x, &st);
	CHECK_EQ(st.workers, 0);
	CHECK_EQ(st.by_backend[XSC_BACKEND_INLINE], 3);
	CHECK_EQ(st.by_backend[XSC_BACKEND_WORKER], 0);
	creates_left = -1;
	CHECK_EQ(xsc_call(x, SYS_getppid), getppid());
	xsc_stats_get(x, &st);
	CHECK_EQ(st.workers, 1);
	CHECK_EQ(st.by_backend[XSC_BACKEND_WORKER], 1);
	CHECK_EQ(xsc_close(x), 0);
	printf("first syscall thread fails: calls ran inline, pool started later\n");
}

static int ran;

static int body(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	ran++;
	return 42;
}

static void second_vcpu_fails(void)
{
	struct xsc_runtime_config cfg;
	int fds0 = count_fds();

	xsc_runtime_config_init(&cfg);
	cfg.pin = 0;
	cfg.nthreads = 3;
	creates_left = 1;	/* kernel thread 1 starts, 2 does not */
	CHECK_EQ(xsc_main(body, 0, NULL, &cfg), -EAGAIN);
	CHECK_EQ(ran, 0);
	CHECK_EQ(count_fds(), fds0);	/* the rings of threads 0 and 1 */
	creates_left = -1;
	cfg.nthreads = 2;
	CHECK_EQ(xsc_main(body, 0, NULL, &cfg), 42);
	CHECK_EQ(ran, 1);
	printf("kernel thread 2 fails: -EAGAIN, fds back to %d, runtime restartable\n",
	       fds0);
}

int main(void)
{
	signal(SIGALRM, on_alarm);
	alarm(60);
	first_worker_fails();
	second_vcpu_fails();	/* last: the runtime then stays started */
	return 0;
}
