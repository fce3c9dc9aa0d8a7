/*
 * tp_sigmaskwake.c - a process signal that the running thread blocks, sent
 * while another thread waits on a condition, runs its handler on the
 * waiting thread at once, as natively, when both share one vcpu.
 * xsc-tp: run-opts=-t 1
 *
 * Under `xsc run -t 1` both threads are fibers of one vcpu.  While main
 * runs alone there and takes every signal the waiting thread takes, the
 * watchdog sleeps (nothing to preempt or hand over).  Then main blocks
 * SIGUSR1 and computes, with no system call, while another process
 * sends SIGUSR1 to this one: the vcpu's kernel thread blocks it, and
 * only the watchdog hands it to the waiting thread.  A thread that
 * blocks more must wake it (signals/mask.c tp_vcpu_mask), or the signal
 * waits for the watchdog's own 1 s timeout.
 *
 * 5 rounds: main spins 150 ms with SIGUSR1 open, blocks it, tells a
 * child process (through shared memory, no call), and spins until the
 * handler has run; the child sends the signal.  The handler must run on
 * the waiting thread each time, within 400 ms of the kill.  Prints what
 * it saw; exit 0 on success, 1 on a failed check.
 */
#include "tp.h"

#include <stdatomic.h>
#include <sys/mman.h>

#define ROUNDS 5
#define MAX_MS 400

struct shared {
	atomic_int ask;		/* rounds main asked for */
	atomic_long kill_ms[ROUNDS];	/* when the child sent each */
};

static struct shared *sh;
static atomic_int handled, on_waiter;
static atomic_long ran_ms[ROUNDS];
static pid_t waiter_tid;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int done;

static void on_usr1(int sig)
{
	int n = atomic_load(&handled);

	(void)sig;
	if (n < ROUNDS)
		atomic_store(&ran_ms[n], tp_now_ms());
	if ((pid_t)syscall(SYS_gettid) == waiter_tid)
		atomic_fetch_add(&on_waiter, 1);
	atomic_fetch_add(&handled, 1);
}

static void *waiter(void *arg)
{
	(void)arg;
	waiter_tid = (pid_t)syscall(SYS_gettid);
	pthread_mutex_lock(&lock);
	while (!done)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	return NULL;
}

static void spin_ms(long ms)
{
	long end = tp_now_ms() + ms;

	while (tp_now_ms() < end)
		;
}

/* The child: sends SIGUSR1 to its parent each time main asks. */
static void sender(pid_t parent)
{
	for (int r = 0; r < ROUNDS; r++) {
		long t0 = tp_now_ms();

		while (atomic_load(&sh->ask) <= r) {
			if (tp_now_ms() - t0 > 30000)
				_exit(1);
			tp_nap(1);
		}
		atomic_store(&sh->kill_ms[r], tp_now_ms());
		kill(parent, SIGUSR1);
	}
	_exit(0);
}

int main(void)
{
	pthread_t th;
	sigset_t usr1;
	pid_t child;
	long worst = 0;
	int status, late = 0;

	setvbuf(stdout, NULL, _IONBF, 0);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED || tp_on_signal(SIGUSR1, on_usr1, SA_RESTART) != 0) {
		perror("setup");
		return 1;
	}
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	child = fork();
	if (child < 0) {
		perror("fork");
		return 1;
	}
	if (child == 0)
		sender(getppid());
	pthread_create(&th, NULL, waiter, NULL);
	while (!waiter_tid)
		tp_nap(1);
	tp_nap(50);	/* the waiter in its condition wait */

	for (int r = 0; r < ROUNDS; r++) {
		long t0;

		spin_ms(150);	/* alone, taking what the waiter takes */
		pthread_sigmask(SIG_BLOCK, &usr1, NULL);
		atomic_store(&sh->ask, r + 1);
		t0 = tp_now_ms();
		while (atomic_load(&handled) <= r && tp_now_ms() - t0 < 5000)
			;
		if (atomic_load(&handled) > r) {
			long ms = atomic_load(&ran_ms[r]) - atomic_load(&sh->kill_ms[r]);

			worst = ms > worst ? ms : worst;
			late += ms > MAX_MS;
		} else {
			late++;
			worst = 5000;
		}
		pthread_sigmask(SIG_UNBLOCK, &usr1, NULL);
	}
	pthread_mutex_lock(&lock);
	done = 1;
	pthread_cond_signal(&cond);
	pthread_mutex_unlock(&lock);
	pthread_join(th, NULL);
	waitpid(child, &status, 0);

	CHECK_SAY(atomic_load(&handled) == ROUNDS && atomic_load(&on_waiter) == ROUNDS,
		  "SIGUSR1 sent %d times while main blocked it: handled on the waiting thread each time",
		  ROUNDS);
	CHECK_SAY(!late, "each handler ran within %d ms of the kill", MAX_MS);
	if (late)
		printf("  %d late, the worst after %ld ms\n", late, worst);
	if (getenv("TP_SIGMASKWAKE_SAY"))
		fprintf(stderr, "worst %ld ms\n", worst);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the sender ended %#x", status);
	return tp_failures ? 1 : 0;
}
