/*
 * complete.c - completion bookkeeping, the layer under the dispatcher
 * (handle.c) and the executors (uring.c, worker.c, multi-calls, the
 * runtime): an entry's result recorded and counted, the inline execution
 * every path shares (refusal included), the wake word that ends the
 * owner's sleep, and the one-line diagnostics.  Nothing here posts,
 * flushes or routes; it calls no executor, so the executors can call it
 * without reaching back up into handle.c.
 */
#include "complete.h"

#include <limits.h>
#include <linux/futex.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>

#include "rawsys.h"

/* A line on stderr through write(2), not stdio: stderr's lock may be held
 * by a parked fiber in transparent mode. */
void xsc__say(const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 1)
		n = sizeof(buf) - 1;
	if (n > 0)
		xsc__sys3(SYS_write, 2, buf, n);
}

void xsc__attr_blocked(pthread_attr_t *attr)
{
	sigset_t all;

	sigfillset(&all);
	pthread_attr_init(attr);
	pthread_attr_setsigmask_np(attr, &all);
}

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

/* SIGPIPE.  write(2) into a pipe with no reader, or onto a socket that
 * can no longer send (send*, sendmsg without MSG_NOSIGNAL; splice, tee,
 * vmsplice and sendfile into such an fd), fails with EPIPE and sends
 * SIGPIPE to the calling thread.  True when call nr with arguments a,
 * failing with EPIPE, came with the signal natively.  *sends: io_uring's
 * form of it adds MSG_NOSIGNAL itself. */
bool xsc__sigpipe_kind(long nr, const int64_t a[6], bool *sends)
{
	int64_t fd, flags = 0;
	struct stat st;

	*sends = false;
	switch (nr) {
	case SYS_write: case SYS_writev:
		fd = a[0];
		break;
	case SYS_pwritev2:	/* offset -1: the file position, as writev */
		if (a[3] != -1)
			return false;
		fd = a[0];
		break;
	case SYS_sendto: case SYS_sendmmsg:
		fd = a[0];
		flags = a[3];
		*sends = true;
		break;
	case SYS_sendmsg:
		fd = a[0];
		flags = a[2];
		*sends = true;
		break;
	case SYS_splice:
		fd = a[2];
		break;
	case SYS_tee:
		fd = a[1];
		break;
	case SYS_vmsplice: case SYS_sendfile:
		fd = a[0];
		break;
	default:
		return false;
	}
	if (flags & MSG_NOSIGNAL)
		return false;
	/* EPIPE from anything else (a sound device's underrun) sends nothing */
	if (xsc__sys2(SYS_fstat, fd, &st) < 0)
		return false;
	return S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode);
}

/* Run by another thread (a syscall thread, the SQPOLL poller, io_uring's
 * workers) the kernel sends the signal there, where it is lost.  True
 * when entry id failed so and the caller's own thread did not get it:
 * the caller then raises it on itself. */
bool xsc__sigpipe_lost(const struct xsc *x, int id, long ret)
{
	const struct xsc_entry *e = &x->ent[id];
	bool sends;

	if (ret != -EPIPE || !xsc__sigpipe_kind(e->sysno, e->args, &sends))
		return false;
	switch (x->slot[id].backend) {
	case XSC_BACKEND_INLINE:
		return false;	/* the caller's own thread: the kernel sent it */
	case XSC_BACKEND_URING:
		/* issued in the caller's task (at once, or retried by its
		 * task work): a write's signal reached it; tee and splice
		 * run on io_uring's workers, sends add MSG_NOSIGNAL */
		return x->sqpoll || sends || e->sysno == SYS_tee || e->sysno == SYS_splice;
	default:
		return true;
	}
}

void xsc__note_epipe(struct xsc *x, int id)
{
	/* the runtime's handles: its completion callback raises it on the
	 * fiber that made the call (sched/syscalls.c) */
	if (x->shared || x->slot[id].tag == XSC_TAG_OWN ||
	    !xsc__sigpipe_lost(x, id, x->ent[id].ret))
		return;
	/* the owner made the call: it gets the signal, as from write(2) */
	xsc__sys3(SYS_tgkill, xsc__sys0(SYS_getpid), xsc__sys0(SYS_gettid), SIGPIPE);
}

void xsc__note_done(struct xsc *x, int id)
{
	xsc__note_done_inl(x, id);
}

void xsc__complete(struct xsc *x, int id, long ret)
{
	xsc__complete_inl(x, id, ret);
}

/* Replaced by multicall.c's definitions when multi-calls are linked in. */
__attribute__((weak)) long xsc__mc_run(const struct xsc_entry *e)
{
	(void)e;
	return -ENOSYS;
}

__attribute__((weak)) void xsc__mc_close(struct xsc *x)
{
	(void)x;
}

long xsc__call_here(long nr, const int64_t a[6])
{
	if (xsc__sysdef(nr)->refuse)
		return -EINVAL;
	return xsc__sys6(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

long xsc__exec_sync(const struct xsc_entry *e)
{
	if (e->sysno == XSC_NR_NOP)
		return 0;
	if (e->sysno == XSC_NR_MC)
		return xsc__mc_run(e);
	return xsc__call_here(e->sysno, e->args);
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
