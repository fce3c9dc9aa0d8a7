/*
 * probe.h - what this process may use, and the route of every number
 * (probe.c).
 */
#ifndef XSC_PROBE_H
#define XSC_PROBE_H
#include "internal.h"

#pragma GCC visibility push(hidden)

/* Resolves the configured backend against the environment and the
 * machine, creating the ring when one is wanted (xsc_open). */
void xsc__probe(struct xsc *x);
/* Gives every number its route and reason (x->head, x->why). */
void xsc__route_all(struct xsc *x);
/* The route of syscall nr when io_uring declines or lacks it. */
int xsc__fallback_route(struct xsc *x, long nr);

#pragma GCC visibility pop
#endif
