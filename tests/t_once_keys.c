/* xsc threads' own once and fiber-local keys (include/xsc.h), with two
 * kernel threads so that callers really run at the same time:
 *  - xsc_once: 64 fibers call it together while the init function parks
 *    in the middle (xsc_usleep); it runs exactly once, and no caller
 *    returns before it has finished;
 *  - keys: each of 32 fibers sees only its own value across parks and
 *    yields; the destructor runs once per fiber that set a value, with
 *    that value, and not for fibers that set none;
 *  - a key deleted and created again reads NULL in every fiber that had
 *    a value under the old key (POSIX: a new key is NULL in all threads),
 *    and the old value gets no destructor of the new key;
 *  - errors: a bad or deleted key -EINVAL, setspecific outside a fiber
 *    -EPERM.
 * xsc-test: per-backend
 * xsc-test: timeout=120 */
#include <stdatomic.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testlib.h"
#include "xsc.h"

#define NONCE 64
#define NKEYS 32

static xsc_once_t once = XSC_ONCE_INIT;
static _Atomic int init_runs, init_done, started;

static void init(void)
{
	atomic_fetch_add(&init_runs, 1);
	xsc_usleep(20000);	/* park: others arrive meanwhile */
	atomic_store(&init_done, 1);
}

static void *once_fiber(void *a)
{
	(void)a;
	atomic_fetch_add(&started, 1);
	while (atomic_load(&started) < NONCE)
		xsc_yield();
	CHECK_EQ(xsc_once(&once, init), 0);
	CHECK_EQ(atomic_load(&init_done), 1);
	CHECK_EQ(atomic_load(&init_runs), 1);
	return NULL;
}

static xsc_key_t key;
static long slot[NKEYS];
static _Atomic int dtor_calls[NKEYS], dtor_bad;

static void dtor(void *v)
{
	long *p = v;
	if (p < slot || p >= slot + NKEYS)
		atomic_fetch_add(&dtor_bad, 1);
	else
		atomic_fetch_add(&dtor_calls[p - slot], 1);
}

static void *key_fiber(void *a)
{
	long i = (long)a;

	CHECK(xsc_getspecific(key) == NULL);
	if (i % 4 == 3)		/* these set nothing: no destructor */
		return NULL;
	CHECK_EQ(xsc_setspecific(key, &slot[i]), 0);
	for (int r = 0; r < 20; r++) {
		if (r % 2)
			xsc_yield();
		else
			xsc_usleep(100);
		CHECK(xsc_getspecific(key) == &slot[i]);
	}
	return NULL;
}

/* ---- delete and create again ---------------------------------------- */
static xsc_sem_t have_old, recreated;
static xsc_key_t k_old, k_new;
static _Atomic int new_dtor_calls;

static void new_dtor(void *v)
{
	(void)v;
	atomic_fetch_add(&new_dtor_calls, 1);
}

static void *stale_fiber(void *a)
{
	(void)a;
	CHECK_EQ(xsc_setspecific(k_old, &slot[0]), 0);
	xsc_sem_post(&have_old);
	xsc_sem_wait(&recreated);
	/* k_new is likely k_old's index; its value must be NULL here */
	CHECK(xsc_getspecific(k_new) == NULL);
	return NULL;
}

static int body(int argc, char **argv)
{
	xsc_thread_t t[NONCE];

	(void)argc, (void)argv;
	for (long i = 0; i < NONCE; i++)
		CHECK_EQ(xsc_thread_create(&t[i], NULL, once_fiber, NULL), 0);
	for (int i = 0; i < NONCE; i++)
		CHECK_EQ(xsc_thread_join(t[i], NULL), 0);
	CHECK_EQ(xsc_once(&once, init), 0);
	CHECK_EQ(atomic_load(&init_runs), 1);

	CHECK_EQ(xsc_key_create(&key, dtor), 0);
	CHECK(xsc_getspecific(key) == NULL);
	for (long i = 0; i < NKEYS; i++)
		CHECK_EQ(xsc_thread_create(&t[i], NULL, key_fiber, (void *)i), 0);
	for (int i = 0; i < NKEYS; i++)
		CHECK_EQ(xsc_thread_join(t[i], NULL), 0);
	for (int i = 0; i < NKEYS; i++)
		CHECK_EQ(atomic_load(&dtor_calls[i]), i % 4 == 3 ? 0 : 1);
	CHECK_EQ(atomic_load(&dtor_bad), 0);
	CHECK_EQ(xsc_key_delete(key), 0);
	CHECK_EQ(xsc_key_delete(key), -EINVAL);
	CHECK_EQ(xsc_setspecific(key, slot), -EINVAL);
	CHECK_EQ(xsc_key_delete(1000000), -EINVAL);

	CHECK_EQ(xsc_sem_init(&have_old, 0), 0);
	CHECK_EQ(xsc_sem_init(&recreated, 0), 0);
	CHECK_EQ(xsc_key_create(&k_old, NULL), 0);
	CHECK_EQ(xsc_thread_create(&t[0], NULL, stale_fiber, NULL), 0);
	xsc_sem_wait(&have_old);
	CHECK_EQ(xsc_key_delete(k_old), 0);
	CHECK_EQ(xsc_key_create(&k_new, new_dtor), 0);
	xsc_sem_post(&recreated);
	CHECK_EQ(xsc_thread_join(t[0], NULL), 0);
	CHECK_EQ(atomic_load(&new_dtor_calls), 0);	/* not for the old value */
	CHECK_EQ(xsc_key_delete(k_new), 0);
	printf("ok (%s): once ran once for %d fibers, %d keys\n",
	       test_backend(), NONCE, NKEYS);
	return 42;
}

int main(void)
{
	struct xsc_runtime_config cfg;
	xsc_key_t k;

	CHECK_EQ(xsc_key_create(&k, NULL), 0);
	CHECK_EQ(xsc_setspecific(k, &k), -EPERM);	/* not a fiber */
	CHECK(xsc_getspecific(k) == NULL);
	CHECK_EQ(xsc_key_delete(k), 0);
	xsc_runtime_config_init(&cfg);
	cfg.nthreads = 2;
	main_in_child(body, &cfg);
	return 0;
}
