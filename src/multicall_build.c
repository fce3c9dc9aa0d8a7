/*
 * multicall_build.c - planning a chain's run on the ring and building its
 * submissions: whether io_uring can carry the chain at all and what that
 * costs, each fd's kind (classified once per run), each call's arguments
 * and whether it goes in the ring, runs here in chain order, or ends the
 * build, and the SQEs, linked.  Why each rule: the top of
 * multicall_uring.c.
 */
#include "multicall_urun.h"
#include "dispatch.h"
#include "exec.h"
#include "rawio.h"
#include "uring.h"
#include "uring_prep.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rawsys.h"

/* plan() verdicts; negative values are results that need no call */
enum { PLAN_BOUNDARY = 0, PLAN_QUEUE = 1, PLAN_SYNC = 2 };

/* The linked SQE's opcode (the table's .chain), or -1: not linkable. */
static int opcode(long nr)
{
	return mc_kind(nr) ? xsc__sys[nr].chain.op : -1;
}

static bool positional(long nr)
{
	return mc_kind(nr) == XSC_CHAIN_PRW;
}

static struct mc_state *state(struct xsc *x)
{
	if (!x->mc)
		x->mc = calloc(1, sizeof(struct mc_state));
	return x->mc;
}

/* ---- is the chain worth the ring? ------------------------------------ */

/* A reference io_uring can carry without waiting for its producer. */
static bool speculable(const struct mc_run *r, unsigned i, int b)
{
	long v = r->c[i].args[b];
	const struct xsc_mc *p = &r->c[REF_CALL(v)];

	if (REF_SRC(v) != REF_RES)
		return false;
	if (p->flags & XSC_MC_PRIVATE)
		return true;	/* validated: an fd argument */
	/* a count speculated from the producer's SQE, which sits i - k
	 * SQEs earlier only within one part of the chain */
	return b == 2 && mc_is_rw(r->c[i].nr) && mc_is_rw(p->nr) &&
	       mc_seg(r, REF_CALL(v)) == mc_seg(r, i);
}

/* Crossings the classification of literal fds will cost. */
static unsigned fd_cost(const struct mc_run *r)
{
	unsigned cost = 0;

	for (unsigned i = 0; i < r->n; i++) {
		const struct xsc_mc *c = &r->c[i];
		bool seen = false;
		if (!mc_is_rw(c->nr) || (c->fwd & 1))
			continue;
		for (unsigned j = 0; j < i && !seen; j++)
			seen = mc_is_rw(r->c[j].nr) && !(r->c[j].fwd & 1) &&
			       r->c[j].args[0] == c->args[0];
		if (!seen)
			cost += 1 + (c->nr != SYS_read);
	}
	return cost;
}

/* While a private fd sits in a direct slot the fd table must not change
 * (no other open or close): if the chain stopped before closing it, the
 * installed number must be the one open(2) would have returned. */
static bool private_quiet(const struct mc_run *r, unsigned k)
{
	for (unsigned j = k + 1; j < r->n; j++) {
		long nr = r->c[j].nr;
		int src = mc_private_src(r, j, 0);
		if (nr == SYS_close && src == (int)k)
			return true;
		if ((nr == SYS_open || nr == SYS_openat) &&
		    !(r->c[j].flags & XSC_MC_PRIVATE))
			return false;
		if (nr == SYS_close && src < 0)
			return false;
	}
	return true;
}

bool xsc__mc_uring_ok(struct mc_run *r, struct mc_cost *cost, const char **why)
{
	struct xsc *x = r->x;
	struct mc_state *st = state(x);

	if (!x->have_ring || !st) {
		*why = "no io_uring ring on this handle";
		return false;
	}
	memset(cost, 0, sizeof(*cost));
	cost->sync = fd_cost(r);
	for (unsigned i = 0; i < r->n; i++) {
		const struct xsc_mc *c = &r->c[i];
		int op = opcode(c->nr);
		if (op < 0 || !xsc__uring_has(x, (unsigned)op)) {
			*why = "a call without a linkable io_uring form (read, write, "
			       "pread64, pwrite64, open, openat, close, fsync, fdatasync)";
			return false;
		}
		if ((c->flags & XSC_MC_PRIVATE) &&
		    (st->files_failed || !xsc__uring_has(x, OP_FIXED_FD_INSTALL) ||
		     (c->fwd & 0x1e) || !private_quiet(r, i) ||
		     (c->args[c->nr == SYS_open ? 1 : 2] & O_NONBLOCK))) {
			*why = "a private open io_uring cannot hold in a direct slot";
			return false;
		}
		if (mc_is_rw(c->nr) && !(c->fwd & 4) && !FITS_U32(c->args[2])) {
			*why = "a count above 4 GiB";
			return false;
		}
		for (int b = 0; b < 6; b++)
			if ((c->fwd >> b & 1) && !speculable(r, i, b))
				cost->stops[mc_seg(r, i)]++;	/* one more enter */
	}
	return true;
}

