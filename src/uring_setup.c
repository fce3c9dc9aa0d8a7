/*
 * uring_setup.c - the io_uring executor's ring: made for the handle
 * (SQPOLL or not, DEFER_TASKRUN, SUBMIT_ALL where the kernel has them,
 * each feature tried and its -EINVAL caught), its fd registered and put
 * out of the program's range, its opcodes probed, and taken down without
 * touching a ring that is not the owner's.  Why the SQ holds a batch and
 * the CQ every entry: uring.c, "Sizing".
 */
#include "uring.h"
#include "handle.h"
#include "rawio.h"
#include "cpus.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "rawsys.h"

static unsigned pow2(unsigned v)
{
	unsigned p = 1;
	while (p < v)
		p <<= 1;
	return p;
}

#define SQ_MAX 512	/* 32 KiB of SQEs: a batch, not every entry */

/* One SQPOLL poller for the process.  Every handle's ring is attached
 * (IORING_SETUP_ATTACH_WQ) to the poller of the ring that holds the
 * share, so one kernel thread polls them all: a poller per vcpu made
 * two threads that each spin for a CPU on a 2-core host, beside the
 * vcpus and the program's peers.  The holder keeps its ring's fd open,
 * aside, for the attaching ones; when it is taken down the next SQPOLL
 * ring starts a poller of its own and holds the share.  A forked
 * child's copy is its parent's: not used.  With XSC_SYSCALL_CPU each
 * ring keeps its own poller on that CPU. */
static struct {
	atomic_flag lock;
	struct xsc *holder;
	int fd, pid;
} share = { .lock = ATOMIC_FLAG_INIT, .fd = -1 };

static void share_lock(void)
{
	while (atomic_flag_test_and_set_explicit(&share.lock, memory_order_acquire))
		__builtin_ia32_pause();
}

static void share_unlock(void)
{
	atomic_flag_clear_explicit(&share.lock, memory_order_release);
}

/* fd still names x's ring: the program may have closed it (daemons run
 * close_range) and reused its number */
static bool is_ring(const struct xsc *x, int fd)
{
	struct stat st;

	return fd >= 0 && xsc__sys2(SYS_fstat, fd, &st) == 0 &&
	       (uint64_t)st.st_dev == x->ring_dev && (uint64_t)st.st_ino == x->ring_ino;
}

/* The share's fd, if it still names the holder's ring in this process */
static int share_fd(void)
{
	if (share.fd < 0 || share.pid != (int)xsc__sys0(SYS_getpid) ||
	    !is_ring(share.holder, share.fd))
		return -1;
	return share.fd;
}

/* wq_fd: an SQPOLL ring's poller to attach to (share_fd), or -1 */
static int ring_init(struct xsc *x, bool sqpoll, int wq_fd)
{
	struct io_uring_params p = { 0 };
	unsigned cq = pow2(3 * x->n + 8);
	unsigned sq = cq < SQ_MAX ? cq : SQ_MAX;

	/* SUBMIT_ALL: an SQE that fails before it is issued does not stop
	 * the submission (xsc__uring_submit goes on without it, 5.18) */
	p.flags = IORING_SETUP_CQSIZE | IORING_SETUP_SUBMIT_ALL;
	p.cq_entries = cq;
	if (sqpoll) {
		p.flags |= IORING_SETUP_SQPOLL;
		p.sq_thread_idle = x->cfg.sq_idle_ms;
		if (x->cfg.syscall_cpu >= 0) {
			p.flags |= IORING_SETUP_SQ_AFF;
			p.sq_thread_cpu = (unsigned)x->cfg.syscall_cpu;
		} else if (wq_fd >= 0) {
			p.flags |= IORING_SETUP_ATTACH_WQ;
			p.wq_fd = (unsigned)wq_fd;
		}
	} else if (x->cfg.flags & XSC_DEFER_TASKRUN) {
		/* Completions wait until the one issuer enters (6.1): no
		 * wakeup or task-work signal per completion, the work runs
		 * in a batch inside the next io_uring_enter.  TASKRUN_FLAG
		 * says in the SQ flags when some is pending, so reaping can
		 * tell when to enter. */
		p.flags |= IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN |
			   IORING_SETUP_TASKRUN_FLAG;
	} else {
		/* one issuer, completions run when it enters the kernel */
		p.flags |= IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_COOP_TASKRUN;
	}
	struct io_uring_params asked = p;
	int ret = io_uring_queue_init_params(sq, &x->ring, &p);
	if (ret < 0 && (asked.flags & IORING_SETUP_ATTACH_WQ)) {
		/* not that poller: one of its own */
		asked.flags &= ~IORING_SETUP_ATTACH_WQ;
		asked.wq_fd = 0;
		p = asked;
		ret = io_uring_queue_init_params(sq, &x->ring, &p);
	}
	if (ret == -EINVAL) {	/* before 5.18 */
		p = asked;
		p.flags &= ~IORING_SETUP_SUBMIT_ALL;
		asked = p;
		ret = io_uring_queue_init_params(sq, &x->ring, &p);
	}
	if (ret == -EINVAL && (asked.flags & IORING_SETUP_DEFER_TASKRUN)) {
		/* before 6.1: the default mode, completions run on any
		 * return to user space */
		p = asked;
		p.flags &= ~(IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_TASKRUN_FLAG);
		p.flags |= IORING_SETUP_COOP_TASKRUN;
		ret = io_uring_queue_init_params(sq, &x->ring, &p);
	}
	x->defer_tw = ret == 0 && (p.flags & IORING_SETUP_DEFER_TASKRUN);
	return ret;
}

