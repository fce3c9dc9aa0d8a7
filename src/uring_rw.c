/*
 * uring_rw.c - read/write family on io_uring.
 *
 * io_uring takes a 32-bit length; larger counts are declined (the kernel
 * clamps every transfer to MAX_RW_COUNT anyway, but it checks the whole
 * range with access_ok first, so only the synchronous path is exact).  An
 * offset of -1 means "the file position" to io_uring, so the positional
 * calls decline negative offsets and let the fallback return the kernel's
 * own -EINVAL.
 */
#include "uring_prep.h"

#include <sys/uio.h>

static int rw(struct xsc *x, int id, int op, long fd, long buf, long len,
	      long off, int rwflags)
{
	struct io_uring_sqe *sqe;

	if (!FITS_U32(len))
		return 0;
	sqe = xsc__sqe(x, id, 0);
	io_uring_prep_rw(op, sqe, (int)fd, (void *)buf, (unsigned)len, off);
	sqe->rw_flags = rwflags;
	return 1;
}

int xsc__prep_read(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	return rw(x, id, IORING_OP_READ, a[0], a[1], a[2], -1, 0);
}

int xsc__prep_write(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	return rw(x, id, IORING_OP_WRITE, a[0], a[1], a[2], -1, 0);
}

int xsc__prep_pread(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	if (a[3] < 0)
		return 0;
	return rw(x, id, IORING_OP_READ, a[0], a[1], a[2], a[3], 0);
}

int xsc__prep_pwrite(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	if (a[3] < 0)
		return 0;
	return rw(x, id, IORING_OP_WRITE, a[0], a[1], a[2], a[3], 0);
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

/* preadv(fd, iov, cnt, pos_l, pos_h): on x86-64 pos_l is the whole offset. */
int xsc__prep_preadv(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	if (a[3] < 0)
		return 0;
	return rw(x, id, IORING_OP_READV, a[0], a[1], a[2], a[3], 0);
}

int xsc__prep_pwritev(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	if (a[3] < 0)
		return 0;
	return rw(x, id, IORING_OP_WRITEV, a[0], a[1], a[2], a[3], 0);
}

/* preadv2(fd, iov, cnt, pos_l, pos_h, flags): -1 = file position, as in
 * io_uring; other negative offsets are the kernel's -EINVAL.  RWF_HIPRI
 * is ignored by buffered preadv2 but makes io_uring answer -EINVAL on a
 * ring without IOPOLL: declined. */
int xsc__prep_preadv2(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	if (a[3] < -1 || a[5] != (int)a[5] || (a[5] & RWF_HIPRI))
		return 0;
	return rw(x, id, IORING_OP_READV, a[0], a[1], a[2], a[3], (int)a[5]);
}

int xsc__prep_pwritev2(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	if (a[3] < -1 || a[5] != (int)a[5] || (a[5] & RWF_HIPRI))
		return 0;
	return rw(x, id, IORING_OP_WRITEV, a[0], a[1], a[2], a[3], (int)a[5]);
}
