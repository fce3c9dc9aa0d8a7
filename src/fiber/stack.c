/*
 * stack.c - fiber stacks: guarded mappings, a per-thread pool, and the
 * SIGSEGV handler that turns a guard-page hit into a clear message.
 *
 *	map                                                      map+map_size
 *	| guard page | usable stack [lo, hi) ...... | struct xsc_stack |
 *
 * Rules (the why: docs/design.md, "Contexts and fiber stacks"):
 *  - mappings are MAP_NORESERVE | MADV_NOHUGEPAGE; the guard is one page,
 *    MADV_GUARD_INSTALL where the kernel has it, else mprotect
 *    (XSC_STACK_GUARD=mprotect forces it); the pool is per thread,
 *    LIFO, at most pool_max, a pooled stack keeping its top KEEP bytes;
 *  - the registry of guard pages is read by the handler without locks:
 *    chunks are never freed, slots are read with acquire loads paired
 *    with reg_add / reg_grow's release stores, writers take reg_lock;
 *  - the handler needs an alternate signal stack on every thread that
 *    runs fibers (xsc__stack_thread_init); a fault that is not a guard
 *    hit goes to the previous handler or the default action;
 *  - Valgrind knows mapped ranges; ASan's poison goes when pooled or unmapped.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fiber/ctx.h"
#include "rawsys.h"

#ifdef XSC_ASAN
#include <sanitizer/asan_interface.h>
#define unpoison(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define unpoison(p, n) ((void)(p), (void)(n))
#endif

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define XSC_VALGRIND 1
#endif
#endif
#ifndef XSC_VALGRIND
#define VALGRIND_STACK_REGISTER(lo, hi) ((void)(lo), (void)(hi), 0u)
#define VALGRIND_STACK_DEREGISTER(id) ((void)(id))
#endif

#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL 102
#endif

#define KEEP (16u << 10)	/* bytes kept resident at the top of a pooled stack */
#define ALT_MIN (16u << 10)	/* smallest existing altstack we keep */
#define ALT_SIZE (64u << 10)	/* altstack we install */
#define REG_CHUNK 4096		/* slots per registry chunk */
#define REG_CHUNKS 256		/* at most 1M stacks, past any max_map_count */

static atomic_size_t page_;	/* the page size, see pg() */
static _Atomic size_t default_size = XSC_STACK_DEFAULT_SIZE;
static _Atomic unsigned pool_max = XSC_STACK_POOL_DEFAULT;
static atomic_long n_live, n_mapped;
static atomic_int guard_madv = -1;	/* -1 unknown, 0 mprotect, 1 madvise */

/* The page size; first set by install_segv or the first stack, before
 * the handler can need it. */
static size_t pg(void)
{
	size_t p = atomic_load_explicit(&page_, memory_order_relaxed);

	if (!p) {
		p = (size_t)sysconf(_SC_PAGESIZE);
		atomic_store_explicit(&page_, p, memory_order_relaxed);
	}
	return p;
}

/* ---- registry of guard pages ------------------------------------------ */

static _Atomic(_Atomic uintptr_t *) reg_chunk[REG_CHUNKS];
static atomic_int reg_nchunks;
static int reg_free = -1;		/* head of the free slot list */
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t reg_once = PTHREAD_ONCE_INIT;

/* fork() while another thread holds reg_lock must not leave the child
 * with a lock nobody will release. */
static void reg_lock_all(void)
{
	pthread_mutex_lock(&reg_lock);
}

static void reg_unlock_all(void)
{
	pthread_mutex_unlock(&reg_lock);
}

static void reg_init(void)
{
	pthread_atfork(reg_lock_all, reg_unlock_all, reg_unlock_all);
}

