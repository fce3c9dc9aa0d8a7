/*
 * fdwait.h - readiness waits without a ring: the handle's epoll thread
 * (fdwait.c), started by xsc_open for a handle with a done_cb and no ring.
 */
#ifndef XSC_FDWAIT_H
#define XSC_FDWAIT_H
#include "internal.h"

#pragma GCC visibility push(hidden)

int xsc__fdwait_start(struct xsc *x);
int xsc__fdwait_add(struct xsc *x, int fd, unsigned events, uint64_t tag);
int xsc__fdwait_reap(struct xsc *x);
void xsc__fdwait_stop(struct xsc *x);
void xsc__fdwait_forget(struct xsc *x);	/* a forked child's copy */
/* Whether tid is x's readiness thread; its thread pointer into *tcb. */
bool xsc__fdwait_thread(const struct xsc *x, int tid, uint64_t *tcb);

#pragma GCC visibility pop
#endif
