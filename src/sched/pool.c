/*
 * pool.c - fixed-size records from mmap'd slabs, never from malloc.
 *
 * In transparent mode the program's threads are fibers and glibc's
 * internal locks (malloc's arenas among them) are futexes emulated in user
 * space.  Runtime code runs outside that emulation: if it took a malloc
 * lock, a fiber waiting for it would park in the emulated table and the
 * runtime's release (a real FUTEX_WAKE) would never wake it; if a fiber
 * held one, the scheduler would sleep in the kernel on a lock only a fiber
 * of its own vcpu can release.  So records the runtime allocates or frees
 * while fibers run (timed-wait timers, transparent fiber records) come
 * from here: a free list under one of our spinlocks, refilled by a raw
 * mmap.  Slabs are never returned (records are reused).
 */
#include "sched.h"

#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "rawsys.h"

#define SLAB (256 * 1024)

void *xsc__pool_get(struct xsc_pool *p)
{
	void *r;

	xsc__spin_lock(&p->lock);
	if (!p->free) {
		long m = xsc__sys6(SYS_mmap, 0, SLAB, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m < 0 && m > -4096) {
			xsc__spin_unlock(&p->lock);
			return NULL;
		}
		for (size_t off = 0; off + p->size <= SLAB; off += p->size) {
			void **o = (void **)((char *)m + off);
			*o = p->free;
			p->free = o;
		}
	}
	r = p->free;
	p->free = *(void **)r;
	xsc__spin_unlock(&p->lock);
	memset(r, 0, p->size);
	return r;
}

void xsc__pool_put(struct xsc_pool *p, void *r)
{
	xsc__spin_lock(&p->lock);
	*(void **)r = p->free;
	p->free = r;
	xsc__spin_unlock(&p->lock);
}
