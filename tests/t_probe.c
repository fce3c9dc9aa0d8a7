/* Probing and fallback: XSC_BACKEND forcing, a bogus value, and io_uring
 * made unavailable by a seccomp filter (EPERM for io_uring_setup) in a
 * child process: everything still runs, through the fallback, with a
 * visible reason. */
#include <fcntl.h>
#include <liburing.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testlib.h"
#include "xsc.h"

/* A few real calls whose results are checked. */
static void exercise(struct xsc *x)
{
	char path[128], buf[8] = { 0 };
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "%s/probe-%d", scratch_dir(), getpid());
	fd = (int)xsc_call(x, SYS_openat, AT_FDCWD, path, O_CREAT | O_RDWR, 0600);
	CHECK_GE(fd, 0);
	CHECK_EQ(xsc_call(x, SYS_write, fd, "abcd", 4), 4);
	CHECK_EQ(xsc_call(x, SYS_pread64, fd, buf, 8, 1), 3);
	CHECK(!strcmp(buf, "bcd"));
	CHECK_EQ(xsc_call(x, SYS_fstat, fd, &st), 0);
	CHECK_EQ(st.st_size, 4);
	CHECK_EQ(xsc_call(x, SYS_close, fd), 0);
	CHECK_EQ(xsc_call(x, SYS_close, fd), -EBADF);
	CHECK_EQ(xsc_call(x, SYS_unlink, path), 0);
	CHECK_EQ(xsc_call(x, SYS_getppid), getppid());
}

static int route_of(const char *backend, long nr)
{
	struct xsc *x;
	const char *why;
	int r;

	if (backend)
		setenv("XSC_BACKEND", backend, 1);
	else
		unsetenv("XSC_BACKEND");
	CHECK_EQ(xsc_open(&x, NULL), 0);
	exercise(x);
	r = xsc_route(x, nr, &why);
	printf("XSC_BACKEND=%s: %s -> %s (%s)\n", backend ? backend : "(unset)",
	       xsc_syscall_name(nr), xsc_backend_name(r), why);
	CHECK_EQ(xsc_close(x), 0);
	return r;
}

/* The opcodes xsc counts are the kernel's: IORING_REGISTER_PROBE on a
 * ring of this test's own says the same number. */
static void check_opcodes(void)
{
	struct io_uring ring;
	struct io_uring_probe *pr;
	struct xsc_probe p;
	struct xsc *x;

	setenv("XSC_BACKEND", "uring", 1);
	CHECK_EQ(xsc_open(&x, NULL), 0);
	xsc_probe_get(x, &p);
	CHECK_EQ(xsc_close(x), 0);
	CHECK_EQ(io_uring_queue_init(4, &ring, 0), 0);
	pr = io_uring_get_probe_ring(&ring);
	CHECK(pr != NULL);
	printf("opcodes: %d (the kernel's probe: %d)\n", p.nops, pr->last_op + 1);
	CHECK_EQ(p.nops, pr->last_op + 1);
	CHECK_GE(p.nops, 1);
	io_uring_free_probe(pr);
	io_uring_queue_exit(&ring);
}

/* A filter that answers EPERM for system call nr. */
static int install_filter_nr(unsigned nr)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

static int install_filter(void)
{
	return install_filter_nr(__NR_io_uring_setup);
}

/* In a child: a filter that allows io_uring but denies mkdir.  An
 * environment variable asking for io_uring must not switch the filter
 * off: mkdir through xsc gets the filter's EPERM, and nothing is made;
 * only the explicit opt-in makes a ring. */
static void sandbox_child(void)
{
	char path[300];
	struct xsc_probe p;
	struct xsc *x;

	snprintf(path, sizeof(path), "%s/denied", scratch_dir());
	CHECK_EQ(install_filter_nr(__NR_mkdir), 0);
	for (int i = 0; i < 2; i++) {
		setenv("XSC_BACKEND", i ? "sqpoll" : "uring", 1);
		CHECK_EQ(xsc_open(&x, NULL), 0);
		xsc_probe_get(x, &p);
		CHECK_EQ(p.uring, 0);
		CHECK(strstr(p.reason, "seccomp") != NULL);
		CHECK_EQ(xsc_call(x, SYS_mkdir, path, 0755), -EPERM);
		CHECK(access(path, F_OK) != 0);
		CHECK_EQ(xsc_close(x), 0);
	}
	/* the handle flag says the same as the variable */
	struct xsc_config cfg;
	xsc_config_init(&cfg);
	cfg.flags |= XSC_SECCOMP_URING;
	setenv("XSC_BACKEND", "uring", 1);
	CHECK_EQ(xsc_open(&x, &cfg), 0);
	xsc_probe_get(x, &p);
	CHECK_EQ(p.uring, 1);
	CHECK_EQ(xsc_route(x, SYS_read, NULL), XSC_BACKEND_URING);
	CHECK_EQ(xsc_close(x), 0);
	setenv("XSC_SECCOMP_ALLOWS_IO_URING", "1", 1);
	CHECK_EQ(xsc_open(&x, NULL), 0);
	xsc_probe_get(x, &p);
	CHECK_EQ(p.uring, 1);	/* the operator's word: a ring */
	CHECK_EQ(xsc_close(x), 0);
	exit(0);
}

