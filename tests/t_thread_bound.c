/* Calls whose meaning depends on the calling thread run on that thread,
 * on every executor (src/table.c marks them; a syscall thread would act
 * on, or measure, itself).  One representative per family, each checked
 * from the caller's side:
 *  - perf_event_open(pid 0): a task clock that counts the caller's work;
 *  - keyctl: the thread keyring created through xsc is the caller's;
 *  - io_uring_setup(SINGLE_ISSUER): the ring belongs to the caller, whose
 *    own io_uring_enter on it then succeeds (-EEXIST otherwise);
 *  - prctl(PR_SET_NAME): the caller's name changes;
 *  - set_mempolicy: the caller's NUMA policy changes (get_mempolicy);
 *  - ioprio_set(IOPRIO_WHO_PROCESS, 0) and sched_setaffinity(0): the
 *    caller's I/O priority and CPU set change;
 *  - clock_gettime(CLOCK_THREAD_CPUTIME_ID): the caller's CPU time, read
 *    between two native reads after it has spun for 30 ms;
 *  - by their arguments: a PI futex records the caller's thread id as
 *    owner; waitid/wait4 with __WNOTHREAD reap the caller's own child;
 *    ppoll with a signal mask is ended by a signal sent to the caller;
 *  - numbers the table does not know, and the LSM self-attribute calls,
 *    are routed to the caller.
 * xsc-test: per-backend */
#include <linux/futex.h>
#include <linux/io_uring.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <linux/keyctl.h>
#include <linux/perf_event.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"
#include "xsc.h"

static struct xsc *x;

static void perf(void)
{
	struct perf_event_attr a;
	long fd;
	uint64_t ns = 0;
	struct timespec t0, t1;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	if (fd < 0) {
		printf("perf_event_open natively: %s; not checked\n", strerror(errno));
		return;
	}
	close((int)fd);
	fd = xsc_call(x, SYS_perf_event_open, &a, 0, -1, -1, 0);
	CHECK_GE(fd, 0);
	/* 100 ms of the caller's own CPU time (not wall time: on a loaded
	 * machine the caller gets a fraction of the 100 ms) */
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	do
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
	while ((t1.tv_sec - t0.tv_sec) * 1000000000L + t1.tv_nsec - t0.tv_nsec < 100000000L);
	CHECK_EQ(read((int)fd, &ns, sizeof(ns)), sizeof(ns));
	if (ns < 50000000ULL) {
		fprintf(stderr, "task clock through xsc counted %llu ns of the caller's "
			"100 ms of CPU: it measures another thread\n",
			(unsigned long long)ns);
		exit(1);
	}
	close((int)fd);
}

static void keyring(void)
{
	long id = xsc_call(x, SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_THREAD_KEYRING, 1, 0, 0);
	if (id == -ENOSYS || id == -EACCES || id == -EPERM) {
		printf("keyctl: %s; not checked\n", strerror((int)-id));
		return;
	}
	CHECK_GE(id, 1);
	CHECK_EQ(syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_THREAD_KEYRING, 0), id);
}

static void ring(void)
{
	struct io_uring_params p;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SINGLE_ISSUER;
	long fd = xsc_call(x, SYS_io_uring_setup, 4, &p);
	if (fd < 0) {
		printf("io_uring_setup: %s; not checked\n", strerror((int)-fd));
		return;
	}
	/* an enter that submits nothing still checks the issuer */
	long r = syscall(SYS_io_uring_enter, fd, 0, 0, 0, NULL, 0);
	if (r < 0) {
		fprintf(stderr, "io_uring_enter on a ring made through xsc: %s\n",
			strerror(errno));
		exit(1);
	}
	close((int)fd);
}

static void name(void)
{
	char got[32] = { 0 };

	CHECK_EQ(xsc_call(x, SYS_prctl, PR_SET_NAME, "xsc-bound", 0, 0, 0), 0);
	CHECK_EQ(prctl(PR_GET_NAME, got, 0, 0, 0), 0);
	CHECK(strcmp(got, "xsc-bound") == 0);
}

static void mempolicy(void)
{
	unsigned long node0 = 1;
	int mode = -1;

	if (syscall(SYS_get_mempolicy, &mode, NULL, 0, NULL, 0) != 0) {
		printf("get_mempolicy natively: %s; not checked\n", strerror(errno));
		return;
	}
	CHECK_EQ(mode, 0);	/* MPOL_DEFAULT */
	CHECK_EQ(xsc_call(x, SYS_set_mempolicy, 1 /* MPOL_PREFERRED */, &node0, 64), 0);
	CHECK_EQ(syscall(SYS_get_mempolicy, &mode, NULL, 0, NULL, 0), 0);
	CHECK_EQ(mode, 1);
	CHECK_EQ(xsc_call(x, SYS_set_mempolicy, 0, NULL, 0), 0);
	CHECK_EQ(syscall(SYS_get_mempolicy, &mode, NULL, 0, NULL, 0), 0);
	CHECK_EQ(mode, 0);
}

#define IOPRIO_WHO_PROCESS 1
#define IOPRIO_BE_5 ((2 << 13) | 5)	/* IOPRIO_CLASS_BE, level 5 */

