/*
 * t_entries: the benchmarks' kernel-entry counter (bench/entries.c)
 * against a known answer.
 *
 * The workload is a process R that, once told to go, makes exactly N1
 * getppid calls, while a thread it made before the count started makes
 * N2, and then forks a child G (during the count) that makes N3: each a
 * raw `syscall` instruction, one kernel entry.  Natively G first installs
 * a seccomp filter that traps getppid (SIGSYS), so its N3 calls are
 * entries the sys_enter tracepoint does not see, counted as traps.  A
 * decoy process D, a sibling of R outside its tree, makes N = N1 + N2 +
 * N3 calls at the same time.  Counting R natively must give N1 + N2
 * getppid entries and N3 traps (a few more allowed, none of D's), and
 * leave no instance or descriptor behind.  Counting the wrong task,
 * missing a thread, the forked child or its traps, or counting D each
 * moves a figure by thousands.  Then the same with strace (when
 * installed: it sees G's calls as getppid), and R under `xsc run` (when
 * the preload library is built; G then traps nothing itself), where the
 * figure depends on the runtime: it is printed, and must not include D's
 * calls.
 * Skips (77) when tracefs cannot be used (not root, no tracefs).
 */
#include <dirent.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../bench/entries.h"
#include "testlib.h"

enum { N1 = 20000, N2 = 5000, N3 = 3000, N = N1 + N2 + N3, SLACK = 5 };

static void getppids(int n)
{
	for (int i = 0; i < n; i++) {
		long r = SYS_getppid;
		__asm__ volatile("syscall" : "+a"(r) : : "rcx", "r11", "memory");
	}
}

static void on_sigsys(int sig)
{
	(void)sig;	/* the trapped call returns whatever rax held */
}

/* From here on getppid stops on entry with SIGSYS and does not run. */
static int trap_getppid(void)
{
	if (signal(SIGSYS, on_sigsys) == SIG_ERR)
		return -1;
	return test_seccomp_one(SYS_getppid, SECCOMP_RET_TRAP);
}

static void *thread_part(void *arg)
{
	char b;

	if (read(*(int *)arg, &b, 1) == 1)	/* R says go */
		getppids(N2);
	return NULL;
}

/* R: waits for a byte on go, makes its calls, writes one byte to done,
 * then waits for go's EOF and exits 0.  G's calls are trapped if trap. */
static int workload(int go, int done, bool trap)
{
	int tp[2];
	pthread_t t;
	char b;
	pid_t g;

	if (pipe(tp) || pthread_create(&t, NULL, thread_part, &tp[0]))
		return 1;
	if (read(go, &b, 1) != 1)
		return 1;
	if (write(tp[1], "g", 1) != 1)
		return 1;
	getppids(N1);
	pthread_join(t, NULL);
	if ((g = fork()) == 0) {
		if (trap && trap_getppid())
			_exit(1);
		getppids(N3);
		_exit(0);
	}
	waitpid(g, NULL, 0);
	if (write(done, "d", 1) != 1)
		return 1;
	while (read(go, &b, 1) > 0)
		;
	return 0;
}

/* D: N getppid calls after a byte on go, then a byte to done. */
static void decoy(int go, int done)
{
	char b;

	if (read(go, &b, 1) == 1) {
		getppids(N);
		if (write(done, "d", 1) != 1)
			_exit(1);
	}
	while (read(go, &b, 1) > 0)
		;
	_exit(0);
}

/* The xsc binary beside this test's directory, if there is one with its
 * preload library; else NULL. */
static const char *xsc_binary(char *buf, size_t len)
{
	char exe[PATH_MAX], lib[PATH_MAX + 32], *dir;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return NULL;
	exe[n] = 0;
	dir = dirname(exe);
	snprintf(buf, len, "%s/../xsc", dir);
	snprintf(lib, sizeof(lib), "%s/../libxsc-preload.so", dir);
	return access(buf, X_OK) == 0 && access(lib, R_OK) == 0 ? buf : NULL;
}

struct proc {
	pid_t pid;
	int go, done;	/* our ends */
};

/* R (exec'd under xsc when xsc is not NULL) or D, waiting for go. */
static struct proc spawn(bool is_decoy, const char *xsc)
{
	int go[2], done[2];
	struct proc p;

	CHECK(pipe(go) == 0 && pipe(done) == 0);
	p.pid = fork();
	CHECK(p.pid >= 0);
	if (p.pid == 0) {
		/* only its own ends: an end of the other's pipes kept open
		 * here would keep that one from seeing EOF */
		for (int fd = 3; fd < 1024; fd++)
			if (fd != go[0] && fd != done[1])
				close(fd);
		if (is_decoy)
			decoy(go[0], done[1]);
		if (!xsc)
			_exit(workload(go[0], done[1], true));
		char self[PATH_MAX], a[16], b[16];
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		if (n <= 0)
			_exit(1);
		self[n] = 0;
		snprintf(a, sizeof(a), "%d", go[0]);
		snprintf(b, sizeof(b), "%d", done[1]);
		execl(xsc, xsc, "run", "--", self, "--workload", a, b, (char *)NULL);
		_exit(127);
	}
	close(go[0]);
	close(done[1]);
	p.go = go[1];
	p.done = done[0];
	return p;
}