static void describe(char *buf, size_t len, const char *what, int err)
{
	char v[16], lock[160] = "";
	int dis = -1;
	struct rlimit rl;

	if (xsc__read_small("/proc/sys/kernel/io_uring_disabled", v, sizeof(v)) > 0)
		dis = atoi(v);
	/* the user's locked memory is used up: say which limit, and how
	 * to raise it (see the top) */
	if (err == -ENOMEM && xsc__sys4(SYS_prlimit64, 0, RLIMIT_MEMLOCK, 0, &rl) == 0 &&
	    rl.rlim_cur != RLIM_INFINITY)
		snprintf(lock, sizeof(lock), " (io_uring counts rings against "
			 "RLIMIT_MEMLOCK, %lu KiB for all of this user's "
			 "processes; ulimit -l raises it)",
			 (unsigned long)(rl.rlim_cur >> 10));
	snprintf(buf, len, "%s: %s%s%s", what, strerror(-err), lock,
		 dis == 2 ? " (kernel.io_uring_disabled=2)" :
		 dis == 1 && err == -EPERM ? " (kernel.io_uring_disabled=1)" :
		 err == -EPERM ? " (seccomp or container policy?)" : "");
}

/* Creates the ring the configuration asks for; records why not.  Called
 * with the backend already resolved by probe.c. */
static int setup(struct xsc *x)
{
	bool want_sqpoll = x->cfg.backend == XSC_BACKEND_SQPOLL;
	int ret;

	/* The poller spins while there is work, on a CPU the process may
	 * use: with one, it takes turns with the program's own thread, each
	 * time for a slice of spinning (a program of yielding threads ran
	 * 50x slower than on a plain ring).  A pinned poller is the
	 * operator's choice. */
	if (want_sqpoll && x->cfg.syscall_cpu < 0 && xsc__cpus_usable() < 2) {
		snprintf(x->sq_reason, sizeof(x->sq_reason), "one usable CPU, "
			 "by affinity or cgroup quota, where the poller would spin "
			 "beside the program");
		x->pr.sqpoll_reason = x->sq_reason;
		want_sqpoll = false;
	}
	/* the process's poller, unless XSC_SYSCALL_CPU pins one per ring */
	int wq_fd = want_sqpoll && x->cfg.syscall_cpu < 0 ? share_fd() : -1;

	ret = ring_init(x, want_sqpoll, wq_fd);
	if (ret < 0 && want_sqpoll) {
		describe(x->sq_reason, sizeof(x->sq_reason), "SQPOLL ring", ret);
		x->pr.sqpoll_reason = x->sq_reason;
		ret = ring_init(x, false, -1);
		want_sqpoll = false;
	}
	if (ret < 0) {
		describe(x->reason, sizeof(x->reason), "io_uring_setup", ret);
		x->pr.reason = x->reason;
		return ret;
	}
	/* a registered ring fd spares every io_uring_enter an fget/fput, and
	 * keeps the ring usable if the program closes its fd (close_range) */
	x->ring_registered = io_uring_register_ring_fd(&x->ring) == 1;
	x->have_ring = true;
	x->ring_open = true;
	x->sqpoll = want_sqpoll;
	x->pr.uring = 1;
	x->pr.sqpoll = want_sqpoll;
	x->probe = io_uring_get_probe_ring(&x->ring);
	x->pr.nops = x->probe ? x->probe->last_op + 1 : 0;
	/* The program's descriptor numbers are its own: natively its first
	 * open gets 3 and its last the one below RLIMIT_NOFILE.  A registered
	 * ring needs no fd from 6.3 on (enter and register by index), so the
	 * fd is closed; before that it is moved above the soft limit. */
	struct stat st;
	bool hold = want_sqpoll && x->cfg.syscall_cpu < 0 && wq_fd < 0;
	if (x->ring_registered && (x->ring.features & XSC_FEAT_REG_REG_RING) && !hold) {
		xsc__sys1(SYS_close, x->ring.ring_fd);
		x->ring.ring_fd = -1;
	} else {
		x->ring.ring_fd = xsc__fd_aside(x->ring.ring_fd);
	}
	if (xsc__sys2(SYS_fstat, x->ring.ring_fd, &st) == 0) {
		x->ring_dev = st.st_dev;
		x->ring_ino = st.st_ino;
	}
	if (hold && x->ring.ring_fd >= 0) {
		share.holder = x;
		share.fd = x->ring.ring_fd;
		share.pid = (int)xsc__sys0(SYS_getpid);
	}
	return 0;
}

