/* xsc threads spread new fibers over the kernel threads (runtime.c,
 * "Work stealing") and give each kernel thread a core of its own:
 *  - with the default configuration, one kernel thread per CPU of the
 *    affinity mask (when the cgroup sets no CPU quota; one fewer on
 *    SQPOLL, whose poller takes a CPU), each allowed on one CPU, no two
 *    on the same (with one kernel thread on SQPOLL, the steal is checked
 *    with one per CPU asked for);
 *  - a fiber that never parks or yields keeps its kernel thread; the
 *    fibers it makes meanwhile must run anyway, on another kernel thread
 *    (an idle one takes them from the busy one's queue).  Without the
 *    steal they would wait for the spinner for good.
 * xsc-test: per-backend
 * xsc-test: timeout=60 */
#include <sched.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testlib.h"
#include "xsc.h"
#include "sched/sched.h"

#define NNEW 4

static _Atomic int ran;
static long tid_of[NNEW];
static int cpu_of[NNEW];

/* The one CPU this kernel thread may run on, or -1. */
static int pinned_cpu(void)
{
	cpu_set_t s;

	CHECK_EQ(sched_getaffinity(0, sizeof(s), &s), 0);
	if (CPU_COUNT(&s) != 1)
		return -1;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &s))
			return c;
	return -1;
}

static void *newcomer(void *a)
{
	long i = (long)a;

	tid_of[i] = syscall(SYS_gettid);	/* the kernel thread's own id */
	cpu_of[i] = pinned_cpu();
	atomic_fetch_add(&ran, 1);
	return NULL;
}

static int body(int argc, char **argv)
{
	xsc_thread_t t[NNEW];
	long me = syscall(SYS_gettid);
	int mycpu = pinned_cpu();
	double t0;

	(void)argc, (void)argv;
	printf("%d kernel threads; the spinner on CPU %d\n", xsc__rt.n, mycpu);
	CHECK_GE(mycpu, 0);
	for (long i = 0; i < NNEW; i++)
		CHECK_EQ(xsc_thread_create(&t[i], NULL, newcomer, (void *)i), 0);
	t0 = now_s();
	while (atomic_load(&ran) < NNEW) {	/* never parks, never yields */
		if (now_s() - t0 > 20) {
			fprintf(stderr, "%d of %d new fibers ran in 20 s while their "
				"kernel thread was busy: the rest were never taken\n",
				atomic_load(&ran), NNEW);
			exit(1);
		}
	}
	for (int i = 0; i < NNEW; i++) {
		CHECK(tid_of[i] != me);
		CHECK_GE(cpu_of[i], 0);
		CHECK(cpu_of[i] != mycpu);
		CHECK_EQ(xsc_thread_join(t[i], NULL), 0);
	}
	printf("ok (%s): %d new fibers ran beside a spinning one\n", test_backend(), NNEW);
	return 42;
}

/* The cgroup's cpu.max says "max" (no quota), or there is none to read. */
static int no_cpu_quota(void)
{
	char line[512], path[700], buf[64] = "max";
	FILE *f = fopen("/proc/self/cgroup", "r");

	if (!f)
		return 1;
	path[0] = 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::", 3)) {
			line[strcspn(line, "\n")] = 0;
			snprintf(path, sizeof(path), "/sys/fs/cgroup%s/cpu.max", line + 3);
		}
	fclose(f);
	if (path[0] && (f = fopen(path, "r"))) {
		if (!fgets(buf, sizeof(buf), f))
			strcpy(buf, "max");
		fclose(f);
	}
	return !strncmp(buf, "max", 3);
}

static int ncpus;	/* in the process's mask before xsc_main */

static int sqpoll;	/* XSC_BACKEND=sqpoll: the poller takes a CPU */

static int in_main(int argc, char **argv)
{
	if (no_cpu_quota())
		CHECK_EQ(xsc__rt.n, ncpus - sqpoll);
	if (xsc__rt.n < 2)
		return 42;	/* nothing to steal to: the next run */
	return body(argc, argv);
}

int main(void)
{
	cpu_set_t s;

	CHECK_EQ(sched_getaffinity(0, sizeof(s), &s), 0);
	if (CPU_COUNT(&s) < 2)
		skip("one CPU allowed: nothing to steal to");
	ncpus = CPU_COUNT(&s);
	sqpoll = getenv("XSC_BACKEND") && !strcmp(getenv("XSC_BACKEND"), "sqpoll");
	main_in_child(in_main, NULL);	/* the default: one per CPU, pinned */
	if (ncpus - sqpoll < 2) {
		struct xsc_runtime_config cfg;

		xsc_runtime_config_init(&cfg);
		cfg.nthreads = (unsigned)ncpus;
		main_in_child(body, &cfg);
	}
	return 0;
}
