/*
 * uring_misc.c - splice/tee, epoll_ctl, sleeping, poll, futex and waitid
 * on io_uring.
 *
 * Some of these read a small structure from caller memory before the call
 * can be described to io_uring (the timespec of nanosleep, the pollfd of
 * poll).  That read goes through xsc__ucopy_in(), which fails with -EFAULT
 * instead of crashing; a failure declines the entry, and the fallback
 * executor then returns the kernel's own -EFAULT.  Arguments the kernel
 * would reject with -EINVAL are declined the same way, so every error
 * comes from the kernel, never from xsc.
 */
#include "uring_prep.h"
#include "ucopy.h"

#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>

#define FD(v) ((int)(v))
#define PTR(v) ((void *)(v))
#define SPLICE_F_ALL 0xfu

int xsc__prep_splice(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	/* offsets are in/out pointers for splice(2), values for io_uring */
	if (a[1] || a[3] || !FITS_U32(a[4]) || ((uint64_t)a[5] & ~SPLICE_F_ALL))
		return 0;
	io_uring_prep_splice(xsc__sqe(x, id, 0), FD(a[0]), -1, FD(a[2]), -1,
			     (unsigned)a[4], (unsigned)a[5]);
	return 1;
}

int xsc__prep_tee(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	if (!FITS_U32(a[2]) || ((uint64_t)a[3] & ~SPLICE_F_ALL))
		return 0;
	io_uring_prep_tee(xsc__sqe(x, id, 0), FD(a[0]), FD(a[1]), (unsigned)a[2],
			  (unsigned)a[3]);
	return 1;
}

int xsc__prep_epoll_ctl(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	io_uring_prep_epoll_ctl(xsc__sqe(x, id, 0), FD(a[0]), FD(a[2]), (int)a[1],
				PTR(a[3]));
	return 1;
}

/* Copies and checks the caller's timespec; 0 declines.  The kernel
 * lets a sleep end up to the thread's timer slack late (an hrtimer
 * range), and on an idle CPU it ends that late; io_uring's timeout ends
 * on the nanosecond.  The slack is added, so that a posted sleep lasts
 * as long as the program's own would: a thread that sleeps 100 us in a
 * loop (memcached's LRU maintainer) otherwise woke 1.5 times as often
 * as natively. */
static int get_ts(struct xsc *x, int id, long uts)
{
	struct __kernel_timespec *ts = &aux_of(x, id)->tm.ts;

	if (xsc__ucopy_in_for(x, slot_of(x, id)->tag, ts, PTR(uts), sizeof(*ts)) < 0)
		return 0;
	if (ts->tv_sec < 0 || ts->tv_nsec < 0 || ts->tv_nsec >= 1000000000)
		return 0;
	if (ts->tv_sec < INT64_MAX / 2) {
		ts->tv_nsec += (long long)x->slack_ns;
		ts->tv_sec += ts->tv_nsec / 1000000000;
		ts->tv_nsec %= 1000000000;
	}
	return 1;
}

/* Timers: the posted sleeps whose end is known on CLOCK_MONOTONIC (a
 * relative one, or an absolute one on that clock), at most XSC_NTIMER of
 * them, so that a wait made in the caller while only they are in flight
 * ends before the earliest (sched/syscalls.c sole): nothing else can
 * ready a fiber on the vcpu meanwhile.  A record is dropped when its
 * sleep completes; one the ring's loss left behind is told apart by its
 * entry, no longer a sleep on the ring (timer_live).  The end noted is
 * when the SQE is made, before the kernel starts the timer: never after
 * the kernel's own end. */
static bool timer_live(struct xsc *x, int id)
{
	const struct xsc_entry *e = &x->ent[id];
	const struct xsc_slot *s = slot_of(x, id);

	return (e->sysno == SYS_nanosleep || e->sysno == SYS_clock_nanosleep) &&
	       __atomic_load_n(&e->status, __ATOMIC_ACQUIRE) == XSC_BUSY && s->parts &&
	       (s->backend == XSC_BACKEND_URING || s->backend == XSC_BACKEND_SQPOLL);
}

static void timer_forget(struct xsc *x, int id)
{
	for (unsigned i = 0; i < x->ntimer; i++)
		if (x->timer[i].id == id) {
			x->timer[i] = x->timer[--x->ntimer];
			return;
		}
}

static void timer_note(struct xsc *x, int id, int64_t end)
{
	timer_forget(x, id);
	for (unsigned i = 0; x->ntimer == XSC_NTIMER && i < x->ntimer;)
		if (timer_live(x, x->timer[i].id))
			i++;
		else
			x->timer[i] = x->timer[--x->ntimer];
	if (x->ntimer < XSC_NTIMER)	/* else it counts as a call of unknown end */
		x->timer[x->ntimer++] = (struct xsc_timer){ id, end };
}

/* The earliest end of x's calls in flight on the ring when every one of
 * them is a timer; -1 when some other call is in flight there, or none
 * is. */
