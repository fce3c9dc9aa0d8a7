/* Failures to start threads leave nothing half made:
 *  - a handle whose first syscall thread cannot start has no worker
 *    pool: its calls run inline, and a later call starts the pool once
 *    threads can be created again (a pool of no threads would queue calls
 *    that nothing runs).
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

int main(void)
{
	signal(SIGALRM, on_alarm);
	alarm(60);
	first_worker_fails();
	return 0;
}
