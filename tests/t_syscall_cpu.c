/* Core specialization (FlexSC 3.6, include/xsc.h syscall_cpu): with
 * cfg.syscall_cpu set, the SQPOLL poller and the syscall threads may run
 * on that CPU alone, while the caller keeps its own mask.  Checked on the
 * threads a handle starts: sqpoll's iou-sqp thread, worker's syscall
 * threads (a blocking read makes one); the other executors start none to
 * pin (io_uring's own workers inherit the caller's mask).  A syscall_cpu
 * outside the caller's mask makes xsc_open fail with -EINVAL.
 * xsc-test: per-backend
 * xsc-test: timeout=60 */
#include <dirent.h>
#include <stdbool.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "testlib.h"
#include "xsc.h"

/* Threads that existed before the handle: an earlier handle's SQPOLL
 * poller ends in a kernel work queue, after its xsc_close (test_read_route
 * opens one; t_syscall_cpu[sqpoll] once found it still there under ASan). */
static int before[256], nbefore;

static bool existed(int tid)
{
	for (int i = 0; i < nbefore; i++)
		if (before[i] == tid)
			return true;
	return false;
}

static void snapshot(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;

	CHECK(d != NULL);
	nbefore = 0;
	while ((de = readdir(d)) != NULL && nbefore < 256)
		if (de->d_name[0] != '.')
			before[nbefore++] = atoi(de->d_name);
	closedir(d);
}

/* Threads the handle started, and how many may run on `cpu` alone. */
static void scan(int cpu, int *others, int *pinned, int *sqp)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;
	long me = syscall(SYS_gettid);

	CHECK(d != NULL);
	*others = *pinned = *sqp = 0;
	while ((de = readdir(d)) != NULL) {
		char path[300], comm[64] = "";
		cpu_set_t s;
		FILE *f;
		int tid = atoi(de->d_name);

		if (de->d_name[0] == '.' || tid == me || existed(tid))
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%d/comm", tid);
		if ((f = fopen(path, "r"))) {
			if (!fgets(comm, sizeof(comm), f))
				comm[0] = 0;
			fclose(f);
		}
		if (!strncmp(comm, "iou-wrk", 7))
			continue;	/* io_uring's workers: the caller's mask */
		(*others)++;
		if (!strncmp(comm, "iou-sqp", 7))
			(*sqp)++;
		if (sched_getaffinity(tid, sizeof(s), &s) == 0 &&
		    CPU_COUNT(&s) == 1 && CPU_ISSET(cpu, &s))
			(*pinned)++;
		else
			printf("thread %d (%.*s) may run beyond CPU %d\n", tid,
			       (int)strcspn(comm, "\n"), comm, cpu);
	}
	closedir(d);
}

int main(void)
{
	struct xsc_config cfg;
	struct xsc *x;
	cpu_set_t mine, after;
	int cpu = -1, p[2], id, others, pinned, sqp, r = test_read_route();
	char c;

	CHECK_EQ(sched_getaffinity(0, sizeof(mine), &mine), 0);
	if (CPU_COUNT(&mine) < 2)
		skip("one CPU allowed: no core to set apart");
	for (int i = CPU_SETSIZE - 1; i >= 0 && cpu < 0; i--)
		if (CPU_ISSET(i, &mine))
			cpu = i;	/* the last allowed CPU */

	xsc_config_init(&cfg);
	cfg.syscall_cpu = CPU_SETSIZE - 1;	/* not in the mask */
	if (!CPU_ISSET(CPU_SETSIZE - 1, &mine))
		CHECK_EQ(xsc_open(&x, &cfg), -EINVAL);

	if (r == XSC_BACKEND_INLINE) {	/* the read would block xsc_flush */
		printf("ok (%s): no thread to pin\n", test_backend());
		return 0;
	}
	cfg.syscall_cpu = cpu;
	snapshot();
	CHECK_EQ(xsc_open(&x, &cfg), 0);
	CHECK_EQ(pipe(p), 0);
	CHECK_GE(id = xsc_post(x, SYS_read, p[0], &c, 1), 0);	/* blocks */
	CHECK_GE(xsc_flush(x), 0);
	usleep(50000);
	scan(cpu, &others, &pinned, &sqp);
	printf("syscall_cpu %d: %d thread(s) started, %d pinned to it, %d poller(s)\n",
	       cpu, others, pinned, sqp);
	CHECK_EQ(pinned, others);
	if (r == XSC_BACKEND_WORKER)
		CHECK_GE(others, 1);
	if (r == XSC_BACKEND_SQPOLL)
		CHECK_EQ(sqp, 1);
	CHECK_EQ(sched_getaffinity(0, sizeof(after), &after), 0);
	CHECK(CPU_EQUAL(&mine, &after));	/* the caller keeps its mask */
	CHECK_EQ(write(p[1], "x", 1), 1);
	CHECK_EQ(take_within(x, id, 10), 1);
	CHECK_EQ(xsc_close(x), 0);
	printf("ok (%s)\n", test_backend());
	return 0;
}