/* ---- fd classification -------------------------------------------------- */

static int lookup(struct urun *u, int fd)
{
	for (unsigned i = 0; i < u->ncls; i++)
		if (u->cls_fd[i] == fd)
			return (int)i;
	return -1;
}

static void uncache(struct urun *u, long fd)
{
	int i = lookup(u, (int)fd);

	if (i >= 0)
		u->cls_fd[i] = -1;
}

int mc_classify(struct urun *u, long fd, bool need_type)
{
	struct xsc *x = u->r->x;
	int i = lookup(u, (int)fd), kind;
	struct stat sb;
	long fl;

	if (fd != (int)fd)
		return K_BAD;
	if (i >= 0 && (u->cls_kind[i] != K_BLOCKING || !need_type))
		return u->cls_kind[i];
	x->st.crossings++;
	fl = xsc__sys3(SYS_fcntl, fd, F_GETFL, 0);
	if (fl < 0) {
		kind = K_BAD;	/* not cached: an earlier call may open it */
		return kind;
	}
	kind = K_BLOCKING;
	if ((fl & O_NONBLOCK) || need_type) {
		x->st.crossings++;
		if (xsc__sys2(SYS_fstat, fd, &sb) == 0 &&
		    (S_ISREG(sb.st_mode) || S_ISBLK(sb.st_mode)))
			kind = K_REG;
		else
			kind = (fl & O_NONBLOCK) ? K_NB : K_PIPE;
	}
	if (i < 0 && u->ncls < NCLS)
		i = (int)u->ncls++;
	if (i >= 0) {
		u->cls_fd[i] = (int)fd;
		u->cls_kind[i] = (uint8_t)kind;
		u->cls_append[i] = (fl & O_APPEND) != 0;
		u->cls_pos_ok[i] = false;
	}
	return kind;
}

/* ---- building a submission ----------------------------------------------- */

/* Resolves reference b of call i for the SQE at index m of a build that
 * starts at the run's position: 1 done, 0 boundary, < 0 no-run result. */
static long ref(struct urun *u, unsigned it, unsigned i, int b, unsigned m,
		int64_t *out, bool *fixed)
{
	struct mc_run *r = u->r;
	long v = r->c[i].args[b];
	unsigned k = REF_CALL(v);
	bool settled = mc_settled(r, it, k);

	if (r->c[k].flags & XSC_MC_PRIVATE) {
		if (settled && r->c[k].ret < 0)
			return -ECANCELED;
		*out = k;
		*fixed = true;
		return 1;
	}
	if (!settled) {
		/* the producer must be queued in this build, i - k SQEs back */
		if (!speculable(r, i, b) || m < i - k || u->call[m - (i - k)] != k)
			return 0;
		*out = u->a[m - (i - k)][2];	/* the producer's full count */
		return 1;
	}
	long err = mc_ref_value(r, v, out);
	return err < 0 ? err : 1;
}

static int plan(struct urun *u, unsigned it, unsigned i, unsigned m,
		int64_t a[6], bool *fixed)
{
	const struct xsc_mc *c = &u->r->c[i];
	long nr = c->nr;

	*fixed = false;
	for (int b = 0; b < 6; b++) {
		a[b] = c->args[b];
		if (c->fwd >> b & 1) {
			long p = ref(u, it, i, b, m, &a[b], fixed);
			if (p <= 0)
				return (int)p;
		}
	}
	/* not on an SQPOLL ring (the row's .uring.no_sqpoll: a close's file
	 * would be released after its CQE): here, in chain order.  A
	 * private fd's close has no other form. */
	if (u->r->x->sqpoll && xsc__sys[nr].uring.no_sqpoll && !*fixed)
		return PLAN_SYNC;
	if (!mc_is_rw(nr))
		return PLAN_QUEUE;
	if (positional(nr) && a[3] < 0)
		return -EINVAL;		/* pread64/pwrite64 check it first */
	if (*fixed)	/* counts > 4 GiB: see docs/multicall.md */
		return FITS_U32(a[2]) ? PLAN_QUEUE : -EINVAL;
	if (!FITS_U32(a[2]))
		return PLAN_SYNC;
	/* the type of a read's fd too: its position is tracked (track()) */
	int kind = mc_classify(u, a[0], true);
	if (kind == K_NB || (positional(nr) && kind != K_REG))
		return PLAN_SYNC;
	return PLAN_QUEUE;
}

