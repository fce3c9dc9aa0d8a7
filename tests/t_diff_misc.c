/* Differential test, the rest: splice, tee, epoll_ctl, nanosleep,
 * clock_nanosleep, poll, epoll_wait, epoll_pwait, futex, waitid (io_uring translations) and a
 * representative set of worker/inline-only calls (getppid, mmap, munmap,
 * mprotect, brk, getdents64, ioctl, fcntl, dup, pipe2, lseek, getcwd,
 * uname), through xsc and directly, compared field by field (see
 * tests/diff.h).
 * xsc-test: per-backend
 * xsc-test: timeout=120 */
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>

#include "diff.h"

static int64_t now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000LL + t.tv_nsec / 1000000;
}

static void c_splice_tee(void)
{
	int a[2], b[2], nb[2], s[2], f, d;
	char buf[32] = { 0 };

	CHECK_EQ(pipe(a), 0);
	CHECK_EQ(pipe(b), 0);
	CHECK_EQ(pipe2(nb, O_NONBLOCK), 0);
	CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
	f = open("f", O_RDWR | O_CREAT, 0644);
	d = open(".", O_RDONLY);
	CHECK_EQ(write(f, "0123456789", 10), 10);
	lseek(f, 2, SEEK_SET);
	R("splice file->pipe", SYS_splice, f, NULL, a[1], NULL, 4, 0);
	obs_fd("file (advanced)", f);
	R("tee a->b", SYS_tee, a[0], b[1], 100, 0);
	R("splice pipe->pipe", SYS_splice, a[0], NULL, b[1], NULL, 100, 0);
	rec_i("b has", read(b[0], buf, sizeof(buf)));
	rec_b("b data", buf, 8);
	CHECK_EQ(write(a[1], "sock", 4), 4);
	R("splice pipe->socket", SYS_splice, a[0], NULL, s[0], NULL, 4, 0);
	R("splice socket->pipe", SYS_splice, s[1], NULL, b[1], NULL, 4, 0);
	rec_i("b has", read(b[0], buf, sizeof(buf)));
	CHECK_EQ(write(a[1], "xyz", 3), 3);
	R("splice pipe->file", SYS_splice, a[0], NULL, f, NULL, 3, 0);
	obs_path("f", "f");
	loff_t off = 1;
	CHECK_EQ(write(a[1], "OFF", 3), 3);
	R("splice with off_out", SYS_splice, a[0], NULL, f, &off, 3, 0);
	rec_i("off after", off);
	R("splice off on pipe (ESPIPE)", SYS_splice, a[0], &off, f, NULL, 3, 0);
	R("splice file->file (EINVAL)", SYS_splice, f, NULL, f, NULL, 3, 0);
	R("splice bad flags", SYS_splice, a[0], NULL, b[1], NULL, 3, 0x100);
	R("splice empty, SPLICE_F_NONBLOCK", SYS_splice, a[0], NULL, b[1], NULL, 3,
	  SPLICE_F_NONBLOCK);
	R("splice empty O_NONBLOCK pipe", SYS_splice, nb[0], NULL, b[1], NULL, 3, 0);
	R("splice len 0", SYS_splice, a[0], NULL, b[1], NULL, 0, 0);
	R("splice EBADF", SYS_splice, 9999, NULL, b[1], NULL, 3, 0);
	R("splice dir", SYS_splice, d, NULL, b[1], NULL, 3, 0);
	R("tee same pipe", SYS_tee, a[0], a[1], 3, 0);
	R("tee empty SPLICE_F_NONBLOCK", SYS_tee, a[0], b[1], 3, SPLICE_F_NONBLOCK);
	R("tee not a pipe", SYS_tee, f, b[1], 3, 0);
	R("tee bad flags", SYS_tee, a[0], b[1], 3, 0x100);
	R("tee EBADF", SYS_tee, 9999, b[1], 3, 0);
	R("tee len 0", SYS_tee, a[0], b[1], 0, 0);
	close(a[0]); close(a[1]); close(b[0]); close(b[1]);
	close(nb[0]); close(nb[1]); close(s[0]); close(s[1]);
	close(f);
	close(d);
}

