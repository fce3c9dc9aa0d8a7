/*
 * probe.h - what this process may use, and the route of every number
 * (probe.c).
 */
#ifndef XSC_PROBE_H
#define XSC_PROBE_H
#include <stddef.h>

#include "internal.h"

#pragma GCC visibility push(hidden)

/* Resolves the configured backend against the environment and the
 * machine, creating the ring when one is wanted (xsc_open). */
void xsc__probe(struct xsc *x);
/* Gives every number its route and reason (x->head, x->why). */
void xsc__route_all(struct xsc *x);
/* The route of syscall nr when io_uring declines or lacks it. */
int xsc__fallback_route(struct xsc *x, long nr);

/* Reads a small file (/proc, /sys) into buf, NUL-terminated, with raw
 * system calls: no stdio, whose locks and FILE allocation the runtime
 * must not take (transparent mode).  Returns the length or -errno. */
long xsc__read_small(const char *path, char *buf, size_t len);
/* The value of field `name` ("Threads", "Seccomp") of /proc/self/status,
 * read whole line by line; -ENOENT when absent, -errno. */
long xsc__status_field(const char *name);
/* Moves a descriptor of xsc's own to the lowest free number at or above
 * the soft RLIMIT_NOFILE, out of the range the program allocates from.
 * Returns the new fd (the old one closed), or fd itself when there is no
 * room (soft limit = hard limit) or a call fails. */
int xsc__fd_aside(int fd);

#pragma GCC visibility pop
#endif
