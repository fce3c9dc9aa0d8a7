/*
 * hostprof.h - the host profile: what the machine charges for the things
 * xsc's decisions trade against each other (a system call, a posted call,
 * a TLS switch, a thread switch), measured once and cached per boot, CPU
 * and kernel (hostprof.c, hostprof_measure.c).
 */
#ifndef XSC_HOSTPROF_H
#define XSC_HOSTPROF_H

#include <stdbool.h>
#include <stddef.h>

#pragma GCC visibility push(hidden)

/* A cost that could not be measured here (io_uring unavailable, a
 * seccomp filter active, a call refused): written "unavailable". */
#define XSC_HP_NONE (-1L)

enum xsc_hp_source {
	XSC_HP_MEASURED,	/* measured by this process */
	XSC_HP_CACHED,		/* read from the cache file */
	XSC_HP_FORCED,		/* read from XSC_HOST_PROFILE=FILE */
};

struct xsc_hostprof {
	/* the measured values; each is a key of the file format */
	long null_syscall_ns;	/* getppid by a raw syscall instruction */
	long posted_batch1_ns;	/* a NOP submitted and reaped alone */
	long posted_batch32_ns;	/* per NOP, 32 submitted and reaped at once */
	long posted_async_batch32_ns; /* the same with IOSQE_ASYNC: a call
				   io_uring runs in its worker threads */
	long tls_switch_ns;	/* wrfsbase, or arch_prctl(ARCH_SET_FS) */
	long thread_switch_ns;	/* one way of a futex ping-pong, one core */
	long cross_core_wake_ns; /* the same across two cores */
	long xsave_bytes;	/* the xsave area of the enabled features */
	long xsavec;		/* 1 if the CPU has xsavec */
	char tls_switch_via[16]; /* "wrfsbase" or "arch_prctl" */

	/* what it is the profile of (the cache key; "" in a forced file
	 * that leaves them out) */
	char boot_id[40];
	char cpu[80];
	char kernel[72];
	char io_uring_disabled[8];

	enum xsc_hp_source source;
	char file[256];		/* the cache or forced file, or "" */
	char note[384];		/* why a measured profile was not cached, or "" */
	long measure_us;	/* time the measurement took (measured only) */
	/* the 1-minute load average per allowed CPU when it was measured,
	 * in percent: over 100, other threads waited for the cores and
	 * every wait across threads came out longer (hostprof.c load()) */
	long load_pct;

	/* The decisions (hostprof.c decide()).  A call that may run in the
	 * caller does so when that costs less than posting it: */
	bool here_ring;		/* a system call < a posted call in the ring */
	bool here_async;	/* a system call < one in io_uring's workers */
	bool here_look;		/* two system calls (a look at the path, then
				   the call) < one in io_uring's workers */
	/* a call that cannot wait, made by a fiber with nothing to batch
	 * it with: a system call < a NOP posted and reaped alone (the
	 * runtime, sched/syscalls.c) */
	bool here_alone;
	/* the same for an open that needs a look at its path first: two
	 * system calls < a call posted alone to io_uring's workers (a NOP
	 * posted alone, and a switch to a worker thread and back) */
	bool here_look_alone;
	char why_alone[200];
	char why_cheap[240];	/* the route reason of a .cheap row */
	/* the route reason of a .cheap_if row, which speaks of opens:
	 * update decide() when another row gets a .cheap_if */
	char why_open[640];
};

/* The profile of this host: loaded on first use, once per process and
 * thread-safe (a forked child keeps its parent's).  From
 * XSC_HOST_PROFILE=FILE when set, else the cache, else measured (and
 * cached).  NULL when the forced file is unusable; *err (if not NULL)
 * then names the file and what is wrong or missing.  Never measures
 * io_uring under a seccomp filter (its posted costs are then
 * unavailable unless a cache has them). */
const struct xsc_hostprof *xsc__hostprof(const char **err);

/* The profile as the file format: `key value` lines, units in the keys.
 * Returns the length (as snprintf). */
int xsc__hostprof_format(const struct xsc_hostprof *hp, char *buf, size_t len);
/* Writes the format and where it came from to path: beside it first,
 * then renamed over it, so a reader never sees half of it; the
 * directories on the way are made (0700).  0 or -errno. */
int xsc__hostprof_save(const struct xsc_hostprof *hp, const char *path);
/* Where it came from, in words: "measured", "cached in FILE", "forced by
 * XSC_HOST_PROFILE=FILE" (+ the note). */
int xsc__hostprof_source(const struct xsc_hostprof *hp, char *buf, size_t len);
/* A default spin time of the owner and the syscall threads: what going
 * to sleep and being woken costs here. */
unsigned xsc__hostprof_spin_ns(const struct xsc_hostprof *hp);

/* hostprof_measure.c: fills the measured values of *hp (not the key or
 * the decisions); ring: whether io_uring may be measured. */
void xsc__hostprof_measure(struct xsc_hostprof *hp, bool ring);
/* The cache key of this host into *hp: boot, CPU, kernel, the
 * io_uring_disabled sysctl. */
void xsc__hostprof_identify(struct xsc_hostprof *hp);
/* The 1-minute load average per allowed CPU, in percent (-1: unknown). */
long xsc__hostprof_load(void);

#pragma GCC visibility pop
#endif