static void c_epoll_ctl(void)
{
	int ep = epoll_create1(0), p[2], f = open("f", O_RDWR | O_CREAT, 0644);
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 0x1234 }, out[4];

	CHECK_EQ(pipe(p), 0);
	R("epoll_ctl ADD", SYS_epoll_ctl, ep, EPOLL_CTL_ADD, p[0], &ev);
	R("epoll_ctl ADD again (EEXIST)", SYS_epoll_ctl, ep, EPOLL_CTL_ADD, p[0], &ev);
	CHECK_EQ(write(p[1], "x", 1), 1);
	memset(out, 0, sizeof(out));
	rec_i("epoll_wait", epoll_wait(ep, out, 4, 0));
	rec_i("events", out[0].events);
	rec_i("data", (long long)out[0].data.u64);
	ev.events = EPOLLIN | EPOLLET;
	ev.data.u64 = 99;
	R("epoll_ctl MOD", SYS_epoll_ctl, ep, EPOLL_CTL_MOD, p[0], &ev);
	rec_i("epoll_wait", epoll_wait(ep, out, 4, 0));
	rec_i("data", (long long)out[0].data.u64);
	R("epoll_ctl MOD missing (ENOENT)", SYS_epoll_ctl, ep, EPOLL_CTL_MOD, p[1], &ev);
	ev.events = EPOLLIN | EPOLLEXCLUSIVE;
	R("epoll_ctl MOD EXCLUSIVE", SYS_epoll_ctl, ep, EPOLL_CTL_MOD, p[0], &ev);
	R("epoll_ctl ADD regular file (EPERM)", SYS_epoll_ctl, ep, EPOLL_CTL_ADD, f, &ev);
	R("epoll_ctl ADD itself", SYS_epoll_ctl, ep, EPOLL_CTL_ADD, ep, &ev);
	R("epoll_ctl bad op", SYS_epoll_ctl, ep, 99, p[0], &ev);
	R("epoll_ctl not an epoll fd", SYS_epoll_ctl, p[0], EPOLL_CTL_ADD, p[1], &ev);
	R("epoll_ctl EBADF", SYS_epoll_ctl, 9999, EPOLL_CTL_ADD, p[1], &ev);
	R("epoll_ctl event EFAULT", SYS_epoll_ctl, ep, EPOLL_CTL_ADD, p[1], 8);
	R("epoll_ctl EBADF and EFAULT", SYS_epoll_ctl, -1, EPOLL_CTL_ADD, p[1], 8);
	R("epoll_ctl DEL NULL event", SYS_epoll_ctl, ep, EPOLL_CTL_DEL, p[0], NULL);
	R("epoll_ctl DEL again", SYS_epoll_ctl, ep, EPOLL_CTL_DEL, p[0], NULL);
	rec_i("epoll_wait after DEL", epoll_wait(ep, out, 4, 0));
	close(ep);
	close(p[0]);
	close(p[1]);
	close(f);
}

