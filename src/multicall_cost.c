/*
 * multicall_cost.c - the time model behind the AUTO path of multi-calls.
 *
 * AUTO runs a chain on the path expected to finish first, not the one
 * that crosses into the kernel least often: a crossing saved on the
 * caller's thread is worth nothing if what replaces it takes longer.
 * Expected time of a chain of `calls` system calls, in the caller's wall
 * clock, leaving out the calls' own kernel work (the same on every path):
 *
 *   inline   calls * Tsys
 *   uring    enters * Tenter + sync * Tsys + calls * Top
 *   worker   Thandoff + calls * Tsys
 *
 * Tsys is one null system call, Tenter one io_uring_enter that submits
 * and waits, Top io_uring's own work per request (SQE, request, CQE);
 * enters and sync come from the chain (struct mc_cost: one enter, one
 * more per reference io_uring cannot carry, and the fcntl/fstat calls
 * that classify fds).  The worker path makes the same plain calls as the
 * inline one, on a syscall thread, after a hand-off the caller waits
 * for (Thandoff > 0: a futex wake or a spinning thread on another core,
 * 0.4-9 us in `xsc bench null`, batch 1), so it never finishes first and
 * Thandoff needs no measuring: AUTO on an auto handle never takes it.
 * multicall.c compares the two others (uring_faster()).
 *
 * Measured, not documented constants: the choice hinges on Tenter/Tsys
 * and Top/Tsys, and those move by machine and even by boot.  On this
 * project's 2-vCPU VM `xsc bench null` measured Tsys 118 ns, Tenter 329,
 * Top 64 in one session and Tsys 970 ns, Tenter ~1300, Top ~60 after a
 * reboot (same binary); the machine of issue 15 has Tsys ~45 ns.  A
 * constant right for one is wrong by 2-20x for another.  So the first
 * AUTO choice of a process measures them: 8 getppid calls, and NOPs on
 * the handle's own ring, 1 and 16 per io_uring_enter; each the best of 5
 * (a preempted sample only ever comes out slower): some 90 syscalls'
 * worth, ~10 us with 100 ns syscalls, 80-110 us on this VM at ~1 us.
 * Not on a ring of its own: setting one up and tearing it down cost
 * 130-400 us here, more than most chains.  The handle's ring must be
 * idle then (nothing in flight, no FUTEX_WAIT armed, no chain running on
 * it), so every CQE is one of ours; otherwise, and on a thread that
 * finds the measurement under way, the first session's numbers above
 * serve for that choice.
 * The measurement's crossings are the owner's: counted in its stats.
 */
#include "multicall.h"

#include <stdatomic.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>

#include "rawsys.h"

#define ROUNDS 5
#define SYSCALLS 8
#define NOPS 16
#define UD_CALIB (~1ULL)	/* ignored by the reaper: UD_CANCEL in uring.c */

enum { UNMEASURED, MEASURING, READY };

static const struct mc_model fallback = { .tsys = 118, .tenter = 329, .top = 64 };
static struct mc_model measured;
static _Atomic int state = UNMEASURED;

static int64_t sys_ns(struct xsc *x)
{
	int64_t best = INT64_MAX;

	for (int r = 0; r < ROUNDS; r++) {
		int64_t t0 = xsc__now();
		for (int i = 0; i < SYSCALLS; i++)
			xsc__sys0(SYS_getppid);
		int64_t t = xsc__now() - t0;
		best = t < best ? t : best;
	}
	x->st.crossings += ROUNDS * SYSCALLS;
	return best / SYSCALLS;
}

/* The best time of n NOPs submitted and waited for in one enter, or -1. */
static int64_t enter_ns(struct xsc *x, unsigned n)
{
	int64_t best = INT64_MAX;

	for (int r = 0; r < ROUNDS; r++) {
		int64_t t0 = xsc__now();
		for (unsigned i = 0; i < n; i++) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&x->ring);
			if (!sqe)
				return -1;
			io_uring_prep_nop(sqe);
			io_uring_sqe_set_data64(sqe, UD_CALIB);
		}
		/* NOPs complete inside the enter; a signal that cut the wait
		 * short must not make us step over CQEs not posted yet.  If
		 * the enter fails, the SQEs go with the next flush and the
		 * reaper drops their CQEs (UD_CALIB). */
		x->st.crossings++;
		int ret = io_uring_submit_and_wait(&x->ring, n);
		if (ret <= 0)
			return -1;
		while (io_uring_cq_ready(&x->ring) < (unsigned)ret) {
			struct io_uring_cqe *cqe;
			x->st.crossings++;
			io_uring_wait_cqe_nr(&x->ring, &cqe, (unsigned)ret);
		}
		io_uring_cq_advance(&x->ring, (unsigned)ret);
		if (ret != (int)n)
			return -1;
		int64_t t = xsc__now() - t0;
		best = t < best ? t : best;
	}
	return best;
}

/* Whether every CQE the ring posts from now on will be one of ours. */
static bool ring_idle(const struct xsc *x)
{
	return x->have_ring && !x->sqpoll && !x->inflight_uring && !x->sq_ready &&
	       !x->futex_armed && !io_uring_cq_ready(&x->ring) &&
	       xsc__mc_uring_idle();
}

static void measure(struct xsc *x, struct mc_model *m)
{
	int64_t tsys = sys_ns(x), t1, tn, top;

	m->tsys = (unsigned)(tsys > 0 ? tsys : 1);
	enter_ns(x, NOPS);	/* warm up: the first requests allocate */
	t1 = enter_ns(x, 1);
	tn = enter_ns(x, NOPS);
	if (t1 < 0 || tn < 0) {	/* cannot happen on an idle ring: the ratios */
		m->tenter = (unsigned)((uint64_t)m->tsys * fallback.tenter / fallback.tsys);
		m->top = (unsigned)((uint64_t)m->tsys * fallback.top / fallback.tsys);
		return;
	}
	top = (tn - t1) / (NOPS - 1);
	top = top > 0 ? top : 1;
	m->top = (unsigned)top;
	m->tenter = (unsigned)(t1 - top > 0 ? t1 - top : 1);
}

const struct mc_model *xsc__mc_model(struct xsc *x)
{
	/* acquire: pairs with the release store below, after which
	 * `measured` is complete */
	int s = atomic_load_explicit(&state, memory_order_acquire);
	int expect = UNMEASURED;

	if (s == READY)
		return &measured;
	if (s == MEASURING || !ring_idle(x) ||
	    !atomic_compare_exchange_strong_explicit(&state, &expect, MEASURING,
						     memory_order_acquire,
						     memory_order_acquire))
		return expect == READY ? &measured : &fallback;
	measure(x, &measured);
	atomic_store_explicit(&state, READY, memory_order_release);
	return &measured;
}

void xsc__mc_model_set(const struct mc_model *m)
{
	if (m)
		measured = *m;
	atomic_store_explicit(&state, m ? READY : UNMEASURED, memory_order_release);
}
