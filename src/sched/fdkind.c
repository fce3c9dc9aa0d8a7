/*
 * fdkind.c - transparent mode: whether a descriptor is a regular file or
 * a block device, known without asking the kernel again.
 *
 * A read posted in its non-blocking form that comes back short must be
 * finished in the blocking form on a regular file or a block device
 * (read(2) would have waited for the pages the attempt stopped at) and
 * returned as it is on anything else (uring.c, xsc__nowait_done).  The
 * kind was asked with a statx each time: one kernel entry for every
 * file a server opens, reads and closes, where natively there is none.
 * Most programs ask themselves: stdio and servers fstat a file they just
 * opened.  So the kind is taken from the program's own fstat, newfstatat
 * or statx of a descriptor (seen by the extension), or from the statx the reaper had
 * to make, and kept until the descriptor is closed.
 *
 * Exact, not a guess: a kind is used only while the descriptor cannot
 * have been closed and reopened since it was learned.  In transparent mode
 * every close of the program's passes through the shim (close, dup2,
 * dup3, close_range), which marks the descriptor closing before the call
 * and closed after it; a kind learned meanwhile is not kept (a
 * generation in the same word), and one learned by a stat that raced with
 * a close is dropped by the generation the close bumped.  What the shim
 * cannot see turns it off for the rest of the process: an io_uring of the
 * program's own (its IORING_OP_CLOSE), a descriptor table shared with
 * another process (clone with CLONE_FILES and not CLONE_VM) or unshared
 * by one thread.  Off, or not learned: the statx, as before.  The xsc
 * threads API and library mode never turn it on: their programs make
 * system calls of their own.
 *
 * Words live in a table indexed by fd (fdtab.c).
 */
#include "sched.h"

#include <sys/syscall.h>

#include "rawsys.h"

_Atomic bool xsc__fdkind_on;

/* gen (bits 16-31) | closes in flight (8-15) | kind (0-7) */
enum { K_UNKNOWN, K_DISK, K_OTHER };
#define CLOSING 0x100u
#define GEN 0x10000u

static struct xsc_fdtab kinds = { .size = sizeof(_Atomic uint32_t), .per = 16384 };

static _Atomic uint32_t *word(int fd, bool make)
{
	return xsc__fdtab_at(&kinds, fd, make);
}

/* 1: a regular file or a block device; 0: neither; -1: not known. */
int xsc__fdkind_get(int fd)
{
	_Atomic uint32_t *w;
	uint32_t v;

	if (!atomic_load_explicit(&xsc__fdkind_on, memory_order_relaxed) ||
	    !(w = word(fd, false)))
		return -1;
	v = atomic_load_explicit(w, memory_order_acquire);
	if (v & 0xff00u)
		return -1;	/* a close in flight */
	return (v & 0xff) == K_DISK ? 1 : (v & 0xff) == K_OTHER ? 0 : -1;
}

/* Before a call that tells fd's kind: the word to compare with after it. */
uint32_t xsc__fdkind_seen(int fd)
{
	_Atomic uint32_t *w = word(fd, true);

	return w ? atomic_load_explicit(w, memory_order_acquire) : 0;
}

/* After it: kept only if no close began or ended since `seen`. */
void xsc__fdkind_learn(int fd, uint32_t seen, bool disk)
{
	_Atomic uint32_t *w = word(fd, false);
	uint32_t want = (seen & ~0xffu) | (disk ? K_DISK : K_OTHER);

	if (w && !(seen & 0xff00u))
		atomic_compare_exchange_strong_explicit(w, &seen, want,
							memory_order_release,
							memory_order_relaxed);
}

static void closing(_Atomic uint32_t *w, bool begin)
{
	uint32_t v = atomic_load_explicit(w, memory_order_relaxed), n;

	do {
		n = ((v & ~0xffffu) + GEN) | (v & 0xff00u);	/* kind forgotten */
		if (begin)
			n += CLOSING;
		else if (v & 0xff00u)
			n -= CLOSING;
	} while (!atomic_compare_exchange_weak_explicit(w, &v, n, memory_order_acq_rel,
						       memory_order_relaxed));
}

/* Around a call that closes or replaces descriptors first..last: begin
 * returns the chunks it marked, and the end is given them back, so that
 * it unmarks exactly what the beginning marked. */
uint64_t xsc__fdkind_closing(int first, int last, bool begin, uint64_t marked)
{
	uint64_t m = 0;

	if (first < 0 || last < first)
		return 0;
	if (begin && first == last)
		word(first, true);	/* one descriptor: always marked */
	_Static_assert(XSC_FDTAB_MAX / 16384 <= 64, "a bit per chunk in the mask");
	for (unsigned c = (unsigned)first / kinds.per;
	     c < XSC_FDTAB_MAX / kinds.per && c <= (unsigned)last / kinds.per; c++) {
		unsigned lo = c * kinds.per, hi = lo + kinds.per - 1;
		_Atomic uint32_t *p = xsc__fdtab_chunk(&kinds, c, false);

		if (!p || (!begin && !(marked & (1ULL << c))))
			continue;
		m |= 1ULL << c;
		if (lo < (unsigned)first)
			lo = (unsigned)first;
		if (hi > (unsigned)last)
			hi = (unsigned)last;
		for (unsigned fd = lo; fd <= hi; fd++)
			closing(&p[fd % kinds.per], begin);
	}
	return m;
}