static void c_sleep(void)
{
	struct timespec ts = { 0, 2000000 }, rem = { 7, 7 }, zero = { 0, 0 }, bad = { 0, 1000000000 };
	struct timespec neg = { -1, 0 }, abs_past = { 1, 0 };
	int64_t t0 = now_ms();

	R("nanosleep 2 ms", SYS_nanosleep, &ts, &rem);
	rec_i("slept >= 2 ms", now_ms() - t0 >= 2);
	/* rem is not compared: a sleep restarted by the kernel
	 * (-ERESTART_RESTARTBLOCK) writes it and still returns 0 */
	(void)rem;
	R("nanosleep 0", SYS_nanosleep, &zero, NULL);
	R("nanosleep nsec 1e9", SYS_nanosleep, &bad, NULL);
	R("nanosleep negative", SYS_nanosleep, &neg, NULL);
	R("nanosleep EFAULT", SYS_nanosleep, 8, NULL);
	R("nanosleep unmapped", SYS_nanosleep, unmapped(), NULL);
	R("nanosleep rem EFAULT", SYS_nanosleep, &zero, 8);
	t0 = now_ms();
	R("clock_nanosleep MONOTONIC", SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &ts, NULL);
	rec_i("slept >= 2 ms", now_ms() - t0 >= 2);
	R("clock_nanosleep REALTIME", SYS_clock_nanosleep, CLOCK_REALTIME, 0, &ts, NULL);
	R("clock_nanosleep BOOTTIME", SYS_clock_nanosleep, CLOCK_BOOTTIME, 0, &ts, NULL);
	R("clock_nanosleep ABSTIME past", SYS_clock_nanosleep, CLOCK_MONOTONIC, TIMER_ABSTIME,
	  &abs_past, NULL);
	struct timespec soon;
	clock_gettime(CLOCK_REALTIME, &soon);
	soon.tv_nsec += 2000000;
	if (soon.tv_nsec >= 1000000000) {
		soon.tv_sec++;
		soon.tv_nsec -= 1000000000;
	}
	R("clock_nanosleep REALTIME ABSTIME", SYS_clock_nanosleep, CLOCK_REALTIME,
	  TIMER_ABSTIME, &soon, NULL);
	R("clock_nanosleep PROCESS_CPUTIME", SYS_clock_nanosleep, CLOCK_PROCESS_CPUTIME_ID, 0,
	  &zero, NULL);
	R("clock_nanosleep THREAD_CPUTIME", SYS_clock_nanosleep, CLOCK_THREAD_CPUTIME_ID, 0,
	  &ts, NULL);
	R("clock_nanosleep bad clock", SYS_clock_nanosleep, 99, 0, &ts, NULL);
	R("clock_nanosleep flags 2", SYS_clock_nanosleep, CLOCK_MONOTONIC, 2, &zero, NULL);
	R("clock_nanosleep nsec 1e9", SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &bad, NULL);
	R("clock_nanosleep EFAULT", SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, 8, NULL);
	R("clock_nanosleep negative ABSTIME", SYS_clock_nanosleep, CLOCK_MONOTONIC,
	  TIMER_ABSTIME, &neg, NULL);
}

static void c_poll(void)
{
	int p[2], s[2], f = open("f", O_RDWR | O_CREAT, 0644), cl = open(".", O_RDONLY);
	struct pollfd pf, two[2];

	CHECK_EQ(pipe(p), 0);
	CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
	close(cl);	/* cl is now a closed fd number */
#define P(label, fd_, ev, tmo) \
	pf = (struct pollfd){ .fd = (fd_), .events = (short)(ev), .revents = 0x5a5a }; \
	R(label, SYS_poll, &pf, 1, tmo); \
	rec_i(L(label, "revents"), (unsigned short)pf.revents)
	P("poll pipe empty 5 ms", p[0], POLLIN, 5);
	CHECK_EQ(write(p[1], "x", 1), 1);
	P("poll pipe readable", p[0], POLLIN, 100);
	P("poll pipe readable, infinite", p[0], POLLIN | POLLPRI, -1);
	P("poll write end", p[1], POLLOUT, 100);
	P("poll write end, ask POLLIN", p[1], POLLIN, 5);
	P("poll events 0", p[0], 0, 5);
	P("poll regular file", f, POLLIN | POLLOUT, 100);
	P("poll closed fd (POLLNVAL)", cl, POLLIN, 100);
	P("poll fd 9999", 9999, POLLIN, 100);
	P("poll negative fd", -1, POLLIN, 5);
	P("poll timeout 0", p[0], POLLIN, 0);
	shutdown(s[1], SHUT_WR);
	P("poll socket RDHUP", s[0], POLLIN | POLLRDHUP, 100);
	close(p[1]);
	P("poll writer closed (POLLHUP)", p[0], POLLIN, 100);
	P("poll writer closed, events 0", p[0], 0, 100);
#undef P
	R("poll EFAULT", SYS_poll, 8, 1, 100);
	R("poll EFAULT, timeout -1", SYS_poll, unmapped(), 1, -1);
	two[0] = (struct pollfd){ .fd = p[0], .events = POLLIN };
	two[1] = (struct pollfd){ .fd = s[0], .events = POLLIN };
	R("poll 2 fds", SYS_poll, two, 2, 100);
	rec_i("revents 0", two[0].revents);
	rec_i("revents 1", two[1].revents);
	R("poll nfds huge", SYS_poll, two, 1L << 20, 100);
	close(p[0]);
	close(s[0]);
	close(s[1]);
	close(f);
}

/* epoll_wait and epoll_pwait without a mask (io_uring's EPOLL_WAIT with a
 * linked timeout where the kernel has it): events ready, none within the
 * timeout, edge- and level-triggered, one-shot, fewer slots than events,
 * and what the kernel refuses before it waits. */