int64_t xsc__timers_end(struct xsc *x)
{
	int64_t end = INT64_MAX;
	unsigned n = 0;

	for (unsigned i = 0; i < x->ntimer; i++)
		if (timer_live(x, x->timer[i].id)) {
			n++;
			if (x->timer[i].end < end)
				end = x->timer[i].end;
		}
	return n && n == x->inflight_uring ? end : -1;
}

static int64_t ts_ns(const struct __kernel_timespec *ts)
{
	return ts->tv_sec * 1000000000LL + ts->tv_nsec;
}

int xsc__prep_nanosleep(struct xsc *x, int id)
{
	const struct __kernel_timespec *ts = &aux_of(x, id)->tm.ts;

	timer_forget(x, id);
	if (!get_ts(x, id, A(x, id)[0]))
		return 0;
	if (ts->tv_sec < INT64_MAX / 4000000000LL)
		timer_note(x, id, xsc__now() + ts_ns(ts));
	io_uring_prep_timeout(xsc__sqe(x, id, 0), &aux_of(x, id)->tm.ts, 0, 0);
	return 1;
}

int xsc__prep_clock_nanosleep(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	unsigned flags = 0;

	timer_forget(x, id);
	switch (a[0]) {
	case CLOCK_MONOTONIC: break;
	case CLOCK_REALTIME: flags = IORING_TIMEOUT_REALTIME; break;
	case CLOCK_BOOTTIME: flags = IORING_TIMEOUT_BOOTTIME; break;
	default: return 0;
	}
	if (a[1] == TIMER_ABSTIME)
		flags |= IORING_TIMEOUT_ABS;
	else if (a[1] != 0)
		return 0;
	if (!get_ts(x, id, a[2]))
		return 0;
	/* an end on CLOCK_MONOTONIC: a relative sleep on it or on
	 * CLOCK_REALTIME (a length of time), an absolute one on it */
	const struct __kernel_timespec *ts = &aux_of(x, id)->tm.ts;
	if (ts->tv_sec < INT64_MAX / 4000000000LL &&
	    (a[0] == CLOCK_MONOTONIC || (a[0] == CLOCK_REALTIME && !a[1])))
		timer_note(x, id, a[1] ? ts_ns(ts) : xsc__now() + ts_ns(ts));
	io_uring_prep_timeout(xsc__sqe(x, id, 0), &aux_of(x, id)->tm.ts, 0, flags);
	return 1;
}

/* A timeout that expires completes with -ETIME: the sleep's 0. */
long xsc__done_sleep(struct xsc *x, int id)
{
	int res = slot_of(x, id)->res[0];

	timer_forget(x, id);
	return res == -ETIME ? 0 : res;
}

/* Entry id's first SQE, then a LINK_TIMEOUT of ms milliseconds when ms
 * is positive (negative: none, the wait has no end): the parts queued. */
static int link_ms(struct xsc *x, int id, struct io_uring_sqe *sqe, int ms)
{
	union xsc_aux *ax = aux_of(x, id);

	if (ms < 0)
		return 1;
	ax->tm.ts.tv_sec = ms / 1000;
	ax->tm.ts.tv_nsec = (ms % 1000) * 1000000L;
	sqe->flags |= IOSQE_IO_LINK;
	io_uring_prep_link_timeout(xsc__sqe(x, id, 1), &ax->tm.ts, 0);
	return 2;
}

/* poll(fds, 1, timeout): POLL_ADD, linked to a LINK_TIMEOUT when the
 * timeout is positive.  Timeout 0 (a non-blocking check) and several fds
 * are declined. */
int xsc__prep_poll(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	struct xsc_slot *s = slot_of(x, id);
	union xsc_aux *ax = aux_of(x, id);
	struct io_uring_sqe *sqe;
	int tmo = (int)a[2];

	if (a[1] != 1 || tmo == 0 ||
	    xsc__ucopy_in_for(x, s->tag, &ax->tm.pfd, PTR(a[0]), sizeof(struct pollfd)) < 0)
		return 0;
	if (ax->tm.pfd.fd < 0)
		return 0;
	s->uptr = PTR(a[0]);
	sqe = xsc__sqe(x, id, 0);
	io_uring_prep_poll_add(sqe, ax->tm.pfd.fd, (unsigned short)ax->tm.pfd.events);
	return link_ms(x, id, sqe, tmo);
}

long xsc__done_poll(struct xsc *x, int id)
{
	struct xsc_slot *s = slot_of(x, id);
	struct pollfd *u = s->uptr;
	short rev;
	long ret;

	if (s->res[0] == -EBADF)
		return XSC_RETRY_SYNC;	/* poll(2) reports POLLNVAL instead */
	if (s->res[0] >= 0) {
		/* poll(2) reports only the asked events plus ERR/HUP/NVAL */
		rev = (short)(s->res[0] & (aux_of(x, id)->tm.pfd.events | POLLERR | POLLHUP |
					   POLLNVAL));
		ret = rev != 0;
	} else if (s->res[0] == -ECANCELED && s->res[1] == -ETIME) {
		rev = 0;
		ret = 0;	/* the timeout expired */
	} else {
		return s->res[0];
	}
	if (xsc__ucopy_out_for(x, s->tag, &u->revents, &rev, sizeof(rev)) < 0)
		return -EFAULT;
	return ret;
}

