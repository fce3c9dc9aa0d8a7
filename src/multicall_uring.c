/*
 * multicall_uring.c - the io_uring executor of multi-calls: a chain (or
 * several iterations of a loop body) becomes ONE run of SQEs linked with
 * IOSQE_IO_LINK and goes to the kernel in one io_uring_enter.  This file
 * submits each run, collects its results in order, repairs the one that
 * broke the link and resumes; multicall_build.c plans and builds the
 * runs.  The design: docs/multicall.md, "Paths and when each is taken".
 *
 * Rules (why each: that section, "How the uring path stays exact"):
 *  - link only opcodes whose failure breaks the link on this kernel
 *    (tests/t_mc_links.c);
 *  - every stop implies a broken link, so nothing runs past a stop; a
 *    broken link that is not a stop RESUMES: results settled in order,
 *    the breaking one made exact, the rest built and submitted again;
 *  - forward only what io_uring can carry (a private fd as direct slot k,
 *    a read/write count speculated as its producer's full count);
 *  - exact as the single-call translations: a short blocking write's rest
 *    is posted as an ordinary entry (xsc__call_own), never a blocking
 *    call in the caller.
 */
#include "multicall_urun.h"
#include "dispatch.h"
#include "uring.h"

#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rawsys.h"

static __thread struct urun *cur;

void xsc__mc_uring_free(struct xsc *x)
{
	free(x->mc);
	x->mc = NULL;
}

/* ---- submitting and collecting ------------------------------------------- */

void xsc__mc_uring_cqe(struct xsc *x, uint64_t ud, int32_t res, uint32_t flags)
{
	uint32_t gen = (uint32_t)(ud >> 16);
	unsigned j = (unsigned)(ud & 0xffff);

	(void)flags;
	for (struct urun *u = cur; u; u = u->prev)
		if (u->r->x == x && u->gen == gen && j < u->m) {
			u->res[j] = res;
			u->got++;
			return;
		}
}

/* One io_uring_enter submits the run and waits for all of it.  When the
 * ring cannot be entered any more (uring.c xsc__uring_lost), the run is
 * cut to the SQEs the kernel took (an SQPOLL poller may have taken a
 * prefix without the enter): their results settle as usual, and false
 * means it took none.  Either way the chain goes on from r->next on
 * another path. */
static bool enter(struct urun *u)
{
	struct xsc *x = u->r->x;
	int ret;

	u->got = 0;
	x->sq_ready += u->m;
	u->r->submits++;
	if (x->sqpoll) {
		xsc__uring_submit(x);
	} else {
		x->st.crossings++;
		ret = io_uring_submit_and_wait(&x->ring, u->m);
		x->sq_ready = 0;
		if (ret < 0 && ret != -EINTR && ret != -EAGAIN && ret != -EBUSY)
			xsc__uring_lost(x, ret);
	}
	for (bool cut = false;;) {
		if (!x->have_ring && !cut) {
			/* lost in the submit or in a wait: the untaken SQEs
			 * are the tail of the run */
			cut = true;
			if (x->lost_mc_left >= u->m)
				return false;
			u->m -= x->lost_mc_left;
		}
		xsc__uring_reap(x);
		/* others' entries the ring gave back (a retry, the ring lost)
		 * go on now, as between two flushes */
		xsc__reroute(x);
		if (u->got >= u->m)
			break;
		/* a failed SQE of someone else's can stop a submission */
		if (io_uring_sq_ready(&x->ring) > x->sq_ready)
			x->sq_ready = io_uring_sq_ready(&x->ring);
		xsc__uring_wait(x, false, 0, -1);
	}
	if (x->sq_ready)	/* blocking forms of entries reaped meanwhile */
		xsc__uring_submit(x);
	return true;
}

/* The short transfer or failure that broke the link, made exact. */
static long repair(struct urun *u, unsigned j, long res)
{
	struct xsc *x = u->r->x;
	const int64_t *a = u->a[j];
	long nr = u->r->c[u->call[j]].nr;

	if (u->fixed[j])
		return res;
	if (nr == SYS_close && res == -EBADF) {	/* io_uring's own fds */
		x->st.crossings++;
		return xsc__sys1(SYS_close, a[0]);
	}
	if (!mc_is_rw(nr) || res < 0 || res >= a[2])
		return res;
	if (nr == SYS_write && mc_classify(u, a[0], true) == K_PIPE) {
		/* the rest as an ordinary entry: non-blocking attempt, then
		 * the blocking form in the ring, never a blocking write here */
		long more = xsc__call_own(x, SYS_write, a[0], a[1] + res, a[2] - res);
		return more > 0 ? res + more : res;
	}
	if (res > 0 && u->start[j] != -1) {
		/* the position read(2)/write(2) would leave, wherever io_uring
		 * left it (track()) */
		x->st.crossings++;
		if (u->start[j] == -2)
			xsc__sys3(SYS_lseek, a[0], 0, SEEK_END);
		else
			xsc__sys3(SYS_lseek, a[0], u->start[j] + res, SEEK_SET);
	}
	return res;
}

