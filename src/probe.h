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
/* The backend a handle so configured asks for, before the machine has
 * its say: XSC_BACKEND when set (auto when it names none) and flags
 * allow the environment (no XSC_NO_ENV), else backend. */
int xsc__backend_asked(int backend, unsigned flags);
/* Gives every number its route and reason (x->head, x->why). */
void xsc__route_all(struct xsc *x);
/* The route of syscall nr when io_uring declines or lacks it. */
int xsc__fallback_route(struct xsc *x, long nr);

#pragma GCC visibility pop
#endif
