/*
 * ringwait.c - transparent mode: a program's own io_uring, whose waits
 * for completions would hold a vcpu in the kernel (sched/syscalls.c
 * routes io_uring_setup and io_uring_enter here).
 */
#include "sched.h"

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>

#include "internal.h"
#include "ucopy.h"

/* A fiber waiting in io_uring_enter for completions would hold its vcpu
 * in the kernel, and every fiber behind it stops; with as many waiters as
 * vcpus (MariaDB's InnoDB has a completion thread per ring) the program
 * hung.  A wait is split: the enter submits and flushes without waiting,
 * then the fiber parks on the ring fd's readiness (a ring polls readable
 * when its completion queue is not empty), and the call returns what the
 * kernel's wait would: the submitted count, else 0, or -ETIME when the
 * timeout passes first.  A ring made with IORING_SETUP_IOPOLL posts
 * completions only when someone enters it, so its waits stay whole (on
 * the vcpu), as do waits with a signal mask (the caller's thread), an
 * absolute or registered-wait argument, a minimum wait time, or a
 * registered ring index; a wait for more than one completion parks until
 * the first and waits for the rest in the kernel. */
#define ENTER_GETEVENTS 1u
#define ENTER_EXT_ARG (1u << 3)
#define ENTER_REGISTERED_RING (1u << 4)
#define ENTER_KNOWN 0xfu		/* GETEVENTS, SQ_WAKEUP, SQ_WAIT, EXT_ARG */
#define SETUP_IOPOLL 1u
#define NRINGFD 65536

static unsigned char iopoll_fd[NRINGFD / 8];	/* rings set up with IOPOLL */

struct getevents_arg {		/* struct io_uring_getevents_arg */
	uint64_t sigmask;
	uint32_t sigmask_sz, min_wait_usec;
	uint64_t ts;
};

void xsc__ring_made(long fd, const long *a)
{
	const uint32_t *params = (const uint32_t *)a[1];	/* .flags at 8 */

	if (fd < 0 || fd >= NRINGFD)
		return;
	if (params[2] & SETUP_IOPOLL)
		__atomic_or_fetch(&iopoll_fd[fd / 8], 1u << (fd % 8), __ATOMIC_RELAXED);
	else
		__atomic_and_fetch(&iopoll_fd[fd / 8], ~(1u << (fd % 8)), __ATOMIC_RELAXED);
}

long xsc__ring_wait(const long *a)
{
	unsigned flags = (unsigned)a[3], min = (unsigned)a[2];
	struct getevents_arg g;
	struct timespec ts;
	long fd = a[0], r, w;
	int64_t deadline = -1;

	if (!(flags & ENTER_GETEVENTS) || !min || (flags & ~ENTER_KNOWN) ||
	    fd < 0 || fd >= NRINGFD || (iopoll_fd[fd / 8] & (1u << (fd % 8))))
		return xsc__call_here(SYS_io_uring_enter, (const int64_t *)a);
	if (flags & ENTER_EXT_ARG) {
		/* what the kernel would refuse, it refuses itself */
		if ((size_t)a[5] != sizeof(g) || xsc__ucopy_in(&g, (const void *)a[4], sizeof(g)) ||
		    g.sigmask || g.min_wait_usec ||
		    (g.ts && (xsc__ucopy_in(&ts, (const void *)(uintptr_t)g.ts, sizeof(ts)) ||
			      ts.tv_sec < 0 || ts.tv_nsec < 0 || ts.tv_nsec >= 1000000000)))
			return xsc__call_here(SYS_io_uring_enter, (const int64_t *)a);
		if (g.ts)
			deadline = xsc__now() + ts.tv_sec * 1000000000LL + ts.tv_nsec;
	}
	r = xsc__call_here(SYS_io_uring_enter,
			   (const int64_t[6]){ fd, a[1], 0, flags, a[4], a[5] });
	if (r < 0)
		return r;
	for (;;) {
		struct pollfd p = { (int)fd, POLLIN, 0 };
		struct timespec left, *lp = NULL;

		if (xsc__call_here(SYS_poll, (const int64_t[6]){ (long)&p, 1, 0 }) > 0)
			break;
		if (deadline >= 0) {
			int64_t ns = deadline - xsc__now();
			if (ns <= 0)
				return r ? r : -ETIME;
			left = (struct timespec){ ns / 1000000000, ns % 1000000000 };
			lp = &left;
		}
		w = xsc__fiber_call(SYS_ppoll, (const long[6]){ (long)&p, 1, (long)lp, 0, 8 });
		if (w < 0 && w != -EINTR)
			return r ? r : w;
	}
	if (min > 1) {	/* the rest in the kernel: it sees how many are there */
		w = xsc__call_here(SYS_io_uring_enter,
				   (const int64_t[6]){ fd, 0, min, flags, a[4], a[5] });
		return r ? r : w;
	}
	return r;
}
