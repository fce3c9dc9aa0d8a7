/*
 * tp_sync.c - pthread and POSIX synchronisation in an unmodified program:
 * mutexes (normal, recursive, errorcheck), condition variables (bounded
 * producer/consumer, timed waits on CLOCK_REALTIME and CLOCK_MONOTONIC),
 * rwlocks, semaphores, barriers, pthread_once, thread-specific keys with
 * destructors, detached threads and pthread_join return values.
 * Each section prints one deterministic line.  Exit 0 on success, 1 on
 * any detected error.
 */
#include "tp.h"

#include <semaphore.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#define OK(call) do { int rc_ = (call); CHECK(rc_ == 0, "%s = %d (%s)", #call, rc_, strerror(rc_)); } while (0)

static void start(pthread_t *t, void *(*fn)(void *), void *arg)
{
	int rc = pthread_create(t, NULL, fn, arg);
	if (rc) {
		fprintf(stderr, "tp_sync: pthread_create: %s\n", strerror(rc));
		exit(1);
	}
}

static void *join(pthread_t t)
{
	void *r = NULL;
	OK(pthread_join(t, &r));
	return r;
}

static int64_t ns_of(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static struct timespec deadline(clockid_t c, long ms)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	ts.tv_nsec += (ms % 1000) * 1000000L;
	ts.tv_sec += ms / 1000 + ts.tv_nsec / 1000000000L;
	ts.tv_nsec %= 1000000000L;
	return ts;
}

/* ---- mutexes ---------------------------------------------------------------- */

#define MT 8
#define MITER 100000
static pthread_mutex_t mnorm = PTHREAD_MUTEX_INITIALIZER;
static long mcount;

static void *mutex_thr(void *arg)
{
	(void)arg;
	for (int i = 0; i < MITER; i++) {
		OK(pthread_mutex_lock(&mnorm));
		long v = mcount;
		if ((i & 1023) == 0)
			sched_yield();	/* switch while holding the lock */
		mcount = v + 1;
		OK(pthread_mutex_unlock(&mnorm));
	}
	return NULL;
}

static pthread_mutex_t mrec, merr;

static void *trylock_thr(void *arg)
{
	pthread_mutex_t *m = arg;
	return (void *)(intptr_t)pthread_mutex_trylock(m);
}

static void *unlock_thr(void *arg)
{
	pthread_mutex_t *m = arg;
	return (void *)(intptr_t)pthread_mutex_unlock(m);
}

static void test_mutex(void)
{
	pthread_t t[MT];
	pthread_mutexattr_t a;

	for (int i = 0; i < MT; i++)
		start(&t[i], mutex_thr, NULL);
	for (int i = 0; i < MT; i++)
		join(t[i]);
	CHECK(mcount == (long)MT * MITER, "normal mutex count %ld", mcount);

	OK(pthread_mutexattr_init(&a));
	OK(pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE));
	OK(pthread_mutex_init(&mrec, &a));
	OK(pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK));
	OK(pthread_mutex_init(&merr, &a));
	OK(pthread_mutexattr_destroy(&a));

	OK(pthread_mutex_lock(&mrec));
	OK(pthread_mutex_lock(&mrec));
	OK(pthread_mutex_lock(&mrec));
	OK(pthread_mutex_trylock(&mrec));
	start(&t[0], trylock_thr, &mrec);
	CHECK((intptr_t)join(t[0]) == EBUSY, "recursive mutex: trylock by another thread not EBUSY");
	start(&t[0], unlock_thr, &mrec);
	CHECK((intptr_t)join(t[0]) == EPERM, "recursive mutex: unlock by non-owner not EPERM");
	for (int i = 0; i < 4; i++)
		OK(pthread_mutex_unlock(&mrec));
	CHECK(pthread_mutex_unlock(&mrec) == EPERM, "recursive mutex: extra unlock not EPERM");
	start(&t[0], trylock_thr, &mrec);
	CHECK((intptr_t)join(t[0]) == 0, "recursive mutex: not free after 4 unlocks");
	/* the thread exited holding it: a plain (non-robust) mutex stays owned */

	OK(pthread_mutex_lock(&merr));
	CHECK(pthread_mutex_lock(&merr) == EDEADLK, "errorcheck mutex: relock not EDEADLK");
	start(&t[0], unlock_thr, &merr);
	CHECK((intptr_t)join(t[0]) == EPERM, "errorcheck mutex: unlock by non-owner not EPERM");
	start(&t[0], trylock_thr, &merr);
	CHECK((intptr_t)join(t[0]) == EBUSY, "errorcheck mutex: trylock by another not EBUSY");
	OK(pthread_mutex_unlock(&merr));
	CHECK(pthread_mutex_unlock(&merr) == EPERM, "errorcheck mutex: unlock of unlocked not EPERM");
	OK(pthread_mutex_destroy(&merr));
	printf("mutex: normal %ld, recursive ok, errorcheck ok\n", mcount);
}

