/*
 * ownthreads.c - the runtime's own threads do not keep a process alive.
 *
 * glibc ends a process when the last thread of its count ends (the main
 * thread and those pthread_create made: __nptl_nthreads, a private symbol
 * found at run time).  The runtime's threads made with pthread_create
 * must not be in that count, or a main that calls pthread_exit never
 * ends: each leaves it once created and enters it again just before it
 * returns, so glibc decides as natively, in the thread it decides in.
 * Why, and what happens without the symbol: docs/transparent.md, the
 * bullet "The process ends when its last thread ends".
 *
 * Update every pthread_create of a runtime thread when this changes:
 * xsc__own_thread_start() after it, xsc__own_thread_end() at the end of
 * its start routine (runtime.c vcpu_spawn, worker.c; fdwait.c, tp_watch
 * and sched/ringwatch.c through xsc__own_thread_spawn).  Raw clones (clone.S) are not
 * counted.  Nor does such a thread take the program's signals: it is
 * created with every signal blocked (xsc__attr_blocked), not only once
 * it runs.
 */
#include "ownthreads.h"

#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>

static unsigned *nthreads;	/* glibc's count, or NULL */
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void find(void)
{
	unsigned *p = dlvsym(RTLD_DEFAULT, "__nptl_nthreads", "GLIBC_PRIVATE");

	/* a count of the threads of a live process is at least one */
	if (p && __atomic_load_n(p, __ATOMIC_RELAXED) >= 1)
		nthreads = p;
}

bool xsc__own_threads_uncounted(void)
{
	pthread_once(&once, find);
	return nthreads != NULL;
}

/* The creator, once pthread_create has succeeded: glibc counted the new
 * thread before cloning it.  The count never drops below the program's
 * threads: the creator is one of them, or the runtime starting. */
void xsc__own_thread_start(void)
{
	if (xsc__own_threads_uncounted())
		__atomic_fetch_sub(nthreads, 1, __ATOMIC_SEQ_CST);
}

/* The runtime's thread, right before its start routine returns: glibc
 * takes it out of the count as it ends, as it took it in.  Between the two
 * the count is one more than the program's threads, never one less. */
void xsc__own_thread_end(void)
{
	if (xsc__own_threads_uncounted())
		__atomic_fetch_add(nthreads, 1, __ATOMIC_SEQ_CST);
}

/* Every signal blocked from birth (glibc keeps its own two open). */
void xsc__attr_blocked(pthread_attr_t *attr)
{
	sigset_t all;

	sigfillset(&all);
	pthread_attr_init(attr);
	pthread_attr_setsigmask_np(attr, &all);
}

int xsc__own_thread_spawn(pthread_t *th, size_t stack, void *(*fn)(void *), void *arg,
			  _Atomic int *tid)
{
	pthread_attr_t attr;
	int r;

	atomic_store(tid, 0);
	xsc__attr_blocked(&attr);
	if (stack)
		pthread_attr_setstacksize(&attr, stack);
	r = pthread_create(th, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	if (r != 0)
		return r;
	xsc__own_thread_start();	/* not a thread of the program's */
	while (!atomic_load(tid))
		sched_yield();
	return 0;
}
