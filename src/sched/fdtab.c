/*
 * fdtab.c - a table indexed by descriptor number: fixed-size elements in
 * chunks mmap'd when first needed, never moved or freed, so a pointer to
 * an element stays good without a lock.  fdq.c's turns and fdkind.c's
 * kinds each keep one.
 */
#include "sched.h"

#include <sys/mman.h>
#include <sys/syscall.h>

#include "rawsys.h"

void *xsc__fdtab_chunk(struct xsc_fdtab *t, unsigned c, bool make)
{
	void *p;

	if (c >= XSC_FDTAB_MAX / t->per)
		return NULL;
	p = atomic_load_explicit(&t->chunk[c], memory_order_acquire);
	if (!p && make) {
		xsc__spin_lock(&t->lock);
		p = atomic_load_explicit(&t->chunk[c], memory_order_relaxed);
		if (!p) {
			long m = xsc__sys6(SYS_mmap, 0, (long)(t->per * t->size),
					   PROT_READ | PROT_WRITE,
					   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (m >= 0) {
				p = (void *)m;
				/* pairs with the acquire load above */
				atomic_store_explicit(&t->chunk[c], p, memory_order_release);
			}
		}
		xsc__spin_unlock(&t->lock);
	}
	return p;
}

void *xsc__fdtab_at(struct xsc_fdtab *t, int fd, bool make)
{
	char *p;

	if (fd < 0 || !(p = xsc__fdtab_chunk(t, (unsigned)fd / t->per, make)))
		return NULL;
	return p + (size_t)((unsigned)fd % t->per) * t->size;
}
