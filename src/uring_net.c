/*
 * uring_net.c - socket calls on io_uring.
 *
 * x86-64 has no send/recv syscalls: libc's send() is sendto(..., NULL, 0)
 * and recv() is recvfrom(..., NULL, NULL).  sendto with an address becomes
 * IORING_OP_SENDMSG with a msghdr in the entry's slot (the kernel copies the
 * address in, with its own checks).  recvfrom with an address is declined:
 * the kernel would have to read *addrlen from caller memory before the
 * call, which only the synchronous path can do without risking a fault.
 */
#include "uring_prep.h"
#include "ucopy.h"

#define FD(v) ((int)(v))
#define PTR(v) ((void *)(v))

int xsc__prep_socket(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	io_uring_prep_socket(xsc__sqe(x, id, 0), (int)a[0], (int)a[1], (int)a[2], 0);
	return 1;
}

/* connect(2) and bind(2) look the fd up before they copy the address, so
 * a bad fd wins over a bad address or length (-EBADF); io_uring copies the
 * address at prep time, before it resolves the fd.  So the length is
 * checked and the address copied here, with a fault-safe read, into the
 * entry's aux buffer: an address the kernel would refuse (bad length,
 * unreadable memory) declines the entry and the fallback returns the
 * kernel's own answer in the kernel's own order. */
static void *copy_addr(struct xsc *x, int id, long uaddr, long ulen)
{
	void *k = aux_of(x, id);
	int len = (int)ulen;	/* the syscalls take an int */

	_Static_assert(sizeof(union xsc_aux) >= sizeof(struct sockaddr_storage),
		       "aux holds a socket address");
	if (len < 0 || len > (int)sizeof(struct sockaddr_storage))
		return NULL;
	if (len && xsc__ucopy_in(k, PTR(uaddr), (size_t)len) < 0)
		return NULL;
	return k;
}

/* connect has no non-blocking form in io_uring (it always waits for the
 * handshake), so a non-blocking socket, which connect(2) answers with
 * -EINPROGRESS, is declined: one fcntl per connect. */
int xsc__prep_connect(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	void *k;

	if (xsc__fd_nonblocking(x, FD(a[0])) != 0)
		return 0;
	k = copy_addr(x, id, a[1], a[2]);
	if (!k)
		return 0;
	io_uring_prep_connect(xsc__sqe(x, id, 0), FD(a[0]), k, (socklen_t)(int)a[2]);
	return 1;
}

/* accept: IORING_ACCEPT_DONTWAIT (6.10) first, like MSG_DONTWAIT. */
#define XSC_ACCEPT_DONTWAIT (1u << 1)

static int accept_common(struct xsc *x, int id, int flags)
{
	const int64_t *a = A(x, id);
	struct io_uring_sqe *sqe = xsc__sqe(x, id, 0);

	io_uring_prep_accept(sqe, FD(a[0]), PTR(a[1]), PTR(a[2]), flags);
	if (xsc__want_nowait(x, id))
		sqe->ioprio |= XSC_ACCEPT_DONTWAIT;
	return 1;
}

int xsc__prep_accept(struct xsc *x, int id)
{
	return accept_common(x, id, 0);
}

int xsc__prep_accept4(struct xsc *x, int id)
{
	return accept_common(x, id, (int)A(x, id)[3]);
}

long xsc__done_accept(struct xsc *x, int id)
{
	return xsc__done_recv(x, id);
}

/* IORING_OP_BIND (6.11): addr in sqe->addr, addrlen in sqe->addr2. */
int xsc__prep_bind(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	void *k = copy_addr(x, id, a[1], a[2]);
	struct io_uring_sqe *sqe;

	if (!k)
		return 0;
	sqe = xsc__sqe(x, id, 0);
	io_uring_prep_rw(XSC_OP_BIND, sqe, FD(a[0]), k, 0, 0);
	sqe->addr2 = (uint32_t)a[2];
	return 1;
}

/* IORING_OP_LISTEN (6.11): backlog in sqe->len. */
int xsc__prep_listen(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	io_uring_prep_rw(XSC_OP_LISTEN, xsc__sqe(x, id, 0), FD(a[0]), NULL,
			 (unsigned)a[1], 0);
	return 1;
}

/* MSG_DONTWAIT first (see uring_rw.c): the caller's flags plus ours. */
static int dontwait(struct xsc *x, int id, long flags)
{
	if (!(flags & MSG_DONTWAIT) && xsc__want_nowait(x, id))
		flags |= MSG_DONTWAIT;
	return (int)flags;
}

