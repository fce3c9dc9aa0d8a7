/*
 * exec.h - a call run in the calling thread (exec.c).
 */
#ifndef XSC_EXEC_H
#define XSC_EXEC_H
#include "internal.h"

#pragma GCC visibility push(hidden)

/* Runs syscall nr in the calling thread: the one place every inline path
 * (handle, syscall threads, fibers) goes through, so a refused row
 * (.refuse: vfork, clone, ...) is -EINVAL everywhere and never runs. */
long xsc__call_here(long nr, const int64_t a[6]);
/* Executes entry e synchronously in the calling thread: its call, a NOP,
 * or a chain entry (XSC_NR_MC) through the multi-call module's run
 * (internal.h struct xsc_mc_ops). */
long xsc__exec_sync(const struct xsc_entry *e);

#pragma GCC visibility pop
#endif
