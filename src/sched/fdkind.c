/*
 * fdkind.c - transparent mode: whether a descriptor is a regular file or
 * a block device, and whether it is non-blocking, known without asking
 * the kernel again.  Words live in a table indexed by fd (fdtab.c).
 *
 * The kind comes from the program's own fstat, newfstatat or statx of the
 * descriptor (the rows' .fdkind) or from a statx the reaper had to make;
 * the flag from the call that made the descriptor (XSC_FDKIND_NEW, with
 * the flag at .nonblock) and its fcntl(F_SETFL) and ioctl(FIONBIO)
 * (XSC_FDKIND_SETFL).  Both are kept until the descriptor is closed.
 *
 * Rules: exact, not a guess.  Every close passes the shim, which marks the
 * descriptor closing before the call and closed after it (a generation in
 * the same word), so what was learned while a close raced is dropped.
 * Where the flag must be exact (xsc__fdkind_nb), a description that may be
 * shared (dup, fork, SCM_RIGHTS) is asked of the kernel.  What the shim
 * cannot see turns it all off for the process (XSC_FDKIND_OFF); library
 * mode and the xsc threads API never turn it on.  Why: docs/design.md,
 * "Do no harm: a thread with nothing to batch with".
 */
#include "sched.h"

#include <sys/syscall.h>

#include "rawsys.h"

_Atomic bool xsc__fdkind_on;

/* gen (bits 16-31) | closes in flight (8-15) | SHARED (6) | O_NONBLOCK
 * (4-5) | kind (0-3) */
/* K_STREAM: made by a call that makes descriptors without a file
 * position (a socket, a pipe, an eventfd, a timerfd, an inotify) */
enum { K_UNKNOWN, K_DISK, K_OTHER, K_STREAM };
#define KIND 0x0fu
#define NB_YES 0x10u
#define NB_NO 0x20u
#define NB (NB_YES | NB_NO)
/* the open file description may be another descriptor's too (a dup, a
 * process made since, a descriptor sent over a socket): a change of its
 * O_NONBLOCK through the other one is not seen here */
#define SHARED 0x40u
#define CLOSING 0x100u
#define GEN 0x10000u

static struct xsc_fdtab kinds = { .size = sizeof(_Atomic uint32_t), .per = 16384 };

static _Atomic uint32_t *word(int fd, bool make)
{
	return xsc__fdtab_at(&kinds, fd, make);
}

/* fd's word, or CLOSING (nothing known) when the kinds are off or fd
 * has none */
static uint32_t load(int fd)
{
	_Atomic uint32_t *w;

	if (!atomic_load_explicit(&xsc__fdkind_on, memory_order_relaxed) ||
	    !(w = word(fd, false)))
		return CLOSING;
	return atomic_load_explicit(w, memory_order_acquire);
}

/* 1: a regular file or a block device; 0: neither; -1: not known (or a
 * close in flight). */
int xsc__fdkind_get(int fd)
{
	uint32_t v = load(fd);

	if (v & 0xff00u)
		return -1;
	return (v & KIND) == K_DISK ? 1 : (v & KIND) != K_UNKNOWN ? 0 : -1;
}

/* True: fd has no file position to keep (K_STREAM). */
bool xsc__fdkind_stream(int fd)
{
	return (load(fd) & (0xff00u | KIND)) == K_STREAM;
}

/* True: fd is neither a regular file nor a block device, and
 * non-blocking: a call that honours O_NONBLOCK cannot wait on it. */
bool xsc__fdkind_nowait(int fd)
{
	uint32_t v = load(fd) & (0xff00u | KIND | NB);

	return v == (K_OTHER | NB_YES) || v == (K_STREAM | NB_YES);
}

/* Whether fd's open file description has O_NONBLOCK (1) or not (0),
 * exactly: known from the call that made it or the last change through
 * it, and shared with no other descriptor or process since; else -1. */
int xsc__fdkind_nb(int fd)
{
	uint32_t v = load(fd);

	if (v & (0xff00u | SHARED))
		return -1;
	return (v & NB) == NB_YES ? 1 : (v & NB) == NB_NO ? 0 : -1;
}

static void share(_Atomic uint32_t *w)
{
	atomic_fetch_or_explicit(w, SHARED, memory_order_acq_rel);
}

/* fd's open file description is now another's too (a dup of it) */
void xsc__fdkind_share(int fd)
{
	_Atomic uint32_t *w = fd >= 0 ? word(fd, false) : NULL;

	if (w)
		share(w);
}

/* ... every descriptor's (a new process, descriptors sent to another) */
void xsc__fdkind_share_all(void)
{
	for (unsigned c = 0; c < XSC_FDTAB_MAX / kinds.per; c++) {
		_Atomic uint32_t *p = xsc__fdtab_chunk(&kinds, c, false);

		for (unsigned i = 0; p && i < kinds.per; i++)
			if (atomic_load_explicit(&p[i], memory_order_relaxed) & NB)
				share(&p[i]);
	}
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
	uint32_t want = (seen & ~KIND) | (disk ? K_DISK :
					 (seen & KIND) == K_STREAM ? K_STREAM : K_OTHER);

	if (w && !(seen & 0xff00u))
		atomic_compare_exchange_strong_explicit(w, &seen, want,
							memory_order_release,
							memory_order_relaxed);
}

/* fd was just made, by a call that says what it is (not a file) and
 * whether it is non-blocking.  A close of it in the meantime (a race of
 * the program's own) changes the word, and nothing is learned. */
void xsc__fdkind_born(int fd, bool nonblock)
{
	_Atomic uint32_t *w = word(fd, true);
	uint32_t v;

	if (!w)
		return;
	v = atomic_load_explicit(w, memory_order_acquire);
	if (!(v & 0xff00u))
		atomic_compare_exchange_strong_explicit(w, &v, (v & ~0xffu) | K_STREAM |
							(nonblock ? NB_YES : NB_NO),
							memory_order_release,
							memory_order_relaxed);
}

/* fd's O_NONBLOCK was set (nb 1) or cleared (0) by a call that
 * succeeded, or changed in a way not known (-1); `seen` was read before
 * it (xsc__fdkind_seen).  If the word changed since (another thread's
 * change raced this one), which came last is not known: forgotten. */
void xsc__fdkind_setnb(int fd, uint32_t seen, int nb)
{
	_Atomic uint32_t *w = word(fd, false);
	uint32_t v;

	if (!w || (seen & 0xff00u))
		return;
	if (nb >= 0 &&
	    atomic_compare_exchange_strong_explicit(w, &seen, (seen & ~NB) |
						    (nb ? NB_YES : NB_NO),
						    memory_order_release,
						    memory_order_relaxed))
		return;
	v = atomic_load_explicit(w, memory_order_relaxed);
	while (!atomic_compare_exchange_weak_explicit(w, &v, v & ~NB, memory_order_release,
						      memory_order_relaxed))
		;
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
	if (begin && first == last) {
		word(first, true);	/* one descriptor: always marked */
		/* what it was, for the closing fiber (the kind is forgotten
		 * below): a disk's close is made alone (syscalls.c) */
		struct xsc_fiber *f = xsc__cur();
		if (f)
			f->closing_disk = xsc__fdkind_get(first) == 1 ? first + 1 : 0;
	}
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
