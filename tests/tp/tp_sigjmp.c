/*
 * tp_sigjmp.c - signal handlers left by siglongjmp and longjmp.
 *
 * A handler that jumps out never returns through its signal frame.  Under
 * xsc run the runtime counted the handler as still running, so every later
 * call of that thread ran directly on its kernel thread: with one vcpu
 * the blocking read below held it, the writer thread never ran, and the
 * program hung (a thread that raises a signal whose handler
 * siglongjmps, then reads a pipe another thread fills: fine natively,
 * killed after 10 s under `xsc run -t 1`, 2026-11-26).
 *
 * A handler's own sigprocmask was undone as soon as it returned from the
 * trap that made it: SIGUSR2 blocked in the handler read as not blocked.
 *
 * Each case leaves a handler by a jump and then blocks in a read that the
 * helper thread satisfies only later: from a raised signal, from one that
 * interrupts a blocking read, without the mask saved (the signal stays
 * blocked, as natively), from a handler nested in another (the jump lands
 * in the outer handler, which then returns), from a handler on an
 * alternate stack, and through the fortified __longjmp_chk.  And a handler
 * that calls pthread_exit: made directly, its exit ended the vcpu's kernel
 * thread (with every fiber on it).  Prints what it saw; exit 0 on
 * success.
 * xsc-tp: run-opts=-t 1 */
#include "tp.h"

#include <setjmp.h>
#include <stdint.h>
#include <sys/mman.h>

static sigjmp_buf jb, inner;
static int req[2], data[2];
static volatile sig_atomic_t hits;

/* The helper: for each byte asked on req, writes one on data after
 * 20 ms; a byte 'k' asks it to signal the main thread instead. */
static pthread_t main_th;

static void *helper(void *arg)
{
	char c;

	(void)arg;
	while (read(req[0], &c, 1) == 1) {
		usleep(20000);
		if (c == 'k')
			pthread_kill(main_th, SIGUSR2);
		else if (write(data[1], &c, 1) != 1)
			break;
	}
	return NULL;
}

static int blocked(int sig)
{
	sigset_t cur;

	pthread_sigmask(SIG_BLOCK, NULL, &cur);
	return sigismember(&cur, sig);
}

/* Asks the helper for byte c and waits for it in a blocking read. */
static void fetch(const char *label, char c)
{
	char got = 0;

	if (write(req[1], &c, 1) != 1 || read(data[0], &got, 1) != 1 || got != c) {
		printf("%s: read failed\n", label);
		exit(1);
	}
	/* the read parked the thread: its mask is what it has after a switch */
	printf("%s: then a blocking read got '%c'; SIGUSR1 blocked: %d, SIGUSR2 blocked: %d\n",
	       label, got, blocked(SIGUSR1), blocked(SIGUSR2));
}


static void jump(int sig)
{
	hits++;
	siglongjmp(jb, sig);
}

static jmp_buf plain;

static void jump_plain(int sig)
{
	hits++;
	longjmp(plain, sig);
}

/* glibc's, for code built with _FORTIFY_SOURCE */
extern void __longjmp_chk(sigjmp_buf env, int val) __attribute__((noreturn));

static void jump_chk(int sig)
{
	hits++;
	__longjmp_chk(jb, sig);
}

static void jump_inner(int sig)
{
	hits++;
	siglongjmp(inner, sig);
}

/* SIGUSR1's handler for the nested case: SIGUSR2's handler jumps back
 * in here; then this one returns normally. */
static void outer(int sig)
{
	sigset_t two;

	(void)sig;
	hits++;
	if (!sigsetjmp(inner, 1))
		raise(SIGUSR2);
	hits++;
	/* still this handler's mask: undone when it returns */
	sigemptyset(&two);
	sigaddset(&two, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &two, NULL);
}

/* A handler that changes its own mask: in force until it returns. */
static volatile sig_atomic_t seen_blocked;

static void masks(int sig)
{
	sigset_t two;

	(void)sig;
	sigemptyset(&two);
	sigaddset(&two, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &two, NULL);
	seen_blocked = blocked(SIGUSR2);
}

/* Case 8: a thread whose handler ends it. */
static void leave(int sig)
{
	hits++;
	pthread_exit((void *)(long)sig);
}

static void *raise_usr1(void *arg)
{
	(void)arg;
	raise(SIGUSR1);
	return NULL;
}

/* Case 5's thread: its stack, and its alternate stack above it. */
static char low_stack[1 << 18] __attribute__((aligned(4096)));

