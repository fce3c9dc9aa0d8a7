/*
 * tp.h - what the tests/tp programs share: checks that count failures,
 * running a child and capturing what it writes, a start gate for
 * threads, a monotonic clock in milliseconds, this process's threads'
 * names and context switches, installing a signal handler, a seccomp
 * filter that refuses two calls.  Header-only, every helper static
 * inline (a program takes what it uses): each program stays one plain
 * libc + pthreads source, built without the project's flags or headers
 * (tests/tp/CMakeLists.txt).
 *
 * Include it first: it defines _GNU_SOURCE before any libc header.
 */
#ifndef TP_H
#define TP_H
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- checks ------------------------------------------------------------ */

/* Failed checks so far; main returns non-zero when there were any.
 * Counted atomically: threads check too. */
static int tp_failures;

static inline void tp_failed(void)
{
	__atomic_add_fetch(&tp_failures, 1, __ATOMIC_SEQ_CST);
}

static inline __attribute__((format(printf, 2, 3)))
void tp_check_failed(int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s[%d]:%d: ", program_invocation_short_name, (int)getpid(), line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	tp_failed();
}

/* CHECK(cond, fmt, ...): when cond is false, "prog[pid]:line: message" on
 * stderr (not compared: what differs is the exit status) and a failure. */
#define CHECK(cond, ...) do { if (!(cond)) tp_check_failed(__LINE__, __VA_ARGS__); } while (0)

/* CHECK_SAY(cond, fmt, ...): the message on stdout whether or not cond
 * holds, "  ^ not as expected" under it and a failure when it does not:
 * for programs whose output lists every check. */
#define CHECK_SAY(cond, ...) do { printf(__VA_ARGS__); putchar('\n'); \
	if (!(cond)) { printf("  ^ not as expected\n"); tp_failed(); } } while (0)

/* ---- children ---------------------------------------------------------- */

/* Reads fd to EOF into buf (NUL-terminated, at most cap - 1 bytes); the
 * length, or -1. */