/* In a child: io_uring blocked by seccomp. */
static void seccomp_child(void)
{
	struct xsc *x;
	struct xsc_probe p;

	CHECK_EQ(install_filter(), 0);
	/* auto: seccomp active, so no io_uring at all, with a reason */
	CHECK_EQ(route_of(NULL, SYS_read), XSC_BACKEND_WORKER);
	/* forced uring: still no ring, the filter is active */
	setenv("XSC_BACKEND", "uring", 1);
	CHECK_EQ(xsc_open(&x, NULL), 0);
	xsc_probe_get(x, &p);
	printf("forced uring under seccomp: uring=%d reason=%s\n", p.uring, p.reason);
	CHECK_EQ(p.uring, 0);
	CHECK_EQ(p.seccomp, 1);
	CHECK(strstr(p.reason, "seccomp filter is active") != NULL);
	CHECK_EQ(xsc_close(x), 0);
	/* with the opt-in it tries: io_uring_setup fails with EPERM ->
	 * fallback, with that reason */
	setenv("XSC_SECCOMP_ALLOWS_IO_URING", "1", 1);
	CHECK_EQ(xsc_open(&x, NULL), 0);
	xsc_probe_get(x, &p);
	CHECK_EQ(p.uring, 0);
	CHECK(strstr(p.reason, "io_uring_setup") != NULL);
	CHECK(strstr(p.reason, "Operation not permitted") != NULL);
	exercise(x);
	CHECK(xsc_route(x, SYS_read, NULL) == XSC_BACKEND_WORKER);
	CHECK_EQ(xsc_close(x), 0);
	exit(0);
}

int main(void)
{
	int status;
	pid_t pid;

	/* the stat family's route below is the host profile's choice: the
	 * one of a host where a system call is cheap, on any host
	 * (t_hostprof_routes checks the other) */
	test_force_profile("cheap");
	CHECK_EQ(route_of("inline", SYS_read), XSC_BACKEND_INLINE);
	CHECK_EQ(route_of("sync", SYS_read), XSC_BACKEND_INLINE);
	CHECK_EQ(route_of("worker", SYS_read), XSC_BACKEND_WORKER);
	CHECK_EQ(route_of("worker", SYS_getppid), XSC_BACKEND_WORKER);
	CHECK_EQ(route_of("worker", SYS_gettid), XSC_BACKEND_INLINE);
	CHECK_EQ(route_of("uring", SYS_getppid), XSC_BACKEND_INLINE);
	CHECK_EQ(route_of("uring", SYS_getdents64), XSC_BACKEND_WORKER);
	int r = route_of("uring", SYS_read);
	if (r != XSC_BACKEND_URING)
		skip("io_uring unavailable on this machine");
	CHECK_EQ(route_of("sqpoll", SYS_read), XSC_BACKEND_SQPOLL);
	check_opcodes();
	CHECK_EQ(route_of("bogus", SYS_read), XSC_BACKEND_URING);
	/* the table's .cheap: where a system call costs less than a posted
	 * call, AUTO keeps the stat family inline; a forced backend uses its
	 * io_uring form */
	static const long cheap[] = { SYS_stat, SYS_lstat, SYS_fstat, SYS_newfstatat };
	for (int i = 0; i < 4; i++) {
		CHECK_EQ(route_of(NULL, cheap[i]), XSC_BACKEND_INLINE);
		CHECK_EQ(route_of("uring", cheap[i]), XSC_BACKEND_URING);
	}
	CHECK_EQ(route_of(NULL, SYS_statx), XSC_BACKEND_URING);

	fflush(stdout);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
		seccomp_child();
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 0);
	scratch_dir();	/* made here, so this process removes it */
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
		sandbox_child();
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 0);
	return 0;
}