int xsc__prep_sendto(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	union xsc_aux *ax = aux_of(x, id);
	int flags;

	if (!FITS_RW(a[2]) || a[3] != (int)a[3])
		return 0;
	/* sendto(2) refuses an address length outside 1..sizeof(struct
	 * sockaddr_storage) (or hands 0 to the protocol, UDP: -EINVAL);
	 * sendmsg clamps a long msg_namelen and drops a name of length 0:
	 * only lengths both agree on go to the ring */
	if (a[4] && ((int)a[5] <= 0 || (int)a[5] > (int)sizeof(struct sockaddr_storage)))
		return 0;
	flags = dontwait(x, id, a[3]);
	if (!a[4]) {
		io_uring_prep_send(xsc__sqe(x, id, 0), FD(a[0]), PTR(a[1]),
				   (size_t)a[2], flags);
		return 1;
	}
	ax->msg.iov = (struct iovec){ PTR(a[1]), (size_t)a[2] };
	ax->msg.mh = (struct msghdr){ .msg_name = PTR(a[4]),
				       .msg_namelen = (socklen_t)a[5],
				       .msg_iov = &ax->msg.iov,
				       .msg_iovlen = 1 };
	io_uring_prep_sendmsg(xsc__sqe(x, id, 0), FD(a[0]), &ax->msg.mh, flags);
	return 1;
}

/* io_uring copies an address or msghdr before it looks at the fd; the
 * syscalls look at the fd first.  A -EFAULT is therefore re-examined:
 * a bad or non-socket fd gives its own error, as the syscall would. */
long xsc__done_sendto(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	struct iovec one = { PTR(a[1]), (size_t)a[2] };

	if (slot_of(x, id)->res[0] == -EFAULT)
		return xsc__sock_efault(x, FD(a[0]));
	return xsc__finish_send(x, id, a[2], &one, 1, (int)a[3]);
}

/* MSG_WAITALL waits for the whole length on a blocking socket but not on
 * a non-blocking one, which only the synchronous call can tell apart. */
int xsc__prep_recvfrom(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	if (a[4] || !FITS_RW(a[2]) || a[3] != (int)a[3] || (a[3] & MSG_WAITALL))
		return 0;
	io_uring_prep_recv(xsc__sqe(x, id, 0), FD(a[0]), PTR(a[1]), (size_t)a[2],
			   dontwait(x, id, a[3]));
	return 1;
}

long xsc__done_recv(struct xsc *x, int id)
{
	bool rest;
	return xsc__nowait_done(x, id, slot_of(x, id)->res[0], 0, false, &rest);
}

int xsc__prep_sendmsg(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	if (a[2] != (unsigned)a[2])
		return 0;
	io_uring_prep_sendmsg(xsc__sqe(x, id, 0), FD(a[0]), PTR(a[1]),
			      (unsigned)dontwait(x, id, a[2]));
	return 1;
}

long xsc__done_sendmsg(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	long res = slot_of(x, id)->res[0], want = 0;
	const struct msghdr *mh = PTR(a[1]);

	if (res == -EFAULT)
		return xsc__sock_efault(x, FD(a[0]));
	if (res >= 0)	/* the kernel read *mh: it is readable */
		for (size_t i = 0; i < mh->msg_iovlen; i++)
			want += (long)mh->msg_iov[i].iov_len;
	return xsc__finish_send(x, id, want, res >= 0 ? mh->msg_iov : NULL,
				res >= 0 ? (long)mh->msg_iovlen : 0, (int)a[2]);
}

int xsc__prep_recvmsg(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	if (a[2] != (unsigned)a[2] || (a[2] & MSG_WAITALL))
		return 0;
	io_uring_prep_recvmsg(xsc__sqe(x, id, 0), FD(a[0]), PTR(a[1]),
			      (unsigned)dontwait(x, id, a[2]));
	return 1;
}

long xsc__done_recvmsg(struct xsc *x, int id)
{
	if (slot_of(x, id)->res[0] == -EFAULT)
		return xsc__sock_efault(x, FD(A(x, id)[0]));
	return xsc__done_recv(x, id);
}

int xsc__prep_shutdown(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	io_uring_prep_shutdown(xsc__sqe(x, id, 0), FD(a[0]), (int)a[1]);
	return 1;
}
