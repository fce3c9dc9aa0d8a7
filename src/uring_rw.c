/*
 * uring_rw.c - read/write family on io_uring.  Why each rule: the table
 * of io_uring's differences in docs/design.md, "Exactness rules".
 *
 *  - counts above MAX_RW_COUNT are declined (FITS_RW, uring_prep.h);
 *  - read/write/readv/writev go in with RWF_NOWAIT first, and
 *    xsc__nowait_done() (uring.c) makes the answer the synchronous one:
 *    -EAGAIN stays on an O_NONBLOCK fd, a blocking fd gets the blocking
 *    form, a short write on a blocking fd is finished with the rest, a
 *    short read of a regular file reads the rest (XSC_M_REST, XSC_M_KIND);
 *  - after a short transfer in the blocking form that ends at the start
 *    of a page, one checked read tells whether the caller's buffer ends
 *    there (one that ends inside a page ended with the data); if so the
 *    file position is advanced by hand (lseek; harmlessly -ESPIPE on
 *    pipes and sockets), as read(2) and write(2) advance it;
 *  - positional calls (pread64, pwrite64, preadv, pwritev, and
 *    preadv2/pwritev2 with an offset) have no translation: io_uring
 *    ignores the offset on pipes, sockets and ttys, and no opcode can
 *    tell those apart and fail its link.  They run on syscall threads.
 */
#include "uring_prep.h"
#include "ucopy.h"
#include "fdkind.h"

#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "rawsys.h"

static int rw(struct xsc *x, int id, int op, long fd, long buf, long len,
	      long off, int rwflags)
{
	struct io_uring_sqe *sqe;

	if (!FITS_RW(len))
		return 0;
	if (!(rwflags & RWF_NOWAIT) && xsc__want_nowait(x, id))
		rwflags |= RWF_NOWAIT;
	sqe = xsc__sqe(x, id, 0);
	io_uring_prep_rw(op, sqe, (int)fd, (void *)buf, (unsigned)len, off);
	sqe->rw_flags = rwflags;
	if (slot_of(x, id)->mode & XSC_M_IOWQ)
		return xsc__fence(x, id, sqe);	/* the blocking form, from io-wq */
	return 1;
}

/* ---- reads of sockets ---------------------------------------------------
 *
 * A short read in the non-blocking form asks the descriptor's type (a
 * regular file's read stopped at a page not cached and reads on; a
 * socket's count is final): a statx, or one in the ring, per short read
 * where the runtime does not know the kinds (library mode).  So the
 * descriptors last seen to be sockets are kept, and a read of one goes in
 * as a receive: read(2) of a socket is sock_recvmsg with no flags, which
 * IORING_OP_RECV makes, and its short count needs no question.  A hint
 * only: a descriptor closed and made again as something else fails the
 * receive with -ENOTSOCK, which no read(2) gives, and the read goes in as
 * a read then.  A zero-byte read stays a read: read(2) answers 0 without
 * a receive, which would take a datagram. */
#define SOCKHINT_FDS 65536
static _Atomic uint64_t sockhint[SOCKHINT_FDS / 64];

void xsc__sockhint_learn(int fd, bool sock)
{
	uint64_t bit;

	if (fd < 0 || fd >= SOCKHINT_FDS)
		return;
	bit = 1ULL << (fd % 64);
	if (sock)
		atomic_fetch_or_explicit(&sockhint[fd / 64], bit, memory_order_relaxed);
	else
		atomic_fetch_and_explicit(&sockhint[fd / 64], ~bit, memory_order_relaxed);
}

static bool sockhint_says(long fd)
{
	return fd >= 0 && fd < SOCKHINT_FDS &&
	       (atomic_load_explicit(&sockhint[fd / 64], memory_order_relaxed) >> (fd % 64)) & 1;
}

