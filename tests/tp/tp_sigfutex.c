/*
 * tp_sigfutex.c - a signal handler that interrupts a futex wait ends it
 * as the kernel's does: a wait without a timeout is made again when the
 * handler has SA_RESTART (-ERESTARTSYS), the word compared afresh; one
 * with a timeout fails with EINTR all the same (-ERESTART_RESTARTBLOCK);
 * without SA_RESTART both fail with EINTR.
 *
 * A thread waits on a word with raw futex calls (FUTEX_WAIT and
 * FUTEX_WAIT_BITSET, relative and absolute timeouts, none; private ones,
 * which xsc run emulates, and shared ones, which it posts); main sends it
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
	int op;		/* FUTEX_WAIT or FUTEX_WAIT_BITSET */
	int timeout;	/* 0 none, 1 relative 5 s, 2 absolute now + 5 s */
	int restart;	/* SA_RESTART on the handler */
	int bump;	/* the handler changes the word */
	int shared;	/* no FUTEX_PRIVATE_FLAG (xsc run posts such a wait) */
	int want;	/* the errno it fails with, 0: it returns 0, woken */
};

static const struct wait waits[] = {
	{ FUTEX_WAIT, 0, 1, 0, 0, 0 }, { FUTEX_WAIT, 0, 0, 0, 0, EINTR },
	{ FUTEX_WAIT, 1, 1, 0, 0, EINTR }, { FUTEX_WAIT_BITSET, 2, 1, 0, 0, EINTR },
	{ FUTEX_WAIT_BITSET, 0, 1, 0, 0, 0 }, { FUTEX_WAIT, 0, 1, 1, 0, EAGAIN },
	{ FUTEX_WAIT, 0, 1, 0, 1, 0 }, { FUTEX_WAIT, 1, 1, 0, 1, EINTR },
};
#define NWAITS (int)(sizeof(waits) / sizeof(waits[0]))
static char out[NWAITS][160];

/* "shared FUTEX_WAIT, 5 s, SA_RESTART: -1 Interrupted system call,
 * handler ran 1 time(s)", and the like: what wait w gave (r, errno e) */
static void say(char *buf, size_t len, const struct wait *w, long r, int e, int ran)
{
	static const char *const tmo[] = { "no timeout", "5 s", "until now + 5 s" };

	snprintf(buf, len, "%s%s, %s, %sSA_RESTART%s: %ld %s, handler ran %d time(s)",
		 w->shared ? "shared " : "", w->op == FUTEX_WAIT ? "FUTEX_WAIT" : "FUTEX_WAIT_BITSET",
		 tmo[w->timeout], w->restart ? "" : "no ",
		 w->bump ? ", the handler sets the word" : "", r, r ? strerror(e) : "(woken)", ran);
}

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
		r = syscall(SYS_futex, &word, w->op | (w->shared ? 0 : FUTEX_PRIVATE_FLAG), 0,
			    w->timeout ? &ts : NULL, NULL, FUTEX_BITSET_MATCH_ANY);
		e = errno;
		say(out[i], sizeof(out[i]), w, r, e, (int)handled);
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
			syscall(SYS_futex, &word, w->shared ? FUTEX_WAKE : FUTEX_WAKE_PRIVATE, 1,
				NULL, NULL, 0);
			usleep(10 * 1000);
		}
		__atomic_store_n(&word, 0, __ATOMIC_SEQ_CST);
		stage = 0;
	}
	pthread_join(t, NULL);
	for (int i = 0; i < NWAITS; i++) {
		char want[160];
		say(want, sizeof(want), &waits[i], waits[i].want ? -1 : 0, waits[i].want, 1);
		printf("%s\n", out[i]);
		if (strcmp(out[i], want)) {
			printf("  want %s\n", want);
			bad = 1;
		}
	}
	printf("%s\n", bad ? "FAILED" : "ended as natively");
	return bad;
}