static void c_epoll_wait(void)
{
	int ep = epoll_create1(0), p[2], q[2];
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 0x1234 }, out[4];

	CHECK_EQ(pipe(p), 0);
	CHECK_EQ(pipe(q), 0);
	CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev), 0);
	ev.events = EPOLLIN | EPOLLET;
	ev.data.u64 = 0x5678;
	CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, q[0], &ev), 0);
#define W(label, nr, n, ...) \
	memset(out, 0x5a, sizeof(out)); \
	R(label, nr, ep, out, n, __VA_ARGS__); \
	rec_b(L(label, "events"), out, sizeof(out))
	W("epoll_wait empty 5 ms", SYS_epoll_wait, 4, 5);
	CHECK_EQ(write(p[1], "x", 1), 1);
	W("epoll_wait level, ready", SYS_epoll_wait, 4, 100);
	W("epoll_wait level, again", SYS_epoll_wait, 4, -1);
	CHECK_EQ(write(q[1], "y", 1), 1);
	W("epoll_wait two ready", SYS_epoll_wait, 4, 100);
	W("epoll_wait edge consumed", SYS_epoll_wait, 4, 100);
	CHECK_EQ(write(q[1], "y", 1), 1);
	W("epoll_wait one slot", SYS_epoll_wait, 1, 100);
	W("epoll_wait one slot, next", SYS_epoll_wait, 1, 100);
	W("epoll_pwait no mask", SYS_epoll_pwait, 4, 100, NULL, 8);
	W("epoll_pwait no mask, size 0", SYS_epoll_pwait, 4, 100, NULL, 0);
	ev.events = EPOLLIN | EPOLLONESHOT;
	ev.data.u64 = 0x9abc;
	CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_MOD, p[0], &ev), 0);
	W("epoll_wait one-shot", SYS_epoll_wait, 4, 100);
	W("epoll_wait one-shot spent", SYS_epoll_wait, 4, 5);
#undef W
	R("epoll_wait n 0 (EINVAL)", SYS_epoll_wait, ep, out, 0, 100);
	R("epoll_wait n -1", SYS_epoll_wait, ep, out, -1, 100);
	R("epoll_wait n huge", SYS_epoll_wait, ep, out, INT_MAX, 100);
	R("epoll_wait events in kernel space", SYS_epoll_wait, ep, 0xffff888000000000ULL, 4, 100);
	R("epoll_wait events past user space", SYS_epoll_wait, ep, 0x7ffffffff000ULL - 24, 4, 100);
	CHECK_EQ(write(q[1], "y", 1), 1);
	R("epoll_wait events unmapped, ready", SYS_epoll_wait, ep, unmapped(), 4, -1);
	R("epoll_wait not an epoll fd", SYS_epoll_wait, p[0], out, 4, 100);
	R("epoll_wait EBADF", SYS_epoll_wait, 9999, out, 4, 100);
	R("epoll_wait negative fd", SYS_epoll_wait, -1, out, 4, 100);
	close(ep);
	close(p[0]);
	close(p[1]);
	close(q[0]);
	close(q[1]);
}

static uint32_t fword;
static _Atomic int waiter_state;

static void *futex_waiter(void *arg)
{
	long op = (long)arg;
	waiter_state = 1;
	long r = xsc__sys6(SYS_futex, (long)&fword, op, 0, 0, 0, 0);
	waiter_state = r == 0 ? 2 : 3;
	return NULL;
}

static void *futex_waker(void *arg)
{
	(void)arg;
	usleep(20000);
	fword = 1;
	xsc__sys6(SYS_futex, (long)&fword, FUTEX_WAKE_PRIVATE, 1, 0, 0, 0);
	return NULL;
}

