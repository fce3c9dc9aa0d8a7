/*
 * tp_sigtls.c - a handler runs with its own thread's TLS however often
 * the threads switch.
 *
 * Under `xsc run` a thread is a fiber, and the scheduler loads its thread
 * pointer whenever it runs it; where the CPU gives no FSGSBASE to user
 * space that load is an arch_prctl system call, at whose return the
 * kernel delivers pending signals.  A process signal that came in just
 * after a fiber switched out, before its vcpu was back on its own TLS or
 * while it was, ran the handler as that thread (gettid() right) with the
 * vcpu's TLS (tp_sigthread: 1 to 90 of 500 handlers, on a host without
 * FSGSBASE and here with XSC_HW=nofsgsbase, 2026-11-27).
 *
 * Before that, a process signal a vcpu took between fibers, when no
 * thread that takes it waited in a call or on a futex, ran its handler on
 * the vcpu: no thread's id, the vcpu's TLS (1 handler in 200 here).
 *
 * Two pairs of workers take turns through a condition variable (every
 * wait parks a fiber: two switches per turn) while a sender, which blocks
 * SIGUSR1 as main does, sends it to the process, each time once the last
 * was handled, from the first turn (the workers wait for a handler to
 * have run) until a worker is done.  The handler checks that the thread it runs on
 * has its thread-local mark, and that the mark names the thread gettid()
 * gives.  Prints the counts that must be 0; exit 0 on success, 1 on any
 * error.
 * xsc-tp: run-opts=-t 2 */
#include "tp.h"

#include <stdatomic.h>

#define NWORKERS 4
#define EXCHANGES 20000

static atomic_long worker_tid[NWORKERS];
static atomic_int done, handled, unmarked, wrong_tid;
static __thread int mark;		/* worker i: i + 1; 0 elsewhere */

static void on_usr1(int sig)
{
	long me = syscall(SYS_gettid);
	int m = mark;

	(void)sig;
	if (m < 1 || m > NWORKERS)
		atomic_fetch_add(&unmarked, 1);
	else if (atomic_load(&worker_tid[m - 1]) != me)
		atomic_fetch_add(&wrong_tid, 1);
	atomic_fetch_add(&handled, 1);
}

/* Worker i and its partner i ^ 1 take turns: each waits on the pair's
 * condition variable (a futex: the fiber parks) until the turn is its. */
static struct pair {
	pthread_mutex_t lock;
	pthread_cond_t cv;
	int turn;		/* the worker whose turn it is */
} pairs[NWORKERS / 2];

static void *worker(void *arg)
{
	int i = (int)(long)arg;
	struct pair *p = &pairs[i / 2];
	sigset_t usr1;

	/* created with SIGUSR1 blocked (main's mask): a handler may run
	 * only once the thread has its mark and its id is recorded */
	mark = i + 1;
	atomic_store(&worker_tid[i], syscall(SYS_gettid));
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_UNBLOCK, &usr1, NULL);
	while (!atomic_load(&handled))	/* the sender has begun */
		sched_yield();
	for (int n = 0; n < EXCHANGES; n++) {
		pthread_mutex_lock(&p->lock);
		while (p->turn != i)
			pthread_cond_wait(&p->cv, &p->lock);
		p->turn = i ^ 1;
		pthread_cond_signal(&p->cv);
		pthread_mutex_unlock(&p->lock);
	}
	atomic_fetch_add(&done, 1);
	return NULL;
}

static void *sender(void *arg)
{
	(void)arg;
	/* one at a time (a flood would only merge), and only while every
	 * worker takes it: an exiting thread blocks every signal */
	for (int n = 0; !atomic_load(&done); n++) {
		kill(getpid(), SIGUSR1);
		while (atomic_load(&handled) <= n && !atomic_load(&done))
			sched_yield();
	}
	return NULL;
}

int main(void)
{
	sigset_t usr1;
	pthread_t w[NWORKERS], s;
	void *ret;
	int fail = 0;

	if (tp_on_signal(SIGUSR1, on_usr1, SA_RESTART) < 0) {
		perror("sigaction");
		return 1;
	}
	for (int i = 0; i < NWORKERS / 2; i++) {
		pthread_mutex_init(&pairs[i].lock, NULL);
		pthread_cond_init(&pairs[i].cv, NULL);
		pairs[i].turn = 2 * i;
	}
	/* only the workers take it, once they have started (worker):
	 * main and the sender block it */
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);
	for (int i = 0; i < NWORKERS; i++)
		pthread_create(&w[i], NULL, worker, (void *)(long)i);
	pthread_create(&s, NULL, sender, NULL);
	for (int i = 0; i < NWORKERS; i++) {
		pthread_join(w[i], &ret);
		fail |= ret != NULL;
	}
	pthread_join(s, NULL);
	printf("exchanges done: %d workers of %d\n", atomic_load(&done), NWORKERS);
	printf("handlers without their thread's TLS: %d, on a thread other than "
	       "their TLS's: %d\n", atomic_load(&unmarked), atomic_load(&wrong_tid));
	fail |= atomic_load(&unmarked) || atomic_load(&wrong_tid);
	return fail;
}
