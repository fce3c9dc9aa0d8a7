/*
 * multicall_uring.h - the io_uring executor of multi-calls
 * (multicall_uring.c), as the driver (multicall.c) uses it.
 */
#ifndef XSC_MULTICALL_URING_H
#define XSC_MULTICALL_URING_H
#include "multicall_rules.h"

#pragma GCC visibility push(hidden)

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
/* Frees the handle's multi-call state (x->mc): xsc_close. */
void xsc__mc_uring_free(struct xsc *x);
/* A CQE of one of its SQEs (user_data XSC_UD_MC), from the reaper. */
void xsc__mc_uring_cqe(struct xsc *x, uint64_t ud, int32_t res, uint32_t flags);

#pragma GCC visibility pop
#endif
