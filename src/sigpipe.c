/*
 * sigpipe.c - the SIGPIPE an EPIPE owes the caller.  write(2) into a pipe
 * with no reader, or onto a socket that can no longer send, fails with
 * EPIPE and sends SIGPIPE to the calling thread; run by another thread
 * (a syscall thread, the SQPOLL poller, io_uring's workers) the call's
 * signal goes there and is lost.  The owner of a library handle raises
 * it on itself when it notes the result (done.c); the runtime on the
 * fiber that made the call (sched/syscalls.c); the shim on the calling
 * thread (preload/preload.c).
 */
#include "sigpipe.h"

#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "rawsys.h"

/* True when call nr with arguments a, failing with EPIPE, came with the
 * signal natively (the row's .sigpipe: write, writev, pwritev2 at the
 * file position, send*, sendmsg without MSG_NOSIGNAL; splice, tee,
 * vmsplice and sendfile into a pipe or socket).  *sends: io_uring's form
 * of it adds MSG_NOSIGNAL itself. */
bool xsc__sigpipe_kind(long nr, const int64_t a[6], bool *sends)
{
	const struct xsc_sysdef *d = xsc__sysdef(nr);
	struct stat st;

	*sends = false;
	if (!d || !d->sigpipe.fd)
		return false;
	if (d->sigpipe.pos && xsc__sys_arg(a, d->sigpipe.pos) != -1)
		return false;	/* an explicit offset: not the file position */
	if (d->sigpipe.msg && (xsc__sys_arg(a, d->sigpipe.msg) & MSG_NOSIGNAL))
		return false;
	*sends = d->sigpipe.uring_nosignal;
	/* EPIPE from anything else (a sound device's underrun) sends nothing */
	if (xsc__sys2(SYS_fstat, xsc__sys_arg(a, d->sigpipe.fd), &st) < 0)
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