/* ---- condition variable: bounded producer/consumer --------------------------- */

#define QCAP 16
#define NITEMS 100000
#define NPROD 4
#define NCONS 4
static struct {
	pthread_mutex_t m;
	pthread_cond_t notfull, notempty;
	long buf[QCAP];
	int head, n;
} q = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER,
	{ 0 }, 0, 0 };

static void q_put(long v)
{
	pthread_mutex_lock(&q.m);
	while (q.n == QCAP)
		OK(pthread_cond_wait(&q.notfull, &q.m));
	q.buf[(q.head + q.n) % QCAP] = v;
	q.n++;
	OK(pthread_cond_signal(&q.notempty));
	pthread_mutex_unlock(&q.m);
}

static long q_get(void)
{
	long v;

	pthread_mutex_lock(&q.m);
	while (q.n == 0)
		OK(pthread_cond_wait(&q.notempty, &q.m));
	v = q.buf[q.head];
	q.head = (q.head + 1) % QCAP;
	q.n--;
	OK(pthread_cond_signal(&q.notfull));
	pthread_mutex_unlock(&q.m);
	return v;
}

static void *producer(void *arg)
{
	long p = (long)arg;

	for (long i = p + 1; i <= NITEMS; i += NPROD)
		q_put(i);
	return NULL;
}

struct consumed { long sum, count; };

static void *consumer(void *arg)
{
	struct consumed *c = arg;
	long v;

	while ((v = q_get()) > 0) {
		c->sum += v;
		c->count++;
	}
	return NULL;
}

static void test_cond(void)
{
	pthread_t p[NPROD], c[NCONS];
	struct consumed got[NCONS];
	long sum = 0, count = 0;

	memset(got, 0, sizeof(got));
	for (int i = 0; i < NCONS; i++)
		start(&c[i], consumer, &got[i]);
	for (long i = 0; i < NPROD; i++)
		start(&p[i], producer, (void *)i);
	for (int i = 0; i < NPROD; i++)
		join(p[i]);
	for (int i = 0; i < NCONS; i++)
		q_put(-1);
	for (int i = 0; i < NCONS; i++) {
		join(c[i]);
		sum += got[i].sum;
		count += got[i].count;
	}
	CHECK(count == NITEMS, "consumed %ld items", count);
	CHECK(sum == (long)NITEMS * (NITEMS + 1) / 2, "sum %ld", sum);
	CHECK(q.n == 0, "queue not empty");
	printf("condvar: %ld items, sum %ld\n", count, sum);
}

/* ---- timed waits --------------------------------------------------------------- */

