/*
 * probe.c - what this process may use, and the route of every syscall.
 *
 * At xsc_open: is a seccomp filter active (io_uring would bypass it), can a
 * ring be created (kernel.io_uring_disabled, seccomp, containers answer
 * EPERM or ENOSYS), can an SQPOLL ring, and which opcodes exist.  Then
 * each syscall number gets a route with a one-line reason:
 *
 *   refused rows              -> inline, where the executor says -EINVAL
 *   depends on calling thread -> inline
 *   a .cheap row under AUTO where the host profile says a system call
 *   costs less than its posted form (hostprof.c) -> inline
 *   io_uring translation and its opcode(s) probed -> uring / sqpoll
 *   otherwise: worker when the call may block or the worker backend is
 *   forced, else inline.
 *
 * A translation may still decline one particular entry (arguments it
 * cannot express exactly); that entry takes the fallback route of its row,
 * counted in xsc_stats.declined.
 */
#include "probe.h"
#include "rawio.h"
#include "uring.h"
#include "usdt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostprof.h"

static int seccomp_mode(void)
{
	long m = xsc__status_field("Seccomp");

	return m > 0 ? (int)m : 0;
}

static int parse_backend(const char *s)
{
	static const char *const names[] = { "auto", "uring", "sqpoll", "worker",
					     "inline", "sync" };
	for (int i = 0; i < 6; i++)
		if (!strcmp(s, names[i]))
			return i == 5 ? XSC_BACKEND_INLINE : i;
	return -1;
}

int xsc__backend_asked(int backend, unsigned flags)
{
	const char *env = (flags & XSC_NO_ENV) ? NULL : getenv("XSC_BACKEND");
	int b;

	if (!env || !*env)
		return backend;
	b = parse_backend(env);
	return b < 0 ? XSC_BACKEND_AUTO : b;
}

/* Resolves the configured backend against the environment and the
 * machine, creating the ring when one is wanted. */
void xsc__probe(struct xsc *x)
{
	const char *env = (x->cfg.flags & XSC_NO_ENV) ? NULL : getenv("XSC_BACKEND");
	bool quiet = x->cfg.flags & XSC_QUIET;

	x->pr.reason = "";
	x->pr.sqpoll_reason = "";
	x->pr.seccomp = seccomp_mode() == 2;
	if (env && *env && parse_backend(env) < 0 && !quiet)
		xsc__say("xsc: XSC_BACKEND=%s is not one of auto, uring, "
			"sqpoll, worker, inline; using auto\n", env);
	x->cfg.backend = xsc__backend_asked(x->cfg.backend, x->cfg.flags);
	/* io_uring requests bypass seccomp: with a filter active, a ring only
	 * on the program's or the operator's explicit word, never because
	 * XSC_BACKEND asks for one (include/xsc.h XSC_SECCOMP_URING) */
	const char *ok = (x->cfg.flags & XSC_NO_ENV) ? NULL :
			 getenv("XSC_SECCOMP_ALLOWS_IO_URING");
	bool allowed = (x->cfg.flags & XSC_SECCOMP_URING) || (ok && !strcmp(ok, "1"));
	bool ring = x->cfg.backend == XSC_BACKEND_AUTO || x->cfg.backend == XSC_BACKEND_URING ||
		    x->cfg.backend == XSC_BACKEND_SQPOLL;
	if (x->pr.seccomp && ring && !allowed) {
		snprintf(x->reason, sizeof(x->reason), "a seccomp filter is active and "
			 "io_uring would bypass it (XSC_SECCOMP_ALLOWS_IO_URING=1 if the "
			 "filter allows what io_uring does)");
		x->pr.reason = x->reason;
		XSC_PROBE2(fallback, x->reason, x);
		if (!quiet)
			xsc__say("xsc: warning: %s%s%s; using syscall threads\n", x->reason,
				 x->cfg.backend != XSC_BACKEND_AUTO ? "; ignoring the asked " : "",
				 x->cfg.backend == XSC_BACKEND_URING ? "uring" :
				 x->cfg.backend == XSC_BACKEND_SQPOLL ? "sqpoll" : "");
		x->refused = x->cfg.backend != XSC_BACKEND_AUTO;
		x->cfg.backend = XSC_BACKEND_AUTO;
		return;
	}
	if (x->pr.seccomp && ring && !quiet)
		xsc__say("xsc: warning: a seccomp filter is active and io_uring "
			"bypasses it (allowed explicitly)\n");
	if (x->cfg.backend == XSC_BACKEND_WORKER || x->cfg.backend == XSC_BACKEND_INLINE)
		return;
	if (xsc__uring_setup(x) < 0) {
		XSC_PROBE2(fallback, x->reason, x);
		if (!quiet)
			xsc__say("xsc: io_uring unavailable (%s); falling back to "
				"syscall threads and inline calls\n", x->reason);
	} else if (x->cfg.backend == XSC_BACKEND_SQPOLL && !x->sqpoll) {
		XSC_PROBE2(fallback, x->sq_reason, x);
		if (!quiet)
			xsc__say("xsc: SQPOLL unavailable (%s); using a plain ring\n",
				x->sq_reason);
	}
}