int xsc__prep_read(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	struct io_uring_sqe *sqe;
	int flags = 0;

	if (a[2] <= 0 || !FITS_RW(a[2]) || !sockhint_says(a[0]))
		return rw(x, id, IORING_OP_READ, a[0], a[1], a[2], -1, 0);
	if (xsc__want_nowait(x, id))
		flags = MSG_DONTWAIT;
	sqe = xsc__sqe(x, id, 0);
	io_uring_prep_recv(sqe, (int)a[0], (void *)a[1], (size_t)a[2], flags);
	slot_of(x, id)->mode |= XSC_M_RECV;
	return 1;
}

/* A receive for a read of fd that was not a socket: the read, in the form
 * the receive had. */
static long read_again(struct xsc *x, int id)
{
	struct xsc_slot *s = slot_of(x, id);
	int parts;

	xsc__sockhint_learn((int)A(x, id)[0], false);
	s->mode &= (uint8_t)~(XSC_M_RECV | XSC_M_NOWAIT);
	if (atomic_load(&s->canceled))
		return -ECANCELED;	/* nothing ran */
	if (!x->have_ring || !xsc__sq_room(x, 1))
		return XSC_RETRY_SYNC;	/* nothing ran */
	parts = xsc__prep_read(x, id);
	if (parts <= 0)
		return XSC_RETRY_SYNC;
	s->parts = (uint8_t)parts;
	return XSC_PENDING;
}

int xsc__prep_write(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	return rw(x, id, IORING_OP_WRITE, a[0], a[1], a[2], -1, 0);
}

int xsc__prep_readv(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	return rw(x, id, IORING_OP_READV, a[0], a[1], a[2], -1, 0);
}

int xsc__prep_writev(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	return rw(x, id, IORING_OP_WRITEV, a[0], a[1], a[2], -1, 0);
}

/* preadv2(fd, iov, cnt, pos_l, pos_h, flags): only offset -1, the file
 * position, goes to the ring (see the top).  RWF_HIPRI is ignored by
 * buffered preadv2 but makes io_uring answer -EINVAL on a ring without
 * IOPOLL: declined. */
static int rwv2(struct xsc *x, int id, int op)
{
	const int64_t *a = A(x, id);

	if (a[3] != -1 || a[5] != (int)a[5] || (a[5] & RWF_HIPRI))
		return 0;
	return rw(x, id, op, a[0], a[1], a[2], -1, (int)a[5]);
}

int xsc__prep_preadv2(struct xsc *x, int id)
{
	return rwv2(x, id, IORING_OP_READV);
}

int xsc__prep_pwritev2(struct xsc *x, int id)
{
	return rwv2(x, id, IORING_OP_WRITEV);
}

/* Bytes an iovec array asks for.  Called only after the kernel accepted
 * the array (res >= 0), so reading it cannot fault. */
static long iov_total(const struct iovec *v, long n)
{
	long t = 0;
	for (long i = 0; i < n; i++)
		t += (long)v[i].iov_len;
	return t;
}

/* Address of byte `off` of an iovec array (accepted by the kernel). */
static const char *iov_at(const struct iovec *v, long n, long off)
{
	for (long i = 0; i < n; i++, off -= (long)v[i - 1].iov_len)
		if (off < (long)v[i].iov_len)
			return (const char *)v[i].iov_base + off;
	return NULL;
}

/* A short transfer that stopped at a fault: advance the position io_uring
 * left behind (see the top). */
static void fix_pos(struct xsc *x, int id, long res, long want,
		    const struct iovec *v, long n)
{
	const char *next;
	char c;

	const int64_t *a = A(x, id);
	long nr = x->ent[id].sysno;

	if (res <= 0 || res >= want || (slot_of(x, id)->mode & XSC_M_NOWAIT))
		return;	/* the non-blocking form keeps the position right */
	if ((nr == SYS_preadv2 || nr == SYS_pwritev2) && (a[5] & RWF_NOWAIT))
		return;	/* the caller's own non-blocking form */
	if (xsc__fdkind_stream((int)a[0]))
		return;	/* a socket's or a pipe's: no position to fix */
	next = iov_at(v, n, res);
	/* the byte before it was transferred: on the same page (4 KiB, the
	 * smallest) the look could not fault, and the transfer ended with
	 * the data, not at a fault */
	if (!next || (iov_at(v, n, res - 1) == next - 1 && ((uintptr_t)next & 4095)))
		return;
	x->st.crossings++;
	if (xsc__ucopy_in(&c, next, 1) < 0) {
		x->st.crossings++;
		xsc__sys3(SYS_lseek, a[0], res, SEEK_CUR);
	}
}