static void test_timedwait(void)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t crt = PTHREAD_COND_INITIALIZER, cmono;
	pthread_condattr_t ca;
	struct timespec dl;
	clockid_t got;
	int64_t t0, el;
	int rc;

	/* default clock: CLOCK_REALTIME */
	OK(pthread_mutex_lock(&m));
	t0 = ns_of(CLOCK_REALTIME);
	dl = deadline(CLOCK_REALTIME, 80);
	do
		rc = pthread_cond_timedwait(&crt, &m, &dl);
	while (rc == 0);	/* spurious wakeups: the predicate is "never" */
	el = ns_of(CLOCK_REALTIME) - t0;
	CHECK(rc == ETIMEDOUT, "timedwait (realtime) = %d", rc);
	CHECK(el >= 80000000LL, "timedwait (realtime) returned after %lld ns < 80 ms", (long long)el);
	CHECK(el < 10000000000LL, "timedwait (realtime) took %lld ns", (long long)el);

	OK(pthread_condattr_init(&ca));
	OK(pthread_condattr_setclock(&ca, CLOCK_MONOTONIC));
	OK(pthread_condattr_getclock(&ca, &got));
	CHECK(got == CLOCK_MONOTONIC, "condattr clock %d", (int)got);
	OK(pthread_cond_init(&cmono, &ca));
	OK(pthread_condattr_destroy(&ca));
	t0 = ns_of(CLOCK_MONOTONIC);
	dl = deadline(CLOCK_MONOTONIC, 120);
	do
		rc = pthread_cond_timedwait(&cmono, &m, &dl);
	while (rc == 0);
	el = ns_of(CLOCK_MONOTONIC) - t0;
	CHECK(rc == ETIMEDOUT, "timedwait (monotonic) = %d", rc);
	CHECK(el >= 120000000LL, "timedwait (monotonic) returned after %lld ns < 120 ms", (long long)el);
	CHECK(el < 10000000000LL, "timedwait (monotonic) took %lld ns", (long long)el);

	/* a deadline in the past times out at once, still holding the mutex */
	dl = deadline(CLOCK_MONOTONIC, 0);
	dl.tv_sec -= 1;
	CHECK(pthread_cond_timedwait(&cmono, &m, &dl) == ETIMEDOUT, "past deadline");
	CHECK(pthread_mutex_trylock(&m) == EBUSY, "mutex not held after timedwait");
	OK(pthread_mutex_unlock(&m));
	OK(pthread_cond_destroy(&cmono));
	printf("timedwait: realtime ETIMEDOUT, monotonic ETIMEDOUT, past ETIMEDOUT\n");
}

/* ---- rwlock ------------------------------------------------------------------------ */

#define RWR 6
#define RWW 2
#define RWITER 3000
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static atomic_int rw_readers, rw_writers;
static long rw_a, rw_b;	/* invariant under the lock: a == b */

static void *rw_reader(void *arg)
{
	(void)arg;
	for (int i = 0; i < RWITER; i++) {
		OK(pthread_rwlock_rdlock(&rw));
		atomic_fetch_add(&rw_readers, 1);
		CHECK(atomic_load(&rw_writers) == 0, "reader inside with a writer");
		CHECK(rw_a == rw_b, "reader saw a=%ld b=%ld", rw_a, rw_b);
		if ((i & 63) == 0)
			sched_yield();
		atomic_fetch_sub(&rw_readers, 1);
		OK(pthread_rwlock_unlock(&rw));
	}
	return NULL;
}

static void *rw_writer(void *arg)
{
	(void)arg;
	for (int i = 0; i < RWITER; i++) {
		OK(pthread_rwlock_wrlock(&rw));
		CHECK(atomic_fetch_add(&rw_writers, 1) == 0, "two writers inside");
		CHECK(atomic_load(&rw_readers) == 0, "writer inside with readers");
		rw_a++;
		if ((i & 31) == 0)
			sched_yield();
		rw_b++;
		atomic_fetch_sub(&rw_writers, 1);
		OK(pthread_rwlock_unlock(&rw));
	}
	return NULL;
}

static void *rw_try(void *arg)
{
	long want_write = (long)arg;
	int rc = want_write ? pthread_rwlock_trywrlock(&rw) : pthread_rwlock_tryrdlock(&rw);
	if (rc == 0)
		pthread_rwlock_unlock(&rw);
	return (void *)(intptr_t)rc;
}