static void c_futex(void)
{
	uint32_t *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct timespec ts = { 0, 1000000 };
	pthread_t t;

	CHECK(m != MAP_FAILED);
	*m = 5;
	R("futex WAKE none", SYS_futex, m, FUTEX_WAKE, 1, 0, 0, 0);
	R("futex WAKE_PRIVATE none", SYS_futex, m, FUTEX_WAKE_PRIVATE, INT_MAX, 0, 0, 0);
	R("futex WAIT mismatch (EAGAIN)", SYS_futex, m, FUTEX_WAIT, 4, 0, 0, 0);
	R("futex WAIT_PRIVATE mismatch", SYS_futex, m, FUTEX_WAIT_PRIVATE, 0x100000004L, 0, 0, 0);
	R("futex WAIT timeout", SYS_futex, m, FUTEX_WAIT_PRIVATE, 5, &ts, 0, 0);
	R("futex WAIT unaligned", SYS_futex, (char *)m + 1, FUTEX_WAIT, 5, 0, 0, 0);
	R("futex WAKE unaligned", SYS_futex, (char *)m + 1, FUTEX_WAKE, 1, 0, 0, 0);
	R("futex WAIT EFAULT", SYS_futex, 8, FUTEX_WAIT, 5, 0, 0, 0);
	R("futex WAIT unmapped", SYS_futex, unmapped(), FUTEX_WAIT_PRIVATE, 5, 0, 0, 0);
	R("futex WAKE EFAULT", SYS_futex, 8, FUTEX_WAKE, 1, 0, 0, 0);
	R("futex WAKE val 0", SYS_futex, m, FUTEX_WAKE, 0, 0, 0, 0);
	R("futex WAKE val -1", SYS_futex, m, FUTEX_WAKE, -1, 0, 0, 0);
	R("futex WAIT_BITSET mask 0", SYS_futex, m, FUTEX_WAIT_BITSET, 5, 0, 0, 0);
	R("futex WAIT_BITSET mismatch", SYS_futex, m, FUTEX_WAIT_BITSET_PRIVATE, 4, 0, 0, 1);
	R("futex WAKE_BITSET none", SYS_futex, m, FUTEX_WAKE_BITSET, 1, 0, 0, 0xff);
	R("futex WAKE CLOCK_REALTIME", SYS_futex, m, FUTEX_WAKE | FUTEX_CLOCK_REALTIME, 1, 0, 0, 0);
	R("futex bad op", SYS_futex, m, 99, 1, 0, 0, 0);
	/* a waiter woken through xsc */
	fword = 0;
	waiter_state = 0;
	CHECK_EQ(pthread_create(&t, NULL, futex_waiter, (void *)(long)FUTEX_WAIT_PRIVATE), 0);
	while (waiter_state != 1)
		usleep(100);
	usleep(20000);
	long woke = Q(SYS_futex, &fword, FUTEX_WAKE_PRIVATE, 1, 0, 0, 0);
	if (woke == 0) {	/* the waiter was not asleep yet: try again */
		usleep(50000);
		woke = Q(SYS_futex, &fword, FUTEX_WAKE_PRIVATE, 1, 0, 0, 0);
	}
	rec_i("futex WAKE woke 1", woke);
	pthread_join(t, NULL);
	rec_i("waiter returned 0", waiter_state);
	/* xsc waiting, woken by a thread */
	fword = 0;
	CHECK_EQ(pthread_create(&t, NULL, futex_waker, NULL), 0);
	R("futex WAIT woken", SYS_futex, &fword, FUTEX_WAIT_PRIVATE, 0, 0, 0, 0);
	pthread_join(t, NULL);
	munmap(m, 4096);
}

static pid_t child(int code, int delay_ms)
{
	pid_t p = fork();
	CHECK_GE(p, 0);
	if (p == 0) {
		if (delay_ms)
			usleep(delay_ms * 1000);
		_exit(code);
	}
	return p;
}

/* siginfo fields waitid writes, pid as "is the child". */
static void obs_si(const char *label, const siginfo_t *si, pid_t pid)
{
	rec_i(L(label, "signo"), si->si_signo);
	rec_i(L(label, "errno"), si->si_errno);
	rec_i(L(label, "code"), si->si_code);
	rec_i(L(label, "pid is child"), si->si_pid == pid ? 1 : si->si_pid);
	rec_i(L(label, "uid"), si->si_uid);
	rec_i(L(label, "status"), si->si_status);
}

