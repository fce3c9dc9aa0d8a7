/*
 * complete.h - completion bookkeeping (complete.c), under the dispatcher
 * and the executors: an entry's result recorded and counted, the inline
 * execution every path shares, the wake word, the one-line diagnostics.
 */
#ifndef XSC_COMPLETE_H
#define XSC_COMPLETE_H
#include <pthread.h>

#include "internal.h"

#pragma GCC visibility push(hidden)

/* Marks entry id DONE with result ret (owner thread). */
void xsc__complete(struct xsc *x, int id, long ret);
/* Bookkeeping for an entry an executor marked DONE (owner thread). */
void xsc__note_done(struct xsc *x, int id);
/* The done_cb part of it: the callback, then the entry is free. */
void xsc__note_done_cb(struct xsc *x, int id);

/* Free entries are a stack of ids and posted ones a ring of ids, both
 * small hot arrays: the post of the next call never waits on a load from
 * a cold entry (a list threaded through the slots did, every call). */
static inline void xsc__free_entry(struct xsc *x, int id)
{
	st_set(&x->ent[id], XSC_FREE);
	x->free_ids[x->nfree++] = id;
}

/* SIGPIPE that the kernel sent to a thread other than the caller's
 * (complete.c): true if entry id's result owes it to the caller. */
bool xsc__sigpipe_lost(const struct xsc *x, int id, long ret);
/* ... and whether call nr, failing with EPIPE, sends it natively. */
bool xsc__sigpipe_kind(long nr, const int64_t a[6], bool *sends);
/* The owner of a library handle raises it on itself. */
void xsc__note_epipe(struct xsc *x, int id);

/* Inline forms for the reapers' hot loops. */
static inline void xsc__note_done_inl(struct xsc *x, int id)
{
	struct xsc_slot *s = &x->slot[id];

	s->noted = 1;
	x->st.completed++;
	x->st.by_backend[s->backend]++;
	if (__builtin_expect(x->ent[id].ret == -EPIPE, 0))
		xsc__note_epipe(x, id);
	if (__builtin_expect(x->cfg.done_cb != NULL, 0))
		xsc__note_done_cb(x, id);
	else
		x->ndone++;
}

static inline void xsc__complete_inl(struct xsc *x, int id, long ret)
{
	x->ent[id].ret = ret;
	st_set(&x->ent[id], XSC_DONE);
	xsc__note_done_inl(x, id);
}

/* A readiness wait ended (or was given up: revents say ready, and the
 * call goes out): hands it to done_cb as id -1. */
static inline void xsc__wait_done(struct xsc *x, uint64_t tag, long revents)
{
	x->inflight_waits--;
	x->waits_done++;
	x->cfg.done_cb(x->cfg.done_arg, -1, revents, tag);
}

/* Runs syscall nr in the calling thread: the one place every inline path
 * (handle, syscall threads, fibers) goes through, so a refused row
 * (.refuse: vfork, clone, ...) is -EINVAL everywhere and never runs. */
long xsc__call_here(long nr, const int64_t a[6]);
/* Executes entry id synchronously in the calling thread. */
long xsc__exec_sync(const struct xsc_entry *e);
/* A chain entry (XSC_NR_MC) run by xsc__exec_sync through xsc__mc_run
 * (weak default: -ENOSYS); xsc_close calls xsc__mc_close to free x->mc.
 * Both are multicall.c's when multi-calls are linked in. */
long xsc__mc_run(const struct xsc_entry *e);
void xsc__mc_close(struct xsc *x);

/* Wake word: any thread may kick the owner out of a wait. */
void xsc__kick(struct xsc *x);
uint32_t xsc__kick_seen(struct xsc *x);
/* Owner: sleeps until cseq moves from `seen` or timeout_ns passes (< 0:
 * forever).  0 or -EINTR / -ETIMEDOUT. */
long xsc__futex_wait_kick(struct xsc *x, uint32_t seen, int64_t timeout_ns);

/* One line on stderr with write(2), never stdio. */
void xsc__say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A new pthread attr whose thread starts with every signal blocked (glibc
 * keeps its own two open): a runtime thread takes none of the program's
 * signals, not even before it sets its own mask. */
void xsc__attr_blocked(pthread_attr_t *attr);

#pragma GCC visibility pop
#endif
