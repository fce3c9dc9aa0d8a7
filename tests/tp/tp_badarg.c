/*
 * tp_badarg.c - bad arguments to the calls xsc run answers itself.
 *
 * Under xsc run some calls never reach the kernel as made: the runtime
 * answers them for the fiber (sigprocmask, sigaction, futex, clone3,
 * sched_getaffinity, the robust list...).  Each must give the kernel's
 * answer to bad input, not crash and not succeed: a pointer to no memory
 * is -EFAULT, a wrong size or flag is -EINVAL.  Where the kernel makes
 * the change before it fails to write the old value back (sigprocmask,
 * sigaction), the change is seen afterwards, as natively.
 *
 * Under xsc run each of these read or wrote the pointer directly: the
 * first call below, rt_sigprocmask with an unreadable set, killed the
 * program with SIGSEGV on every executor (2026-11-26), as did a bad
 * sigaction, futex word or timeout, clone3 block, affinity mask or robust
 * list pointer; set_robust_list with a length of 7 returned 0 and a wait
 * on a misaligned futex word EAGAIN, where the kernel says EINVAL.
 *
 * The calls are made with syscall(2), from a second thread (a fiber under
 * xsc run: the runtime starts at the second thread), so that libc checks
 * nothing first.  Prints one line per call; exit 0 when each result is
 * the one expected (checked natively too), 1 otherwise.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static int failures;
static void *bad;	/* a page with no access */
static char *edge;	/* the last bytes of a page whose next page has no access */

/* the kernel's struct sigaction for rt_sigaction */
struct kact {
	void (*handler)(int);
	unsigned long flags;
	void (*restorer)(void);
	uint64_t mask;
};

static void expect(const char *what, long r, long want)
{
	long got = r < 0 ? -errno : r;

	printf("%-52s %s\n", what, got == want ? "as the kernel" : "WRONG");
	if (got != want) {
		fprintf(stderr, "tp_badarg: %s: got %ld (%s), want %ld (%s)\n", what, got,
			got < 0 ? strerror((int)-got) : "-", want,
			want < 0 ? strerror((int)-want) : "-");
		failures++;
	}
}

static int blocked(int sig)
{
	sigset_t s;

	pthread_sigmask(SIG_BLOCK, NULL, &s);
	return sigismember(&s, sig);
}

static void on_usr1(int sig)
{
	(void)sig;
}

static uint32_t *hidden;	/* on_usr2 takes its page away */

static void on_usr2(int sig)
{
	(void)sig;
	mprotect(hidden, 4096, PROT_NONE);
}

/* rt_sigprocmask and rt_sigaction (first: the how, or the signal): the
 * new value unreadable, the old one unwritable, a size other than 8 */
static void sig_ptrs(const char *call, const char *newv, long nr, long first)
{
	char what[80];

	snprintf(what, sizeof(what), "%s: %s unreadable", call, newv);
	expect(what, syscall(nr, first, bad, NULL, 8), -EFAULT);
	snprintf(what, sizeof(what), "%s: old unwritable", call);
	expect(what, syscall(nr, first, NULL, bad, 8), -EFAULT);
	snprintf(what, sizeof(what), "%s: size 7", call);
	expect(what, syscall(nr, first, NULL, NULL, 7), -EINVAL);
}