static void prep_open(struct urun *u, struct io_uring_sqe *sqe, unsigned i,
		      long dfd, long path, long flags, long mode)
{
	if (!(u->r->c[i].flags & XSC_MC_PRIVATE)) {
		xsc__prep_open_sqe(sqe, dfd, (const char *)path, flags, mode);
		return;
	}
	/* direct descriptors refuse O_CLOEXEC; it applies at install */
	u->cloexec[i] = flags & O_CLOEXEC;
	io_uring_prep_openat_direct(sqe, (int)dfd, (const char *)path,
				    (int)(flags & ~(long)O_CLOEXEC), (mode_t)mode, i);
	if (xsc__open_may_wait(flags))	/* as xsc__prep_open_sqe */
		sqe->flags |= IOSQE_ASYNC;
}

/* Call i's SQE (its arguments, forwarded ones filled in, at u->a[j]),
 * from the row's .chain: the opcode, the kind that says where the
 * arguments go, and the op flags. */
static void prep(struct urun *u, unsigned j, unsigned i)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&u->r->x->ring);
	const int64_t *a = u->a[j];
	long nr = u->r->c[i].nr;
	const struct xsc_sysdef *d = &xsc__sys[nr];
	int fd = (int)a[0];
	char k[6];

	switch (d->chain.kind) {
	case XSC_CHAIN_RW: case XSC_CHAIN_PRW:
		io_uring_prep_rw(d->chain.op, sqe, fd, (const void *)a[1], (unsigned)a[2],
				 d->chain.kind == XSC_CHAIN_RW ? (uint64_t)-1 : (uint64_t)a[3]);
		break;
	case XSC_CHAIN_OPEN:	/* open(path, ...) or openat(dirfd, path, ...) */
		xsc__sys_akinds(d, k);
		if (k[0] == XSC_A_FD)
			prep_open(u, sqe, i, a[0], a[1], a[2], a[3]);
		else
			prep_open(u, sqe, i, AT_FDCWD, a[0], a[1], a[2]);
		break;
	case XSC_CHAIN_CLOSE:
		if (u->fixed[j])
			io_uring_prep_close_direct(sqe, (unsigned)fd);
		else
			io_uring_prep_close(sqe, fd);
		break;
	case XSC_CHAIN_SYNC:
		io_uring_prep_fsync(sqe, fd, d->chain.flags);
		break;
	case XSC_CHAIN_NOP:
		io_uring_prep_nop(sqe);
		break;
	default:
		/* mc_link_op() said it links: only rows with a .chain */
		xsc__say("xsc: multi-call: %s has no linked form (.chain)\n",
			 xsc_syscall_name(nr));
		abort();
	}
	if (u->fixed[j] && d->chain.kind != XSC_CHAIN_CLOSE)
		sqe->flags |= IOSQE_FIXED_FILE;
	sqe->flags |= IOSQE_IO_LINK;
	io_uring_sqe_set_data64(sqe, XSC_UD_MC | (uint64_t)u->gen << 16 | j);
}

/* Does the loop condition holding after this SQE imply a broken link?
 * If not, the build must end after it. */
static bool cond_breaks(const struct urun *u, unsigned j, unsigned i)
{
	const struct xsc_mc_opts *o = u->r->o;
	long cnt = (long)u->a[j][2], v = o->until_val;

	if (!u->r->loop || (int)i != o->until_call)
		return true;
	if (!mc_is_rw(u->r->c[i].nr))
		return false;
	switch (o->until_op) {
	case XSC_MC_LE: case XSC_MC_EQ: return v < cnt;
	case XSC_MC_LT: return v <= cnt;
	default: return false;
	}
}

bool mc_urun_settle(struct urun *u, unsigned i, long ret, const int64_t a[6],
		    bool fixed)
{
	struct mc_run *r = u->r;
	long nr = r->c[i].nr;

	memcpy(r->a[i], a, sizeof(r->a[i]));
	if (r->c[i].flags & XSC_MC_PRIVATE)
		u->slot_open[i] = ret >= 0;
	else if ((nr == SYS_open || nr == SYS_openat) && ret >= 0)
		uncache(u, ret);	/* the number may be reused */
	if (nr == SYS_close && ret == 0) {
		if (fixed)
			u->slot_open[a[0]] = false;
		else
			uncache(u, a[0]);
	}
	return mc_settle(r, i, ret);
}

