/* Threads that wait in io_uring_enter for completions another thread
 * causes, the way MariaDB's InnoDB and other servers use io_uring: one
 * completion thread per ring blocked in io_uring_wait_cqe, reads of a
 * pipe that main writes only after all of them wait.  Natively each
 * waiter is a kernel thread; under `xsc run` a waiter that held its vcpu
 * in the kernel stopped every thread on it, and with as many waiters as
 * vcpus the writer never ran (MariaDB hung at start).  Also: a timed wait
 * with nothing to come (-ETIME after the timeout, not before), a wait
 * that submits and waits in one call, and a wait for two completions.
 * xsc-tp: needs=io_uring */
#define _GNU_SOURCE
#include <liburing.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NW 3		/* more waiters than vcpus on a 2-CPU machine */
#define ROUNDS 4

static struct io_uring ring[NW];
static int pfd[NW][2];
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int ready;
static char out[NW][ROUNDS][64];	/* printed by main: a fixed order */

static void *waiter(void *arg)
{
	int i = (int)(long)arg, bad = 0;

	for (int k = 0; k < ROUNDS; k++) {
		static __thread char buf[16];
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring[i]);
		struct io_uring_cqe *c;
		int w;

		memset(buf, 0, sizeof(buf));
		io_uring_prep_read(sqe, pfd[i][0], buf, 6, 0);
		io_uring_sqe_set_data64(sqe, 100 + k);
		if (io_uring_submit(&ring[i]) != 1)
			bad = 1;
		pthread_mutex_lock(&m);
		ready++;
		pthread_cond_broadcast(&cv);
		pthread_mutex_unlock(&m);
		w = io_uring_wait_cqe(&ring[i], &c);	/* main writes later */
		if (w == 0) {
			snprintf(out[i][k], sizeof(out[i][k]), "res %d data %llu '%s'",
				 c->res, (unsigned long long)c->user_data, buf);
			bad |= c->res != 6 || c->user_data != (unsigned long long)(100 + k);
			io_uring_cqe_seen(&ring[i], c);
		} else {
			snprintf(out[i][k], sizeof(out[i][k]), "wait %s", strerror(-w));
			bad = 1;
		}
	}
	return (void *)(long)bad;
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

int main(void)
{
	pthread_t t[NW];
	struct io_uring r;
	struct io_uring_cqe *c;
	struct __kernel_timespec ts = { 0, 100 * 1000 * 1000 };
	double t0, dt;
	int bad = 0, w;

	for (int i = 0; i < NW; i++) {
		int e = io_uring_queue_init(8, &ring[i], 0);
		if (e < 0) {
			printf("io_uring_queue_init: %s\n", strerror(-e));
			return 1;
		}
		if (pipe(pfd[i]))
			return 1;
	}
	for (int i = 0; i < NW; i++)
		pthread_create(&t[i], NULL, waiter, (void *)(long)i);
	for (int k = 0; k < ROUNDS; k++) {
		pthread_mutex_lock(&m);
		while (ready < NW * (k + 1))
			pthread_cond_wait(&cv, &m);
		pthread_mutex_unlock(&m);
		usleep(20 * 1000);	/* the waiters are in io_uring_enter */
		for (int i = 0; i < NW; i++) {
			char msg[8];
			snprintf(msg, sizeof(msg), "w%dr%d..", i, k);
			if (write(pfd[i][1], msg, 6) != 6)
				bad = 1;
		}
	}
	for (int i = 0; i < NW; i++) {
		void *rv;
		pthread_join(t[i], &rv);
		bad |= (int)(long)rv;
		for (int k = 0; k < ROUNDS; k++)
			printf("waiter %d round %d: %s\n", i, k, out[i][k]);
	}

	/* a timed wait for a completion that never comes: -ETIME, after 100 ms */
	io_uring_queue_init(8, &r, 0);
	t0 = now();
	w = io_uring_wait_cqe_timeout(&r, &c, &ts);
	dt = now() - t0;
	printf("timed wait: %s, %s\n", strerror(-w), dt >= 0.099 ? "after the timeout" : "EARLY");
	bad |= w != -ETIME || dt < 0.099;

	/* submit and wait in one call; then a wait for two completions */
	io_uring_prep_nop(io_uring_get_sqe(&r));
	w = io_uring_submit_and_wait(&r, 1);
	printf("submit and wait: %d, cq ready %u\n", w, io_uring_cq_ready(&r));
	bad |= w != 1 || io_uring_cq_ready(&r) != 1;
	io_uring_cq_advance(&r, io_uring_cq_ready(&r));
	io_uring_prep_nop(io_uring_get_sqe(&r));
	io_uring_prep_timeout(io_uring_get_sqe(&r), &ts, 0, 0);
	io_uring_submit(&r);
	w = io_uring_wait_cqe_nr(&r, &c, 2);
	printf("wait for 2: %d, cq ready %u\n", w, io_uring_cq_ready(&r));
	bad |= w != 0 || io_uring_cq_ready(&r) != 2;
	io_uring_queue_exit(&r);
	printf("%s\n", bad ? "FAILED" : "uring waits ok");
	return bad;
}
