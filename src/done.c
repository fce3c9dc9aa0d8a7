/*
 * done.c - how the owner learns that entries are done: an entry's result
 * recorded and counted, handed to done_cb (then the entry is free), and
 * the wake word by which executors end the owner's sleep.  This is the
 * layer under the dispatcher (dispatch.c, wait.c) and the executors
 * (uring*.c, worker.c, multi-calls, the runtime); it calls neither.
 */
#include "done.h"

#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>

#include "rawsys.h"

/* ---- completion bookkeeping ------------------------------------------ */

void xsc__note_done_cb(struct xsc *x, int id)
{
	if (x->slot[id].tag == XSC_TAG_OWN) {
		x->ndone++;	/* the library's own call: its caller takes it */
		return;
	}
	x->cfg.done_cb(x->cfg.done_arg, id, x->ent[id].ret, x->slot[id].tag);
	xsc__free_entry(x, id);
}

void xsc__note_done(struct xsc *x, int id)
{
	XSC_PROBE4(complete, x->ent[id].sysno, x->ent[id].ret, id, x);
	xsc__note_done_inl(x, id);
}

void xsc__complete(struct xsc *x, int id, long ret)
{
	xsc__complete_inl(x, id, ret);
}

/* ---- the wake word (see struct xsc) ---------------------------------- */

void xsc__kick(struct xsc *x)
{
	atomic_fetch_add(&x->cseq, 1);
	if (atomic_load(&x->owner_waiting))	/* pairs with the store below */
		xsc__sys6(SYS_futex, (long)&x->cseq, FUTEX_WAKE | FUTEX_PRIVATE_FLAG,
			  INT_MAX, 0, 0, 0);
}

uint32_t xsc__kick_seen(struct xsc *x)
{
	return atomic_load(&x->cseq);
}

long xsc__futex_wait_kick(struct xsc *x, uint32_t seen, int64_t timeout_ns)
{
	struct timespec ts, *tp = NULL;
	long ret = 0;

	if (timeout_ns >= 0) {
		ts.tv_sec = timeout_ns / 1000000000;
		ts.tv_nsec = timeout_ns % 1000000000;
		tp = &ts;
	}
	atomic_store(&x->owner_waiting, 1);
	if (atomic_load(&x->cseq) == seen) {
		x->st.crossings++;
		ret = xsc__sys6(SYS_futex, (long)&x->cseq,
				FUTEX_WAIT | FUTEX_PRIVATE_FLAG, seen, (long)tp, 0, 0);
	}
	if (!x->futex_armed)
		atomic_store(&x->owner_waiting, 0);
	return ret == -EAGAIN ? 0 : ret;
}
