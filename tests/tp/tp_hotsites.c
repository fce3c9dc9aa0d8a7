/*
 * tp_hotsites.c - the loops of a program's hot path, in a process with a
 * second thread: syscall(SYS_getppid) (libc's generic entry, whose number
 * comes from a register), fopen+fread+fclose and open+read+close of a
 * small file (stdio's internals and libc's cancellable wrappers: read
 * clears eax, close and openat load an immediate), write and lseek, and
 * a condition variable ping-pong (glibc's futex sites).
 *
 *   tp_hotsites [ITERATIONS]	(default 200)
 *
 * Natively and under `xsc run` the output is the same: each loop's
 * checksum.  t_rewrite_traps.sh runs it with two iteration counts under
 * `xsc run -v` and compares the calls trapped: once libc's sites are
 * rewritten (src/preload/rewrite.c) no iteration traps, so the counts
 * must not grow with the iterations.  Also syscall() with numbers the
 * shim must not take from a rewritten site (rt_sigprocmask, an unknown
 * number, one with high bits set) after the site is rewritten: their
 * results must be the kernel's.  Exit 0 when every result is right.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int done, turn;

/* The second thread: the process is multi-threaded (libc takes its
 * cancellable paths) while the loops run; it answers loop_cond's turns. */
static void *partner(void *arg)
{
	pthread_mutex_lock(&m);
	while (!done) {
		if (turn == 1) {
			turn = 0;
			pthread_cond_signal(&c);
		}
		pthread_cond_wait(&c, &m);
	}
	pthread_mutex_unlock(&m);
	return arg;
}

/* A condition variable ping-pong with the partner: glibc's futex waits
 * and wakes (pthread_cond_signal's wake is among the sites whose jump
 * goes through a trampoline in padding, site.c). */
static void pingpong(long n)
{
	pthread_mutex_lock(&m);
	for (long i = 0; i < n; i++) {
		turn = 1;
		pthread_cond_signal(&c);
		while (turn == 1)
			pthread_cond_wait(&c, &m);
	}
	pthread_mutex_unlock(&m);
}

static int loop_cond(long n)
{
	pingpong(n);
	printf("condition variable: %ld rounds\n", n);
	return 0;
}

static int loop_syscall(long n)
{
	long want = getppid(), bad = 0;

	for (long i = 0; i < n; i++)
		bad += syscall(SYS_getppid) != want;
	printf("syscall(SYS_getppid): %ld wrong\n", bad);
	return bad != 0;
}

static volatile sig_atomic_t usr2;

static void on_usr2(int sig)
{
	(void)sig;
	usr2++;
}

/* Numbers syscall() must leave to the kernel's trap path even from a
 * rewritten site: errors and the signal mask must be exactly the kernel's. */
