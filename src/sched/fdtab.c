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

/* Chunk c, made now if no other thread made it first (the slow path of
 * xsc__fdtab_chunk, sched.h); NULL if the mmap failed. */
void *xsc__fdtab_make(struct xsc_fdtab *t, unsigned c)
{
	void *p;

	xsc__spin_lock(&t->lock);
	p = atomic_load_explicit(&t->chunk[c], memory_order_relaxed);
	if (!p) {
		long m = xsc__sys6(SYS_mmap, 0, (long)(t->per * t->size),
				   PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m >= 0) {
			p = (void *)m;
			/* pairs with xsc__fdtab_chunk's acquire load */
			atomic_store_explicit(&t->chunk[c], p, memory_order_release);
		}
	}
	xsc__spin_unlock(&t->lock);
	return p;
}