static void c_waitid(void)
{
	siginfo_t si;
	pid_t p;
	struct rusage ru;

#define SI() memset(&si, 0x5a, sizeof(si))
	p = child(7, 0);
	SI();
	R("waitid P_PID WEXITED", SYS_waitid, P_PID, p, &si, WEXITED, NULL);
	obs_si("si", &si, p);
	SI();
	R("waitid reaped (ECHILD)", SYS_waitid, P_PID, p, &si, WEXITED, NULL);
	rec_i("si untouched", si.si_signo == 0x5a5a5a5a);
	p = child(3, 200);
	SI();
	R("waitid WNOHANG running", SYS_waitid, P_PID, p, &si, WEXITED | WNOHANG, NULL);
	obs_si("si nohang", &si, p);
	SI();
	R("waitid WNOWAIT", SYS_waitid, P_ALL, 0, &si, WEXITED | WNOWAIT, NULL);
	obs_si("si nowait", &si, p);
	R("waitid NULL infop", SYS_waitid, P_PID, p, NULL, WEXITED, NULL);
	p = child(4, 0);
	memset(&ru, 0xff, sizeof(ru));
	R("waitid with rusage", SYS_waitid, P_PID, p, &si, WEXITED, &ru);
	rec_i("rusage filled", ru.ru_maxrss != -1);
	p = child(5, 0);
	R("waitid EFAULT infop", SYS_waitid, P_PID, p, 8, WEXITED, NULL);
	R("waitid after EFAULT (reaped?)", SYS_waitid, P_PID, p, &si, WEXITED | WNOHANG, NULL);
	R("waitid bad options", SYS_waitid, P_ALL, 0, &si, 0, NULL);
	R("waitid bad which", SYS_waitid, 99, 0, &si, WEXITED, NULL);
	R("waitid P_PID 0", SYS_waitid, P_PID, 0, &si, WEXITED, NULL);
	R("waitid no children", SYS_waitid, P_ALL, 0, &si, WEXITED | WNOHANG, NULL);
	/* a failing waitid(2) still writes infop's head (zeroed): the bytes,
	 * from a buffer prefilled with 0xa5 */
	SAME("waitid bad which, infop bytes", 2, sizeof(siginfo_t), NULL, SYS_waitid,
	     99, 0, 0, WEXITED, 0);
	SAME("waitid bad options, infop bytes", 2, sizeof(siginfo_t), NULL, SYS_waitid,
	     P_ALL, 0, 0, 0, 0);
	SAME("waitid no children, infop bytes", 2, sizeof(siginfo_t), NULL, SYS_waitid,
	     P_ALL, 0, 0, WEXITED | WNOHANG, 0);
	p = child(6, 0);
	SI();
	R("waitid P_PGID", SYS_waitid, P_PGID, 0, &si, WEXITED, NULL);
	obs_si("si pgid", &si, p);
#undef SI
}

/* ---- worker / inline-only calls ----------------------------------------- */

static void c_procinfo(void)
{
	struct utsname u;
	char cwd[PATH_MAX], buf[PATH_MAX];
	long r;

	R0("getppid", SYS_getppid);
	SAME("uname", 0, sizeof(u), &u, SYS_uname, 0);
	rec_s("sysname", u.sysname);
	R("uname EFAULT", SYS_uname, 8);
	memset(cwd, 0, sizeof(cwd));
	r = R("getcwd", SYS_getcwd, cwd, sizeof(cwd));
	/* the run directory differs in one letter: normalize */
	snprintf(buf, sizeof(buf), "%s", r > 0 && !strncmp(cwd, run_dir, strlen(run_dir)) ?
		 "$RUN" : cwd);
	rec_s("cwd", buf);
	R("getcwd ERANGE", SYS_getcwd, cwd, 5);
	R("getcwd size 0", SYS_getcwd, cwd, 0);
	R("getcwd EFAULT", SYS_getcwd, 8, sizeof(cwd));
	/* the break itself depends on what each run allocated (xsc's own
	 * handle and syscall threads in the xsc run): compare the call with
	 * the direct one inside the run, record only that they agree */
	long brk_x = Q(SYS_brk, 0);
	rec_i("brk(0) is the break", brk_x == direct6(SYS_brk, (const long[6]){ 0 }));
}

