/*
 * multicall_rules.h - the state of one running chain, and the chain's
 * rules every executor of multi-calls shares (multicall_rules.c).
 *
 * A run walks (iteration, call) positions in order.  Every executor
 * produces each call's result and hands it to mc_settle(), the one place
 * that applies the chain's rules (check flags, the loop condition, the
 * iteration bound), so the three paths cannot drift apart.
 */
#ifndef XSC_MULTICALL_RULES_H
#define XSC_MULTICALL_RULES_H
#include "internal.h"

#pragma GCC visibility push(hidden)

/* Decoded reference (see XSC_MC_RET / XSC_MC_WORD in xsc.h). */
#define REF_CALL(v)  ((unsigned)((v) & 0xff))
#define REF_SRC(v)   ((unsigned)(((v) >> 8) & 0xf))	/* 0..5, or REF_RES */
#define REF_W32(v)   (((v) >> 12) & 1)
#define REF_OFF(v)   ((unsigned long)(v) >> 16)
#define REF_RES      0xfu
#define REF_OFF_MAX  (1ul << 20)

struct mc_run {
	struct xsc *x;
	struct xsc_mc *c;		/* the caller's calls (loop body) */
	unsigned n;
	const struct xsc_mc_opts *o;
	bool loop;
	unsigned lf, le;		/* the body: calls [lf, le); a chain: [0, n) */
	unsigned max;			/* iterations allowed (1 for a chain) */
	int loop_end_why;		/* XSC_MC_UNTIL / BOUND once in the epilogue */
	/* progress */
	unsigned iter;			/* iteration being run */
	unsigned next;			/* next call of that iteration */
	bool stopped;
	int stop;			/* enum xsc_mc_stop */
	int ret;			/* xsc_multicall's return value */
	uint64_t sum;
	uint64_t closed;		/* bit k: private open k closed by the chain */
	int64_t a[XSC_MC_MAX][6];	/* resolved arguments of the settled calls */
	/* accounting */
	unsigned ops;			/* system calls the sync executor made */
	unsigned submits, resumes;
	const char *why;		/* reason for the path */
};

/* Call i's part of the chain: prologue, body, epilogue. */
enum { SEG_PRO, SEG_BODY, SEG_EPI };
static inline int mc_seg(const struct mc_run *r, unsigned i)
{
	return i < r->lf ? SEG_PRO : i < r->le ? SEG_BODY : SEG_EPI;
}

/* The position after (iteration *it, call *i) when nothing stops the
 * run; false past the end.  The one walk the executors share with
 * mc_settle(). */
bool mc_next_pos(const struct mc_run *r, unsigned *it, unsigned *i);

/* Whether producer k's result is settled for a consumer in iteration it. */
bool mc_settled(const struct mc_run *r, unsigned it, unsigned k);

/* Stores call i's result and applies the rules; true once the run
 * stopped.  Only in order: i == r->next. */
bool mc_settle(struct mc_run *r, unsigned i, long ret);

/* Resolves call i's arguments into a[]: 0, or the result the call gets
 * without running (-ECANCELED: its producer failed; -EFAULT: unreadable
 * word).  Producers must be settled. */
long mc_resolve(struct mc_run *r, unsigned i, int64_t a[6]);

/* The value of reference v (producer settled): 0, or -ECANCELED (the
 * producer failed), -EFAULT (unreadable word). */
long mc_ref_value(struct mc_run *r, long v, int64_t *out);
/* True when call i is read/write/pread64/pwrite64 (count in args[2]). */
int mc_kind(long nr);	/* the table's .chain.kind (table.h) */
bool mc_is_rw(long nr);
/* The private open call i's fd feeds into, or -1. */
int mc_private_src(const struct mc_run *r, unsigned i, int arg);

#pragma GCC visibility pop
#endif
