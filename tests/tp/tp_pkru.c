/* Each thread keeps its own protection keys' rights (PKRU), as natively:
 * the main thread sets one before it creates the others, each of which
 * starts with it (a clone copies its caller's); then the four threads
 * each set a different PKRU and pass a token round a ring
 * of pipes 500 times, each blocking in a read between its turns (under
 * xsc run, a park, another thread's fiber on the kernel thread), calling
 * getppid() (a libc site xsc run rewrites) and sched_yield(), and check
 * their PKRU after each.  The main thread's PKRU stays its own too.
 * Where the OS has not enabled protection keys, it says so and runs the
 * ring without them (the same lines natively): t_transparent wants the
 * threads that make the shim engage.
 * xsc-tp: run-opts=-t 2 */
#define _GNU_SOURCE
#include <cpuid.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "tp_pkru.h"

#define NT 4
#define ROUNDS 500

static int ring[NT][2];
static uint32_t p0, pm;
static int pk;	/* the OS enabled protection keys */

static uint32_t pkru(void)
{
	return pk ? rdpkru() : 0;
}

static void *member(void *arg)
{
	int i = (int)(intptr_t)arg;
	/* access disable of key i + 1 flipped: never key 0's */
	uint32_t mine = pk ? p0 ^ (1u << (2 * (i + 1))) : 0;
	char c;

	if (pkru() != pm) {
		printf("thread %d starts with PKRU %#x, its creator's %#x\n", i, pkru(), pm);
		exit(1);
	}
	if (pk)
		wrpkru(mine);
	for (int r = 0; r < ROUNDS; r++) {
		if (read(ring[i][0], &c, 1) != 1)
			exit(2);
		if (pkru() != mine) {
			printf("thread %d round %d: PKRU %#x, set %#x\n", i, r, pkru(), mine);
			exit(1);
		}
		(void)getppid();
		sched_yield();
		if (pkru() != mine) {
			printf("thread %d round %d after calls: PKRU %#x, set %#x\n", i, r,
			       pkru(), mine);
			exit(1);
		}
		if (write(ring[(i + 1) % NT][1], &c, 1) != 1)
			exit(2);
	}
	return NULL;
}

int main(void)
{
	unsigned a, b, c, d;
	pthread_t t[NT];

	pk = __get_cpuid_count(7, 0, &a, &b, &c, &d) && (c & (1u << 4));
	if (!pk)
		printf("no protection keys enabled (OSPKE): the ring runs without them\n");
	else {
		p0 = rdpkru();
		pm = p0 ^ (1u << 30);	/* key 15's access disable flipped */
		wrpkru(pm);
	}
	for (int i = 0; i < NT; i++)
		if (pipe(ring[i]))
			return 2;
	for (int i = 0; i < NT; i++)
		if (pthread_create(&t[i], NULL, member, (void *)(intptr_t)i))
			return 2;
	if (write(ring[0][1], "x", 1) != 1)
		return 2;
	for (int i = 0; i < NT; i++)
		pthread_join(t[i], NULL);
	if (pkru() != pm) {
		printf("main: PKRU %#x, had %#x\n", pkru(), pm);
		return 1;
	}
	printf("%d threads %s over %d rounds each\n", NT,
	       pk ? "kept their own PKRU" : "passed the token", ROUNDS);
	return 0;
}
