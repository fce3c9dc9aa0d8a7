/*
 * creds.h - credential changes, as each kernel thread of the runtime
 * takes them (creds.c).
 */
#ifndef XSC_CREDS_H
#define XSC_CREDS_H
#include "internal.h"

#pragma GCC visibility push(hidden)

/* Process-wide credential changes: the generation made so far, the one a
 * parked thread has taken (UINT_MAX: none parked). */
extern _Atomic unsigned xsc__creds_gen;
extern _Atomic unsigned xsc__creds_parked;
/* set*id calls glibc makes on every thread (setuid(3) and its kin) */
bool xsc__creds_process_wide(long nr);
/* Records a change the caller has made on itself; returns its generation. */
unsigned xsc__creds_record(long nr, const long *a);
/* Makes the changes from *have on on the calling thread (aborts if one
 * fails: a thread never goes on with the old credentials). */
void xsc__creds_apply(unsigned *have);
/* A change the owner of x made to its own credentials only (a raw set*id,
 * setgroups or capset: one kernel thread, natively): x's syscall threads
 * make it too, before their next entry.  Returns 0, or -ENOMEM with
 * nothing recorded. */
int xsc__creds_own_record(struct xsc *x, long nr, const long *a);
/* Makes x's own changes from *have on on the calling syscall thread. */
void xsc__creds_own_apply(struct xsc *x, unsigned *have);
void xsc__creds_own_free(struct xsc *x);
/* A parked thread that has taken the changes up to `have`: takes every
 * change as it is recorded; never returns. */
void xsc__creds_park(unsigned have) __attribute__((noreturn));

#pragma GCC visibility pop
#endif
