/*
 * multicall.h - what multicall.c (validation, forwarding, the worker and
 * inline executors, the loop driver, path choice) and multicall_uring.c
 * (the io_uring executor) share: the state of one running chain.
 *
 * A run walks (iteration, call) positions in order.  Every executor
 * produces each call's result and hands it to mc_settle(), the one place
 * that applies the chain's rules (check flags, the loop condition, the
 * iteration bound), so the three paths cannot drift apart.
 */
#ifndef XSC_MULTICALL_H
#define XSC_MULTICALL_H
#include "internal.h"

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

/* io_uring executor (multicall_uring.c) */
#define MC_SQES 256	/* SQEs per submission */

/* What running the chain on the ring will cost besides one enter and
 * one request per call. */
struct mc_cost {
	unsigned sync;		/* plain calls (fd classification) */
	unsigned stops[3];	/* references io_uring cannot carry, per part
				   (SEG_PRO, SEG_BODY, SEG_EPI): an enter each */
};
/* Whether the chain can run on the ring; sets *why if not, and *cost. */
bool xsc__mc_uring_ok(struct mc_run *r, struct mc_cost *cost, const char **why);
/* Runs the chain to the end on the ring (crossings counted in x->st). */
void xsc__mc_uring_run(struct mc_run *r);
void xsc__mc_uring_free(struct xsc *x);

/* The time model of the AUTO path (multicall_cost.c), in ns. */
struct mc_model {
	unsigned tsys;		/* one null system call */
	unsigned tenter;	/* one io_uring_enter that submits and waits */
	unsigned top;		/* io_uring's own work per request */
};
/* The model of this process: from the host profile, on first use. */
const struct mc_model *xsc__mc_model(struct xsc *x);
/* Replaces it (tests; NULL: from the profile again on next use).  Not
 * while another thread may be choosing a path. */
void xsc__mc_model_set(const struct mc_model *m);
#endif