static long finish_read(struct xsc *x, int id, const struct iovec *v, long n)
{
	long res = slot_of(x, id)->res[0];
	long want = res > 0 ? iov_total(v, n) : 0;
	bool rest;

	res = xsc__nowait_done(x, id, res, want, false, &rest);
	if (res == XSC_PENDING)
		return res;	/* the fd's type is asked first (xsc__kind_ask) */
	if (res > 0 && !(slot_of(x, id)->mode & XSC_M_NOWAIT))
		fix_pos(x, id, res, want, v, n);
	if (!rest)
		return res;
	return xsc__rest_start(x, id, res);
}

long xsc__done_read(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	struct iovec one = { (void *)a[1], (size_t)a[2] };
	long res = slot_of(x, id)->res[0];
	bool rest;

	if (!(slot_of(x, id)->mode & XSC_M_RECV))
		return finish_read(x, id, &one, 1);
	if (res == -ENOTSOCK)
		return read_again(x, id);
	/* a socket's: a short count is final (want = res), no position */
	return xsc__nowait_done(x, id, res, res > 0 ? res : a[2], false, &rest);
}

long xsc__done_readv(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	return finish_read(x, id, (const struct iovec *)a[1], a[2]);
}

static long finish_write(struct xsc *x, int id, long want,
			 const struct iovec *uiov, long cnt, bool sock, int flags)
{
	long res = slot_of(x, id)->res[0];
	bool rest;

	res = xsc__nowait_done(x, id, res, want, true, &rest);
	if (!sock && res > 0)
		fix_pos(x, id, res, want, uiov, cnt);
	if (!rest)
		return res;
	return xsc__rest_start(x, id, res);
}

/* ---- the rest of a short transfer -----------------------------------
 *
 * A write(2) on a blocking fd returns only when everything is written (or
 * a later part fails: then the count so far).  The non-blocking attempt
 * takes what fits; the rest goes back out as new SQEs in the blocking
 * form, one window of at most XSC_REST_IOV iovecs at a time, while the
 * caller stays parked.  A read(2) of a regular file or block device
 * likewise waits for pages the non-blocking attempt stopped at; its rest
 * ends at the first window that comes back short (end of file).  The reaper itself never writes: a pipe nobody
 * reads would stall every fiber of the kernel thread (docs/design.md).
 * The caller's iovec array is read again for each window with checked
 * copies: the kernel accepted it once, but the caller's memory is the
 * caller's.  A failed or cancelled window ends the call with what was
 * written before it. */

/* Where the caller's bytes are: an iovec array (one is the caller's
 * single buffer), whether the fd is a socket, whether it is a read, and
 * the flags to send with. */
struct wsrc {
	const struct iovec *uiov;
	long cnt;
	bool sock, read;
	int flags;	/* send flags, or preadv2's / pwritev2's RWF_* flags */
	struct iovec one;
};