static int reg_grow(void)		/* under reg_lock */
{
	int n = atomic_load_explicit(&reg_nchunks, memory_order_relaxed);
	_Atomic uintptr_t *c;

	if (n == REG_CHUNKS)
		return -ENOMEM;
	c = mmap(NULL, REG_CHUNK * sizeof(*c), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (c == MAP_FAILED)
		return -errno;
	for (int i = 0; i < REG_CHUNK; i++) {
		int next = i + 1 < REG_CHUNK ? n * REG_CHUNK + i + 1 : reg_free;
		atomic_init(&c[i], (uintptr_t)next << 1 | 1);
	}
	reg_free = n * REG_CHUNK;
	/* Pairs with the acquire loads in reg_find. */
	atomic_store_explicit(&reg_chunk[n], c, memory_order_release);
	atomic_store_explicit(&reg_nchunks, n + 1, memory_order_release);
	return 0;
}

static _Atomic uintptr_t *reg_slot(int i)
{
	return &atomic_load_explicit(&reg_chunk[i / REG_CHUNK],
				     memory_order_relaxed)[i % REG_CHUNK];
}

static int reg_add(uintptr_t guard)
{
	int i = -1, err = 0;

	pthread_once(&reg_once, reg_init);
	pthread_mutex_lock(&reg_lock);
	if (reg_free < 0)
		err = reg_grow();
	if (!err) {
		i = reg_free;
		reg_free = (int)(atomic_load_explicit(reg_slot(i),
				 memory_order_relaxed) >> 1);
		/* Pairs with the acquire load in reg_find. */
		atomic_store_explicit(reg_slot(i), guard, memory_order_release);
	}
	pthread_mutex_unlock(&reg_lock);
	return err ? err : i;
}

static void reg_del(int i)
{
	pthread_mutex_lock(&reg_lock);
	atomic_store_explicit(reg_slot(i), (uintptr_t)reg_free << 1 | 1,
			      memory_order_release);
	reg_free = i;
	pthread_mutex_unlock(&reg_lock);
}

/* Async-signal-safe: the guard page containing addr, or 0. */
static uintptr_t reg_find(uintptr_t addr)
{
	int n = atomic_load_explicit(&reg_nchunks, memory_order_acquire);

	for (int c = 0; c < n; c++) {
		_Atomic uintptr_t *chunk = atomic_load_explicit(&reg_chunk[c],
						memory_order_acquire);
		for (int i = 0; i < REG_CHUNK; i++) {
			uintptr_t g = atomic_load_explicit(&chunk[i],
						memory_order_acquire);
			if (!(g & 1) && addr - g < pg())
				return g;
		}
	}
	return 0;
}

/* ---- the SIGSEGV handler ---------------------------------------------- */

static struct sigaction old_segv;
static pthread_once_t segv_once = PTHREAD_ONCE_INIT;
static int segv_err;

static char *hex(char *p, uintptr_t v)
{
	char tmp[16];
	int n = 0;

	do {
		tmp[n++] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	*p++ = '0';
	*p++ = 'x';
	while (n)
		*p++ = tmp[--n];
	return p;
}

static char *put(char *p, const char *s)
{
	size_t n = strlen(s);

	memcpy(p, s, n);
	return p + n;
}

static void report_overflow(uintptr_t stack_lo, uintptr_t addr)
{
	char buf[128], *p = buf;

	p = put(p, "xsc: fiber stack overflow (fiber stack at ");
	p = hex(p, stack_lo);
	p = put(p, ", guard page hit at ");
	p = hex(p, addr);
	p = put(p, ")\n");
	/* raw: in libxsc-preload.so, write() is the shim's own */
	xsc__sys3(SYS_write, STDERR_FILENO, buf, p - buf);
}

static void chain(int sig, siginfo_t *si, void *uc)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };

	if (old_segv.sa_flags & SA_SIGINFO) {
		old_segv.sa_sigaction(sig, si, uc);
		return;
	}
	if (old_segv.sa_handler != SIG_DFL && old_segv.sa_handler != SIG_IGN) {
		old_segv.sa_handler(sig);
		return;
	}
	if (old_segv.sa_handler == SIG_IGN && si->si_code <= 0)
		return;		/* sent by kill() and ignored: so be it */
	/* Default action.  A real fault repeats when we return and kills the
	 * process with SIGSEGV; a sent one is pending until we return. */
	sigaction(SIGSEGV, &dfl, NULL);
	if (si->si_code <= 0)
		raise(sig);
}

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	uintptr_t addr = (uintptr_t)si->si_addr, guard = 0;

	if (si->si_code > 0)		/* a fault, not kill() */
		guard = reg_find(addr);
	if (guard) {
		report_overflow(guard + pg(), addr);
		abort();
	}
	chain(sig, si, uc);
}

