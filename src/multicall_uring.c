/*
 * multicall_uring.c - the io_uring executor of multi-calls: a chain (or
 * several iterations of a loop body) becomes ONE run of SQEs linked with
 * IOSQE_IO_LINK and goes to the kernel in one io_uring_enter.
 *
 * Linked opcodes are only those whose failure breaks the link on this
 * kernel (tests/t_mc_links.c checks each): READ, WRITE (file position or
 * an explicit offset), OPENAT, CLOSE, FSYNC, NOP.  STATX and
 * SYNC_FILE_RANGE do not mark their failure, so a chain holding them runs
 * on the worker or inline path instead.
 *
 * io_uring breaks a link on a failure AND on a short transfer.  Every
 * chain rule that stops a chain implies such a break (a checked failure;
 * XSC_MC_FULL's short transfer; a loop condition that a short read proves,
 * else the build ends right after that call), so nothing runs past a stop.
 * The converse does not hold: an unchecked failure or a short transfer
 * without FULL breaks the link but not the chain.  The run then RESUMES:
 * the results so far are settled in order, the breaking call's result is
 * made exact (below), and the rest of the chain is built and submitted
 * again (report.resumes).
 *
 * Forwarding: io_uring forwards nothing but direct descriptors.
 *  - the fd of an XSC_MC_PRIVATE open lives in direct slot k (k = the
 *    open's index) and later calls use it with IOSQE_FIXED_FILE; a chain
 *    that stops before closing it gets it installed as a normal fd
 *    (IORING_OP_FIXED_FD_INSTALL), whose number goes to the open's slot.
 *  - the count of a read/write fed by an earlier read/write's result is
 *    speculated to be that call's full count: if the producer comes back
 *    short the link breaks and the consumer is rebuilt with the real value.
 *  - any other reference needs its producer's result: the build ends
 *    before the consumer (one more enter, still fewer than one per call).
 *
 * Exactness, as in the single-call translations (docs/design.md):
 *  - io_uring waits on O_NONBLOCK pipes and sockets where read(2) says
 *    -EAGAIN, and ignores the offset of pread/pwrite on them: each fd a
 *    read/write names is classified once per run (fcntl F_GETFL, fstat
 *    when it matters); such calls run synchronously, in chain order.
 *  - a short write on a blocking pipe or socket is finished the way
 *    write(2) would, the rest posted as an ordinary entry (xsc__call_own:
 *    the ring's blocking form, never a blocking write in the caller); a
 *    short transfer that stopped at a fault gets the file position
 *    io_uring left behind moved (lseek).
 *  - close of an io_uring fd: -EBADF is re-run synchronously.
 */
#include "multicall_uring.h"
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

#define CAP MC_SQES		/* SQEs per submission */
#define NCLS 16			/* fds classified per run */
#define OP_FIXED_FD_INSTALL 54	/* 6.8 */
#define FIXED_FD_NO_CLOEXEC 1u

/* fd kinds */
enum { K_BAD, K_BLOCKING, K_REG, K_PIPE, K_NB };

/* plan() verdicts; negative values are results that need no call */
enum { PLAN_BOUNDARY = 0, PLAN_QUEUE = 1, PLAN_SYNC = 2 };

struct mc_state {		/* x->mc */
	bool files;		/* XSC_MC_MAX direct slots registered */
	bool files_failed;
	uint32_t gen;
};

struct urun {
	struct mc_run *r;
	struct urun *prev;	/* an outer run (a done_cb may nest chains) */
	uint32_t gen;
	unsigned m, got;	/* SQEs in flight, CQEs received */
	unsigned k_iters;	/* loop iterations per submission */
	bool slot_open[XSC_MC_MAX];
	bool cloexec[XSC_MC_MAX];
	unsigned ncls;
	int cls_fd[NCLS];
	uint8_t cls_kind[NCLS];
	bool cls_append[NCLS];	/* O_APPEND */
	bool cls_pos_ok[NCLS];	/* cls_pos holds the position at the build */
	int64_t cls_pos[NCLS];	/* position before the build's first SQE */
	int64_t cls_adv[NCLS];	/* bytes the build's SQEs move it, if whole */
	int64_t start[CAP];	/* position each rw SQE starts at: see track() */
	int32_t res[CAP];
	uint8_t call[CAP];
	bool fixed[CAP];
	int64_t a[CAP][6];
};

static __thread struct urun *cur;

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

void xsc__mc_uring_free(struct xsc *x)
{
	free(x->mc);
	x->mc = NULL;
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

static int classify(struct urun *u, long fd, bool need_type)
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
	int kind = classify(u, a[0], true);
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

static void prep(struct urun *u, unsigned j, unsigned i)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&u->r->x->ring);
	const int64_t *a = u->a[j];
	long nr = u->r->c[i].nr;
	int fd = (int)a[0];

	switch (nr) {
	case SYS_read: case SYS_pread64:
		io_uring_prep_read(sqe, fd, (void *)a[1], (unsigned)a[2],
				   nr == SYS_read ? (uint64_t)-1 : (uint64_t)a[3]);
		break;
	case SYS_write: case SYS_pwrite64:
		io_uring_prep_write(sqe, fd, (const void *)a[1], (unsigned)a[2],
				    nr == SYS_write ? (uint64_t)-1 : (uint64_t)a[3]);
		break;
	case SYS_open: prep_open(u, sqe, i, AT_FDCWD, a[0], a[1], a[2]); break;
	case SYS_openat: prep_open(u, sqe, i, a[0], a[1], a[2], a[3]); break;
	case SYS_close:
		if (u->fixed[j])
			io_uring_prep_close_direct(sqe, (unsigned)fd);
		else
			io_uring_prep_close(sqe, fd);
		break;
	case SYS_fsync: case SYS_fdatasync:
		io_uring_prep_fsync(sqe, fd, nr == SYS_fsync ? 0 : IORING_FSYNC_DATASYNC);
		break;
	case XSC_NR_NOP:
		io_uring_prep_nop(sqe);
		break;
	default:
		/* a row the table marks linkable (.chain) needs its SQE here */
		xsc__say("xsc: multi-call: %s is linkable (.chain) but has no "
			 "SQE builder\n", xsc_syscall_name(nr));
		abort();
	}
	if (u->fixed[j] && nr != SYS_close)
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

static bool settle(struct urun *u, unsigned i, long ret, const int64_t a[6],
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
static unsigned build(struct urun *u)
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
			settle(u, i, ret, a, fixed);
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
	if (nr == SYS_write && classify(u, a[0], true) == K_PIPE) {
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
		if (settle(u, i, res, u->a[j], u->fixed[j]))
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
			u->m = build(u);
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