static void *calls(void *arg)
{
	uint64_t set = 1ULL << (SIGUSR1 - 1), buf[64];
	struct kact ka = { .handler = on_usr1 };
	struct sigaction sa;
	struct timespec zero = { 0, 0 };
	void *head;
	size_t len;
	uint32_t word[2] = { 0, 0 };

	(void)arg;
	/* rt_sigprocmask */
	sig_ptrs("rt_sigprocmask", "set", SYS_rt_sigprocmask, SIG_BLOCK);
	expect("rt_sigprocmask: how 99", syscall(SYS_rt_sigprocmask,
	       99, &set, NULL, 8), -EINVAL);
	expect("rt_sigprocmask: how 99, no set", syscall(SYS_rt_sigprocmask,
	       99, NULL, buf, 8), 0);
	expect("rt_sigprocmask: block, old unwritable", syscall(SYS_rt_sigprocmask,
	       SIG_BLOCK, &set, bad, 8), -EFAULT);
	expect("  ... and SIGUSR1 is blocked after it", blocked(SIGUSR1), 1);
	/* and the good ones still work: block, unblock, set */
	expect("rt_sigprocmask: unblock SIGUSR1", syscall(SYS_rt_sigprocmask,
	       SIG_UNBLOCK, &set, NULL, 8), 0);
	expect("  ... and it is not blocked", blocked(SIGUSR1), 0);
	expect("rt_sigprocmask: block SIGUSR1", syscall(SYS_rt_sigprocmask,
	       SIG_BLOCK, &set, NULL, 8), 0);
	expect("  ... and it is blocked", blocked(SIGUSR1), 1);
	buf[0] = 0;
	expect("rt_sigprocmask: set the empty mask", syscall(SYS_rt_sigprocmask,
	       SIG_SETMASK, buf, NULL, 8), 0);
	expect("  ... and SIGUSR1 is not blocked", blocked(SIGUSR1), 0);

	/* rt_sigaction */
	sig_ptrs("rt_sigaction", "act", SYS_rt_sigaction, SIGUSR1);
	expect("rt_sigaction: signal 65", syscall(SYS_rt_sigaction,
	       65, NULL, NULL, 8), -EINVAL);
	expect("rt_sigaction: act across into no access", syscall(SYS_rt_sigaction,
	       SIGUSR1, edge - 16, NULL, 8), -EFAULT);
	expect("rt_sigaction: SIGKILL", syscall(SYS_rt_sigaction,
	       SIGKILL, &ka, NULL, 8), -EINVAL);
	expect("rt_sigaction: set, old unwritable", syscall(SYS_rt_sigaction,
	       SIGUSR1, &ka, bad, 8), -EFAULT);
	sigaction(SIGUSR1, NULL, &sa);
	expect("  ... and the handler is set after it", sa.sa_handler == on_usr1, 1);
	signal(SIGUSR1, SIG_DFL);

	/* rt_sigpending, rt_sigsuspend, rt_sigtimedwait */
	expect("rt_sigpending: set unwritable", syscall(SYS_rt_sigpending, bad, 8), -EFAULT);
	expect("rt_sigsuspend: mask unreadable", syscall(SYS_rt_sigsuspend, bad, 8), -EFAULT);
	expect("rt_sigsuspend: size 7", syscall(SYS_rt_sigsuspend, &set, 7), -EINVAL);
	expect("rt_sigtimedwait: set unreadable", syscall(SYS_rt_sigtimedwait,
	       bad, NULL, &zero, 8), -EFAULT);
	expect("rt_sigtimedwait: timeout unreadable", syscall(SYS_rt_sigtimedwait,
	       &set, NULL, bad, 8), -EFAULT);
	expect("rt_sigtimedwait: size 7", syscall(SYS_rt_sigtimedwait,
	       &set, NULL, &zero, 7), -EINVAL);

	/* nanosleep, clock_nanosleep: the request is read where a posted
	 * sleep is described (a plain copy only from the caller's stack) */
	expect("nanosleep: request unreadable", syscall(SYS_nanosleep, bad, NULL), -EFAULT);
	expect("nanosleep: request across a page's end", syscall(SYS_nanosleep,
	       edge - 8, NULL), -EFAULT);
	expect("clock_nanosleep: request unreadable", syscall(SYS_clock_nanosleep,
	       CLOCK_MONOTONIC, 0, bad, NULL), -EFAULT);
	/* poll of one descriptor: the pollfd read where it is described and
	 * its revents written back (plainly only on the caller's stack) */
	expect("poll: pollfd unreadable", syscall(SYS_poll, bad, 1, 10), -EFAULT);
	expect("poll: pollfd across a page's end", syscall(SYS_poll, edge - 4, 1, 10), -EFAULT);

	/* futex */
	expect("futex: wait on an unreadable word", syscall(SYS_futex, bad,
	       FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0), -EFAULT);
	expect("futex: wait on a misaligned word", syscall(SYS_futex,
	       (char *)word + 1, FUTEX_WAIT_PRIVATE, 1, NULL, NULL, 0), -EINVAL);
	expect("futex: wait, timeout unreadable", syscall(SYS_futex, word,
	       FUTEX_WAIT_PRIVATE, 0, bad, NULL, 0), -EFAULT);
	expect("futex: bitset wait, bitset 0", syscall(SYS_futex, word,
	       FUTEX_WAIT_BITSET_PRIVATE, 0, NULL, NULL, 0), -EINVAL);
	expect("futex: wait on a page's last word, value differs", syscall(SYS_futex,
	       edge - 4, FUTEX_WAIT_PRIVATE, 1, NULL, NULL, 0), -EAGAIN);
	expect("futex: bitset wake, bitset 0", syscall(SYS_futex, word,
	       FUTEX_WAKE_BITSET_PRIVATE, 1, NULL, NULL, 0), -EINVAL);
	expect("futex: wake on a misaligned word", syscall(SYS_futex,
	       (char *)word + 2, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0), -EINVAL);
	expect("futex: compare-requeue, word unreadable", syscall(SYS_futex, bad,
	       FUTEX_CMP_REQUEUE_PRIVATE, 1, 1, word + 1, 0), -EFAULT);

	/* a word that was readable, then is not: protected, unmapped, a guard */
	{
		uint32_t *w = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		expect("futex: wait on a fresh page, value differs", syscall(SYS_futex,
		       w, FUTEX_WAIT_PRIVATE, 1, NULL, NULL, 0), -EAGAIN);
		mprotect(w, 4096, PROT_NONE);
		expect("  ... then on it protected", syscall(SYS_futex,
		       w, FUTEX_WAIT_PRIVATE, 1, NULL, NULL, 0), -EFAULT);
		mprotect(w, 4096, PROT_READ);
		expect("  ... then on it readable again", syscall(SYS_futex,
		       w, FUTEX_WAIT_PRIVATE, 1, NULL, NULL, 0), -EAGAIN);
		munmap(w, 4096);
		expect("  ... then on it unmapped", syscall(SYS_futex,
		       w, FUTEX_WAIT_PRIVATE, 1, NULL, NULL, 0), -EFAULT);
		w = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		expect("futex: wait on another fresh page", syscall(SYS_futex,
		       w, FUTEX_WAIT_PRIVATE, 1, NULL, NULL, 0), -EAGAIN);
		if (madvise(w, 4096, 102 /* MADV_GUARD_INSTALL, Linux 6.13 */) == 0)
			expect("  ... then on it made a guard region", syscall(SYS_futex,
			       w, FUTEX_WAIT_PRIVATE, 1, NULL, NULL, 0), -EFAULT);
		munmap(w, 4096);

		/* by a signal handler */
		hidden = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		expect("futex: wait on a third fresh page", syscall(SYS_futex,
		       hidden, FUTEX_WAIT_PRIVATE, 1, NULL, NULL, 0), -EAGAIN);
		signal(SIGUSR2, on_usr2);
		raise(SIGUSR2);
		expect("  ... then on it protected by a handler", syscall(SYS_futex,
		       hidden, FUTEX_WAIT_PRIVATE, 1, NULL, NULL, 0), -EFAULT);
		signal(SIGUSR2, SIG_DFL);
		munmap(hidden, 4096);
	}

	/* sched_getaffinity */
	expect("sched_getaffinity: mask unwritable", syscall(SYS_sched_getaffinity,
	       0, sizeof(buf), bad), -EFAULT);
	expect("sched_getaffinity: size 12", syscall(SYS_sched_getaffinity,
	       0, 12, buf), -EINVAL);

	/* the robust list */
	expect("get_robust_list: head unwritable", syscall(SYS_get_robust_list,
	       0, bad, &len), -EFAULT);
	expect("get_robust_list: length unwritable", syscall(SYS_get_robust_list,
	       0, &head, bad), -EFAULT);
	expect("get_robust_list: length across into no access",
	       syscall(SYS_get_robust_list, 0, &head, edge - 4), -EFAULT);
	expect("get_robust_list: length at a page's end", syscall(SYS_get_robust_list,
	       0, &head, edge - 8), 0);
	expect("  ... and it is the kernel's", *(size_t *)(edge - 8), 3 * sizeof(void *));
	expect("set_robust_list: length 7", syscall(SYS_set_robust_list, buf, 7), -EINVAL);

	/* clone3 */
	expect("clone3: arguments unreadable", syscall(SYS_clone3, bad, 88), -EFAULT);
	/* a thread's flags and a stack: only the size is wrong */
	memset(buf, 0, sizeof(buf));
	buf[0] = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD |
		 CLONE_SYSVSEM;
	buf[5] = (uint64_t)(uintptr_t)bad;	/* stack */
	buf[6] = 4096;				/* stack_size */
	expect("clone3: size 56, under the first version", syscall(SYS_clone3, buf, 56), -EINVAL);
	expect("clone3: size 8192", syscall(SYS_clone3, buf, 8192), -E2BIG);
	buf[11] = 1;	/* past the fields this kernel knows */
	expect("clone3: size 96, not zero past the known fields",
	       syscall(SYS_clone3, buf, 96), -E2BIG);
	memset(edge - 88, 0, 88);	/* the known fields, the rest unreadable */
	expect("clone3: size 96, past the known fields no access",
	       syscall(SYS_clone3, edge - 88, 96), -EFAULT);
	return NULL;
}

int main(void)
{
	pthread_t t;
	char *two;

	setvbuf(stdout, NULL, _IOLBF, 0);
	bad = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	two = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (bad == MAP_FAILED || two == MAP_FAILED || mprotect(two + 4096, 4096, PROT_NONE))
		return 1;
	edge = two + 4096;
	if (pthread_create(&t, NULL, calls, NULL))
		return 1;
	pthread_join(t, NULL);
	printf("%d wrong\n", failures);
	return failures ? 1 : 0;
}
