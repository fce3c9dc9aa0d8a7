/* Refused numbers (vfork, clone, clone3, rt_sigreturn, restart_syscall:
 * they would start a second thread of control on the caller's stack or
 * return into a signal frame) get -EINVAL on every path and never run:
 * through a handle (xsc_call), from a fiber (xsc_syscall, whose inline
 * route runs calls in the caller), and outside a fiber (xsc_syscall on a
 * plain thread).  "Never run" is checked on the process: a clone(SIGCHLD)
 * or vfork that ran would leave a child to reap (or kill us).
 * xsc-test: per-backend */
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testlib.h"
#include "xsc.h"

static const long refused[] = { SYS_vfork, SYS_clone, SYS_clone3, SYS_rt_sigreturn,
				SYS_restart_syscall };
#define NREF (sizeof(refused) / sizeof(refused[0]))

static void no_child(const char *path)
{
	siginfo_t si;
	if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG) != -1 || errno != ECHILD) {
		fprintf(stderr, "%s: a refused call ran: a child exists\n", path);
		exit(1);
	}
}

static void check_all(const char *path, long (*call)(long nr))
{
	for (unsigned i = 0; i < NREF; i++) {
		long r = call(refused[i]);
		if (r != -EINVAL) {
			fprintf(stderr, "%s: %s returned %ld, want -EINVAL\n", path,
				xsc_syscall_name(refused[i]), r);
			exit(1);
		}
	}
	no_child(path);
}

static struct xsc *hx;
static long via_handle(long nr) { return xsc_call(hx, nr, SIGCHLD, 0, 0, 0, 0, 0); }
static long via_fiber(long nr) { return xsc_syscall(nr, SIGCHLD, 0, 0, 0, 0, 0); }

static int fibers(int argc, char **argv)
{
	(void)argc; (void)argv;
	check_all("fiber", via_fiber);
	return 0;
}

int main(int argc, char **argv)
{
	struct xsc_runtime_config rc;

	CHECK_EQ(xsc_open(&hx, NULL), 0);
	check_all("handle", via_handle);
	CHECK_EQ(xsc_close(hx), 0);
	check_all("outside a fiber", via_fiber);
	xsc_runtime_config_init(&rc);
	rc.nthreads = 2;	/* one xsc_main per process */
	CHECK_EQ(xsc_main(fibers, argc, argv, &rc), 0);
	printf("ok (%s)\n", test_backend());
	return 0;
}
