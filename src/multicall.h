/*
 * multicall.h - the multi-call module (multicall.c: validation, the
 * synchronous and worker executors, path choice; multicall_rules.c: the
 * chain's rules; multicall_uring.c: the io_uring executor;
 * multicall_cost.c: the time model of the AUTO path) as the rest of the
 * library and the tests see it.
 */
#ifndef XSC_MULTICALL_H
#define XSC_MULTICALL_H
#include "multicall_rules.h"

#pragma GCC visibility push(hidden)

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

#pragma GCC visibility pop
#endif