static void *on_alt_stack(void *arg)
{
	stack_t ss;
	int r;

	(void)arg;
	memset(&ss, 0, sizeof(ss));
	ss.ss_size = 1 << 16;
	ss.ss_sp = mmap(NULL, ss.ss_size, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ss.ss_sp == MAP_FAILED || sigaltstack(&ss, NULL))
		exit(1);
	if ((uintptr_t)ss.ss_sp < (uintptr_t)low_stack)
		printf("alternate stack: below the thread's stack\n");
	tp_on_signal(SIGUSR1, jump, SA_ONSTACK);
	if ((r = sigsetjmp(jb, 1)) == 0)
		raise(SIGUSR1);
	printf("alternate stack: jumped out with %d\n", r);
	fetch("alternate stack", 'e');
	ss.ss_flags = SS_DISABLE;
	sigaltstack(&ss, NULL);
	return NULL;
}

int main(void)
{
	pthread_t th;
	char c;
	int r;

	setvbuf(stdout, NULL, _IONBF, 0);
	main_th = pthread_self();
	if (pipe(req) || pipe(data) || pthread_create(&th, NULL, helper, NULL))
		return 1;

	/* 0: a handler's own mask, then the thread's again */
	tp_on_signal(SIGUSR1, masks, 0);
	raise(SIGUSR1);
	printf("handler's mask: SIGUSR2 blocked in it: %d, after it: %d\n",
	       (int)seen_blocked, blocked(SIGUSR2));

	/* 1: a raised signal, mask saved */
	tp_on_signal(SIGUSR1, jump, 0);
	if ((r = sigsetjmp(jb, 1)) == 0)
		raise(SIGUSR1);
	printf("raised: jumped out with %d, SIGUSR1 blocked: %d\n", r, blocked(SIGUSR1));
	fetch("raised", 'a');

	/* 2: a signal that interrupts a blocking read */
	tp_on_signal(SIGUSR2, jump, 0);
	if ((r = sigsetjmp(jb, 1)) == 0) {
		if (write(req[1], "k", 1) != 1)
			return 1;
		r = (int)read(data[0], &c, 1);	/* nothing comes: the signal ends it */
		printf("interrupted: read returned %d\n", r);
		return 1;
	}
	printf("interrupted: jumped out with %d, SIGUSR2 blocked: %d\n", r, blocked(SIGUSR2));
	fetch("interrupted", 'b');

	/* 3: the mask not saved: the handler's mask stays, as natively */
	if ((r = sigsetjmp(jb, 0)) == 0)
		raise(SIGUSR1);
	printf("no mask saved: jumped out with %d, SIGUSR1 blocked: %d\n", r, blocked(SIGUSR1));
	fetch("no mask saved", 'c');
	sigset_t one;
	sigemptyset(&one);
	sigaddset(&one, SIGUSR1);
	pthread_sigmask(SIG_UNBLOCK, &one, NULL);

	/* 4: nested: the inner handler jumps into the outer one, which returns */
	tp_on_signal(SIGUSR1, outer, 0);
	tp_on_signal(SIGUSR2, jump_inner, SA_NODEFER);
	hits = 0;
	raise(SIGUSR1);
	printf("nested: %d handler steps, SIGUSR1 blocked: %d, SIGUSR2 blocked: %d\n",
	       (int)hits, blocked(SIGUSR1), blocked(SIGUSR2));
	fetch("nested", 'd');

	/* 5: a handler on an alternate stack, in a thread whose own stack
	 * lies below it (a static array: the jump lands under the handler's
	 * frame, but on another stack) */
	pthread_attr_t at;
	pthread_t alt;
	pthread_attr_init(&at);
	if (pthread_attr_setstack(&at, low_stack, sizeof(low_stack)) ||
	    pthread_create(&alt, &at, on_alt_stack, NULL) || pthread_join(alt, NULL))
		return 1;
	pthread_attr_destroy(&at);

	/* 6: plain longjmp from a handler, after setjmp (no mask saved) */
	tp_on_signal(SIGUSR1, jump_plain, 0);
	if ((r = setjmp(plain)) == 0)
		raise(SIGUSR1);
	printf("longjmp: jumped out with %d, SIGUSR1 blocked: %d\n", r, blocked(SIGUSR1));
	fetch("longjmp", 'f');
	pthread_sigmask(SIG_UNBLOCK, &one, NULL);

	/* 7: the fortified jump (what longjmp becomes with _FORTIFY_SOURCE) */
	tp_on_signal(SIGUSR1, jump_chk, 0);
	if ((r = sigsetjmp(jb, 1)) == 0)
		raise(SIGUSR1);
	printf("__longjmp_chk: jumped out with %d, SIGUSR1 blocked: %d\n", r, blocked(SIGUSR1));
	fetch("__longjmp_chk", 'g');

	/* 8: pthread_exit in a handler ends only that thread */
	void *ret = NULL;
	tp_on_signal(SIGUSR1, leave, 0);
	if (pthread_create(&alt, NULL, raise_usr1, NULL) || pthread_join(alt, &ret))
		return 1;
	printf("pthread_exit: the thread returned %ld\n", (long)ret);
	fetch("pthread_exit", 'h');

	close(req[1]);
	pthread_join(th, NULL);
	printf("handlers run: %d\n", (int)hits);
	return 0;
}