static void finish(struct proc *p)
{
	int st;

	close(p->go);
	close(p->done);
	CHECK(waitpid(p->pid, &st, 0) == p->pid);
	CHECK_EQ(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st), 0);
}

/* Counts R's entries while R and D make their calls. */
static int count(const char *xsc, struct bench_entries *e)
{
	struct proc r = spawn(false, xsc), d = spawn(true, NULL);
	struct bench_counter *c;
	char b;
	int rc;

	usleep(xsc ? 300000 : 50000);	/* R is up and waiting (its runtime too) */
	rc = bench_counter_start(&c, r.pid, e);
	if (rc == 0) {
		CHECK(write(r.go, "g", 1) == 1 && write(d.go, "g", 1) == 1);
		CHECK(read(r.done, &b, 1) == 1 && read(d.done, &b, 1) == 1);
		rc = bench_counter_stop(c, e);
	}
	finish(&r);
	finish(&d);
	return rc;
}

static void show(const char *what, const struct bench_entries *e)
{
	char top[256];

	bench_entries_top(e, 1, 6, top, sizeof(top));
	printf("%s (%s): %llu entries: %s\n", what, e->method,
	       (unsigned long long)e->total, top);
}

/* A count of the workload the way method (XSC_BENCH_ENTRIES) counts,
 * under xsc run when xsc is set, shown as what; fails the test when the
 * count failed. */
static void count_by(const char *method, const char *xsc, const char *what,
		     struct bench_entries *e)
{
	int rc;

	setenv("XSC_BENCH_ENTRIES", method, 1);
	rc = count(xsc, e);
	if (rc)
		printf("%s count (%s) failed: %s\n", what, method, e->why);
	CHECK_EQ(rc, 0);
	show(what, e);
}

/* No instance of ours is left in tracefs. */
static int our_instances(void)
{
	char prefix[64];
	int n = 0;
	struct dirent *d;
	DIR *dp = opendir("/sys/kernel/tracing/instances");

	snprintf(prefix, sizeof(prefix), "xsc-entries.%d.", (int)getpid());
	while (dp && (d = readdir(dp)))
		n += !strncmp(d->d_name, prefix, strlen(prefix));
	if (dp)
		closedir(dp);
	return n;
}

int main(int argc, char **argv)
{
	struct bench_entries e;
	char xbuf[PATH_MAX + 16];
	const char *xsc = xsc_binary(xbuf, sizeof(xbuf));
	int fds0 = count_fds(), rc;

	if (argc == 4 && !strcmp(argv[1], "--workload"))
		return workload(atoi(argv[2]), atoi(argv[3]), false);
	signal(SIGPIPE, SIG_IGN);

	setenv("XSC_BENCH_ENTRIES", "tracefs", 1);
	rc = count(NULL, &e);
	if (rc && !e.ok && strstr(e.why, "dropped") == NULL)
		skip("tracefs cannot count here: %s", e.why);
	if (rc)
		printf("count failed: %s\n", e.why);
	CHECK_EQ(rc, 0);
	show("native", &e);
	CHECK_GE(e.nr[SYS_getppid], N1 + N2);
	CHECK_GE(N1 + N2 + SLACK, e.nr[SYS_getppid]);
	CHECK_GE(e.traps, N3);
	CHECK_GE(N3 + SLACK, e.traps);
	CHECK_GE(e.nr[SYS_rt_sigreturn], N3);	/* each trap's handler returns */
	CHECK_GE(e.total, e.nr[SYS_getppid] + e.traps + e.nr[SYS_rt_sigreturn]);

	if (system("command -v strace >/dev/null 2>&1") == 0) {
		count_by("strace", NULL, "native", &e);
		CHECK_GE(e.nr[SYS_getppid], N);
		CHECK_GE(N + SLACK, e.nr[SYS_getppid]);
	} else {
		printf("note: strace not installed: its way not checked\n");
	}

	if (xsc) {
		count_by("tracefs", xsc, "xsc run", &e);
		CHECK_GE(e.total, 1);
		CHECK_GE(N + SLACK, e.nr[SYS_getppid]);
	} else {
		printf("note: xsc or libxsc-preload.so not built here: xsc run not checked\n");
	}
	CHECK_EQ(our_instances(), 0);
	CHECK_EQ(count_fds(), fds0);
	printf("ok\n");
	return 0;
}
