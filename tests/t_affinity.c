/* The runtime's default CPU set is the process's affinity mask: under
 * `taskset -c 0` (here: sched_setaffinity to CPU 0 before xsc_main) there is one kernel thread, and every thread of the process
 * stays inside the mask; an explicit first_cpu outside the mask makes
 * xsc_main fail with -EINVAL and start nothing. */
#include <dirent.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "testlib.h"
#include "xsc.h"

static int only;	/* the one CPU allowed */

/* Every thread of this process may run on `only` alone. */
static void check_threads(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;
	int n = 0;

	CHECK(d != NULL);
	while ((de = readdir(d)) != NULL) {
		cpu_set_t s;
		if (de->d_name[0] == '.')
			continue;
		CHECK_EQ(sched_getaffinity(atoi(de->d_name), sizeof(s), &s), 0);
		if (CPU_COUNT(&s) != 1 || !CPU_ISSET(only, &s)) {
			fprintf(stderr, "thread %s may run outside CPU %d\n", de->d_name, only);
			exit(1);
		}
		n++;
	}
	closedir(d);
	/* main's thread and one vcpu thread, plus syscall threads if any */
	CHECK_GE(n, 1);
}

static int in_main(int argc, char **argv)
{
	(void)argc; (void)argv;
	xsc_usleep(1000);	/* a posted call: the executor is up */
	check_threads();
	return 0;
}

int main(int argc, char **argv)
{
	struct xsc_runtime_config rc;
	cpu_set_t s;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	if (ncpu < 2)
		skip("one CPU: no mask narrower than the machine to test");
	only = 0;	/* first_cpu 0 means "the first allowed": test with 1 */
	CPU_ZERO(&s);
	CPU_SET(only, &s);
	CHECK_EQ(sched_setaffinity(0, sizeof(s), &s), 0);

	xsc_runtime_config_init(&rc);
	rc.first_cpu = 1;	/* outside the mask */
	CHECK_EQ(xsc_main(in_main, argc, argv, &rc), -EINVAL);

	CHECK_EQ(xsc_main(in_main, argc, argv, NULL), 0);
	printf("ok (%s)\n", test_backend());
	return 0;
}