static void c_mem(void)
{
	char *r = mmap(NULL, 8 * 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int f = open("f", O_RDWR | O_CREAT, 0644);
	unsigned char vec[8];
	long m;

	CHECK(r != MAP_FAILED);
	CHECK_EQ(write(f, "filedata", 8), 8);
	m = R("mmap FIXED anon", SYS_mmap, r, 2 * 4096, PROT_READ | PROT_WRITE,
	      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	rec_i("at the hint", m == (long)r);
	r[0] = 'a';
	m = R("mmap FIXED file", SYS_mmap, r + 2 * 4096, 4096, PROT_READ, MAP_SHARED | MAP_FIXED,
	      f, 0);
	rec_b("file page", r + 2 * 4096, 8);
	m = R("mmap anon no hint", SYS_mmap, 0, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	rec_i("mmap ok", m > 0);	/* an address, not -errno */
	if (m > 0)
		munmap((void *)m, 4096);
	R("mmap len 0", SYS_mmap, 0, 0, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	R("mmap no type flags", SYS_mmap, 0, 4096, PROT_READ, 0, -1, 0);
	R("mmap EBADF", SYS_mmap, 0, 4096, PROT_READ, MAP_PRIVATE, 9999, 0);
	R("mmap unaligned offset", SYS_mmap, 0, 4096, PROT_READ, MAP_PRIVATE, f, 1);
	int ro = open("f", O_RDONLY);
	R("mmap shared writable on O_RDONLY fd", SYS_mmap, 0, 4096, PROT_READ | PROT_WRITE,
	  MAP_SHARED, ro, 0);
	close(ro);
	R("mprotect read-only", SYS_mprotect, r, 4096, PROT_READ);
	rec_i("page 0 readable", r[0]);
	R("mprotect unaligned", SYS_mprotect, r + 1, 4096, PROT_READ);
	R("mprotect bad prot", SYS_mprotect, r, 4096, 0x1000);
	R("mprotect unmapped", SYS_mprotect, unmapped(), 4096, PROT_READ);
	R("munmap", SYS_munmap, r + 4096, 4096);
	rec_i("mincore after munmap", mincore(r, 2 * 4096, vec) < 0 ? -errno : 0);
	R("munmap unaligned", SYS_munmap, r + 1, 4096);
	R("munmap len 0", SYS_munmap, r, 0);
	R("brk(0) twice", SYS_brk, 0);
	munmap(r, 8 * 4096);
	close(f);
}

static void c_fdops(void)
{
	int p[2] = { -1, -1 }, q[2], d, f;
	long r;
	char buf[4096];
	int n = 0;

	CHECK_EQ(mkdir("d", 0755), 0);
	put_file("d/a", "1", 1);
	put_file("d/bb", "22", 2);
	CHECK_EQ(mkdir("d/sub", 0755), 0);
	f = open("f", O_RDWR | O_CREAT, 0644);
	CHECK_EQ(write(f, "0123456789", 10), 10);
	d = open("d", O_RDONLY | O_DIRECTORY);
	/* getdents64: names and types (d_ino/d_off differ between objects) */
	r = R("getdents64", SYS_getdents64, d, buf, sizeof(buf));
	{
		char *names[16], list[512] = "";
		for (long o = 0; r > 0 && o < r && n < 16;) {
			struct { uint64_t ino; int64_t off; unsigned short reclen;
				 unsigned char type; char name[]; } *de = (void *)(buf + o);
			char *e = malloc(300);
			snprintf(e, 300, "%s:%d", de->name, de->type);
			names[n++] = e;
			o += de->reclen;
		}
		qsort(names, n, sizeof(*names), cmp_str);
		for (int i = 0; i < n; i++) {
			strcat(list, names[i]);
			strcat(list, "/");
			free(names[i]);
		}
		rec_s("entries", list);
	}
	R("getdents64 at end", SYS_getdents64, d, buf, sizeof(buf));
	{
		/* same directory, xsc against direct, byte for byte */
		static char b1[4096], b2[4096];
		long r1, r2;
		memset(b1, 0xa5, sizeof(b1));
		memset(b2, 0xa5, sizeof(b2));
		lseek(d, 0, SEEK_SET);
		r1 = Q(SYS_getdents64, d, b1, sizeof(b1));
		lseek(d, 0, SEEK_SET);
		r2 = direct6(SYS_getdents64, ARGS(d, b2, sizeof(b2)));
		if (r1 != r2 || memcmp(b1, b2, sizeof(b1))) {
			fprintf(stderr, "MISMATCH [%s] case %s (same object): getdents64 "
				"%ld vs %ld or bytes differ\n", test_backend(), case_name, r1, r2);
			fail_note();
		}
	}
	lseek(d, 0, SEEK_SET);
	R("getdents64 tiny buffer", SYS_getdents64, d, buf, 8);
	R("getdents64 EFAULT", SYS_getdents64, d, 8, sizeof(buf));
	R("getdents64 ENOTDIR", SYS_getdents64, f, buf, sizeof(buf));
	R("getdents64 EBADF", SYS_getdents64, 9999, buf, sizeof(buf));
	/* ioctl */
	CHECK_EQ(pipe(q), 0);
	CHECK_EQ(write(q[1], "12345", 5), 5);
	int avail = -1;
	R("ioctl FIONREAD", SYS_ioctl, q[0], FIONREAD, &avail);
	rec_i("avail", avail);
	R("ioctl FIONREAD EFAULT", SYS_ioctl, q[0], FIONREAD, 8);
	R("ioctl ENOTTY", SYS_ioctl, f, TCGETS, buf);
	R("ioctl EBADF", SYS_ioctl, 9999, FIONREAD, &avail);
	avail = -1;
	R("ioctl FIONREAD file", SYS_ioctl, f, FIONREAD, &avail);
	rec_i("avail file", avail);
	/* fcntl */
	R("fcntl F_GETFL", SYS_fcntl, f, F_GETFL, 0);
	R("fcntl F_SETFL O_NONBLOCK", SYS_fcntl, q[0], F_SETFL, O_NONBLOCK);
	obs_fd("pipe", q[0]);
	R("fcntl F_GETFD", SYS_fcntl, f, F_GETFD, 0);
	R("fcntl F_SETFD", SYS_fcntl, f, F_SETFD, FD_CLOEXEC);
	obs_fd("f", f);
	r = R("fcntl F_DUPFD 100", SYS_fcntl, f, F_DUPFD, 100);
	if (r >= 0)
		close((int)r);
	R("fcntl bad cmd", SYS_fcntl, f, 9999, 0);
	R("fcntl EBADF", SYS_fcntl, 9999, F_GETFL, 0);
	/* dup, pipe2, lseek */
	r = R("dup", SYS_dup, f);
	if (r >= 0) {
		obs_fd("dup", (int)r);
		close((int)r);
	}
	R("dup EBADF", SYS_dup, 9999);
	R("pipe2", SYS_pipe2, p, O_CLOEXEC | O_NONBLOCK);
	rec_i("fds", p[0] * 1000 + p[1]);
	if (p[0] >= 0) {
		obs_fd("p0", p[0]);
		obs_fd("p1", p[1]);
		close(p[0]);
		close(p[1]);
	}
	R("pipe2 bad flags", SYS_pipe2, p, 0x1);
	R("pipe2 EFAULT", SYS_pipe2, 8, 0);
	R("lseek SET", SYS_lseek, f, 3, SEEK_SET);
	R("lseek CUR", SYS_lseek, f, 2, SEEK_CUR);
	R("lseek END", SYS_lseek, f, -1, SEEK_END);
	R("lseek DATA", SYS_lseek, f, 0, SEEK_DATA);
	R("lseek HOLE", SYS_lseek, f, 0, SEEK_HOLE);
	R("lseek DATA past end", SYS_lseek, f, 100, SEEK_DATA);
	R("lseek negative", SYS_lseek, f, -5, SEEK_SET);
	R("lseek bad whence", SYS_lseek, f, 0, 9);
	R("lseek pipe", SYS_lseek, q[0], 0, SEEK_CUR);
	R("lseek EBADF", SYS_lseek, 9999, 0, SEEK_SET);
	obs_fd("f end", f);
	close(q[0]);
	close(q[1]);
	close(d);
	close(f);
}

int main(void)
{
	static const long us[] = { DIFF_MISC_CALLS };
	static const long other[] = { DIFF_MISC_OTHER };

	diff_init();
	CASE(c_splice_tee);
	CASE(c_epoll_ctl);
	CASE(c_sleep);
	CASE(c_poll);
	CASE(c_epoll_wait);
	CASE(c_futex);
	CASE(c_waitid);
	CASE(c_procinfo);
	CASE(c_mem);
	CASE(c_fdops);
	diff_finish(us, sizeof(us) / sizeof(us[0]), other, sizeof(other) / sizeof(other[0]));
	return 0;
}
