/*
 * multicall_rules.c - a chain's rules, the ones every executor of
 * multi-calls shares: what a call's arguments are once its producers
 * have run (forwarding), and what a call's result does to the run
 * (mc_settle: check flags, the loop condition, the iteration bound).
 * The driver (multicall.c) and its executors (the synchronous one there,
 * the ring's in multicall_uring.c) call these; these call neither, so
 * the paths cannot drift apart.
 */
#include "multicall_rules.h"

#include <string.h>
#include <sys/syscall.h>

#include "ucopy.h"

/* The table's chain kind of nr (table.h: .chain), NONE out of range. */
int mc_kind(long nr)
{
	const struct xsc_sysdef *d = xsc__sysdef(nr);
	return d ? d->chain.kind : XSC_CHAIN_NONE;
}

bool mc_is_rw(long nr)
{
	return mc_kind(nr) == XSC_CHAIN_RW || mc_kind(nr) == XSC_CHAIN_PRW;
}

/* ---- forwarding and settling ------------------------------------------ */

int mc_private_src(const struct mc_run *r, unsigned i, int arg)
{
	long v = r->c[i].args[arg];
	unsigned k;

	if (!(r->c[i].fwd >> arg & 1) || REF_SRC(v) != REF_RES)
		return -1;
	k = REF_CALL(v);
	return (r->c[k].flags & XSC_MC_PRIVATE) ? (int)k : -1;
}

static long word(struct mc_run *r, long v, int64_t *out)
{
	unsigned k = REF_CALL(v);
	const char *p = (const char *)r->a[k][REF_SRC(v)] + REF_OFF(v);
	int64_t w = 0;
	int32_t h;

	r->ops++;	/* a checked read: process_vm_readv */
	if (REF_W32(v)) {
		if (xsc__ucopy_in(&h, p, sizeof(h)) < 0)
			return -EFAULT;
		w = h;
	} else if (xsc__ucopy_in(&w, p, sizeof(w)) < 0) {
		return -EFAULT;
	}
	*out = w;
	return 0;
}

long mc_ref_value(struct mc_run *r, long v, int64_t *out)
{
	if (r->c[REF_CALL(v)].ret < 0)
		return -ECANCELED;	/* an error never becomes an argument */
	if (REF_SRC(v) != REF_RES)
		return word(r, v, out);
	*out = r->c[REF_CALL(v)].ret;
	return 0;
}

long mc_resolve(struct mc_run *r, unsigned i, int64_t a[6])
{
	const struct xsc_mc *c = &r->c[i];

	for (int b = 0; b < 6; b++) {
		a[b] = c->args[b];
		if (c->fwd >> b & 1) {
			long err = mc_ref_value(r, c->args[b], &a[b]);
			if (err < 0)
				return err;
		}
	}
	memcpy(r->a[i], a, sizeof(r->a[i]));
	return 0;
}

static bool cond_holds(int op, long v, long ref)
{
	switch (op) {
	case XSC_MC_LE: return v <= ref;
	case XSC_MC_LT: return v < ref;
	case XSC_MC_EQ: return v == ref;
	case XSC_MC_NE: return v != ref;
	case XSC_MC_GE: return v >= ref;
	default: return v > ref;
	}
}

static bool failed(const struct mc_run *r, unsigned i, long ret)
{
	const struct xsc_mc *c = &r->c[i];

	if (!(c->flags & XSC_MC_CHECK))
		return false;
	if (ret < 0)
		return true;
	/* FULL: short transfer = failure (the io_uring link rule) */
	return (c->flags & XSC_MC_FULL) && mc_is_rw(c->nr) && ret < r->a[i][2];
}

static void finish(struct mc_run *r, int why, int ret)
{
	r->stopped = true;
	r->stop = why;
	r->ret = ret;
}

/* The loop ended after call i (by its condition or bound): the rest of
 * that iteration did not run; the epilogue comes next, if any. */
static void end_loop(struct mc_run *r, unsigned i, int why)
{
	for (unsigned j = i + 1; j < r->le; j++)
		r->c[j].ret = -ECANCELED;
	if (r->le == r->n) {
		finish(r, why, (int)r->n);
		return;
	}
	r->loop_end_why = why;
	r->next = r->le;
}

bool mc_next_pos(const struct mc_run *r, unsigned *it, unsigned *i)
{
	if (*i + 1 == r->le && *i >= r->lf) {	/* end of an iteration */
		if (++*it < r->max) {
			*i = r->lf;
			return true;
		}
		*i = r->le;
		return *i < r->n;
	}
	return ++*i < r->n;
}

bool mc_settled(const struct mc_run *r, unsigned it, unsigned k)
{
	/* a prologue or epilogue call runs once: settled once the run is
	 * past it (the body and epilogue come after the whole prologue) */
	if (mc_seg(r, k) != SEG_BODY)
		return r->next > k;
	return it == r->iter && k < r->next && mc_seg(r, r->next) == SEG_BODY;
}

bool mc_settle(struct mc_run *r, unsigned i, long ret)
{
	struct xsc_mc *c = &r->c[i];
	int seg = mc_seg(r, i), k;

	c->ret = ret;
	if ((int)i == r->o->sum_call && ret > 0)
		r->sum += (uint64_t)ret;
	if (c->nr == SYS_close && ret == 0 && (k = mc_private_src(r, i, 0)) >= 0)
		r->closed |= 1ull << k;
	if (failed(r, i, ret)) {
		for (unsigned j = i + 1; j < r->n; j++)
			r->c[j].ret = -ECANCELED;
		if (seg == SEG_BODY)
			r->iter++;	/* the iteration it stopped in counts */
		finish(r, XSC_MC_FAILED, (int)i);
	} else if (r->loop && seg == SEG_BODY && (int)i == r->o->until_call &&
		   cond_holds(r->o->until_op, ret, r->o->until_val)) {
		r->iter++;
		end_loop(r, i, XSC_MC_UNTIL);
	} else if (seg == SEG_BODY && i + 1 == r->le) {
		if (++r->iter >= r->max) {
			end_loop(r, i, r->loop ? XSC_MC_BOUND : XSC_MC_DONE);
		} else {
			r->next = r->lf;
			/* a body's private opens open again; prologue
			 * ones are closed only in the epilogue */
			r->closed &= (1ull << r->lf) - 1;
		}
	} else if (i + 1 == r->n) {
		finish(r, r->loop_end_why, (int)r->n);
	} else {
		r->next = i + 1;
	}
	return r->stopped;
}
