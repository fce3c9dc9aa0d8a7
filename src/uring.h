/*
 * uring.h - the io_uring executor: ring setup (uring_setup.c); SQEs, one
 * io_uring_enter per flush, cancel, a ring lost and the non-blocking-first
 * protocol its translations share (uring.c); reaping and waiting
 * (uring_reap.c).  uring_prep.h has the translations themselves.
 */
#ifndef XSC_URING_H
#define XSC_URING_H
#include "internal.h"
#include "uring_ops.h"

#pragma GCC visibility push(hidden)

/* A done function (table.h) turns the CQE result(s) into the syscall's
 * result.  It may return XSC_RETRY_SYNC when the kernel's answer through
 * io_uring can differ from the synchronous call's and re-executing
 * synchronously is harmless (for example close() of an fd io_uring refuses
 * to close): the reaper hands the entry back, XSC_V_RETRY_SYNC. */
#define XSC_RETRY_SYNC (-(1L << 40))
/* ... or XSC_RESUBMIT: the non-blocking attempt found nothing to do on a
 * blocking fd; submit the blocking form (slot.mode gets XSC_M_BLOCK). */
#define XSC_RESUBMIT (-(1L << 41))
/* ... or XSC_PENDING: the done function queued a new SQE for the entry
 * (the rest of a short write, uring_rw.c); it stays in flight. */
#define XSC_PENDING (-(1L << 42))

/* slot.mode */
#define XSC_M_NOWAIT 1	/* submitted in its non-blocking form by xsc */
#define XSC_M_BLOCK  2	/* resubmitted in its blocking form */
#define XSC_M_REST   4	/* the rest of a short transfer (slot.acc) */
#define XSC_M_AGAIN  8	/* the non-blocking form said -EAGAIN on a blocking
			   fd (not -EOPNOTSUPP): the blocking form waits for
			   room, then writes what fits */
#define XSC_M_KIND  16	/* a short read waits for its fd's type, asked
			   with an IORING_OP_STATX (slot.acc: the count) */
#define XSC_M_RECV  32	/* a read of a descriptor last seen to be a socket,
			   in as IORING_OP_RECV (uring_rw.c, sockhint) */
#define XSC_M_IOWQ  64	/* the blocking form may run in io_uring's workers:
			   it goes in fenced (xsc__fence) */

/* Multi-calls (multicall_uring.c) own every SQE whose user_data has bit
 * 63 set; the reaper hands their CQEs to the module (struct xsc_mc_ops). */
#define XSC_UD_MC (1ULL << 63)
#define XSC_UD_WAIT (1ULL << 62)	/* a readiness wait: the rest is its tag */
/* The executor's own requests, whose CQEs complete no entry (uring.c). */
#define XSC_UD_FUTEX (~0ULL)	/* the owner's FUTEX_WAIT on the wake word */
#define XSC_UD_CANCEL (~1ULL)	/* an async cancel */
#define XSC_UD_BARRIER (~2ULL)	/* xsc__sqpoll_barrier's NOP */

int xsc__uring_setup(struct xsc *x);
/* io_uring_register(2) on the handle's ring, by fd or (once the fd is
 * closed) by its registered index.  Returns the result or -errno. */
long xsc__uring_register(struct xsc *x, unsigned op, void *arg, unsigned nr);
#define XSC_FEAT_REG_REG_RING (1U << 13)		/* 6.3 */
#define XSC_REGISTER_USE_REGISTERED_RING (1U << 31)	/* 6.3 */
void xsc__uring_teardown(struct xsc *x);
bool xsc__uring_has(struct xsc *x, unsigned op);
struct io_uring_sqe *xsc__sqe_slow(struct xsc *x, int id, int part);
#define XSC_MAX_PARTS 2	/* SQEs of one entry (a poll and its timeout) */
bool xsc__sq_room_slow(struct xsc *x, unsigned k);
/* Makes room for k more SQEs before they are queued: the SQ holds a
 * batch, not every entry (uring.c, "Sizing").  Whoever queues an entry's
 * parts asks for all of them first, so a linked pair is never split
 * between two submissions.  false: no room (the ring was lost, or the
 * kernel keeps refusing the submission). */
static inline bool xsc__sq_has_room(const struct xsc *x, unsigned k)
{
	const struct io_uring_sq *sq = &x->ring.sq;

	return sq->sqe_tail + k - x->sq_head <= sq->ring_entries;
}
static inline bool xsc__sq_room(struct xsc *x, unsigned k)
{
	return xsc__sq_has_room(x, k) || xsc__sq_room_slow(x, k);
}
/* The next SQE, user_data (id << 2 | part).  Inline: every translation
 * takes one per part, and a call per SQE was a fifth of a NOP's flush. */
