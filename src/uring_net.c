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

int xsc__prep_connect(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	void *k = copy_addr(x, id, a[1], a[2]);

	if (!k)
		return 0;
	io_uring_prep_connect(xsc__sqe(x, id, 0), FD(a[0]), k, (socklen_t)(int)a[2]);
	return 1;
}

int xsc__prep_accept(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	io_uring_prep_accept(xsc__sqe(x, id, 0), FD(a[0]), PTR(a[1]), PTR(a[2]), 0);
	return 1;
}

int xsc__prep_accept4(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	io_uring_prep_accept(xsc__sqe(x, id, 0), FD(a[0]), PTR(a[1]), PTR(a[2]),
			     (int)a[3]);
	return 1;
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

int xsc__prep_sendto(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	union xsc_aux *ax = aux_of(x, id);

	if (!FITS_U32(a[2]) || a[3] != (int)a[3])
		return 0;
	/* sendto(2) refuses an address length outside 1..sizeof(struct
	 * sockaddr_storage) (or hands 0 to the protocol, UDP: -EINVAL);
	 * sendmsg clamps a long msg_namelen and drops a name of length 0:
	 * only lengths both agree on go to the ring */
	if (a[4] && ((int)a[5] <= 0 || (int)a[5] > (int)sizeof(struct sockaddr_storage)))
		return 0;
	if (!a[4]) {
		io_uring_prep_send(xsc__sqe(x, id, 0), FD(a[0]), PTR(a[1]),
				   (size_t)a[2], (int)a[3]);
		return 1;
	}
	ax->msg.iov = (struct iovec){ PTR(a[1]), (size_t)a[2] };
	ax->msg.mh = (struct msghdr){ .msg_name = PTR(a[4]),
				       .msg_namelen = (socklen_t)a[5],
				       .msg_iov = &ax->msg.iov,
				       .msg_iovlen = 1 };
	io_uring_prep_sendmsg(xsc__sqe(x, id, 0), FD(a[0]), &ax->msg.mh, (int)a[3]);
	return 1;
}

int xsc__prep_recvfrom(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	if (a[4] || !FITS_U32(a[2]) || a[3] != (int)a[3])
		return 0;
	io_uring_prep_recv(xsc__sqe(x, id, 0), FD(a[0]), PTR(a[1]), (size_t)a[2],
			   (int)a[3]);
	return 1;
}

int xsc__prep_sendmsg(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	if (a[2] != (unsigned)a[2])
		return 0;
	io_uring_prep_sendmsg(xsc__sqe(x, id, 0), FD(a[0]), PTR(a[1]), (unsigned)a[2]);
	return 1;
}

int xsc__prep_recvmsg(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	if (a[2] != (unsigned)a[2])
		return 0;
	io_uring_prep_recvmsg(xsc__sqe(x, id, 0), FD(a[0]), PTR(a[1]), (unsigned)a[2]);
	return 1;
}

int xsc__prep_shutdown(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	io_uring_prep_shutdown(xsc__sqe(x, id, 0), FD(a[0]), (int)a[1]);
	return 1;
}