/* Settles the submission's results in order, up to the call that broke
 * the link. */
static void collect(struct urun *u)
{
	struct mc_run *r = u->r;

	for (unsigned j = 0; j < u->m; j++) {
		unsigned i = u->call[j];
		long res = u->res[j];
		bool brk = res < 0 || (mc_is_rw(r->c[i].nr) && res < u->a[j][2]);
		if (brk)
			res = repair(u, j, res);
		if (mc_urun_settle(u, i, res, u->a[j], u->fixed[j]))
			return;
		if (brk) {
			if (j + 1 < u->m)
				r->resumes++;
			return;
		}
	}
	if (r->loop && u->k_iters * 2 * (r->le - r->lf) + r->n <= CAP)
		u->k_iters *= 2;	/* no break: take bigger steps */
}

/* A chain that stopped before closing a private fd leaves it open, as the
 * synchronous calls would: install it as a normal fd (its number goes to
 * the open's slot) and free the direct slot. */
static void install_left(struct urun *u)
{
	struct mc_run *r = u->r;
	unsigned m = 0;

	u->gen = ++((struct mc_state *)r->x->mc)->gen;
	for (unsigned k = 0; k < r->n; k++)
		m += 2 * u->slot_open[k];
	if (!m || !xsc__sq_room(r->x, m))
		return;		/* none, or the ring is lost: its files go with it */
	m = 0;
	for (unsigned k = 0; k < r->n; k++) {
		if (!u->slot_open[k])
			continue;
		struct io_uring_sqe *sqe = io_uring_get_sqe(&r->x->ring);
		io_uring_prep_rw(OP_FIXED_FD_INSTALL, sqe, (int)k, NULL, 0, 0);
		sqe->flags |= IOSQE_FIXED_FILE;
		sqe->rw_flags = u->cloexec[k] ? 0 : FIXED_FD_NO_CLOEXEC;
		io_uring_sqe_set_data64(sqe, XSC_UD_MC | (uint64_t)u->gen << 16 | m);
		u->call[m++] = (uint8_t)k;
		sqe = io_uring_get_sqe(&r->x->ring);
		io_uring_prep_close_direct(sqe, k);
		io_uring_sqe_set_data64(sqe, XSC_UD_MC | (uint64_t)u->gen << 16 | m);
		u->call[m++] = (uint8_t)k;
	}
	if (!m)
		return;
	u->m = m;
	if (!enter(u))
		return;		/* the ring's files go with the ring */
	for (unsigned j = 0; j < m; j += 2)
		r->c[u->call[j]].ret = u->res[j];
}

static bool register_slots(struct urun *u)
{
	struct mc_state *st = u->r->x->mc;
	bool need = false;

	for (unsigned i = 0; i < u->r->n; i++)
		need |= (u->r->c[i].flags & XSC_MC_PRIVATE) != 0;
	if (!need || st->files)
		return true;
	u->r->x->st.crossings++;
	struct io_uring_rsrc_register reg = {
		.nr = XSC_MC_MAX, .flags = IORING_RSRC_REGISTER_SPARSE,
	};
	if (xsc__uring_register(u->r->x, IORING_REGISTER_FILES2, &reg, sizeof(reg)) < 0) {
		st->files_failed = true;
		return false;
	}
	st->files = true;
	return true;
}

void xsc__mc_uring_run(struct mc_run *r)
{
	struct mc_state *st = r->x->mc;
	struct urun *u = calloc(1, sizeof(*u));

	if (!u)
		return;		/* declined: the caller runs it another way */
	u->r = r;
	unsigned body = r->le - r->lf, once = r->n - body;

	u->k_iters = r->o->batch ? r->o->batch : 4;
	if (u->k_iters * body + once > CAP)
		u->k_iters = (CAP - once) / body ? (CAP - once) / body : 1;
	u->prev = cur;
	cur = u;
	if (r->x->sq_ready) {	/* others' SQEs first: one could stop a submit */
		xsc__uring_submit(r->x);
		xsc__reroute(r->x);
	}
	if (register_slots(u)) {
		while (!r->stopped && r->x->have_ring) {
			u->gen = ++st->gen;
			u->m = mc_build(u);
			if (u->m) {
				if (!enter(u))
					break;	/* lost: r->next goes on elsewhere */
				collect(u);
			}
		}
		if (r->x->have_ring)
			install_left(u);
	}
	cur = u->prev;
	free(u);
}