static bool rest_source(struct xsc *x, int id, struct wsrc *w)
{
	const int64_t *a = A(x, id);
	struct msghdr mh;

	w->sock = false;
	w->read = false;
	w->flags = 0;
	switch (x->ent[id].sysno) {
	case SYS_read:
		w->read = true;
		w->one = (struct iovec){ (void *)a[1], (size_t)a[2] };
		w->uiov = &w->one;
		w->cnt = 1;
		return true;
	case SYS_preadv2:
		w->flags = (int)a[5];
		/* fall through */
	case SYS_readv:
		w->read = true;
		w->uiov = (const struct iovec *)a[1];
		w->cnt = a[2];
		return true;
	case SYS_sendto:
		w->sock = true;
		w->flags = (int)a[3];
		/* fall through */
	case SYS_write:
		w->one = (struct iovec){ (void *)a[1], (size_t)a[2] };
		w->uiov = &w->one;
		w->cnt = 1;
		return true;
	case SYS_pwritev2:
		w->flags = (int)a[5];
		/* fall through */
	case SYS_writev:
		w->uiov = (const struct iovec *)a[1];
		w->cnt = a[2];
		return true;
	case SYS_sendmsg:
		if (xsc__ucopy_in(&mh, (const void *)a[1], sizeof(mh)) < 0)
			return false;
		w->sock = true;
		w->flags = (int)a[2];
		w->uiov = mh.msg_iov;
		w->cnt = (long)mh.msg_iovlen;
		return true;
	}
	return false;
}

/* Fills the entry's rest window with the caller's iovecs past `skip`
 * bytes.  Returns the number of iovecs (0: nothing left) or -EFAULT. */
static long rest_window(struct xsc *x, int id, const struct wsrc *w, long skip)
{
	struct iovec *v = aux_of(x, id)->rest.v;
	long base = 0;

	while (base < w->cnt) {
		long n = w->cnt - base < XSC_REST_IOV ? w->cnt - base : XSC_REST_IOV;
		long i = 0;

		if (xsc__ucopy_in(v, w->uiov + base, (size_t)n * sizeof(*v)) < 0)
			return -EFAULT;
		for (; i < n && skip >= (long)v[i].iov_len; i++)
			skip -= (long)v[i].iov_len;	/* written already */
		if (i == n) {
			base += n;
			continue;
		}
		memmove(v, v + i, (size_t)(n - i) * sizeof(*v));
		v[0].iov_base = (char *)v[0].iov_base + skip;
		v[0].iov_len -= (size_t)skip;
		return n - i;
	}
	return 0;
}

/* Queues the next window, or says the write is over: XSC_PENDING or the
 * final result (slot.acc). */
static long rest_next(struct xsc *x, int id)
{
	struct xsc_slot *s = slot_of(x, id);
	union xsc_aux *ax = aux_of(x, id);
	struct io_uring_sqe *sqe;
	struct wsrc w;
	long n;

	if (atomic_load(&s->canceled) || !x->have_ring ||
	    !rest_source(x, id, &w))
		return s->acc;	/* canceled, or the ring was lost: the count */
	n = rest_window(x, id, &w, s->acc);
	if (n <= 0)
		return s->acc;	/* all written, or the rest faults: the count */
	if (!xsc__sq_room(x, XSC_MAX_PARTS))
		return s->acc;	/* the ring is lost, or refuses more: the count */
	ax->rest.mh = (struct msghdr){ .msg_iov = ax->rest.v,
					.msg_iovlen = (size_t)n };
	sqe = xsc__sqe(x, id, 0);
	if (w.sock) {
		io_uring_prep_sendmsg(sqe, (int)A(x, id)[0], &ax->rest.mh,
				      (unsigned)w.flags);
	} else {
		io_uring_prep_rw(w.read ? IORING_OP_READV : IORING_OP_WRITEV, sqe,
				 (int)A(x, id)[0], ax->rest.v, (unsigned)n,
				 (uint64_t)-1);
		sqe->rw_flags = w.flags;
	}
	s->parts = 1;
	if (!w.sock && (s->mode & XSC_M_IOWQ))
		s->parts = (uint8_t)xsc__fence(x, id, sqe);
	return XSC_PENDING;
}