static int fallback(struct xsc *x, const struct xsc_sysdef *d)
{
	if (xsc__row_bound(d) || d->refuse)
		return XSC_BACKEND_INLINE;
	if (x->cfg.backend == XSC_BACKEND_INLINE)
		return XSC_BACKEND_INLINE;
	if (x->cfg.backend == XSC_BACKEND_WORKER || xsc__may_block(d))
		return XSC_BACKEND_WORKER;
	return XSC_BACKEND_INLINE;
}

static const char *missing_op(struct xsc *x, const struct xsc_sysdef *d)
{
	for (int i = 0; i < 2; i++)
		if (d->uring.op[i] && !xsc__uring_has(x, d->uring.op[i]))
			return "the kernel lacks its io_uring opcode";
	return NULL;
}

static void route_one(struct xsc *x, long nr, unsigned *nmissing)
{
	const struct xsc_sysdef *d = &xsc__sys[nr];
	int ring = x->sqpoll ? XSC_BACKEND_SQPOLL : XSC_BACKEND_URING;
	const char *why;

	if (d->refuse) {
		x->head[nr].route = XSC_BACKEND_INLINE;
		x->why[nr] = d->refuse;
		return;
	}
	if (xsc__row_bound(d)) {
		x->head[nr].route = XSC_BACKEND_INLINE;
		x->why[nr] = xsc__thread_why(d);
		return;
	}
	if (!xsc__sys_named(nr)) {
		/* a number newer than the table: whatever it does, the caller
		 * runs it, so it cannot act on the wrong thread */
		x->head[nr].route = XSC_BACKEND_INLINE;
		x->why[nr] = "unknown number: runs in the caller, the kernel decides";
		return;
	}
	if (d->uring.prep && d->cheap && x->cfg.backend == XSC_BACKEND_AUTO &&
	    x->hp->here_async) {
		x->head[nr].route = XSC_BACKEND_INLINE;
		x->why[nr] = x->hp->why_cheap;
		return;
	}
	if (!d->uring.prep) {
		why = "no io_uring form";
	} else if (!x->have_ring) {
		why = x->cfg.backend == XSC_BACKEND_WORKER ? "XSC_BACKEND=worker" :
		      x->cfg.backend == XSC_BACKEND_INLINE ? "XSC_BACKEND=inline" :
		      x->reason[0] ? x->reason : "io_uring unavailable";
	} else if ((why = missing_op(x, d)) != NULL) {
		(*nmissing)++;
	} else {
		x->head[nr].route = (uint8_t)ring;
		x->why[nr] = x->sqpoll && d->uring.no_sqpoll ? d->uring.no_sqpoll :
			     d->uring.note;
		/* the rows AUTO may run in the caller say what decided it */
		if (x->cfg.backend == XSC_BACKEND_AUTO && d->cheap)
			x->why[nr] = x->hp->why_cheap;
		else if (x->cfg.backend == XSC_BACKEND_AUTO && d->cheap_if && !x->pr.seccomp)
			x->why[nr] = x->hp->why_open;
		return;
	}
	x->head[nr].route = (uint8_t)fallback(x, d);
	x->why[nr] = why;
}

int xsc__fallback_route(struct xsc *x, long nr)
{
	return fallback(x, &xsc__sys[nr]);
}

void xsc__route_all(struct xsc *x)
{
	unsigned nmissing = 0;

	x->here_ring = x->hp->here_ring;
	x->here_look = x->hp->here_look;
	for (long nr = 0; nr < XSC_NR_MAX; nr++) {
		route_one(x, nr, &nmissing);
		x->head[nr].sysno = (uint16_t)nr;
		x->head[nr].nargs = (uint8_t)xsc__sys_nargs(&xsc__sys[nr]);
		x->quick[nr] = !xsc__sys[nr].uring.done && !x->cfg.done_cb;
	}
	if (nmissing && !(x->cfg.flags & XSC_QUIET))
		xsc__say("xsc: %u calls with an io_uring form fall back: the "
			"kernel lacks their opcodes (see `xsc info`)\n", nmissing);
}
