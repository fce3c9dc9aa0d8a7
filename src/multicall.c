/*
 * multicall.c - the multi-call driver: a chain of system calls that runs
 * in order, stops at the first failed checked call and forwards results,
 * in as few kernel crossings as possible (System Call Clustering, section
 * 2.2, with c-blake/batch's forward-only word copy), and the looped
 * multi-calls of the paper's section 3.4.  The API: docs/multicall.md.
 *
 * Rules:
 *  - everything is validated before anything runs: references name
 *    earlier calls only (so a chain runs at most n calls per iteration and
 *    max_iter iterations, and cannot hang), flags and loop options;
 *  - three executors produce the results (uring: multicall_uring.c;
 *    worker: the whole chain as ONE entry, XSC_NR_MC, on a syscall thread;
 *    inline: the plain calls in the caller), and mc_settle()
 *    (multicall_rules.c) applies the rules to each result in order, the
 *    same code for all; the path: docs/multicall.md, "Paths and when each
 *    is taken" (on an auto handle by expected time: multicall_cost.c);
 *  - the layers below reach this module only through the ops it registers
 *    (internal.h struct xsc_mc_ops): docs/design.md, "Layers".
 */
#include "multicall.h"
#include "multicall_uring.h"
#include "dispatch.h"
#include "exec.h"
#include "handle.h"
#include "probe.h"

#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>

static const char *const path_why[] = {
	[XSC_MC_URING] = "io_uring: linked SQEs",
	[XSC_MC_WORKER] = "one hand-off to a syscall thread",
	[XSC_MC_INLINE] = "plain calls in the caller's thread",
};

XSC_EXPORT void xsc_mc_opts_init(struct xsc_mc_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->sum_call = -1;
}

static bool is_open(long nr)
{
	return mc_kind(nr) == XSC_CHAIN_OPEN;
}

/* ---- validation ------------------------------------------------------ */

static int check_ref(long v, unsigned i)
{
	if (v < 0 || REF_CALL(v) >= i || (v & 0xe000) || REF_OFF(v) >= REF_OFF_MAX)
		return -EINVAL;	/* not earlier, or reserved bits set */
	if (REF_SRC(v) == REF_RES)
		return REF_OFF(v) || REF_W32(v) ? -EINVAL : 0;
	return REF_SRC(v) > 5 ? -EINVAL : 0;
}

/* A private open must be closed by a later close that names its result,
 * and its result may feed only fd arguments (args[0]) of the calls
 * before that close, in the same part of the chain (an open in the loop
 * body is closed in the body: every iteration opens it again), or, for
 * a prologue open, in the epilogue. */
static int check_private(const struct mc_run *r, unsigned k)
{
	const struct xsc_mc *c = r->c;
	bool closed = false;
	int seg = mc_seg(r, k);

	if (!is_open(c[k].nr))
		return -EINVAL;
	for (unsigned j = k + 1; j < r->n; j++)
		for (int b = 0; b < 6; b++) {
			long v = c[j].args[b];
			if (!(c[j].fwd >> b & 1) || REF_CALL(v) != k)
				continue;
			if (b != 0 || REF_SRC(v) != REF_RES || closed)
				return -EINVAL;
			closed = c[j].nr == SYS_close;
			if (closed && mc_seg(r, j) != seg &&
			    !(seg == SEG_PRO && mc_seg(r, j) == SEG_EPI))
				return -EINVAL;
		}
	return closed ? 0 : -EINVAL;
}

static int check_loop(const struct xsc_mc_opts *o, unsigned n)
{
	unsigned le = o->loop_end ? (unsigned)o->loop_end : n;

	if (o->sum_call < -1 || o->sum_call >= (int)n)
		return -EINVAL;
	if (!o->max_iter)
		return o->loop_first || o->loop_end ? -EINVAL : 0;
	if (o->max_iter > XSC_MC_ITER_MAX)
		return -E2BIG;
	if (o->loop_first < 0 || o->loop_end < 0 || le > n ||
	    (unsigned)o->loop_first >= le)
		return -EINVAL;
	if (o->until_call < o->loop_first || o->until_call >= (int)le ||
	    o->until_op < XSC_MC_LE || o->until_op > XSC_MC_GT)
		return -EINVAL;
	return 0;
}

static int validate(struct mc_run *r)
{
	const unsigned known = XSC_MC_CHECK | XSC_MC_FULL | XSC_MC_PRIVATE;
	const struct xsc_mc *c = r->c;
	int err = check_loop(r->o, r->n);

	if (err < 0)
		return err;
	r->loop = r->o->max_iter > 0;
	r->lf = r->loop ? (unsigned)r->o->loop_first : 0;
	r->le = r->loop && r->o->loop_end ? (unsigned)r->o->loop_end : r->n;
	r->max = r->loop ? r->o->max_iter : 1;
	for (unsigned i = 0; i < r->n; i++) {
		if ((c[i].flags & ~known) || (c[i].fwd & ~0x3fu))
			return -EINVAL;
		for (int b = 0; b < 6; b++) {
			if (!(c[i].fwd >> b & 1))
				continue;
			if (check_ref(c[i].args[b], i) < 0)
				return -EINVAL;
			/* the epilogue runs after the loop: no body values */
			if (mc_seg(r, i) == SEG_EPI &&
			    mc_seg(r, REF_CALL(c[i].args[b])) == SEG_BODY)
				return -EINVAL;
		}
		if ((c[i].flags & XSC_MC_PRIVATE) && check_private(r, i) < 0)
			return -EINVAL;
	}
	return 0;
}

