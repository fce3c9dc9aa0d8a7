/* Small assertion helpers for the xsc tests: typed, print both operands,
 * exit 1 on failure; skip() exits 77 with the reason. */
#ifndef XSC_TESTLIB_H
#define XSC_TESTLIB_H
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c) do { if (!(c)) { \
	fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #c); \
	exit(1); } } while (0)
#define CHECK_EQ(a, b) do { long long _a = (long long)(a), _b = (long long)(b); \
	if (_a != _b) { fprintf(stderr, "%s:%d: %s == %s failed: %lld != %lld\n", \
	__FILE__, __LINE__, #a, #b, _a, _b); exit(1); } } while (0)
#define CHECK_GE(a, b) do { long long _a = (long long)(a), _b = (long long)(b); \
	if (_a < _b) { fprintf(stderr, "%s:%d: %s >= %s failed: %lld < %lld\n", \
	__FILE__, __LINE__, #a, #b, _a, _b); exit(1); } } while (0)

void skip(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
/* Number of open file descriptors of this process. */
int count_fds(void);
/* Resident set size in KiB. */
long rss_kib(void);
/* XSC_BACKEND from the environment, or "auto". */
const char *test_backend(void);
/* The executor a fresh handle routes read(2) to (enum xsc_backend):
 * XSC_BACKEND's, or its fallback when io_uring is unavailable. */
int test_read_route(void);
/* 1 when built with sanitizers (tests may scale their loops down). */
int test_sanitized(void);
/* A fresh scratch directory under /tmp, removed at exit. */
const char *scratch_dir(void);
/* Forces the host profile of this process (XSC_HOST_PROFILE, before the
 * first handle loads it): "cheap" a host where a system call costs 45 ns
 * and a posted call 110 ns (in io_uring's workers 1500 ns), "dear" one
 * where a system call costs 1100 ns and a posted call 100 ns (400 ns).
 * Returns the file's path. */
const char *test_force_profile(const char *which);
/* Seconds on the monotonic clock. */
double now_s(void);
/* Waits for entry id (polling) and takes its result; an entry still in
 * flight `secs` after its cancel fails the test (a lost cancel) instead
 * of hanging it. */
struct xsc;
long take_within(struct xsc *x, int id, double secs);
/* The end of a handle test: every posted entry completed, xsc_close
 * returns 0, the pipe p is closed and the process is back to fds0 open
 * fds; prints "ok (backend)". */
struct xsc;
void finish_handle(struct xsc *x, const int p[2], int fds0);
/* Runs fn(arg) in a forked child whose descriptor fd (stderr, say) is
 * the write end of a pipe, and _exit(0)s if fn returns; reads the pipe
 * to EOF into out (NUL-terminated, len bytes with the NUL) and returns
 * the child's wait status. */
int test_child_output(void (*fn)(int), int arg, int fd, char *out, size_t len);
/* A seccomp filter on the calling thread (after no_new_privs) that
 * answers system call nr with action (SECCOMP_RET_ERRNO | EPERM,
 * SECCOMP_RET_TRAP, ...) and allows every other; 0 or -errno. */
int test_seccomp_one(int nr, unsigned action);
/* Runs xsc_main(fn, cfg) in a forked child (one runtime per process) and
 * fails the test unless fn returned 42 and the child exited 0. */
struct xsc_runtime_config;
void main_in_child(int (*fn)(int, char **), const struct xsc_runtime_config *cfg);
#endif