static void test_rwlock(void)
{
	pthread_t t[RWR + RWW];
	int n = 0;

	/* readers share: another thread gets a read lock while main holds one,
	 * but not a write lock */
	OK(pthread_rwlock_rdlock(&rw));
	start(&t[0], rw_try, (void *)0L);
	CHECK((intptr_t)join(t[0]) == 0, "tryrdlock while read-locked failed");
	start(&t[0], rw_try, (void *)1L);
	CHECK((intptr_t)join(t[0]) == EBUSY, "trywrlock while read-locked not EBUSY");
	OK(pthread_rwlock_unlock(&rw));
	OK(pthread_rwlock_wrlock(&rw));
	start(&t[0], rw_try, (void *)0L);
	CHECK((intptr_t)join(t[0]) == EBUSY, "tryrdlock while write-locked not EBUSY");
	OK(pthread_rwlock_unlock(&rw));

	for (int i = 0; i < RWR; i++)
		start(&t[n++], rw_reader, NULL);
	for (int i = 0; i < RWW; i++)
		start(&t[n++], rw_writer, NULL);
	for (int i = 0; i < n; i++)
		join(t[i]);
	CHECK(rw_a == (long)RWW * RWITER && rw_b == rw_a, "rwlock counts %ld %ld", rw_a, rw_b);
	printf("rwlock: shared read ok, exclusive write ok, %ld writes\n", rw_a);
}

/* ---- semaphores ------------------------------------------------------------------ */

#define SEMN 20000
static sem_t s_items, s_done;

static void *sem_poster(void *arg)
{
	(void)arg;
	for (int i = 0; i < SEMN; i++)
		CHECK(sem_post(&s_items) == 0, "sem_post: %s", strerror(errno));
	return NULL;
}

static void test_sem(void)
{
	pthread_t t[2];
	struct timespec dl;
	int64_t t0, el;
	int v = -1, rc;

	CHECK(sem_init(&s_items, 0, 0) == 0, "sem_init");
	start(&t[0], sem_poster, NULL);
	start(&t[1], sem_poster, NULL);
	for (int i = 0; i < 2 * SEMN; i++)
		CHECK(sem_wait(&s_items) == 0, "sem_wait: %s", strerror(errno));
	join(t[0]);
	join(t[1]);
	CHECK(sem_getvalue(&s_items, &v) == 0 && v == 0, "sem value %d after draining", v);
	errno = 0;
	CHECK(sem_trywait(&s_items) == -1 && errno == EAGAIN, "sem_trywait on 0: errno %d", errno);

	t0 = ns_of(CLOCK_REALTIME);
	dl = deadline(CLOCK_REALTIME, 60);
	errno = 0;
	do
		rc = sem_timedwait(&s_items, &dl);
	while (rc == -1 && errno == EINTR);
	el = ns_of(CLOCK_REALTIME) - t0;
	CHECK(rc == -1 && errno == ETIMEDOUT, "sem_timedwait = %d errno %d", rc, errno);
	CHECK(el >= 60000000LL, "sem_timedwait returned after %lld ns < 60 ms", (long long)el);

	CHECK(sem_post(&s_items) == 0, "sem_post");
	dl = deadline(CLOCK_REALTIME, 60);
	CHECK(sem_timedwait(&s_items, &dl) == 0, "sem_timedwait with a token");
	CHECK(sem_destroy(&s_items) == 0, "sem_destroy");
	printf("semaphore: %d posts consumed, trywait EAGAIN, timedwait ETIMEDOUT\n", 2 * SEMN);
}

/* ---- barrier --------------------------------------------------------------------- */

#define BT 8
#define BROUNDS 50
static pthread_barrier_t bar;
static int bslot[BT];
static atomic_int bserial;

