/*
 * tp_sigfutex.c - a signal handler that interrupts a futex wait ends it
 * as the kernel's does: a wait without a timeout is made again when the
 * handler has SA_RESTART (-ERESTARTSYS), the word compared afresh; one
 * with a timeout fails with EINTR all the same (-ERESTART_RESTARTBLOCK);
 * without SA_RESTART both fail with EINTR.
 *
 * A thread waits on a word with raw futex calls (FUTEX_WAIT and
 * FUTEX_WAIT_BITSET, relative and absolute timeouts, none); main sends it
 * SIGUSR1 with pthread_kill, then, where the wait goes on, wakes it.  In
 * one case the handler changes the word itself: the
 * wait made again finds it changed (EAGAIN).
 * Prints what the thread saw.  Exit 0 on success, 1 on any detected error.
 */
#include "tp.h"

#include <linux/futex.h>

static unsigned word;
static volatile sig_atomic_t stage, handled, bump;

static void on_usr1(int s)
{
	(void)s;
	handled++;
	if (bump)
		__atomic_store_n(&word, 7, __ATOMIC_SEQ_CST);
}

struct wait {
	const char *what;
	int op;		/* FUTEX_WAIT or FUTEX_WAIT_BITSET */
	int timeout;	/* 0 none, 1 relative 5 s, 2 absolute now + 5 s */
	int restart;	/* SA_RESTART on the handler */
	int bump;	/* the handler changes the word */
	const char *want;
};

static const struct wait waits[] = {
	{ "FUTEX_WAIT, no timeout, SA_RESTART", FUTEX_WAIT, 0, 1, 0, "0 (woken)" },
	{ "FUTEX_WAIT, no timeout, no SA_RESTART", FUTEX_WAIT, 0, 0, 0, "-1 Interrupted system call" },
	{ "FUTEX_WAIT, 5 s, SA_RESTART", FUTEX_WAIT, 1, 1, 0, "-1 Interrupted system call" },
	{ "FUTEX_WAIT_BITSET, until now + 5 s, SA_RESTART", FUTEX_WAIT_BITSET, 2, 1, 0,
	  "-1 Interrupted system call" },
	{ "FUTEX_WAIT_BITSET, no timeout, SA_RESTART", FUTEX_WAIT_BITSET, 0, 1, 0, "0 (woken)" },
	{ "FUTEX_WAIT, no timeout, SA_RESTART, the handler sets the word", FUTEX_WAIT, 0, 1, 1,
	  "-1 Resource temporarily unavailable" },
};
#define NWAITS (int)(sizeof(waits) / sizeof(waits[0]))
static char out[NWAITS][160];

static void *waiter(void *arg)
{
	(void)arg;
	for (int i = 0; i < NWAITS; i++) {
		const struct wait *w = &waits[i];
		struct timespec ts = { 5, 0 };
		long r;
		int e;

		if (w->timeout == 2) {
			clock_gettime(CLOCK_MONOTONIC, &ts);
			ts.tv_sec += 5;
		}
		stage = 2 * i + 1;
		r = syscall(SYS_futex, &word, w->op | FUTEX_PRIVATE_FLAG, 0,
			    w->timeout ? &ts : NULL, NULL, FUTEX_BITSET_MATCH_ANY);
		e = errno;
		snprintf(out[i], sizeof(out[i]), "%s: %ld%s%s, handler ran %d time(s)", w->what, r,
			 r ? " " : " (woken)", r ? strerror(e) : "", (int)handled);
		stage = 2 * i + 2;
		while (stage == 2 * i + 2)	/* main resets the word */
			usleep(1000);
	}
	return NULL;
}

int main(void)
{
	pthread_t t;
	int bad = 0;

	pthread_create(&t, NULL, waiter, NULL);
	for (int i = 0; i < NWAITS; i++) {
		const struct wait *w = &waits[i];
		tp_on_signal(SIGUSR1, on_usr1, w->restart ? SA_RESTART : 0);
		bump = w->bump;
		handled = 0;
		tp_when(&stage, 2 * i + 1);
		pthread_kill(t, SIGUSR1);
		while (!handled)
			usleep(1000);
		usleep(50 * 1000);
		/* still waiting (made again): woken, the word left as it is,
		 * until it is back, so a wake never comes before its wait */
		while (stage != 2 * i + 2) {
			syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
			usleep(10 * 1000);
		}
		__atomic_store_n(&word, 0, __ATOMIC_SEQ_CST);
		stage = 0;
	}
	pthread_join(t, NULL);
	for (int i = 0; i < NWAITS; i++) {
		char want[160];
		snprintf(want, sizeof(want), "%s: %s, handler ran 1 time(s)", waits[i].what,
			 waits[i].want);
		printf("%s\n", out[i]);
		if (strcmp(out[i], want)) {
			printf("  want %s\n", want);
			bad = 1;
		}
	}
	printf("%s\n", bad ? "FAILED" : "ended as natively");
	return bad;
}
