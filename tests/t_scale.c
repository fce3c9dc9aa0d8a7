/* xsc threads at scale: 100,000 fibers in ping-pong pairs (fewer when
 * RLIMIT_NOFILE cannot be raised that far), first over pipes, then over
 * UNIX stream sockets, on 2 kernel threads with the
 * default syscall pages (4,096 entries per kernel thread), every byte
 * checked.  Each pair is its own conversation: fiber A writes a byte and
 * reads the answer, fiber B reads it and writes the answer back, for a
 * few rounds.  The failure guarded against: tens of thousands of readers
 * blocked in entries fill a kernel thread's pages and the writers that
 * would wake them wait for a free entry forever (a deadlock with no
 * error).
 * Without a ring (the worker executor, io_uring forbidden) the syscall
 * threads are the finite resource (256 per kernel thread): blocked fibers
 * beyond half of them wait on the handle's epoll thread instead (else a
 * deadlock past 256).  Inline runs each call in its kernel thread,
 * where fibers of one kernel thread cannot talk.
 * First, as many fibers as the test's count (100,000) wait on one
 * semaphore and are all released: a kernel thread with nothing to do
 * that looked for new fibers to take by walking the other's whole run
 * queue under its lock, again and again, would take minutes for 60,000
 * released fibers (a hang to the program).
 * xsc-test: per-backend
 * xsc-test: timeout=300 */
#include <fcntl.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testlib.h"
#include "xsc.h"

enum { ROUNDS = 3 };

struct pair {
	int a_wr, a_rd;		/* A's ends */
	int b_rd, b_wr;		/* B's ends */
	unsigned id;
};

static int nfibers, npipe, nsock;

static void *side_a(void *arg)
{
	struct pair *p = arg;
	unsigned char c = (unsigned char)p->id, got;

	for (int r = 0; r < ROUNDS; r++, c += 2) {
		CHECK_EQ(xsc_write(p->a_wr, &c, 1), 1);
		CHECK_EQ(xsc_read(p->a_rd, &got, 1), 1);
		CHECK_EQ(got, (unsigned char)(c + 1));
	}
	return NULL;
}

static void *side_b(void *arg)
{
	struct pair *p = arg;
	unsigned char want = (unsigned char)p->id, c;

	for (int r = 0; r < ROUNDS; r++, want += 2) {
		CHECK_EQ(xsc_read(p->b_rd, &c, 1), 1);
		CHECK_EQ(c, want);
		c++;
		CHECK_EQ(xsc_write(p->b_wr, &c, 1), 1);
	}
	return NULL;
}

static void run_pairs(int npairs, bool sockets)
{
	struct pair *ps = calloc((size_t)npairs, sizeof(*ps));
	xsc_thread_t *ts = calloc((size_t)npairs * 2, sizeof(*ts));
	double t0 = now_s();

	CHECK(ps && ts);
	for (int i = 0; i < npairs; i++) {
		struct pair *p = &ps[i];
		if (sockets) {
			int s[2];
			CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, s), 0);
			*p = (struct pair){ s[0], s[0], s[1], s[1], (unsigned)i };
		} else {
			int ab[2], ba[2];
			CHECK_EQ(pipe2(ab, O_CLOEXEC), 0);
			CHECK_EQ(pipe2(ba, O_CLOEXEC), 0);
			*p = (struct pair){ ab[1], ba[0], ab[0], ba[1], (unsigned)i };
		}
	}
	/* every B first: all of them block in a read before any A writes */
	for (int i = 0; i < npairs; i++)
		CHECK_EQ(xsc_thread_create(&ts[2 * i + 1], NULL, side_b, &ps[i]), 0);
	for (int i = 0; i < npairs; i++)
		CHECK_EQ(xsc_thread_create(&ts[2 * i], NULL, side_a, &ps[i]), 0);
	for (int i = 0; i < 2 * npairs; i++)
		CHECK_EQ(xsc_thread_join(ts[i], NULL), 0);
	printf("%d fibers, %d pairs over %s, %d rounds: %.2f s\n", 2 * npairs,
	       npairs, sockets ? "UNIX sockets" : "pipes", ROUNDS, now_s() - t0);
	for (int i = 0; i < npairs; i++) {
		close(ps[i].a_wr);
		close(ps[i].b_rd);
		if (!sockets) {
			close(ps[i].a_rd);
			close(ps[i].b_wr);
		}
	}
	free(ps);
	free(ts);
}

static xsc_sem_t idle_sem;
static _Atomic int idle_started;

static void *idle_fiber(void *arg)
{
	atomic_fetch_add(&idle_started, 1);
	CHECK_EQ(xsc_sem_wait(&idle_sem), 0);
	return arg;
}

static void run_idle(int n)
{
	xsc_thread_t *ts = calloc((size_t)n, sizeof(*ts));
	double t0 = now_s();

	CHECK(ts);
	CHECK_EQ(xsc_sem_init(&idle_sem, 0), 0);
	for (int i = 0; i < n; i++)
		CHECK_EQ(xsc_thread_create(&ts[i], NULL, idle_fiber, NULL), 0);
	while (atomic_load(&idle_started) < n)	/* every one has run */
		xsc_yield();
	for (int i = 0; i < n; i++)
		CHECK_EQ(xsc_sem_post(&idle_sem), 0);
	for (int i = 0; i < n; i++)
		CHECK_EQ(xsc_thread_join(ts[i], NULL), 0);
	printf("%d fibers parked on a semaphore and released: %.2f s\n", n, now_s() - t0);
	free(ts);
}

static int body(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	run_idle(nfibers);
	run_pairs(npipe / 2, false);
	run_pairs(nsock / 2, true);
	return 42;
}

int main(void)
{
	struct rlimit rl;
	struct xsc_runtime_config cfg;
	int route = test_read_route();

	if (route == XSC_BACKEND_INLINE)	/* asked, or io_uring refused */
		skip("inline runs each call in its kernel thread: fibers of one "
		     "kernel thread cannot talk to each other (by design)");
	nfibers = test_sanitized() ? 10000 : 100000;
	/* pipes: 2 fds per fiber; raise the soft limit to the hard one */
	CHECK_EQ(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_max < (rlim_t)nfibers * 2 + 256)
		rl.rlim_max = (rlim_t)nfibers * 2 + 256;	/* root may raise it */
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) != 0) {
		CHECK_EQ(getrlimit(RLIMIT_NOFILE, &rl), 0);
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	/* a pipe pair needs 2 fds per fiber, a socket pair 1: as many as
	 * the limit allows, up to nfibers (this machine's hard limit was
	 * 20,000 without CAP_SYS_RESOURCE: 9,872 and 19,744 fibers) */
	long room = (long)rl.rlim_cur - 256;
	npipe = (int)(room / 2 < nfibers ? room / 2 : nfibers) & ~1;
	nsock = (int)(room < nfibers ? room : nfibers) & ~1;
	if (npipe < (nfibers < 1000 ? nfibers : 1000))
		skip("RLIMIT_NOFILE %llu allows too few fibers (%d)",
		     (unsigned long long)rl.rlim_cur, npipe);
	xsc_runtime_config_init(&cfg);
	cfg.nthreads = 2;
	cfg.stack_size = 64 * 1024;
	main_in_child(body, &cfg);
	printf("ok (%s)\n", test_backend());
	return 0;
}