static void sched(void)
{
	long old = syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, 0);
	cpu_set_t all, one, got;

	CHECK_GE(old, 0);
	CHECK(old != IOPRIO_BE_5);
	CHECK_EQ(xsc_call(x, SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, IOPRIO_BE_5), 0);
	CHECK_EQ(syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, 0), IOPRIO_BE_5);
	CHECK_EQ(syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, old), 0);

	CHECK_EQ(sched_getaffinity(0, sizeof(all), &all), 0);
	if (CPU_COUNT(&all) < 2) {
		printf("one CPU allowed: sched_setaffinity not checked\n");
		return;
	}
	CPU_ZERO(&one);
	for (int c = CPU_SETSIZE - 1; c >= 0; c--)
		if (CPU_ISSET(c, &all)) {
			CPU_SET(c, &one);	/* the highest allowed CPU only */
			break;
		}
	CHECK_EQ(xsc_call(x, SYS_sched_setaffinity, 0, sizeof(one), &one), 0);
	CHECK_EQ(sched_getaffinity(0, sizeof(got), &got), 0);
	CHECK(CPU_EQUAL(&got, &one));
	CHECK_EQ(sched_setaffinity(0, sizeof(all), &all), 0);
}

static uint64_t ns_of(const struct timespec *t)
{
	return (uint64_t)t->tv_sec * 1000000000u + (uint64_t)t->tv_nsec;
}

static void thread_clock(void)
{
	struct timespec before, mid, after;

	CHECK_EQ(clock_gettime(CLOCK_THREAD_CPUTIME_ID, &before), 0);
	do	/* 30 ms of the caller's own CPU time */
		CHECK_EQ(clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mid), 0);
	while (ns_of(&mid) - ns_of(&before) < 30000000);
	CHECK_EQ(xsc_call(x, SYS_clock_gettime, CLOCK_THREAD_CPUTIME_ID, &mid), 0);
	CHECK_EQ(clock_gettime(CLOCK_THREAD_CPUTIME_ID, &after), 0);
	CHECK(ns_of(&mid) >= ns_of(&before) + 30000000);
	CHECK(ns_of(&mid) <= ns_of(&after));
}

static void pi_futex(void)
{
	uint32_t w = 0;

	CHECK_EQ(xsc_call(x, SYS_futex, &w, FUTEX_LOCK_PI_PRIVATE, 0, NULL, NULL, 0), 0);
	CHECK_EQ(w, (uint32_t)gettid());	/* the owner is the caller */
	CHECK_EQ(xsc_call(x, SYS_futex, &w, FUTEX_UNLOCK_PI_PRIVATE, 0, NULL, NULL, 0), 0);
	CHECK_EQ(w, 0);
}

static pid_t child(int code)
{
	pid_t pid = fork();

	CHECK(pid >= 0);
	if (pid == 0)
		_exit(code);
	return pid;
}

static void wnothread(void)
{
	siginfo_t si;
	int status = 0;
	pid_t pid = child(7);

	memset(&si, 0, sizeof(si));
	CHECK_EQ(xsc_call(x, SYS_waitid, P_PID, pid, &si, WEXITED | __WNOTHREAD, NULL), 0);
	CHECK_EQ(si.si_pid, pid);
	CHECK_EQ(si.si_status, 7);
	pid = child(9);
	CHECK_EQ(xsc_call(x, SYS_wait4, pid, &status, __WNOTHREAD, NULL), pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 9);
}

static void on_usr1(int sig) { (void)sig; }

static void *poke(void *tid)
{
	usleep(100000);
	syscall(SYS_tgkill, getpid(), *(pid_t *)tid, SIGUSR1);
	return NULL;
}

static void masked_wait(void)
{
	struct sigaction sa;
	sigset_t block, none;
	struct pollfd pfd;
	struct timespec ts = { 5, 0 };
	pthread_t t;
	pid_t me = gettid();
	int p[2];

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigemptyset(&none);
	CHECK_EQ(pthread_sigmask(SIG_BLOCK, &block, NULL), 0);
	CHECK_EQ(pipe(p), 0);
	pfd = (struct pollfd){ p[0], POLLIN, 0 };
	CHECK_EQ(pthread_create(&t, NULL, poke, &me), 0);
	double t0 = now_s();
	/* the wait unblocks SIGUSR1 for the caller: the signal sent to the
	 * caller ends it at once, not the 5 s timeout */
	CHECK_EQ(xsc_call(x, SYS_ppoll, &pfd, 1, &ts, &none, 8), -EINTR);
	CHECK(now_s() - t0 < 4);
	CHECK_EQ(pthread_join(t, NULL), 0);
	CHECK_EQ(pthread_sigmask(SIG_UNBLOCK, &block, NULL), 0);
	close(p[0]);
	close(p[1]);
}

static void routes(void)
{
	const char *why;

	CHECK_EQ(xsc_route(x, 459, &why), XSC_BACKEND_INLINE);	/* lsm_get_self_attr */
	CHECK_EQ(xsc_route(x, 460, &why), XSC_BACKEND_INLINE);	/* lsm_set_self_attr */
	CHECK_EQ(xsc_route(x, 1000, &why), XSC_BACKEND_INLINE);	/* no such call */
	CHECK_EQ(xsc_call(x, 1000), -ENOSYS);
}

int main(void)
{
	CHECK_EQ(xsc_open(&x, NULL), 0);
	perf();
	keyring();
	ring();
	name();
	mempolicy();
	sched();
	thread_clock();
	pi_futex();
	wnothread();
	masked_wait();
	routes();
	CHECK_EQ(xsc_close(x), 0);
	printf("ok (%s)\n", test_backend());
	return 0;
}
