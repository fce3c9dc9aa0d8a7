/*
 * tp_spin.c - threads that wait for each other by spinning, with no
 * system call in the loop (as InnoDB's group commit and many lock-free
 * programs do).  xsc-tp: run-opts=-t 1
 *
 * Natively the kernel preempts a spinning thread; under `xsc run -t 1`
 * one vcpu runs every thread, so the runtime must preempt too (without
 * it, the first spinner kept the vcpu for good).  4 threads pass a token
 * around a ring 25 times, each spinning on a shared word until it is its
 * turn; then main spins until all are done.  Prints the token's count.
 * Exit 0 on success, 1 on any detected error.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#define NT 4
#define ROUNDS 25

static _Atomic long turn;	/* whose turn: turn % NT */
static _Atomic int done;

static void *member(void *arg)
{
	long me = (long)arg;

	for (int r = 0; r < ROUNDS; r++) {
		while (atomic_load(&turn) % NT != me)
			__builtin_ia32_pause();
		atomic_fetch_add(&turn, 1);
	}
	atomic_fetch_add(&done, 1);
	return NULL;
}

int main(void)
{
	pthread_t t[NT];

	for (long i = 0; i < NT; i++)
		pthread_create(&t[i], NULL, member, (void *)i);
	while (atomic_load(&done) < NT)
		__builtin_ia32_pause();
	for (int i = 0; i < NT; i++)
		pthread_join(t[i], NULL);
	printf("token passed %ld times\n", atomic_load(&turn));
	return atomic_load(&turn) == (long)NT * ROUNDS ? 0 : 1;
}
