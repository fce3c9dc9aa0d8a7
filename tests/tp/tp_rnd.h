/*
 * tp_rnd.h - the xorshift64 generator the tests/tp programs draw their
 * per-thread sizes and contents from (a seed per thread, so what they
 * print does not depend on scheduling).  Header-only: each program stays
 * one plain libc + pthreads source.
 */
#ifndef TP_RND_H
#define TP_RND_H
#include <stdint.h>

static inline uint64_t rnd(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}
#endif