/* ---- a short read's fd type, asked in the ring --------------------------
 *
 * A short non-blocking read is finished in the blocking form on a regular
 * file or a block device only (uring.c xsc__nowait_done), which takes the
 * fd's type.  Where a system call costs more than a call io_uring runs in
 * its workers, the type is asked with an IORING_OP_STATX into the entry's
 * private buffer (the rest window is not in use yet), the count kept in
 * slot.acc; its completion decides. */
long xsc__kind_ask(struct xsc *x, int id, long res)
{
	struct xsc_slot *s = slot_of(x, id);
	struct io_uring_sqe *sqe;

	if (!x->have_ring || atomic_load(&s->canceled) || !xsc__sq_room(x, 1))
		return -1;
	sqe = xsc__sqe(x, id, 0);
	io_uring_prep_statx(sqe, (int)A(x, id)[0], "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC,
			    STATX_TYPE, &aux_of(x, id)->stx);
	s->acc = res;
	s->mode |= XSC_M_KIND;
	s->parts = 1;
	return XSC_PENDING;
}

long xsc__kind_done(struct xsc *x, int id)
{
	struct xsc_slot *s = slot_of(x, id);
	const struct statx *sx = &aux_of(x, id)->stx;
	bool disk;

	s->mode &= (uint8_t)~XSC_M_KIND;
	/* a failed statx (the fd closed meanwhile, canceled): what was
	 * read, as the synchronous check's failure gives */
	disk = s->res[0] == 0 && (sx->stx_mask & STATX_TYPE) &&
	       (S_ISREG(sx->stx_mode) || S_ISBLK(sx->stx_mode));
	if (s->res[0] == 0 && (sx->stx_mask & STATX_TYPE))
		xsc__sockhint_learn((int)A(x, id)[0], S_ISSOCK(sx->stx_mode));
	if (!disk)
		return s->acc;
	return xsc__rest_start(x, id, s->acc);
}

long xsc__rest_start(struct xsc *x, int id, long written)
{
	struct xsc_slot *s = slot_of(x, id);

	s->mode = XSC_M_BLOCK | XSC_M_REST | (s->mode & XSC_M_IOWQ);
	s->acc = written;
	return rest_next(x, id);
}

long xsc__rest_done(struct xsc *x, int id)
{
	struct xsc_slot *s = slot_of(x, id);
	union xsc_aux *ax = aux_of(x, id);
	long res = s->res[0];

	if (res <= 0)
		return s->acc;	/* read(2), write(2): the count before the failure */
	s->acc += res;
	/* a blocking-form window that stopped at a fault: the position, as
	 * for any short transfer (fix_pos); then the count so far.  A read's
	 * window that comes back short otherwise met the end of the file. */
	long asked = iov_total(ax->rest.v, (long)ax->rest.mh.msg_iovlen);
	if (res < asked) {
		struct wsrc w;
		if (rest_source(x, id, &w) && !w.sock) {
			char c;
			const char *next = iov_at(ax->rest.v,
						  (long)ax->rest.mh.msg_iovlen, res);
			x->st.crossings++;
			if (next && xsc__ucopy_in(&c, next, 1) < 0) {
				x->st.crossings++;
				xsc__sys3(SYS_lseek, A(x, id)[0], res, SEEK_CUR);
				return s->acc;
			}
			if (w.read)
				return s->acc;
		}
	}
	return rest_next(x, id);
}

long xsc__done_write(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	struct iovec one = { (void *)a[1], (size_t)a[2] };
	return finish_write(x, id, a[2], &one, 1, false, 0);
}

long xsc__done_writev(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	long res = slot_of(x, id)->res[0];
	long want = res >= 0 ? iov_total((const struct iovec *)a[1], a[2]) : 0;
	return finish_write(x, id, want, (const struct iovec *)a[1], a[2], false, 0);
}

/* Shared with uring_net.c: a send of one buffer / of a msghdr. */
long xsc__finish_send(struct xsc *x, int id, long want, const struct iovec *uiov,
		      long cnt, int flags)
{
	return finish_write(x, id, want, uiov, cnt, true, flags);
}
