/*
 * tp_sandbox_vm.c - a sandbox that refuses process_vm_readv/writev, as
 * Docker's default seccomp profile does without CAP_SYS_PTRACE.
 *
 * The runtime read and wrote some of the program's arguments with those
 * two calls (a fault-safe copy: a bad pointer gives EFAULT, not a crash).
 * Under a filter that refuses them with EPERM, calls whose arguments it
 * copied so failed with EPERM where natively they work: sigtimedwait,
 * sigsuspend (2026-11-26).  After the filter is in place, from main and
 * from a thread: sigtimedwait with a timeout and nothing pending, then
 * with a signal pending (its siginfo), sigsuspend with a signal pending,
 * sigtimedwait with a bad siginfo pointer (EFAULT, the signal taken), and process_vm_readv itself,
 * which the filter refuses (EPERM) under xsc as natively.  Prints each
 * result; exit 0 when all are as expected.
 */
#include "tp.h"

#include <sys/uio.h>
#include <time.h>

static volatile sig_atomic_t got;

static void on_usr1(int sig)
{
	(void)sig;
	got++;
}

static void tries(const char *who)
{
	sigset_t set, empty;
	siginfo_t si;
	struct timespec ts = { 0, 1000000 };
	char a[8] = "abcdefg", b[8] = { 0 };
	struct iovec l = { b, sizeof(b) }, r = { a, sizeof(a) };
	int n, e;

	sigemptyset(&set);	/* both blocked in every thread (main) */
	sigaddset(&set, SIGUSR2);

	n = sigtimedwait(&set, &si, &ts);
	e = errno;
	CHECK_SAY(n < 0 && e == EAGAIN, "%s: sigtimedwait, nothing pending: %s", who,
	      n < 0 ? strerror(e) : "a signal");

	kill(getpid(), SIGUSR2);
	memset(&si, 0, sizeof(si));
	n = sigtimedwait(&set, &si, &ts);
	e = errno;
	CHECK_SAY(n == SIGUSR2 && si.si_signo == SIGUSR2 && si.si_code == SI_USER &&
	      si.si_pid == getpid(), "%s: sigtimedwait, SIGUSR2 pending: %s", who,
	      n == SIGUSR2 ? "SIGUSR2, from this process" : strerror(e));

	kill(getpid(), SIGUSR2);
	n = sigtimedwait(&set, (siginfo_t *)8, &ts);
	e = errno;
	CHECK_SAY(n < 0 && e == EFAULT, "%s: sigtimedwait, SIGUSR2 pending, a bad siginfo "
	      "pointer: %s", who, n < 0 ? strerror(e) : "a signal");
	n = sigtimedwait(&set, &si, &ts);
	e = errno;
	CHECK_SAY(n < 0 && e == EAGAIN, "%s: sigtimedwait again: %s (taken by the one "
	      "before)", who, n < 0 ? strerror(e) : "a signal");

	got = 0;
	kill(getpid(), SIGUSR1);
	sigemptyset(&empty);
	n = sigsuspend(&empty);
	e = errno;
	CHECK_SAY(n < 0 && e == EINTR && got == 1, "%s: sigsuspend, SIGUSR1 pending: %s, "
	      "handler ran %d time(s)", who, strerror(e), (int)got);

	n = (int)process_vm_readv(getpid(), &l, 1, &r, 1, 0);
	e = errno;
	CHECK_SAY(n < 0 && e == EPERM, "%s: process_vm_readv: %s", who,
	      n < 0 ? strerror(e) : "read");
}

static void *thread_main(void *arg)
{
	tries((const char *)arg);
	return NULL;
}

int main(void)
{
	pthread_t t;

	setvbuf(stdout, NULL, _IOLBF, 0);
	tp_on_signal(SIGUSR1, on_usr1, 0);
	if (tp_seccomp_refuse(__NR_process_vm_readv, __NR_process_vm_writev) != 0) {
		perror("seccomp");
		return 1;
	}
	{
		sigset_t both;
		sigemptyset(&both);
		sigaddset(&both, SIGUSR1);
		sigaddset(&both, SIGUSR2);
		pthread_sigmask(SIG_BLOCK, &both, NULL);	/* inherited */
	}
	/* the second thread starts the runtime under `xsc run` */
	pthread_create(&t, NULL, thread_main, "thread");
	pthread_join(t, NULL);
	tries("main");
	return tp_failures != 0;
}