static void install_segv(void)
{
	struct sigaction sa = { .sa_sigaction = on_segv,
				.sa_flags = SA_SIGINFO | SA_ONSTACK };

	pg();
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSEGV, NULL, &old_segv) || sigaction(SIGSEGV, &sa, NULL))
		segv_err = -errno;
}

/* ---- per-thread state ------------------------------------------------- */

struct tstate {
	struct xsc_stack *pool;
	unsigned npool;
	bool attached;		/* tkey set: fini runs at thread exit */
	bool inited;
	void *alt_map;		/* our altstack mapping (guard page first) */
	size_t alt_map_size;
};

static __thread struct tstate ts;
static pthread_key_t tkey;
static pthread_once_t tkey_once = PTHREAD_ONCE_INIT;

static void tkey_dtor(void *p)
{
	(void)p;
	xsc__stack_thread_fini();
}

static void tkey_create(void)
{
	if (pthread_key_create(&tkey, tkey_dtor))
		abort();	/* out of keys at startup: nothing sensible to do */
}

static void attach(void)
{
	if (ts.attached)
		return;
	pthread_once(&tkey_once, tkey_create);
	if (!pthread_setspecific(tkey, &ts))
		ts.attached = true;
}

static int altstack_install(void)
{
	stack_t cur, ss = { .ss_size = ALT_SIZE };
	long min = sysconf(_SC_MINSIGSTKSZ);
	size_t page = pg();
	void *m;

	if (sigaltstack(NULL, &cur))
		return -errno;
	if (!(cur.ss_flags & SS_DISABLE) && cur.ss_size >= ALT_MIN)
		return 0;	/* keep the one that is there (ASan's) */
	if (min > 0 && (size_t)min * 4 > ss.ss_size)
		ss.ss_size = ((size_t)min * 4 + page - 1) & ~(page - 1);
	m = mmap(NULL, ss.ss_size + page, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (m == MAP_FAILED)
		return -errno;
	ss.ss_sp = (char *)m + page;
	if (mprotect(m, page, PROT_NONE) || sigaltstack(&ss, NULL)) {
		int err = -errno;
		munmap(m, ss.ss_size + page);
		return err;
	}
	ts.alt_map = m;
	ts.alt_map_size = ss.ss_size + page;
	return 0;
}

int xsc__stack_thread_init(void)
{
	int err;

	if (ts.inited)
		return 0;
	pthread_once(&segv_once, install_segv);
	if (segv_err)
		return segv_err;
	err = altstack_install();
	if (err)
		return err;
	attach();
	ts.inited = true;
	return 0;
}

void xsc__stack_thread_fini(void)
{
	stack_t cur, off = { .ss_flags = SS_DISABLE };
	size_t page = pg();

	xsc__stack_trim(0);
	if (ts.alt_map) {
		/* Only disable it if it is still ours and we are not on it. */
		if (!sigaltstack(NULL, &cur) &&
		    cur.ss_sp == (char *)ts.alt_map + page &&
		    !(cur.ss_flags & SS_ONSTACK))
			sigaltstack(&off, NULL);
		munmap(ts.alt_map, ts.alt_map_size);
		ts.alt_map = NULL;
	}
	ts.inited = false;
}

/* ---- stacks ----------------------------------------------------------- */

static int guard_install(void *p)
{
	int mode = atomic_load_explicit(&guard_madv, memory_order_relaxed);
	size_t page = pg();

	if (mode < 0) {
		const char *e = getenv("XSC_STACK_GUARD");
		mode = !(e && !strcmp(e, "mprotect"));
	}
	if (mode == 1) {
		if (!madvise(p, page, MADV_GUARD_INSTALL)) {
			atomic_store_explicit(&guard_madv, 1, memory_order_relaxed);
			return 0;
		}
		if (errno != EINVAL)
			return -errno;
		mode = 0;	/* the kernel predates 6.13 */
	}
	atomic_store_explicit(&guard_madv, mode, memory_order_relaxed);
	return mprotect(p, page, PROT_NONE) ? -errno : 0;
}

static int stack_map(size_t size, struct xsc_stack **out)
{
	size_t page = pg(), map_size = page + size;
	struct xsc_stack *st;
	char *m;
	int err, slot;

	m = mmap(NULL, map_size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
	if (m == MAP_FAILED)
		return -errno;
	err = guard_install(m);
	if (err)
		goto out_unmap;
	/* Keep THP from backing several merged stacks with one huge page. */
	madvise(m + page, size, MADV_NOHUGEPAGE);
	slot = reg_add((uintptr_t)m);
	if (slot < 0) {
		err = slot;
		goto out_unmap;
	}
	st = (struct xsc_stack *)(m + map_size) - 1;
	st->lo = m + page;
	st->hi = (void *)((uintptr_t)st & ~(uintptr_t)63);
	st->size = size;
	st->map = m;
	st->map_size = map_size;
	st->next = NULL;
	st->slot = slot;
	st->vg_id = VALGRIND_STACK_REGISTER(st->lo, st->hi);
	atomic_fetch_add_explicit(&n_live, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&n_mapped, 1, memory_order_relaxed);
	*out = st;
	return 0;

out_unmap:
	munmap(m, map_size);
	return err;
}

static void stack_unmap(struct xsc_stack *st)
{
	void *m = st->map;
	size_t n = st->map_size;

	VALGRIND_STACK_DEREGISTER(st->vg_id);
	unpoison(st->lo, (size_t)((char *)st->hi - (char *)st->lo));
	reg_del(st->slot);
	munmap(m, n);
	atomic_fetch_sub_explicit(&n_live, 1, memory_order_relaxed);
}

static size_t round_page(size_t n)
{
	return (n + pg() - 1) & ~(pg() - 1);
}

int xsc__stack_get(size_t size, struct xsc_stack **out)
{
	size_t dflt = atomic_load_explicit(&default_size, memory_order_relaxed);
	struct xsc_stack *st;

	size = size ? round_page(size) : dflt;
	if (size < XSC_STACK_MIN_SIZE)
		return -EINVAL;
	while (size == dflt && ts.pool) {
		st = ts.pool;
		ts.pool = st->next;
		ts.npool--;
		if (st->size == size) {
			st->next = NULL;
			*out = st;
			return 0;
		}
		stack_unmap(st);	/* left over from an older default */
	}
	return stack_map(size, out);
}

void xsc__stack_put(struct xsc_stack *st)
{
	size_t used;

	if (!st)
		return;
	used = (size_t)((char *)st->hi - (char *)st->lo);
	unpoison(st->lo, used);
	if (st->size != atomic_load_explicit(&default_size, memory_order_relaxed) ||
	    ts.npool >= atomic_load_explicit(&pool_max, memory_order_relaxed)) {
		stack_unmap(st);
		return;
	}
	if (st->size > KEEP)
		madvise(st->lo, st->size - KEEP, MADV_DONTNEED);
	attach();
	st->next = ts.pool;
	ts.pool = st;
	ts.npool++;
}

unsigned xsc__stack_trim(unsigned keep)
{
	unsigned n = 0;

	while (ts.npool > keep) {
		struct xsc_stack *st = ts.pool;
		ts.pool = st->next;
		ts.npool--;
		stack_unmap(st);
		n++;
	}
	return n;
}

int xsc__stack_set_default_size(size_t size)
{
	size = round_page(size);
	if (size < XSC_STACK_MIN_SIZE)
		return -EINVAL;
	atomic_store_explicit(&default_size, size, memory_order_relaxed);
	return 0;
}

size_t xsc__stack_default_size(void)
{
	return atomic_load_explicit(&default_size, memory_order_relaxed);
}

void xsc__stack_set_pool_max(unsigned n)
{
	atomic_store_explicit(&pool_max, n, memory_order_relaxed);
}

void xsc__stack_stats(struct xsc_stack_stats *s)
{
	s->live = atomic_load_explicit(&n_live, memory_order_relaxed);
	s->mapped = atomic_load_explicit(&n_mapped, memory_order_relaxed);
	s->pooled = ts.npool;
}
