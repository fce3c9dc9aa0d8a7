/* A ring's locked memory.  io_uring charges ring memory to the locked-
 * memory limit of the user who makes it (RLIMIT_MEMLOCK: 8 MiB by default
 * on Debian, one budget for all of that user's processes; not charged
 * with CAP_IPC_LOCK, so root never sees it).  An SQ sized at 2 SQEs per
 * entry took 1.6 MiB per kernel thread of xsc threads: a third non-root
 * program under `xsc run` (two kernel threads each) got no ring at all.
 * As nobody with the default 8 MiB, handles of the runtime's size (64
 * pages) are opened until one gets no ring: at least 16 must have one
 * (8 programs of 2 kernel threads), and the one without must say which
 * limit it met and how to raise it.  (The budget is nobody's, shared
 * with every process of that user: run it alone.)
 * Needs root (to become nobody), io_uring, and a kernel that charges
 * rings to the limit (6.18 here does; a ring made with no limit at all
 * says it does not); skips otherwise. */
#include <pwd.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testlib.h"
#include "xsc.h"

#define MAXH 256
#define WANT 16

static int has_ring(struct xsc *x)
{
	int r = xsc_route(x, SYS_read, NULL);
	return r == XSC_BACKEND_URING || r == XSC_BACKEND_SQPOLL;
}

static int child(void)
{
	struct rlimit rl = { 8 << 20, 8 << 20 };
	static struct xsc *h[MAXH];
	struct xsc_config cfg;
	struct xsc_probe pr;
	int n = 0;

	struct rlimit none = { 0, 8 << 20 };

	CHECK_EQ(setrlimit(RLIMIT_MEMLOCK, &none), 0);
	CHECK_EQ(setgid(65534), 0);
	CHECK_EQ(setuid(65534), 0);
	xsc_config_init(&cfg);
	cfg.npages = 64;	/* as a kernel thread of xsc threads opens it */
	cfg.backend = XSC_BACKEND_URING;
	cfg.flags = XSC_QUIET | XSC_NO_ENV;
	/* a kernel that does not charge rings to the limit: nothing to see */
	CHECK_EQ(xsc_open(&h[0], &cfg), 0);
	n = has_ring(h[0]);
	CHECK_EQ(xsc_close(h[0]), 0);
	if (n) {
		printf("skip: this kernel does not count rings against RLIMIT_MEMLOCK\n");
		return 77;
	}
	CHECK_EQ(setrlimit(RLIMIT_MEMLOCK, &rl), 0);
	while (n < MAXH) {
		CHECK_EQ(xsc_open(&h[n], &cfg), 0);
		if (!has_ring(h[n]))
			break;
		n++;
	}
	printf("%d handles of 64 pages got a ring under 8 MiB of RLIMIT_MEMLOCK\n", n);
	if (n < MAXH) {
		CHECK_EQ(xsc_probe_get(h[n], &pr), 0);
		printf("the next: %s\n", pr.reason ? pr.reason : "(no reason)");
		CHECK(pr.reason && strstr(pr.reason, "RLIMIT_MEMLOCK") &&
		      strstr(pr.reason, "ulimit -l"));
		CHECK_EQ(xsc_close(h[n]), 0);
	}
	for (int i = 0; i < n; i++)
		CHECK_EQ(xsc_close(h[i]), 0);
	CHECK_GE(n, WANT);
	return 0;
}

int main(void)
{
	struct xsc *x;
	int st;

	if (geteuid() != 0)
		skip("needs root, to become nobody");
	CHECK_EQ(xsc_open(&x, NULL), 0);
	int ring = has_ring(x);
	CHECK_EQ(xsc_close(x), 0);
	if (!ring)
		skip("no io_uring here");
	fflush(stdout);
	pid_t pid = fork();
	CHECK_GE(pid, 0);
	if (pid == 0) {
		int rc = child();
		fflush(stdout);
		_exit(rc);
	}
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st));
	if (WEXITSTATUS(st) == 77)
		return 77;
	CHECK_EQ(WEXITSTATUS(st), 0);
	printf("ok\n");
	return 0;
}
