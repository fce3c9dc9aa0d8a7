/*
 * tp_pshared.c - locks shared between processes: a process-shared mutex
 * and condition variable in MAP_SHARED memory, a named POSIX semaphore
 * (sem_open, as Python's multiprocessing uses), and a process-shared
 * barrier.  Their futexes have no FUTEX_PRIVATE_FLAG: a waiter in one
 * process is woken by the kernel on behalf of another.
 *
 * The parent starts 2 threads, then forks 2 children; each child starts
 * 2 threads too.  All 6 threads take turns by a shared counter under the
 * shared mutex (each waits on the condition variable for its turn), for
 * ROUNDS turns each; then each child posts the semaphore ROUNDS times and
 * the parent takes all posts; finally everyone meets at the barrier.
 * Prints the final counter, the posts taken and each child's status.
 * Exit 0 on success, 1 on a detected error.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define PROCS 3
#define THREADS 2
#define ROUNDS 200
#define N (PROCS * THREADS)

struct shared {
	pthread_mutex_t m;
	pthread_cond_t cv;
	pthread_barrier_t bar;
	long turn;		/* whose turn: turn % N */
	int bad;
};

static struct shared *sh;
static sem_t *sem;

struct who {
	int me;
};

static void *player(void *arg)
{
	int me = ((struct who *)arg)->me;

	for (int r = 0; r < ROUNDS; r++) {
		pthread_mutex_lock(&sh->m);
		while (sh->turn % N != me)
			pthread_cond_wait(&sh->cv, &sh->m);
		sh->turn++;
		pthread_cond_broadcast(&sh->cv);
		pthread_mutex_unlock(&sh->m);
	}
	return NULL;
}

/* The threads of process p (0: the parent) play their turns. */
static int play(int p)
{
	pthread_t t[THREADS];
	struct who w[THREADS];

	for (int i = 0; i < THREADS; i++) {
		w[i].me = p * THREADS + i;
		if (pthread_create(&t[i], NULL, player, &w[i]) != 0)
			return 1;
	}
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	return 0;
}

int main(void)
{
	pthread_mutexattr_t ma;
	pthread_condattr_t ca;
	pthread_barrierattr_t ba;
	char name[64];
	pid_t kids[PROCS - 1];
	int rc = 0, taken = 0;

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 1;
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
	pthread_mutex_init(&sh->m, &ma);
	pthread_condattr_init(&ca);
	pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED);
	pthread_cond_init(&sh->cv, &ca);
	pthread_barrierattr_init(&ba);
	pthread_barrierattr_setpshared(&ba, PTHREAD_PROCESS_SHARED);
	pthread_barrier_init(&sh->bar, &ba, PROCS);
	snprintf(name, sizeof(name), "/tp_pshared.%d", (int)getpid());
	sem = sem_open(name, O_CREAT | O_EXCL, 0600, 0);
	if (sem == SEM_FAILED) {
		perror("tp_pshared: sem_open");
		return 1;
	}
	sem_unlink(name);
	fflush(stdout);
	for (int p = 1; p < PROCS; p++) {
		kids[p - 1] = fork();
		if (kids[p - 1] < 0)
			return 1;
		if (kids[p - 1] == 0) {
			int bad = play(p);
			for (int i = 0; i < ROUNDS; i++)
				bad |= sem_post(sem) != 0;
			pthread_barrier_wait(&sh->bar);
			_exit(bad);
		}
	}
	rc |= play(0);
	for (int i = 0; i < (PROCS - 1) * ROUNDS; i++)
		if (sem_wait(sem) == 0)
			taken++;
	pthread_barrier_wait(&sh->bar);
	for (int p = 1; p < PROCS; p++) {
		int st;
		if (waitpid(kids[p - 1], &st, 0) != kids[p - 1])
			return 1;
		printf("child %d: exit %d\n", p, WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
		rc |= !WIFEXITED(st) || WEXITSTATUS(st);
	}
	printf("turns %ld (want %d), posts taken %d (want %d)\n", sh->turn, N * ROUNDS, taken,
	       (PROCS - 1) * ROUNDS);
	rc |= sh->turn != N * ROUNDS || taken != (PROCS - 1) * ROUNDS;
	return rc;
}
