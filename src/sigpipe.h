/*
 * sigpipe.h - the SIGPIPE an EPIPE owes the caller when another thread
 * ran its call (sigpipe.c).
 */
#ifndef XSC_SIGPIPE_H
#define XSC_SIGPIPE_H
#include "internal.h"

#pragma GCC visibility push(hidden)

/* Whether call nr, failing with EPIPE, sends SIGPIPE natively; *sends:
 * io_uring's form of it adds MSG_NOSIGNAL itself. */
bool xsc__sigpipe_kind(long nr, const int64_t a[6], bool *sends);
/* True if entry id's result owes the signal to the caller: the kernel
 * sent it to a thread other than the caller's. */
bool xsc__sigpipe_lost(const struct xsc *x, int id, long ret);
/* The owner of a library handle raises it on itself (done.h). */
void xsc__note_epipe(struct xsc *x, int id);

#pragma GCC visibility pop
#endif
