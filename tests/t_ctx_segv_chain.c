/*
 * t_ctx_segv_chain - the fiber SIGSEGV handler passes every fault that is
 * not a guard-page hit on: with no earlier handler the process still dies
 * by SIGSEGV (a fault near NULL, on the main stack and on a fiber stack,
 * and a SIGSEGV sent with kill()); with an earlier application handler
 * (SA_SIGINFO or plain) that handler runs.  Each case runs in a child.
 *
 * Under ASan the earlier handler is ASan's, which reports the SEGV and
 * exits with status 1: also accepted as "chained".
 */
#include <signal.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fiber/ctx.h"
#include "testlib.h"

enum { FAULT_MAIN, FAULT_FIBER, KILL_SELF, APP_SIGINFO, APP_PLAIN };

static volatile uintptr_t bad_addr = 16;	/* not NULL: UBSan would catch it */
static struct xsc_ctx main_ctx, f_ctx;

static void fault(void)
{
	*(volatile int *)bad_addr = 1;
}

static void fault_fiber(void *arg)
{
	(void)arg;
	fault();
}

static void app_siginfo(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	_exit(si->si_addr == (void *)bad_addr ? 42 : 43);
}

static void app_plain(int sig)
{
	_exit(44);
}

static void child(int what)
{
	struct rlimit no_core = { 0, 0 };
	struct sigaction sa = { .sa_sigaction = app_siginfo, .sa_flags = SA_SIGINFO };
	struct xsc_stack *st;

	setrlimit(RLIMIT_CORE, &no_core);
	if (what == APP_PLAIN) {
		sa.sa_handler = app_plain;
		sa.sa_flags = 0;
	}
	if (what >= APP_SIGINFO)
		sigaction(SIGSEGV, &sa, NULL);
	if (xsc__stack_thread_init())
		_exit(2);
	switch (what) {
	case FAULT_FIBER:
		if (xsc__stack_get(0, &st) ||
		    xsc__ctx_make(&f_ctx, st->lo, (char *)st->hi - (char *)st->lo,
				  fault_fiber, NULL, NULL))
			_exit(2);
		xsc__ctx_switch(&main_ctx, &f_ctx);
		break;
	case KILL_SELF:
		kill(getpid(), SIGSEGV);
		break;
	default:
		fault();
	}
	_exit(0);
}

static char out[16384];	/* the child's stderr */

static int run(int what)
{
	int status = test_child_output(child, what, STDERR_FILENO, out, sizeof(out));

	CHECK(!strstr(out, "fiber stack overflow"));
	return status;
}

static void expect_segv(int what)
{
	int status = run(what);

	if (test_sanitized() && WIFEXITED(status) &&
	    WEXITSTATUS(status) == 1 && strstr(out, "AddressSanitizer: SEGV"))
		return;		/* ASan's handler got it: chained */
	CHECK(WIFSIGNALED(status));
	CHECK_EQ(WTERMSIG(status), SIGSEGV);
}

static void expect_exit(int what, int code)
{
	int status = run(what);

	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), code);
}

int main(void)
{
	expect_segv(FAULT_MAIN);
	expect_segv(FAULT_FIBER);
	expect_segv(KILL_SELF);
	expect_exit(APP_SIGINFO, 42);
	expect_exit(APP_PLAIN, 44);
	printf("ok: non-overflow SIGSEGVs chained\n");
	return 0;
}
