/*
 * t_ctx_pingpong - two contexts bounce a counter back and forth; each side
 * checks it sees exactly the value the other side left.  Then a fiber
 * that returns goes through its exit hook, a fiber is started from inside
 * another fiber (nesting), and the prev pointer returned by a switch is
 * checked.  Ends by checking that no stack leaked.
 */
#include "fiber/ctx.h"
#include "testlib.h"

#define ROUNDS 100000

static struct xsc_ctx main_ctx, a_ctx, b_ctx;
static volatile long counter;
static int exited;

static void ping(void *arg)
{
	long n = (long)arg;

	for (long i = 0; i < n; i++) {
		CHECK_EQ(counter, 2 * i + 1);
		counter++;
		CHECK(xsc__ctx_switch(&a_ctx, &main_ctx) == &main_ctx);
	}
}

static void on_exit_back(struct xsc_ctx *self)
{
	exited++;
	xsc__ctx_exit(self, &main_ctx);
}

/* b runs inside a: a starts b, b switches straight back to a. */
static void inner(void *arg)
{
	*(int *)arg = 42;
	xsc__ctx_switch(&b_ctx, &a_ctx);
	*(int *)arg = 43;
}

static void on_exit_to_a(struct xsc_ctx *self)
{
	xsc__ctx_exit(self, &a_ctx);
}

static void outer(void *arg)
{
	struct xsc_stack *sb = arg;
	int v = 0;

	CHECK_EQ(xsc__ctx_make(&b_ctx, sb->lo, (char *)sb->hi - (char *)sb->lo,
			       inner, &v, on_exit_to_a), 0);
	CHECK(xsc__ctx_switch(&a_ctx, &b_ctx) == &b_ctx);
	CHECK_EQ(v, 42);
	xsc__ctx_switch(&a_ctx, &b_ctx);	/* b returns, exits to us */
	CHECK_EQ(v, 43);
}

int main(void)
{
	struct xsc_stack *sa, *sb;
	struct xsc_stack_stats st;
	int fds = count_fds();

	CHECK_EQ(xsc__stack_thread_init(), 0);
	CHECK_EQ(xsc__stack_get(0, &sa), 0);
	CHECK_EQ(xsc__ctx_make(&a_ctx, sa->lo, (char *)sa->hi - (char *)sa->lo,
			       ping, (void *)(long)ROUNDS, on_exit_back), 0);
	for (long i = 0; i < ROUNDS; i++) {
		CHECK_EQ(counter, 2 * i);
		counter++;
		CHECK(xsc__ctx_switch(&main_ctx, &a_ctx) == &a_ctx);
	}
	CHECK_EQ(counter, 2 * ROUNDS);
	CHECK_EQ(exited, 0);
	xsc__ctx_switch(&main_ctx, &a_ctx);	/* ping returns */
	CHECK_EQ(exited, 1);

	/* Nesting: a fiber that creates and runs another. */
	CHECK_EQ(xsc__stack_get(0, &sb), 0);
	CHECK_EQ(xsc__ctx_make(&a_ctx, sa->lo, (char *)sa->hi - (char *)sa->lo,
			       outer, sb, on_exit_back), 0);
	xsc__ctx_switch(&main_ctx, &a_ctx);
	CHECK_EQ(exited, 2);

	xsc__stack_put(sa);
	xsc__stack_put(sb);
	xsc__stack_stats(&st);
	CHECK_EQ(st.pooled, 2);
	CHECK_EQ(xsc__stack_trim(0), 2);
	xsc__stack_stats(&st);
	CHECK_EQ(st.live, 0);
	xsc__stack_thread_fini();
	CHECK_EQ(count_fds(), fds);
	printf("ok: %d round trips\n", ROUNDS);
	return 0;
}
