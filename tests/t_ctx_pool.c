/*
 * t_ctx_pool - 100,000 fiber create/run/destroy cycles through the stack
 * pool: stacks are reused (few mmaps), and neither fds, mappings nor RSS
 * grow.  Some fibers touch 64 KiB of stack so the release of pooled pages
 * is exercised too.  Also checks the pool bound and trim.  Under
 * sanitizers the RSS growth is printed, not checked: with
 * detect_stack_use_after_return ASan's fake-stack cache grows to about
 * 3 MiB and stays there (same figure at 400,000 cycles).
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "fiber/ctx.h"
#include "testlib.h"

#define CYCLES 100000
#define BATCH 4		/* fibers alive at once */

static struct xsc_ctx main_ctx;
static long ran;

static int count_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	int c, n = 0;

	if (!f)
		return -1;
	while ((c = getc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

static void body(void *arg)
{
	long i = (long)arg;

	if (i % 16 == 0) {	/* a deep one now and then */
		volatile char buf[64 << 10];
		memset((char *)buf, (int)i, sizeof(buf));
		CHECK_EQ(buf[i % sizeof(buf)], (char)i);
	}
	ran++;
}

static void done(struct xsc_ctx *self)
{
	xsc__ctx_exit(self, &main_ctx);
}

static void cycle(long base)
{
	struct xsc_stack *st[BATCH];
	struct xsc_ctx ctx[BATCH];

	for (int k = 0; k < BATCH; k++) {
		CHECK_EQ(xsc__stack_get(0, &st[k]), 0);
		CHECK_EQ(xsc__ctx_make(&ctx[k], st[k]->lo,
				       (char *)st[k]->hi - (char *)st[k]->lo,
				       body, (void *)(base + k), done), 0);
	}
	for (int k = 0; k < BATCH; k++)
		xsc__ctx_switch(&main_ctx, &ctx[k]);
	for (int k = 0; k < BATCH; k++)
		xsc__stack_put(st[k]);
}

/* A thread that pools stacks and exits without xsc__stack_thread_fini:
 * the thread-exit destructor must unmap them. */
static void *pooling_thread(void *arg)
{
	struct xsc_stack *st[3];

	CHECK_EQ(xsc__stack_thread_init(), 0);
	for (int i = 0; i < 3; i++)
		CHECK_EQ(xsc__stack_get(0, &st[i]), 0);
	for (int i = 0; i < 3; i++)
		xsc__stack_put(st[i]);
	return arg;
}

int main(void)
{
	struct xsc_stack_stats s;
	struct xsc_stack *many[100];
	long rss0, rss1;
	int fds0, maps0, maps1;
	pthread_t t;

	CHECK_EQ(xsc__stack_thread_init(), 0);
	/* Warm up: pool, registry chunk, libc buffers. */
	for (long i = 0; i < 1000; i += BATCH)
		cycle(i);
	fds0 = count_fds();
	maps0 = count_maps();
	rss0 = rss_kib();
	for (long i = 0; i < CYCLES; i += BATCH)
		cycle(i);
	rss1 = rss_kib();
	maps1 = count_maps();
	CHECK_EQ(ran, 1000 + CYCLES);
	CHECK_EQ(count_fds(), fds0);
	CHECK_EQ(maps1, maps0);
	if (!test_sanitized())
		CHECK(rss1 - rss0 < 512);
	printf("RSS growth %ld KiB\n", rss1 - rss0);
	xsc__stack_stats(&s);
	CHECK_EQ(s.mapped, BATCH);	/* every later stack came from the pool */
	CHECK_EQ(s.live, BATCH);
	CHECK_EQ(s.pooled, BATCH);
	printf("%d cycles: %ld stacks mapped, RSS %ld -> %ld KiB, %d maps\n",
	       CYCLES, s.mapped, rss0, rss1, maps1);

	/* The pool is bounded, and trim empties it. */
	xsc__stack_set_pool_max(10);
	for (int i = 0; i < 100; i++)
		CHECK_EQ(xsc__stack_get(0, &many[i]), 0);
	for (int i = 0; i < 100; i++)
		xsc__stack_put(many[i]);
	xsc__stack_stats(&s);
	CHECK_EQ(s.pooled, 10);
	CHECK_EQ(s.live, 10);
	CHECK_EQ(xsc__stack_trim(3), 7);
	CHECK_EQ(xsc__stack_trim(0), 3);

	/* A size change retires pooled stacks of the old size. */
	CHECK_EQ(xsc__stack_get(0, &many[0]), 0);
	xsc__stack_put(many[0]);
	CHECK_EQ(xsc__stack_set_default_size(128 << 10), 0);
	CHECK_EQ(xsc__stack_set_default_size(100), -EINVAL);
	CHECK_EQ(xsc__stack_get(0, &many[0]), 0);
	CHECK_EQ((char *)many[0]->hi - (char *)many[0]->lo >= (128 << 10) - 64, 1);
	xsc__stack_stats(&s);
	CHECK_EQ(s.live, 1);
	xsc__stack_put(many[0]);

	xsc__stack_thread_fini();
	xsc__stack_stats(&s);
	CHECK_EQ(s.live, 0);
	CHECK_EQ(s.pooled, 0);

	CHECK_EQ(pthread_create(&t, NULL, pooling_thread, NULL), 0);
	CHECK_EQ(pthread_join(t, NULL), 0);
	xsc__stack_stats(&s);
	CHECK_EQ(s.live, 0);
	CHECK_EQ(count_fds(), fds0);
	return 0;
}