static inline ssize_t tp_read_to_eof(int fd, char *buf, size_t cap)
{
	size_t n = 0;

	for (;;) {
		ssize_t r = read(fd, buf + n, cap - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		n += (size_t)r;
		if (n == cap - 1)
			break;
	}
	buf[n] = 0;
	return (ssize_t)n;
}

/* Waits for child pid; its exit status, or -1 (with a line on stderr)
 * when the wait failed or the child did not exit normally. */
static inline int tp_wait(pid_t pid)
{
	const char *me = program_invocation_short_name;
	int st;
	pid_t r;

	do
		r = waitpid(pid, &st, 0);
	while (r < 0 && errno == EINTR);
	if (r != pid) {
		fprintf(stderr, "%s: waitpid(%d) = %d: %s\n", me, (int)pid, (int)r,
			strerror(errno));
		return -1;
	}
	if (!WIFEXITED(st)) {
		fprintf(stderr, "%s: child %d did not exit normally (status %#x)\n", me,
			(int)pid, st);
		return -1;
	}
	return WEXITSTATUS(st);
}

/* Forks a child that runs fn(arg, out), out the write end of a pipe, and
 * _exits with what fn returns; the parent reads the pipe to EOF into buf
 * (cap bytes with the NUL).  Returns the child's exit status, or -1
 * (each failure CHECKed). */
static inline int tp_fork_capture(int (*fn)(void *arg, int out), void *arg, char *buf,
				  size_t cap)
{
	int p[2];
	pid_t pid;

	buf[0] = 0;
	if (pipe(p) != 0) {
		CHECK(0, "pipe: %s", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		_exit(fn(arg, p[1]));
	}
	close(p[1]);
	CHECK(pid > 0, "fork: %s", strerror(errno));
	if (pid < 0) {
		close(p[0]);
		return -1;
	}
	CHECK(tp_read_to_eof(p[0], buf, cap) >= 0, "read from child %d", (int)pid);
	close(p[0]);
	return tp_wait(pid);
}

/* ---- a start gate ------------------------------------------------------ */

/* Threads arrive at the gate (tp_gate_arrive, or tp_gate_pass to also
 * wait there until it opens); main waits until n have arrived
 * (tp_gate_await), does what they must be waiting through, and opens it. */
struct tp_gate {
	pthread_mutex_t m;
	pthread_cond_t cv;
	int arrived, open;
};
#define TP_GATE_INIT { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0 }

static inline void tp_gate_arrive(struct tp_gate *g)
{
	pthread_mutex_lock(&g->m);
	g->arrived++;
	pthread_cond_broadcast(&g->cv);
	pthread_mutex_unlock(&g->m);
}

static inline void tp_gate_pass(struct tp_gate *g)
{
	pthread_mutex_lock(&g->m);
	g->arrived++;
	pthread_cond_broadcast(&g->cv);
	while (!g->open)
		pthread_cond_wait(&g->cv, &g->m);
	pthread_mutex_unlock(&g->m);
}

static inline void tp_gate_await(struct tp_gate *g, int n)
{
	pthread_mutex_lock(&g->m);
	while (g->arrived < n)
		pthread_cond_wait(&g->cv, &g->m);
	pthread_mutex_unlock(&g->m);
}

static inline void tp_gate_open(struct tp_gate *g)
{
	pthread_mutex_lock(&g->m);
	g->open = 1;
	pthread_cond_broadcast(&g->cv);
	pthread_mutex_unlock(&g->m);
}

/* Sleeps ms milliseconds, on through the signals that interrupt it. */
static inline void tp_nap(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* CLOCK_MONOTONIC in whole milliseconds (the vDSO's: no system call). */
static inline long tp_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- this process's threads ------------------------------------------- */

/* The Name of thread tid (an entry of /proc/self/task) in name, cap
 * bytes: true if its status file could be read. */
static inline bool tp_thread_name(const char *tid, char *name, size_t cap)
{
	char path[300], line[128];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%s/status", tid);
	if (!(f = fopen(path, "r")))
		return false;
	while (!found && fgets(line, sizeof(line), f))
		if (cap && !strncmp(line, "Name:\t", 6)) {
			size_t n = strcspn(line + 6, "\n");	/* cut to cap */
			n = n < cap ? n : cap - 1;
			memcpy(name, line + 6, n);
			name[n] = 0;
			found = true;
		}
	fclose(f);
	return found;
}

/* The voluntary context switches in a thread's status file kept open
 * (fd: read again from its start, so that counting them makes no other
 * call), or -1. */
static inline long tp_switches(int fd)
{
	static const char key[] = "\nvoluntary_ctxt_switches:";
	char buf[4096], *at;
	ssize_t len = fd < 0 ? -1 : pread(fd, buf, sizeof(buf) - 1, 0);

	if (len <= 0)
		return -1;
	buf[len] = 0;
	at = strstr(buf, key);
	return at ? atol(at + sizeof(key) - 1) : -1;
}

/* The status file of the thread named xsc-watchdog (`xsc run`'s), kept
 * open, or -1 (natively, or no watchdog).  Found before what it counts:
 * under `xsc run` every read of a /proc file wakes the watchdog (the
 * reading thread's vcpu leaves idle), and a second search through every
 * thread's files after an idle second counted 13 wakes in a loaded run
 * (tp_idle); the count reads the kept file alone (tp_switches). */
static inline int tp_watchdog_status(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int fd = -1;

	for (; d && fd < 0 && (e = readdir(d)) != NULL;) {
		char path[300], name[32];

		if (e->d_name[0] == '.' || !tp_thread_name(e->d_name, name, sizeof(name)) ||
		    strcmp(name, "xsc-watchdog"))
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/status", e->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	if (d)
		closedir(d);
	return fd;
}

/* ---- signals and seccomp ----------------------------------------------- */

/* sigaction(sig) with handler h, flags (no SA_RESTART unless given) and
 * an empty mask; sigaction's result.  tp_on_siginfo: an SA_SIGINFO
 * handler. */
/* Waits until a thread has set *stage to s just before a call that
 * blocks, then 50 ms more: it is in the call by then. */
static inline void tp_when(volatile sig_atomic_t *stage, int s)
{
	while (*stage != s)
		usleep(1000);
	usleep(50 * 1000);
}

static inline int tp_on_signal(int sig, void (*h)(int), int flags)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = h;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	return sigaction(sig, &sa, NULL);
}

static inline int tp_on_siginfo(int sig, void (*h)(int, siginfo_t *, void *), int flags)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = h;
	sa.sa_flags = SA_SIGINFO | flags;
	sigemptyset(&sa.sa_mask);
	return sigaction(sig, &sa, NULL);
}

/* A seccomp filter on the calling thread (and the threads it creates
 * after) that fails system calls a and b with EPERM and allows the rest,
 * after no_new_privs; 0, or -1 with errno. */
static inline int tp_seccomp_refuse(int a, int b)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)a, 1, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)b, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}
#endif
