/*
 * tp_malloc.c - malloc, realloc and free from many threads of an
 * unmodified program (glibc's per-thread arenas and tcache).
 *
 * 16 threads perform 200000 operations each: malloc,
 * realloc (growing and shrinking) and free of blocks of 1 byte..64 KiB.
 * Every block is filled with a pattern derived from its tag, checked
 * before every realloc and free (realloc must keep the common prefix).
 * Some blocks are handed to other threads through a shared queue and
 * freed there (cross-arena frees); main frees what is left.
 * Each thread's operations come from its own PRNG, so the totals and the
 * checksum do not depend on scheduling.  Exit 0 on success, 1 on any
 * detected error.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tp_rnd.h"

#define NT 16
#define OPS 200000
#define SLOTS 64
#define MAXSZ 65536
#define QCAP 4096

struct blk { unsigned char *p; size_t n; unsigned tag; int owner; };

static unsigned char pattern[MAXSZ + 256];
static atomic_long errors, allocs, frees, cross_frees;
static atomic_ullong checksum;

static struct {
	pthread_mutex_t m;
	struct blk b[QCAP];
	int n;
} q = { .m = PTHREAD_MUTEX_INITIALIZER };

static size_t pick_size(uint64_t *s)
{
	uint64_t r = rnd(s);
	switch (r % 8) {
	case 0: return 1 + (size_t)((r >> 8) % MAXSZ);	/* up to 64 KiB */
	case 1: case 2: return 1 + (size_t)((r >> 8) % 4096);
	default: return 1 + (size_t)((r >> 8) % 256);
	}
}

static const unsigned char *pat(unsigned tag)
{
	return pattern + (tag & 255);
}

static void fill(struct blk *b, size_t from)
{
	memcpy(b->p + from, pat(b->tag) + from, b->n - from);
}

static int verify(const struct blk *b, size_t n, const char *what)
{
	if (memcmp(b->p, pat(b->tag), n) != 0) {
		if (atomic_fetch_add(&errors, 1) < 5)
			fprintf(stderr, "tp_malloc: block tag %u size %zu corrupted (%s)\n",
				b->tag, b->n, what);
		return -1;
	}
	return 0;
}

static void release(struct blk *b, const char *what)
{
	verify(b, b->n, what);
	free(b->p);
	b->p = NULL;
	atomic_fetch_add(&frees, 1);
}

static void give(struct blk *b)
{
	pthread_mutex_lock(&q.m);
	if (q.n < QCAP) {
		q.b[q.n++] = *b;
		b->p = NULL;
	}
	pthread_mutex_unlock(&q.m);
	if (b->p)
		release(b, "queue full");
}

static void take_some(int me)
{
	struct blk got[8];
	int n = 0;

	pthread_mutex_lock(&q.m);
	while (n < 8 && q.n > 0)
		got[n++] = q.b[--q.n];
	pthread_mutex_unlock(&q.m);
	for (int i = 0; i < n; i++) {
		if (got[i].owner != me)
			atomic_fetch_add(&cross_frees, 1);
		release(&got[i], "freed by another thread");
	}
}

static void *thr(void *arg)
{
	int me = (int)(long)arg;
	uint64_t s = 0x9e3779b97f4a7c15ULL * (uint64_t)(me + 1), sum = 0;
	struct blk slot[SLOTS] = { { 0 } };
	unsigned tag = (unsigned)me << 20;

	for (int op = 0; op < OPS; op++) {
		uint64_t r = rnd(&s);
		struct blk *b = &slot[r % SLOTS];
		unsigned kind = (unsigned)(r >> 32) % 16;

		if (!b->p) {
			b->n = pick_size(&s);
			b->tag = tag++;
			b->owner = me;
			b->p = malloc(b->n);
			if (!b->p) {
				atomic_fetch_add(&errors, 1);
				fprintf(stderr, "tp_malloc: malloc(%zu) failed\n", b->n);
				continue;
			}
			atomic_fetch_add(&allocs, 1);
			fill(b, 0);
			sum += b->n * 31 + b->tag;
		} else if (kind < 5) {
			size_t old = b->n, n = pick_size(&s);
			unsigned char *p;

			verify(b, old, "before realloc");
			p = realloc(b->p, n);
			if (!p) {
				atomic_fetch_add(&errors, 1);
				fprintf(stderr, "tp_malloc: realloc(%zu) failed\n", n);
				continue;
			}
			b->p = p;
			b->n = n;
			verify(b, old < n ? old : n, "after realloc");
			if (n > old)
				fill(b, old);
			sum += n * 17 + b->tag;
		} else if (kind < 7) {
			give(b);
			sum += 5;
		} else {
			release(b, "before free");
			sum += 3;
		}
		if (op % 64 == 0)
			take_some(me);
	}
	for (int i = 0; i < SLOTS; i++)
		if (slot[i].p)
			release(&slot[i], "at thread end");
	atomic_fetch_add(&checksum, sum * (uint64_t)(2 * me + 1));
	return NULL;
}

int main(void)
{
	pthread_t t[NT];

	for (size_t i = 0; i < sizeof(pattern); i++)
		pattern[i] = (unsigned char)(i * 7 + (i >> 8) * 13 + 1);
	for (long i = 0; i < NT; i++)
		if (pthread_create(&t[i], NULL, thr, (void *)i)) {
			fprintf(stderr, "tp_malloc: pthread_create\n");
			return 1;
		}
	for (int i = 0; i < NT; i++)
		if (pthread_join(t[i], NULL)) {
			fprintf(stderr, "tp_malloc: pthread_join\n");
			return 1;
		}
	while (q.n > 0) {	/* main is another thread for all of these */
		atomic_fetch_add(&cross_frees, 1);
		release(&q.b[--q.n], "left in the queue");
	}
	if (atomic_load(&allocs) != atomic_load(&frees)) {
		fprintf(stderr, "tp_malloc: %ld allocations, %ld frees\n",
			atomic_load(&allocs), atomic_load(&frees));
		return 1;
	}
	if (atomic_load(&errors)) {
		fprintf(stderr, "tp_malloc: %ld errors\n", atomic_load(&errors));
		return 1;
	}
	fprintf(stderr, "tp_malloc: %ld blocks freed by another thread\n", atomic_load(&cross_frees));
	printf("malloc ok: %d threads x %d ops, %ld blocks, checksum %016llx\n",
	       NT, OPS, atomic_load(&allocs), (unsigned long long)atomic_load(&checksum));
	return 0;
}