/* ---- the synchronous executor (inline, and on a syscall thread) --------- */

static long exec_one(struct mc_run *r, unsigned i)
{
	struct xsc_entry e = { 0 };
	long nr = r->c[i].nr, ret;
	int64_t a[6];

	ret = mc_resolve(r, i, a);
	if (ret < 0)
		return ret;
	if (nr < 0 || nr >= XSC_NR_MAX)
		return -ENOSYS;
	if (nr == XSC_NR_MC)
		return -EINVAL;
	e.sysno = (uint16_t)nr;
	memcpy(e.args, a, sizeof(e.args));
	if (nr != XSC_NR_NOP)
		r->ops++;
	return xsc__exec_sync(&e);
}

static void run_sync(struct mc_run *r)
{
	while (!r->stopped)
		mc_settle(r, r->next, exec_one(r, r->next));
}

/* A chain entry carries its run and a per-process cookie, so an entry a
 * program posts with number XSC_NR_MC by hand is refused, not obeyed. */
static long cookie(void)
{
	static long c;

	if (!c) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		c = (ts.tv_nsec ^ (long)&c ^ (ts.tv_sec << 32)) | 1;
	}
	return c;
}

/* A chain entry (XSC_NR_MC) on the thread that runs it (exec.c). */
static long run_entry(const struct xsc_entry *e)
{
	struct mc_run *r = (struct mc_run *)e->args[0];

	if (e->args[1] != (e->args[0] ^ cookie()) || !r)
		return -ENOSYS;
	run_sync(r);
	return 0;
}

/* One hand-off: the chain is one entry on a syscall thread.  0, or -errno
 * if it could not be posted (the caller then runs it inline). */
static int run_worker(struct mc_run *r)
{
	struct xsc *x = r->x;
	long a[6] = { (long)r, (long)r ^ cookie(), 0, 0, 0, 0 }, ret;
	int id, err;

	id = xsc_post_args(x, XSC_NR_MC, a, 0);
	if (id < 0)
		return id;
	x->ent[id].route = XSC_BACKEND_WORKER;
	xsc_flush(x);
	while ((err = xsc_take(x, id, &ret)) == -EINTR)
		;	/* the chain's memory is ours: wait for it to finish */
	return err;
}

/* ---- choosing a path ------------------------------------------------- */

struct scan {
	bool thread;	/* a call depends on the calling thread */
	bool worker;	/* a call routes to the syscall threads */
};

static struct scan scan_routes(const struct mc_run *r)
{
	struct scan s = { false, false };

	for (unsigned i = 0; i < r->n; i++) {
		long nr = r->c[i].nr;
		if (nr < 0 || nr >= XSC_NR_MAX)
			continue;
		int b = r->x->head[nr].route;
		if (xsc__row_bound(&xsc__sys[nr]) || xsc__sys[nr].bound)
			s.thread = true;	/* by row, or by arguments */
		if (b == XSC_BACKEND_URING || b == XSC_BACKEND_SQPOLL)
			b = xsc__fallback_route(r->x, nr);
		s.worker |= b == XSC_BACKEND_WORKER;
	}
	return s;
}

/* AUTO on an auto handle chooses by expected time; on a handle whose
 * backend is forced it follows that backend. */
static bool by_time(const struct mc_run *r, int want)
{
	return want == XSC_MC_AUTO && r->x->cfg.backend == XSC_BACKEND_AUTO;
}

/* Whether the ring is expected to run the chain sooner than plain calls
 * (the model: multicall_cost.c).  A loop is costed over the iterations
 * one submission carries once the unrolling has grown (the loop is
 * assumed to run that long if its bound allows: loops are for long runs);
 * its one-time costs are charged to those iterations. */
static bool uring_faster(const struct mc_run *r, const struct mc_cost *c)
{
	const struct mc_model *m = xsc__mc_model(r->x);
	uint64_t body = r->le - r->lf, once = r->n - body, k = 1;
	uint64_t calls, enters, tu, ti;

	if (r->loop) {
		k = (MC_SQES - once) / body;
		k = k > r->max ? r->max : k ? k : 1;
	}
	calls = once + k * body;
	/* an epilogue comes after the loop's end, a link break: one more */
	enters = 1 + c->stops[SEG_PRO] + k * c->stops[SEG_BODY] + c->stops[SEG_EPI] +
		 (r->loop && r->le < r->n);
	tu = enters * m->tenter + c->sync * m->tsys + calls * m->top;
	ti = calls * m->tsys;
	return tu < ti;
}