static long run_one_sync(struct urun *u, const int64_t a[6], long nr)
{
	struct xsc_entry e = { 0 };

	e.sysno = (uint16_t)nr;
	memcpy(e.args, a, sizeof(e.args));
	if (u->r->x->sqpoll && xsc__sys[nr].uring.no_sqpoll) {
		xsc__sqpoll_barrier(u->r->x);	/* a close: after the poller let go */
		xsc__reroute(u->r->x);	/* what a ring lost there gave back */
	}
	u->r->x->st.crossings++;
	return xsc__exec_sync(&e);
}

/* Where read/write SQE j starts in its file, for repair(): io_uring does
 * not always move the file position when a transfer stops short.  When
 * io_uring's first, non-blocking try moved some bytes and its retry
 * failed (at a fault), it leaves the position where it was; when the
 * transfer ran blocking in one go (a link's head goes to io-wq) it moves
 * it as read(2) does (both measured on 6.18).  So the position of each
 * regular file is read once per build, before its first read or write,
 * and each SQE's start is that plus what the SQEs before it move if they
 * are whole: a short one breaks the link, and the SQEs behind it do not
 * run.  -1: no position to keep (pipes, sockets, direct descriptors),
 * -2: O_APPEND write (it ends at the end of the file). */
static int64_t track(struct urun *u, unsigned m, unsigned i)
{
	long nr = u->r->c[i].nr;
	const int64_t *a = u->a[m];
	int k;

	if (u->fixed[m] || !mc_is_rw(nr) || positional(nr) ||
	    (k = lookup(u, (int)a[0])) < 0 || u->cls_kind[k] != K_REG)
		return -1;
	if (nr == SYS_write && u->cls_append[k])
		return -2;
	if (!u->cls_pos_ok[k]) {
		u->r->x->st.crossings++;
		long pos = xsc__sys3(SYS_lseek, a[0], 0, SEEK_CUR);
		if (pos < 0)
			return -1;
		u->cls_pos[k] = pos;
		u->cls_adv[k] = 0;
		u->cls_pos_ok[k] = true;
	}
	int64_t start = u->cls_pos[k] + u->cls_adv[k];
	u->cls_adv[k] += a[2];
	return start;
}

/* The positions read for a build hold for it alone. */
static void forget_positions(struct urun *u)
{
	for (unsigned k = 0; k < u->ncls; k++)
		u->cls_pos_ok[k] = false;
}

/* Queues SQEs from the run's position; returns how many (0 once the run
 * stopped while settling calls that needed no SQE). */
unsigned mc_build(struct urun *u)
{
	struct mc_run *r = u->r;
	unsigned space, m = 0;
	unsigned it = r->iter, i = r->next;
	unsigned it_end = r->iter + u->k_iters;
	bool more = true;

	/* room for a few SQEs at least: the SQ holds a batch (uring.c), and
	 * other entries' SQEs may wait in it */
	if (!xsc__sq_room(r->x, 8))
		return 0;	/* the ring is lost: enter() says so */
	space = io_uring_sq_space_left(&r->x->ring);
	if (space > CAP)
		space = CAP;
	if (it_end > r->max)
		it_end = r->max;
	forget_positions(u);
	while (more && m < space && !r->stopped) {
		int64_t a[6];
		bool fixed;
		if (mc_seg(r, i) == SEG_BODY && it >= it_end)
			break;
		int p = plan(u, it, i, m, a, &fixed);
		if (p == PLAN_BOUNDARY || (m && p != PLAN_QUEUE))
			break;
		if (p != PLAN_QUEUE) {	/* first of the build: settle here */
			long ret = p < 0 ? p : run_one_sync(u, a, r->c[i].nr);
			mc_urun_settle(u, i, ret, a, fixed);
			forget_positions(u);	/* it may have moved one */
			it = r->iter;
			i = r->next;
			continue;
		}
		memcpy(u->a[m], a, sizeof(a));
		u->call[m] = (uint8_t)i;
		u->fixed[m] = fixed;
		u->start[m] = track(u, m, i);
		prep(u, m, i);
		m++;
		if (!cond_breaks(u, m - 1, i))
			break;
		more = mc_next_pos(r, &it, &i);
	}
	if (m) {
		/* The last SQE ends the link.  One that still says IO_LINK
		 * leaves the link open at the end of the submission, and the
		 * kernel then runs the whole chain on io-wq: 5-6 us more per
		 * submission here, and a close whose file was released after
		 * its CQE. */
		struct io_uring_sq *sq = &r->x->ring.sq;
		sq->sqes[(sq->sqe_tail - 1) & sq->ring_mask].flags &= ~IOSQE_IO_LINK;
	}
	return r->stopped ? 0 : m;
}