static int odd_numbers(void)
{
	sigset_t set, old, now;
	long r;
	int bad = 0;

	/* the sixth argument comes from the stack (syscall() loads r9
	 * there): an mmap of a file's second page sees its bytes */
	char path[] = "/tmp/tp_hotsites.XXXXXX", page[4096];
	int fd = mkstemp(path), sixth = 0;
	for (int i = 0; fd >= 0 && i < 2; i++) {
		memset(page, 'a' + i, sizeof(page));
		if (write(fd, page, sizeof(page)) != (ssize_t)sizeof(page))
			bad = 1;
	}
	for (int i = 0; fd >= 0 && i < 5; i++) {
		void *p = (void *)syscall(SYS_mmap, NULL, 4096L, (long)PROT_READ,
					  (long)MAP_PRIVATE, (long)fd, 4096L);
		sixth += p != MAP_FAILED && *(char *)p == 'b';
		if (p != MAP_FAILED)
			munmap(p, 4096);
	}
	printf("syscall(SYS_mmap, ..., offset 4096): %d of 5 see the second page\n", sixth);
	bad |= sixth != 5;
	if (fd >= 0) {
		close(fd);
		unlink(path);
	}
	errno = 0;
	r = syscall(100000);
	bad |= r != -1 || errno != ENOSYS;
	printf("syscall(100000): %ld, %s\n", r, strerror(errno));
	errno = 0;
	r = syscall(SYS_getppid | (1L << 32));	/* the kernel reads 32 bits */
	bad |= r != getppid();
	printf("syscall(getppid | 1 << 32): %s\n", r == getppid() ? "the parent" : "wrong");
	/* blocked by syscall(): a SIGUSR2 sent to this thread waits until
	 * pthread_sigmask unblocks it */
	signal(SIGUSR2, on_usr2);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	r = syscall(SYS_rt_sigprocmask, SIG_BLOCK, &set, &old, 8);
	pthread_sigmask(SIG_SETMASK, NULL, &now);
	bad |= r != 0 || !sigismember(&now, SIGUSR2) || sigismember(&old, SIGUSR2);
	printf("syscall(SYS_rt_sigprocmask): %ld, SIGUSR2 %s\n", r,
	       sigismember(&now, SIGUSR2) ? "blocked" : "not blocked");
	pingpong(3);		/* the other thread runs meanwhile */
	pthread_kill(pthread_self(), SIGUSR2);
	printf("SIGUSR2 while blocked: %d handled\n", (int)usr2);
	bad |= usr2 != 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	printf("SIGUSR2 once unblocked: %d handled\n", (int)usr2);
	bad |= usr2 != 1;
	return bad;
}

static int loop_stdio(const char *path, long n)
{
	char buf[64];
	long sum = 0, bad = 0;

	for (long i = 0; i < n; i++) {
		FILE *f = fopen(path, "r");
		size_t k;

		if (!f)
			return printf("fopen: %s\n", strerror(errno)), 1;
		k = fread(buf, 1, sizeof(buf), f);
		bad += k != 26 || buf[0] != 'a';
		sum += (long)k;
		fclose(f);
	}
	printf("fopen/fread/fclose: %ld bytes, %ld wrong\n", n ? sum / n : 0, bad);
	return bad != 0;
}

static int loop_fd(const char *path, long n)
{
	char buf[64];
	long sum = 0, bad = 0;

	for (long i = 0; i < n; i++) {
		int fd = open(path, O_RDONLY);
		ssize_t k;

		if (fd < 0)
			return printf("open: %s\n", strerror(errno)), 1;
		k = read(fd, buf, sizeof(buf));
		bad += k != 26 || buf[25] != 'z';
		bad += lseek(fd, 0, SEEK_SET) != 0;
		sum += k;
		bad += close(fd) != 0;
	}
	printf("open/read/lseek/close: %ld bytes, %ld wrong\n", n ? sum / n : 0, bad);
	return bad != 0;
}

static int loop_write(long n)
{
	int fd = open("/dev/null", O_WRONLY);
	long bad = 0;

	for (long i = 0; i < n; i++)
		bad += write(fd, "x", 1) != 1;
	close(fd);
	printf("write: %ld wrong\n", bad);
	return bad != 0;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200;
	char path[] = "/tmp/tp_hotsites.XXXXXX";
	pthread_t t;
	int fd, bad = 0;

	fd = mkstemp(path);
	if (fd < 0 || write(fd, "abcdefghijklmnopqrstuvwxyz", 26) != 26)
		return 1;
	close(fd);
	pthread_create(&t, NULL, partner, NULL);
	bad |= loop_syscall(n);
	bad |= odd_numbers();
	bad |= loop_syscall(n);
	bad |= loop_stdio(path, n);
	bad |= loop_fd(path, n);
	bad |= loop_write(n);
	bad |= loop_cond(n);
	pthread_mutex_lock(&m);
	done = 1;
	pthread_cond_signal(&c);
	pthread_mutex_unlock(&m);
	pthread_join(t, NULL);
	unlink(path);
	return bad;
}