static void *bar_thr(void *arg)
{
	int me = (int)(long)arg;

	for (int r = 1; r <= BROUNDS; r++) {
		bslot[me] = r;
		int rc = pthread_barrier_wait(&bar);
		CHECK(rc == 0 || rc == PTHREAD_BARRIER_SERIAL_THREAD, "barrier_wait = %d", rc);
		if (rc == PTHREAD_BARRIER_SERIAL_THREAD)
			atomic_fetch_add(&bserial, 1);
		for (int j = 0; j < BT; j++)
			CHECK(bslot[j] == r, "round %d: slot %d is %d", r, j, bslot[j]);
		rc = pthread_barrier_wait(&bar);	/* nobody writes round r+1 early */
		CHECK(rc == 0 || rc == PTHREAD_BARRIER_SERIAL_THREAD, "barrier_wait = %d", rc);
	}
	return NULL;
}

static void test_barrier(void)
{
	pthread_t t[BT];

	OK(pthread_barrier_init(&bar, NULL, BT));
	for (long i = 0; i < BT; i++)
		start(&t[i], bar_thr, (void *)i);
	for (int i = 0; i < BT; i++)
		join(t[i]);
	OK(pthread_barrier_destroy(&bar));
	CHECK(atomic_load(&bserial) == BROUNDS, "%d serial threads for %d rounds",
	      atomic_load(&bserial), BROUNDS);
	printf("barrier: %d threads x %d rounds, %d serial\n", BT, BROUNDS, atomic_load(&bserial));
}

/* ---- pthread_once ------------------------------------------------------------------ */

#define OT 16
static pthread_once_t once = PTHREAD_ONCE_INIT;
static atomic_int once_runs, once_done;
static pthread_barrier_t obar;

static void once_init(void)
{
	atomic_fetch_add(&once_runs, 1);
	usleep(20000);	/* the others must wait for it */
	atomic_store(&once_done, 1);
}

static void *once_thr(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&obar);
	OK(pthread_once(&once, once_init));
	CHECK(atomic_load(&once_done) == 1, "pthread_once returned before the init finished");
	return NULL;
}

static void test_once(void)
{
	pthread_t t[OT];

	OK(pthread_barrier_init(&obar, NULL, OT));
	for (int i = 0; i < OT; i++)
		start(&t[i], once_thr, NULL);
	for (int i = 0; i < OT; i++)
		join(t[i]);
	OK(pthread_once(&once, once_init));
	OK(pthread_barrier_destroy(&obar));
	CHECK(atomic_load(&once_runs) == 1, "once routine ran %d times", atomic_load(&once_runs));
	printf("once: %d callers, ran %d time(s)\n", OT + 1, atomic_load(&once_runs));
}

/* ---- thread-specific data ---------------------------------------------------------- */

#define KT 8
static pthread_key_t key1, key2;
static atomic_int dtor1, dtor2;
static atomic_long dtor_sum;

static void key1_dtor(void *p)
{
	atomic_fetch_add(&dtor1, 1);
	atomic_fetch_add(&dtor_sum, *(long *)p);
	free(p);
}

static void key2_dtor(void *p)
{
	(void)p;
	atomic_fetch_add(&dtor2, 1);
}

static void *key_thr(void *arg)
{
	long me = (long)arg;
	long *v = malloc(sizeof(*v));

	if (!v)
		return (void *)1;
	*v = 100 + me;
	CHECK(pthread_getspecific(key1) == NULL, "fresh thread sees a key1 value");
	OK(pthread_setspecific(key1, v));
	if (me % 2)
		OK(pthread_setspecific(key2, (void *)(intptr_t)(me + 1)));
	usleep(1000 + 100 * (unsigned)me);	/* others set theirs meanwhile */
	CHECK(pthread_getspecific(key1) == v && *v == 100 + me, "key1 value changed");
	CHECK((intptr_t)pthread_getspecific(key2) == (me % 2 ? me + 1 : 0), "key2 value changed");
	if (me == KT - 1)
		pthread_exit(NULL);	/* destructors run on pthread_exit too */
	return NULL;
}

