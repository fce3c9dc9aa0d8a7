/*
 * worker.h - the syscall-thread executor (worker.c).
 */
#ifndef XSC_WORKER_H
#define XSC_WORKER_H
#include "internal.h"

#pragma GCC visibility push(hidden)

/* Syscall threads are raw clones, not pthreads (transparent mode: worker.c) */
extern bool xsc__raw_workers;
int xsc__workers_start(struct xsc *x);
void xsc__workers_stop(struct xsc *x);
/* In a forked child: frees the pool without joining threads that are
 * not there (their stacks are the parent's copies). */
void xsc__workers_forget(struct xsc *x);
int xsc__worker_queue(struct xsc *x, int id);
void xsc__worker_kick(struct xsc *x);
int xsc__worker_reap(struct xsc *x);
int xsc__worker_wait(struct xsc *x, uint32_t seen, int64_t timeout_ns);
int xsc__worker_cancel(struct xsc *x, int id);

#pragma GCC visibility pop
#endif