/* epoll_wait(epfd, events, n, ms), and epoll_pwait without a mask:
 * EPOLL_WAIT (it completes once events are ready, with them copied out as
 * epoll_wait copies them), linked to a LINK_TIMEOUT when ms is positive.
 * What epoll_wait refuses before it looks at the descriptor, io_uring's
 * form does not check: a count out of range (-EINVAL) and an array
 * outside user space (-EFAULT) are declined to the fallback, which gives
 * the kernel's answer.  ms 0 (a look that never waits) is declined. */
#define EP_MAX_EVENTS (INT_MAX / 12)	/* sizeof(struct epoll_event) */
#define USER_TOP 0x7ffffffff000UL	/* TASK_SIZE_MAX, 4-level paging */

int xsc__prep_epoll_wait(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	struct io_uring_sqe *sqe;
	int n = (int)a[2], ms = (int)a[3];
	uint64_t p = (uint64_t)a[1];

	if (n <= 0 || n > EP_MAX_EVENTS || ms == 0 || p > USER_TOP ||
	    (uint64_t)n * 12 > USER_TOP - p)
		return 0;
	sqe = xsc__sqe(x, id, 0);
	io_uring_prep_rw(XSC_OP_EPOLL_WAIT, sqe, (int)a[0], PTR(a[1]), (unsigned)n, 0);
	return link_ms(x, id, sqe, ms);
}

long xsc__done_epoll_wait(struct xsc *x, int id)
{
	struct xsc_slot *s = slot_of(x, id);

	if (s->res[0] == -ECANCELED && s->res[1] == -ETIME)
		return 0;	/* the timeout expired */
	return s->res[0];
}

/* futex WAIT/WAKE and their BITSET forms without a timeout.  Everything
 * else (timeouts, requeue, PI, wake-op) is declined to the fallback. */
int xsc__prep_futex(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	struct io_uring_sqe *sqe;
	int op = (int)a[1], cmd = op & FUTEX_CMD_MASK;
	uint32_t flags = FUTEX2_SIZE_U32, mask = XSC_FUTEX_BITSET_ANY;
	uint64_t val = (uint32_t)a[2];

	if (op & FUTEX_CLOCK_REALTIME)
		return 0;
	if (op & FUTEX_PRIVATE_FLAG)
		flags |= FUTEX2_PRIVATE;
	if (cmd == FUTEX_WAIT_BITSET || cmd == FUTEX_WAKE_BITSET) {
		mask = (uint32_t)a[5];
		if (!mask)
			return 0;
	}
	if ((cmd == FUTEX_WAIT || cmd == FUTEX_WAIT_BITSET) && !a[3]) {
		op = XSC_OP_FUTEX_WAIT;
	} else if (cmd == FUTEX_WAKE || cmd == FUTEX_WAKE_BITSET) {
		if ((int)val <= 0)
			return 0;
		op = XSC_OP_FUTEX_WAKE;
	} else {
		return 0;
	}
	if (!xsc__uring_has(x, (unsigned)op))
		return 0;
	sqe = xsc__sqe(x, id, 0);
	io_uring_prep_rw(op, sqe, (int)flags, PTR(a[0]), 0, 0);
	sqe->addr2 = val;
	sqe->addr3 = mask;
	return 1;
}

/* A failing waitid(2) still writes infop's fields, zeroed (kernel/exit.c:
 * si_signo, si_errno, si_code, then si_pid, si_uid, si_status), and
 * answers -EFAULT when it cannot; io_uring leaves infop alone. */
long xsc__done_waitid(struct xsc *x, int id)
{
	long res = slot_of(x, id)->res[0];
	char *u = (char *)A(x, id)[2];
	static const char zero[12];

	if (res >= 0 || !u)
		return res;
	if (xsc__ucopy_out(u, zero, 12) < 0 || xsc__ucopy_out(u + 16, zero, 12) < 0)
		return -EFAULT;
	return res;
}

/* waitid(which, pid, infop, options, rusage); rusage is not in io_uring. */
int xsc__prep_waitid(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	struct io_uring_sqe *sqe;

	if (a[4])
		return 0;
	sqe = xsc__sqe(x, id, 0);
	io_uring_prep_rw(XSC_OP_WAITID, sqe, (int)a[1], NULL, (unsigned)a[0], 0);
	sqe->file_index = (uint32_t)a[3];
	sqe->addr2 = (uint64_t)a[2];
	return 1;
}