static void test_keys(void)
{
	pthread_t t[KT];

	OK(pthread_key_create(&key1, key1_dtor));
	OK(pthread_key_create(&key2, key2_dtor));
	for (long i = 0; i < KT; i++)
		start(&t[i], key_thr, (void *)i);
	for (int i = 0; i < KT; i++)
		CHECK(join(t[i]) == NULL, "key thread failed");
	CHECK(pthread_getspecific(key1) == NULL, "main sees a key1 value");
	CHECK(atomic_load(&dtor1) == KT, "key1 destructor ran %d times", atomic_load(&dtor1));
	CHECK(atomic_load(&dtor2) == KT / 2, "key2 destructor ran %d times", atomic_load(&dtor2));
	CHECK(atomic_load(&dtor_sum) == 100L * KT + KT * (KT - 1) / 2, "destructor values %ld",
	      atomic_load(&dtor_sum));
	OK(pthread_key_delete(key1));
	OK(pthread_key_delete(key2));
	printf("keys: %d + %d destructor calls, sum %ld\n", atomic_load(&dtor1),
	       atomic_load(&dtor2), atomic_load(&dtor_sum));
}

/* ---- detached threads ---------------------------------------------------------------- */

#define DT 12
static atomic_int detached_ran;

static void *detached_thr(void *arg)
{
	long me = (long)arg;

	if (me % 2 == 0)
		OK(pthread_detach(pthread_self()));
	usleep(500 * (unsigned)(me % 4));
	atomic_fetch_add(&detached_ran, 1);
	CHECK(sem_post(&s_done) == 0, "sem_post");
	return NULL;
}

static void test_detached(void)
{
	pthread_attr_t a;
	pthread_t t;
	int st = -1;

	CHECK(sem_init(&s_done, 0, 0) == 0, "sem_init");
	OK(pthread_attr_init(&a));
	OK(pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED));
	OK(pthread_attr_getdetachstate(&a, &st));
	CHECK(st == PTHREAD_CREATE_DETACHED, "detach state %d", st);
	for (long i = 0; i < DT; i++) {
		int rc;
		if (i % 2)	/* odd: created detached; even: detach themselves */
			rc = pthread_create(&t, &a, detached_thr, (void *)i);
		else
			rc = pthread_create(&t, NULL, detached_thr, (void *)i);
		CHECK(rc == 0, "pthread_create: %s", strerror(rc));
	}
	OK(pthread_attr_destroy(&a));
	for (int i = 0; i < DT; i++)
		CHECK(sem_wait(&s_done) == 0, "sem_wait");
	CHECK(atomic_load(&detached_ran) == DT, "%d detached threads ran", atomic_load(&detached_ran));
	usleep(20000);	/* let them finish exiting before the semaphore goes */
	printf("detached: %d threads completed\n", atomic_load(&detached_ran));
}

/* ---- join values ------------------------------------------------------------------------ */

#define JT 10
static void *join_thr(void *arg)
{
	long me = (long)arg;

	if (me % 3 == 0)
		pthread_exit((void *)(intptr_t)(me * 7 + 1));
	return (void *)(intptr_t)(me * 7 + 1);
}

static void test_join(void)
{
	pthread_t t[JT];
	long sum = 0;

	for (long i = 0; i < JT; i++)
		start(&t[i], join_thr, (void *)i);
	for (int i = JT - 1; i >= 0; i--) {	/* in reverse: some are long gone */
		intptr_t r = (intptr_t)join(t[i]);
		CHECK(r == i * 7 + 1, "thread %d returned %ld", i, (long)r);
		sum += r;
	}
	printf("join: %d values, sum %ld\n", JT, sum);
}

int main(void)
{
	test_mutex();
	test_cond();
	test_timedwait();
	test_rwlock();
	test_sem();
	test_barrier();
	test_once();
	test_keys();
	test_detached();
	test_join();
	if (tp_failures) {
		fprintf(stderr, "tp_sync: %d failures\n", tp_failures);
		return 1;
	}
	printf("sync ok\n");
	return 0;
}