/* The path when the ring does not run the chain.  By time the worker
 * path is the inline one plus a hand-off, so never; by the routes it is
 * taken when a call routes to the syscall threads. */
static int other_path(struct mc_run *r, int want, bool worker_routes)
{
	if (want == XSC_MC_INLINE || by_time(r, want))
		return XSC_MC_INLINE;
	if (want != XSC_MC_WORKER && !worker_routes)
		return XSC_MC_INLINE;
	if (r->x->cfg.done_cb) {
		r->why = "done_cb set: the chain entry would go to the callback";
		return XSC_MC_INLINE;
	}
	return XSC_MC_WORKER;
}

static int choose(struct mc_run *r, int want)
{
	struct scan s = scan_routes(r);
	struct mc_cost cost = { 0 };
	const char *uwhy = NULL;
	bool uok, take;

	if (s.thread) {
		r->why = "a call depends on the calling thread";
		return XSC_MC_INLINE;
	}
	uok = want != XSC_MC_WORKER && want != XSC_MC_INLINE &&
	      xsc__mc_uring_ok(r, &cost, &uwhy);
	if (!uok || want == XSC_MC_URING)
		take = uok;
	else if (by_time(r, want))
		take = uring_faster(r, &cost);
	else	/* fewer crossings: the classification and the enters */
		take = r->loop || cost.sync + cost.stops[SEG_PRO] +
			cost.stops[SEG_BODY] + cost.stops[SEG_EPI] + 1 < r->n;
	if (take) {
		r->why = path_why[XSC_MC_URING];
		return XSC_MC_URING;
	}
	r->why = !uok ? uwhy : by_time(r, want) ?
		 "plain calls: expected to take less time than io_uring" :
		 "io_uring would not save crossings";
	return other_path(r, want, s.worker);
}

/* ---- the entry points ------------------------------------------------- */

/* What the layers under the module reach it by (internal.h). */
static const struct xsc_mc_ops ops = {
	.run = run_entry,
	.cqe = xsc__mc_uring_cqe,
	.close = xsc__mc_uring_free,
};

static void report(struct mc_run *r, int path, uint64_t cross0,
		   struct xsc_mc_report *rep)
{
	for (unsigned k = 0; k < r->n; k++)
		if ((r->closed >> k & 1) && r->c[k].ret >= 0)
			r->c[k].ret = 0;	/* private fd, closed by the chain */
	if (!rep)
		return;
	memset(rep, 0, sizeof(*rep));
	rep->path = path;
	rep->reason = r->why ? r->why : path_why[path];
	rep->crossings = (unsigned)(r->x->st.crossings - cross0);
	rep->submits = r->submits;
	rep->resumes = r->resumes;
	rep->iters = r->iter;
	rep->stop = r->stop;
	rep->sum = r->sum;
}

static int run(struct mc_run *r, int want, struct xsc_mc_report *rep)
{
	uint64_t cross0 = r->x->st.crossings;
	int path = choose(r, want);

	for (unsigned i = 0; i < r->n; i++)
		r->c[i].ret = -ECANCELED;
	if (path == XSC_MC_URING) {
		xsc__mc_uring_run(r);
		xsc__reroute(r->x);	/* what a ring lost under it gave back */
		/* declined before running anything, or the ring was lost
		 * mid-chain: the rest goes on from r->next */
		if (!r->stopped)
			path = other_path(r, want, scan_routes(r).worker);
	}
	if (path == XSC_MC_WORKER && run_worker(r) < 0)
		path = XSC_MC_INLINE;
	if (path == XSC_MC_INLINE && !r->stopped) {
		run_sync(r);
		r->x->st.crossings += r->ops;
	}
	report(r, path, cross0, rep);
	return r->ret;
}

XSC_EXPORT int xsc_multicall_ex(struct xsc *x, struct xsc_mc *calls, unsigned n,
				const struct xsc_mc_opts *o,
				struct xsc_mc_report *rep)
{
	struct xsc_mc_opts def;
	struct mc_run *r;
	int ret;

	if (!x || (!calls && n))
		return -EINVAL;
	if (xsc__foreign(x))
		return -EBADFD;
	if (!o) {
		xsc_mc_opts_init(&def);
		o = &def;
	}
	if (n > XSC_MC_MAX)
		return -E2BIG;
	if (n == 0)
		return 0;
	/* before the chain can make an entry or an SQE of its own */
	atomic_store_explicit(&xsc__mc_ops, &ops, memory_order_release);
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->x = x;
	r->c = calls;
	r->n = n;
	r->o = o;
	ret = validate(r);
	if (ret == 0)
		ret = run(r, o->path, rep);
	free(r);
	return ret;
}

XSC_EXPORT int xsc_multicall(struct xsc *x, struct xsc_mc *calls, unsigned n)
{
	return xsc_multicall_ex(x, calls, n, NULL, NULL);
}
