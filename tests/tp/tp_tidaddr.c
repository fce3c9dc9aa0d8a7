/*
 * tp_tidaddr.c - the CLONE_CHILD_CLEARTID word, read back and set again.
 *
 * stress-ng's pthread stressor has each thread read its clear-child-tid
 * address with prctl(PR_GET_TID_ADDRESS), clear it with
 * set_tid_address(NULL) and set it back with set_tid_address(addr), then
 * wait on a condition variable until the main thread ends the round and
 * joins them all.  pthread_join waits until the kernel (here the shim)
 * clears that word at the thread's exit: a wrong address read back means
 * the join never returns.  Rounds of NT threads, the joins racing the
 * exits; each thread also checks that the word holds its own tid, as
 * glibc's pthread_join relies on (the first mismatch is printed).
 * alarm() bounds a hang.
 *
 * Exit 0 on success, 1 on a detected error; a hang ends by SIGALRM.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NT 512
#define ROUNDS 4

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int done;
static atomic_int errors, unsupported;

/* The word's address as the kernel would say; 0 where it cannot
 * (a kernel without CONFIG_CHECKPOINT_RESTORE answers EINVAL). */
static int *tid_word(void)
{
	int *p = NULL;

	if (prctl(PR_GET_TID_ADDRESS, &p, 0, 0, 0) < 0) {
		atomic_store(&unsupported, 1);
		return NULL;
	}
	return p;
}

static void *thread(void *arg)
{
	int *p = tid_word();
	long tid = syscall(SYS_gettid);

	if (p) {
		if (*p != tid && atomic_fetch_add(&errors, 1) == 0)
			fprintf(stderr, "thread: tid word %p holds %d, gettid %ld\n",
				(void *)p, *p, tid);
		if ((syscall(SYS_set_tid_address, NULL) != tid ||
		     syscall(SYS_set_tid_address, p) != tid) &&
		    atomic_fetch_add(&errors, 1) == 0)
			fprintf(stderr, "thread: set_tid_address: %s\n", strerror(errno));
	}
	pthread_mutex_lock(&mu);
	while (!done)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	return arg;
}

static int round_of(pthread_attr_t *attr)
{
	static pthread_t t[NT];
	int n = 0, bad = 0;
	void *ret;

	done = 0;
	for (; n < NT; n++) {
		int e = pthread_create(&t[n], attr, thread, (void *)(long)n);

		if (e) {
			fprintf(stderr, "pthread_create: %s\n", strerror(e));
			bad = 1;
			break;
		}
	}
	pthread_mutex_lock(&mu);
	done = 1;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	for (int i = 0; i < n; i++) {
		if (pthread_join(t[i], &ret) || ret != (void *)(long)i)
			bad = 1;
	}
	return bad;
}

int main(void)
{
	pthread_attr_t attr;
	int *p, bad = 0;

	alarm(30);
	p = tid_word();
	if (p && *p != getpid()) {
		fprintf(stderr, "main: tid word %p holds %d, pid %d\n",
			(void *)p, *p, (int)getpid());
		bad = 1;
	}
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (int r = 0; r < ROUNDS; r++)
		bad |= round_of(&attr);
	pthread_attr_destroy(&attr);
	bad |= atomic_load(&errors) != 0;
	printf("%d rounds of %d threads joined%s\n", ROUNDS, NT,
	       atomic_load(&unsupported) ? " (no PR_GET_TID_ADDRESS)" : "");
	printf("%s\n", bad ? "FAIL" : "ok");
	return bad;
}
