/* A libxsc program under `xsc run`: the program's own handles live inside
 * fibers.  Each of 8 threads opens a handle and makes 2,000 rounds of
 * getppid and a pipe write through it, checking every result, while the
 * threads wake each other through a condition variable (wake-ups from
 * other vcpus).  A handle's ring is registered to the kernel thread that
 * opened it; this holds because a started fiber stays on its home vcpu
 * (docs/design.md, "Many blocked fibers").
 *
 * Run plainly, the test runs itself natively and under
 * `xsc run -b BACKEND` for uring, sqpoll and worker (the xsc binary next
 * to the tests directory), the handles on auto, and once with worker
 * handles under uring (their syscall threads are then fibers too); it
 * passes when every run exits 0, and is skipped where the preload library
 * is not built (sanitizer builds).  Not run: handles of the program's own
 * on SQPOLL, which work but wait whole on their vcpu (docs/transparent.md,
 * Limits): 155 s here against 0.7 s natively.
 * xsc-test: timeout=180 */
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"
#include "xsc.h"

#define NT 8
#define ROUNDS 2000

static atomic_int bad;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;

#define BAD(...) do { if (atomic_fetch_add(&bad, 1) < 10) \
	fprintf(stderr, "t_nested: " __VA_ARGS__); } while (0)

static void *run(void *arg)
{
	struct xsc *x;
	int p[2];
	char out[32], in[32];
	long r;

	struct xsc_config cfg = { .backend = *(const int *)arg, .flags = XSC_NO_ENV };
	if ((r = xsc_open(&x, &cfg)) != 0) {
		BAD("xsc_open: %ld\n", r);
		return NULL;
	}
	/* the handle routes write as it does natively (a ring, on auto) */
	const char *want = getenv("XSC_NESTED_ROUTE");
	if (want && (r = xsc_route(x, SYS_write, NULL)) != atoi(want))
		BAD("write routed to executor %ld, natively %s\n", r, want);
	if (pipe(p) != 0) {
		BAD("pipe failed\n");
		return NULL;
	}
	for (int i = 0; i < ROUNDS; i++) {
		if ((r = xsc_call(x, SYS_getppid)) != getppid())
			BAD("round %d: getppid %ld\n", i, r);
		int n = snprintf(out, sizeof(out), "m%d", i);
		if ((r = xsc_call(x, SYS_write, p[1], out, n)) != n) {
			BAD("round %d: write %ld\n", i, r);
			continue;
		}
		if ((r = read(p[0], in, sizeof(in))) != n || memcmp(in, out, (size_t)n))
			BAD("round %d: read %ld\n", i, r);
		if (i % 7 == 0) {	/* wake the others, wait a little */
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 300000;
			if (ts.tv_nsec >= 1000000000) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000;
			}
			pthread_mutex_lock(&m);
			pthread_cond_broadcast(&cv);
			pthread_cond_timedwait(&cv, &m, &ts);
			pthread_mutex_unlock(&m);
		}
	}
	if ((r = xsc_close(x)) != 0)
		BAD("xsc_close: %ld\n", r);
	close(p[0]);
	close(p[1]);
	return NULL;
}

static int inner(const char *backend)
{
	pthread_t t[NT];
	int b = -1;

	for (int i = XSC_BACKEND_AUTO; i <= XSC_BACKEND_INLINE; i++)
		if (strcmp(backend, xsc_backend_name(i)) == 0)
			b = i;
	CHECK_GE(b, 0);
	for (int i = 0; i < NT; i++)
		CHECK_EQ(pthread_create(&t[i], NULL, run, &b), 0);
	for (int i = 0; i < NT; i++)
		pthread_join(t[i], NULL);
	return atomic_load(&bad) ? 1 : 0;
}

/* Runs this program (XSC_NESTED=inner backend) under `xsc run -b shim`,
 * or natively when shim is NULL; returns its exit status. */
static int outer(const char *xsc, const char *self, const char *shim, const char *in)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		setenv("XSC_NESTED", in, 1);
		if (strcmp(in, "auto") == 0) {	/* where write goes natively */
			struct xsc *x;
			char route[16];
			struct xsc_config cfg = { .flags = XSC_NO_ENV | XSC_QUIET };
			if (xsc_open(&x, &cfg) != 0)
				_exit(126);
			snprintf(route, sizeof(route), "%d", xsc_route(x, SYS_write, NULL));
			xsc_close(x);
			setenv("XSC_NESTED_ROUTE", route, 1);
		}
		unsetenv("XSC_BACKEND");
		if (shim)
			execl(xsc, xsc, "run", "-b", shim, "--", self, (char *)NULL);
		else
			execl(self, self, (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int main(void)
{
	/* the shim's executor, the handles' own */
	static const char *runs[][2] = {
		{ NULL, "auto" }, { "uring", "auto" }, { "sqpoll", "auto" },
		{ "worker", "auto" }, { "uring", "worker" },
	};
	char self[PATH_MAX], dir[PATH_MAX], xsc[PATH_MAX + 16], pre[PATH_MAX + 32];
	ssize_t n;
	int fails = 0;
	const char *in = getenv("XSC_NESTED");

	if (in)
		return inner(in);
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	CHECK(n > 0);
	self[n] = '\0';
	strcpy(dir, self);
	*strrchr(dir, '/') = '\0';	/* BUILD/tests */
	*strrchr(dir, '/') = '\0';	/* BUILD */
	snprintf(xsc, sizeof(xsc), "%s/xsc", dir);
	snprintf(pre, sizeof(pre), "%s/libxsc-preload.so", dir);
	if (access(pre, R_OK) != 0)
		skip("no %s (not built under the sanitizers)", pre);
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		int rc = outer(xsc, self, runs[i][0], runs[i][1]);
		printf("%s %s, handles %s: exit %d\n", rc == 0 ? "PASS" : "FAIL",
		       runs[i][0] ? runs[i][0] : "native", runs[i][1], rc);
		fails += rc != 0;
	}
	return fails ? 1 : 0;
}
