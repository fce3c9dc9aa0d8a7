/*
 * done.h - how the owner learns that entries are done (done.c): results
 * recorded and counted, done_cb, the wake word.
 */
#ifndef XSC_DONE_H
#define XSC_DONE_H
#include "internal.h"
#include "sigpipe.h"
#include "usdt.h"

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

/* Inline forms for the reapers' hot loops.  Forced: gcc weighs a probe's
 * asm (usdt.h) by its text, and stopped inlining them for it. */
static inline __attribute__((always_inline)) void
xsc__note_done_inl(struct xsc *x, int id)
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

static inline __attribute__((always_inline)) void
xsc__complete_inl(struct xsc *x, int id, long ret)
{
	struct xsc_entry *e = &x->ent[id];

	e->ret = ret;
	st_set(e, XSC_DONE);
	/* here, where e and ret are in registers: nothing to compute (a
	 * syscall thread's completions: xsc__note_done) */
	XSC_PROBE4(complete, e->sysno, ret, id, x);
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

/* Wake word: any thread may kick the owner out of a wait. */
void xsc__kick(struct xsc *x);
uint32_t xsc__kick_seen(struct xsc *x);
/* Owner: sleeps until cseq moves from `seen` or timeout_ns passes (< 0:
 * forever).  0 or -EINTR / -ETIMEDOUT. */
long xsc__futex_wait_kick(struct xsc *x, uint32_t seen, int64_t timeout_ns);

#pragma GCC visibility pop
#endif
