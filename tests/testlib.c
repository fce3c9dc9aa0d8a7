#include "testlib.h"
#include <dirent.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <stdarg.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "xsc.h"

void skip(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("SKIP: ", stdout);
	vprintf(fmt, ap);
	putchar('\n');
	va_end(ap);
	exit(77);
}

int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;
	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n - 3; /* ".", ".." and the DIR's own fd */
}

long rss_kib(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	long pages = 0, rss = 0;
	if (!f)
		return -1;
	if (fscanf(f, "%ld %ld", &pages, &rss) != 2)
		rss = -1;
	fclose(f);
	return rss * (sysconf(_SC_PAGESIZE) / 1024);
}

int test_read_route(void)
{
	struct xsc_config cfg;
	struct xsc *x;
	int r;

	xsc_config_init(&cfg);
	cfg.npages = 1;
	cfg.flags = XSC_QUIET;
	if (xsc_open(&x, &cfg) < 0)
		return -1;
	r = xsc_route(x, SYS_read, NULL);
	xsc_close(x);
	return r;
}

const char *test_backend(void)
{
	const char *b = getenv("XSC_BACKEND");
	return b && *b ? b : "auto";
}

int test_sanitized(void)
{
#ifdef XSC_SANITIZE
	return 1;
#else
	return getenv("XSC_TEST_SANITIZE") != NULL;
#endif
}

static char scratch[64];
static pid_t scratch_pid;

static void rm_scratch(void)
{
	char cmd[96];

	if (getpid() != scratch_pid)
		return;	/* a forked child's exit: the directory is its parent's */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", scratch);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", scratch);
}

const char *scratch_dir(void)
{
	if (!scratch[0]) {
		strcpy(scratch, "/tmp/xsc-test-XXXXXX");
		if (!mkdtemp(scratch)) {
			perror("mkdtemp");
			exit(1);
		}
		scratch_pid = getpid();
		atexit(rm_scratch);
	}
	return scratch;
}

const char *test_force_profile(const char *which)
{
	static char path[300];
	bool dear = !strcmp(which, "dear");
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s.profile", scratch_dir(), which);
	f = fopen(path, "w");
	CHECK(f != NULL);
	fprintf(f, "null_syscall_ns %d\nposted_batch1_ns %d\nposted_batch32_ns %d\n"
		"posted_async_batch32_ns %d\ntls_switch_ns %d\nthread_switch_ns %d\n"
		"cross_core_wake_ns %d\nxsave_bytes 2696\nxsavec %d\n",
		dear ? 1100 : 45, dear ? 1250 : 160, dear ? 100 : 110,
		dear ? 400 : 1500, dear ? 1100 : 5, dear ? 4000 : 1500,
		dear ? 30000 : 5000, !dear);
	CHECK_EQ(fclose(f), 0);
	setenv("XSC_HOST_PROFILE", path, 1);
	return path;
}

void finish_handle(struct xsc *x, const int p[2], int fds0)
{
	struct xsc_stats st;

	xsc_stats_get(x, &st);
	CHECK_EQ(st.posted, st.completed);
	CHECK_EQ(xsc_close(x), 0);
	close(p[0]);
	close(p[1]);
	CHECK_EQ(count_fds(), fds0);
	printf("ok (%s)\n", test_backend());
}

double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

long take_within(struct xsc *x, int id, double secs)
{
	double end = now_s() + secs;
	long ret;

	for (;;) {
		xsc_poll(x);
		if (xsc_result(x, id, &ret) == 0)
			break;
		if (now_s() > end) {
			fprintf(stderr, "entry %d still in flight %.0f s after its "
				"cancel: the cancel was lost\n", id, secs);
			exit(1);
		}
		usleep(20);
	}
	CHECK_EQ(xsc_release(x, id), 0);
	return ret;
}

void main_in_child(int (*fn)(int, char **), const struct xsc_runtime_config *cfg)
{
	int st;
	pid_t pid;

	fflush(stdout);		/* not printed twice by the child */
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
		_exit(xsc_main(fn, 0, NULL, cfg) == 42 && fflush(stdout) == 0 ? 0 : 1);
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 0);
}

int test_child_output(void (*fn)(int), int arg, int fd, char *out, size_t len)
{
	size_t got = 0;
	ssize_t n;
	int p[2], status;
	pid_t pid;

	CHECK_EQ(pipe(p), 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		close(p[0]);
		dup2(p[1], fd);
		fn(arg);
		_exit(0);
	}
	close(p[1]);
	while (got < len - 1 && (n = read(p[0], out + got, len - 1 - got)) > 0)
		got += (size_t)n;
	out[got] = 0;
	close(p[0]);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	return status;
}

int test_seccomp_one(int nr, unsigned action)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, action),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
		return -errno;
	return 0;
}