static inline struct io_uring_sqe *xsc__sqe(struct xsc *x, int id, int part)
{
	struct io_uring_sq *sq = &x->ring.sq;
	unsigned next = sq->sqe_tail + 1;
	struct io_uring_sqe *sqe;

	/* the caller made room (xsc__sq_room); khead is read only when
	 * the cached room says the SQ might be full */
	if (__builtin_expect(next - x->sq_head > sq->ring_entries, 0))
		return xsc__sqe_slow(x, id, part);
	sqe = &sq->sqes[sq->sqe_tail & sq->ring_mask];
	sq->sqe_tail = next;
	sqe->user_data = ((uint64_t)id << 2) | (unsigned)part;
	x->sq_ready++;
	/* part 1's result is the last call's until its own CQE: a timed
	 * wait's -ETIME made an endless one in the same slot, canceled by a
	 * signal, return 0 (tp_sole) */
	if (!part)
		x->slot[id].res[1] = 0;
	return sqe;
}
int xsc__uring_submit(struct xsc *x);
/* A request that io_uring's workers (io-wq) run posts its CQE before it
 * lets go of its file: the worker drops its reference afterwards, and the
 * request, with the file's, is freed in the submitter's task work, at
 * its next io_uring_enter when the CQE was reaped first.  A close(2)
 * right after such a call did not release the file then: a FIFO's reader
 * stayed (ENXIO not given to a writer's open), a flock(2) stayed held.
 * Behind an SQE that may run there, part 1 is a NOP hardlinked to it: the
 * kernel issues the NOP only once the request is freed (its file put),
 * and the entry completes with the NOP's CQE.  Its result stays part 0's.
 * The caller made room for both parts (XSC_MAX_PARTS).  Returns 2. */
static inline int xsc__fence(struct xsc *x, int id, struct io_uring_sqe *sqe)
{
	sqe->flags |= IOSQE_IO_HARDLINK;
	io_uring_prep_nop(xsc__sqe(x, id, 1));
	return 2;
}
/* SQPOLL: waits until the poller has let go of the files of every
 * request whose CQE was posted so far (before a close). */
void xsc__sqpoll_barrier(struct xsc *x);
/* io_uring_enter failed for good with err: entries still in the SQ are
 * handed back, later calls are routed around the ring (uring.c). */
void xsc__uring_lost(struct xsc *x, int err);
/* Stops using the ring for good (after x->cfg.backend and x->reason are
 * set): marks the routes stale and hands back every entry whose SQE the
 * kernel did not take (XSC_V_RING_LOST); those it took complete as
 * before.  The caller's dispatcher then calls xsc__reroute. */
void xsc__uring_retire(struct xsc *x);
int xsc__uring_reap(struct xsc *x);
int xsc__uring_wait(struct xsc *x, bool also_kick, uint32_t seen,
		    int64_t timeout_ns);
int xsc__uring_cancel(struct xsc *x, int id);
void xsc__uring_cancel_all(struct xsc *x);
/* Waits for poll events on fd without holding an entry: a POLL_ADD whose
 * CQE goes to done_cb as id -1 with `tag` (bits 62-63 clear) and the
 * revents or -errno.  Goes out with the next flush.  -ENOTSUP without a
 * ring. */
int xsc__uring_wait_fd(struct xsc *x, int fd, unsigned events, uint64_t tag);

/* Non-blocking-first protocol.  io_uring waits for readiness even on
 * O_NONBLOCK pipes and sockets, so transfers are submitted with
 * RWF_NOWAIT / MSG_DONTWAIT / ACCEPT_DONTWAIT first; xsc__nowait_done()
 * then decides what the synchronous call would have returned. */
bool xsc__want_nowait(struct xsc *x, int id);
long xsc__nowait_done(struct xsc *x, int id, long res, long want, bool write,
		      bool *rest);
/* 1 if fd is O_NONBLOCK and not a regular file or block device, 0 if
 * blocking, -errno if the fd is gone. */
int xsc__fd_nonblocking(struct xsc *x, int fd);
/* 1 if fd is a regular file or a block device, 0 if not, -errno */
int xsc__fd_on_disk(struct xsc *x, int fd);
/* fd's file type (its S_IFMT bits; 0 for an anonymous inode: eventfd,
 * timerfd, epoll...), or -errno */
int xsc__fd_type(struct xsc *x, int fd);
/* fd was seen to be a socket, or not: its reads go in as receives
 * (uring_rw.c) */
void xsc__sockhint_learn(int fd, bool sock);
/* For a socket call that failed with -EFAULT: the error the synchronous
 * call gives first (-EBADF, -ENOTSOCK), else -EFAULT. */
long xsc__sock_efault(struct xsc *x, int fd);

#pragma GCC visibility pop
#endif
