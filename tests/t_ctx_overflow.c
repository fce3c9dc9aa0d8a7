/*
 * t_ctx_overflow - unbounded recursion on a fiber stack hits the guard
 * page and the SIGSEGV handler reports it: the child process dies by
 * SIGABRT and its stderr holds "xsc: fiber stack overflow (fiber stack at
 * LO, guard page hit at ADDR)" with LO the stack's lowest usable byte.
 * Run twice: on the main thread, and on a second thread running a fiber
 * whose stack was mapped by the main thread (the registry is process-wide,
 * the alternate signal stack per thread).
 *
 * Under ASan the handler chain may end in ASan's own report instead; the
 * test then skips (77) and says so.
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fiber/ctx.h"
#include "testlib.h"

static struct xsc_ctx main_ctx, f_ctx;
static struct xsc_stack *st;
static volatile long stop = -1;

static __attribute__((noinline)) long recurse(long n)
{
	volatile char buf[200];

	buf[n % sizeof(buf)] = (char)n;
	if (n == stop)
		return 0;
	return recurse(n + 1) + buf[n % sizeof(buf)];
}

static void deep(void *arg)
{
	(void)arg;
	recurse(0);
}

static void done(struct xsc_ctx *self)
{
	xsc__ctx_exit(self, &main_ctx);
}

static void *thread_main(void *arg)
{
	(void)arg;
	if (xsc__stack_thread_init())
		_exit(3);
	xsc__ctx_switch(&main_ctx, &f_ctx);
	return NULL;
}

static void child(int on_thread)
{
	struct rlimit no_core = { 0, 0 };
	pthread_t t;

	setrlimit(RLIMIT_CORE, &no_core);
	if (xsc__stack_thread_init() || xsc__stack_get(0, &st) ||
	    xsc__ctx_make(&f_ctx, st->lo, (char *)st->hi - (char *)st->lo,
			  deep, NULL, done))
		_exit(2);
	fprintf(stderr, "stack lo %p\n", st->lo);
	if (on_thread) {
		pthread_create(&t, NULL, thread_main, NULL);
		pthread_join(t, NULL);
	} else {
		xsc__ctx_switch(&main_ctx, &f_ctx);
	}
	_exit(0);	/* not reached */
}

static void run(int on_thread)
{
	char out[8192], want[128];
	int status = test_child_output(child, on_thread, STDERR_FILENO, out, sizeof(out));
	void *lo;

	printf("child (%s) said:\n%s", on_thread ? "thread" : "main", out);
	if (test_sanitized() && !strstr(out, "fiber stack overflow") &&
	    strstr(out, "AddressSanitizer"))
		skip("ASan's SIGSEGV handler reported the overflow before ours");
	CHECK(WIFSIGNALED(status));
	CHECK_EQ(WTERMSIG(status), SIGABRT);
	CHECK(sscanf(out, "stack lo %p", &lo) == 1);
	snprintf(want, sizeof(want),
		 "xsc: fiber stack overflow (fiber stack at %p, guard page hit at 0x",
		 lo);
	CHECK(strstr(out, want) != NULL);
}

int main(void)
{
	run(0);
	run(1);
	return 0;
}