int xsc__uring_setup(struct xsc *x)
{
	int ret;

	if (x->cfg.backend != XSC_BACKEND_SQPOLL)
		return setup(x);
	share_lock();
	ret = setup(x);
	share_unlock();
	return ret;
}

long xsc__uring_register(struct xsc *x, unsigned op, void *arg, unsigned nr)
{
	struct io_uring *r = &x->ring;

	if (r->ring_fd >= 0)
		return xsc__sys4(SYS_io_uring_register, r->ring_fd, op, arg, nr);
	if (!x->ring_registered)
		return -EBADF;
	return xsc__sys4(SYS_io_uring_register, r->enter_ring_fd,
			 op | XSC_REGISTER_USE_REGISTERED_RING, arg, nr);
}

/* liburing's own flag (its int_flags.h, not installed): the ring fd is
 * registered, and io_uring_queue_exit unregisters it */
#define XSC_LIBURING_INT_FLAG_REG_RING 1

/* The ring's fd was closed at setup (6.3+), or the program may have
 * closed it (daemons run close_range) and reused its number: close it
 * only if it is still the ring; else drop the registered ring through
 * its index, unmap, and close nothing.
 *
 * The registered index is one of the owner thread's table: the same
 * number in another thread's (or a forked child's) table names another
 * ring, which unregistering would destroy (xsc_close of a handle opened
 * by another thread cost the caller its own second handle's ring,
 * t_owner).  Only the owner unregisters; elsewhere the registration
 * lives on until the owner exits or closes nothing of its own. */
static void ring_exit(struct xsc *x)
{
	struct io_uring *r = &x->ring;
	bool mine = x->gen == atomic_load(&xsc__fork_gen) &&
		    x->owner_tid == (int)xsc__sys0(SYS_gettid);

	if (!mine)
		r->int_flags &= (__u8)~XSC_LIBURING_INT_FLAG_REG_RING;
	if (is_ring(x, r->ring_fd)) {
		io_uring_queue_exit(r);
		return;
	}
	if (x->ring_registered && mine) {
		struct io_uring_rsrc_update up = { .offset = (unsigned)r->enter_ring_fd };
		xsc__sys4(SYS_io_uring_register, r->enter_ring_fd,
			  IORING_UNREGISTER_RING_FDS | XSC_REGISTER_USE_REGISTERED_RING,
			  &up, 1);
	}
	/* queue_exit's own unregister and close(-1) then touch nothing */
	r->ring_fd = -1;
	io_uring_queue_exit(r);
}

void xsc__uring_teardown(struct xsc *x)
{
	if (x->sqpoll && share.holder == x) {
		share_lock();
		if (share.holder == x) {
			share.holder = NULL;
			share.fd = -1;
		}
		share_unlock();
	}
	if (x->probe)
		io_uring_free_probe(x->probe);
	if (x->ring_open)
		ring_exit(x);
	x->probe = NULL;
	x->have_ring = false;
	x->ring_open = false;
}

bool xsc__uring_has(struct xsc *x, unsigned op)
{
	return x->probe && io_uring_opcode_supported(x->probe, (int)op);
}
