/*
 * hostprof_measure.c - measuring the host profile (hostprof.h; what each
 * key is: docs/design.md, "Host profile").
 *
 * Rules:
 *  - each figure is the best of a few short runs after a warm-up round:
 *    a preempted run only ever comes out slower, so the minimum is the
 *    machine's own cost; past a budget of 15 ms each figure stops at the
 *    rounds it has (at least one); about 2 ms in all where a system call
 *    costs 75 ns, most of it waking another core;
 *  - posted calls are measured on a private ring with the flags xsc's own
 *    rings use, not a handle's: the figure is the host's, whatever a
 *    handle has in flight;
 *  - the TLS switch writes the value the thread has, so nothing changes;
 *  - only raw system calls, raw clones and liburing: this may run while
 *    transparent mode starts, before the program's threads exist
 *    (preload/start.c).
 */
#include "hostprof.h"
#include "internal.h"
#include "rawio.h"

#include <cpuid.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>

#include "rawsys.h"

#ifndef HWCAP2_FSGSBASE
#define HWCAP2_FSGSBASE (1 << 1)
#endif
#define ARCH_SET_FS 0x1002
#define ARCH_GET_FS 0x1003

#define ROUNDS 4
#define BUDGET_NS (15 * 1000000L)

/* The measurement's end: past it, each figure makes do with the rounds
 * it has (at least one after the warm-up), so a loaded machine, where a
 * wake-up waits for a busy core, does not stretch it past ~20 ms. */
static int64_t deadline;

static bool more(int r)
{
	return r <= ROUNDS && (r < 2 || xsc__now() < deadline);
}

/* ---- what it is the profile of ------------------------------------------ */

static void read_line(const char *path, char *out, size_t len, const char *none)
{
	char buf[128];
	size_t n;

	if (xsc__read_small(path, buf, sizeof(buf)) < 0)
		snprintf(buf, sizeof(buf), "%s", none);
	n = strcspn(buf, "\n");
	n = n < len ? n : len - 1;
	memcpy(out, buf, n);
	out[n] = '\0';
}

/* "family/model/stepping brand", as /proc/cpuinfo numbers them. */
static void cpu_name(char *out, size_t len)
{
	unsigned a, b, c, d, r[12] = { 0 };
	unsigned fam, model;
	const char *brand = (const char *)r;

	if (!__get_cpuid(1, &a, &b, &c, &d)) {
		snprintf(out, len, "unknown");
		return;
	}
	fam = (a >> 8) & 0xf;
	model = (a >> 4) & 0xf;
	if (fam == 6 || fam == 15)
		model |= ((a >> 16) & 0xf) << 4;
	if (fam == 15)
		fam += (a >> 20) & 0xff;
	for (unsigned i = 0; i < 3; i++)
		if (!__get_cpuid(0x80000002 + i, &r[4 * i], &r[4 * i + 1], &r[4 * i + 2],
				 &r[4 * i + 3]))
			r[4 * i] = 0;
	((char *)r)[47] = '\0';
	while (*brand == ' ')
		brand++;
	snprintf(out, len, "%u/%u/%u %s", fam, model, a & 0xf, *brand ? brand : "?");
}

void xsc__hostprof_identify(struct xsc_hostprof *hp)
{
	struct utsname u;

	read_line("/proc/sys/kernel/random/boot_id", hp->boot_id, sizeof(hp->boot_id),
		  "unknown");
	cpu_name(hp->cpu, sizeof(hp->cpu));
	if (xsc__sys1(SYS_uname, &u) == 0)
		snprintf(hp->kernel, sizeof(hp->kernel), "%s", u.release);
	else
		snprintf(hp->kernel, sizeof(hp->kernel), "unknown");
	read_line("/proc/sys/kernel/io_uring_disabled", hp->io_uring_disabled,
		  sizeof(hp->io_uring_disabled), "none");
}

/* ---- the measurements ----------------------------------------------------- */

static long null_syscall(void)
{
	int64_t best = INT64_MAX;

	for (int r = 0; more(r); r++) {	/* round 0 warms up */
		int64_t t0 = xsc__now();
		for (int i = 0; i < 64; i++)
			xsc__sys0(SYS_getppid);
		int64_t t = xsc__now() - t0;
		if (r && t < best)
			best = t;
	}
	return (long)(best / 64);
}

/* n NOPs submitted and reaped at once, `times` times: the best round's
 * time per NOP, or XSC_HP_NONE. */
static long nops(struct io_uring *ring, unsigned n, int times, bool async)
{
	int64_t best = INT64_MAX;

	for (int r = 0; more(r); r++) {
		int64_t t0 = xsc__now();
		for (int k = 0; k < times; k++) {
			for (unsigned i = 0; i < n; i++) {
				struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
				if (!sqe)
					return XSC_HP_NONE;
				io_uring_prep_nop(sqe);
				if (async)
					sqe->flags |= IOSQE_ASYNC;
			}
			if (io_uring_submit_and_wait(ring, n) != (int)n)
				return XSC_HP_NONE;
			while (io_uring_cq_ready(ring) < n) {
				struct io_uring_cqe *cqe;
				if (io_uring_wait_cqe_nr(ring, &cqe, n) < 0)
					return XSC_HP_NONE;
			}
			io_uring_cq_advance(ring, n);
		}
		int64_t t = xsc__now() - t0;
		if (r && t < best)	/* round 0 warms up: io-wq starts */
			best = t;
	}
	return (long)(best / ((int64_t)n * times));
}

static void posted(struct xsc_hostprof *hp)
{
	struct io_uring_params p = { .flags = IORING_SETUP_SINGLE_ISSUER |
					      IORING_SETUP_COOP_TASKRUN };
	struct io_uring ring;
	int ret = io_uring_queue_init_params(64, &ring, &p);

	if (ret == -EINVAL) {	/* before 6.0: the flags are unknown */
		memset(&p, 0, sizeof(p));
		ret = io_uring_queue_init_params(64, &ring, &p);
	}
	if (ret < 0)
		return;
	io_uring_register_ring_fd(&ring);	/* as a handle's ring is */
	hp->posted_batch1_ns = nops(&ring, 1, 16, false);
	hp->posted_batch32_ns = nops(&ring, 32, 2, false);
	hp->posted_async_batch32_ns = nops(&ring, 32, 1, true);
	io_uring_queue_exit(&ring);
}

static long tls_switch(struct xsc_hostprof *hp)
{
	bool fsgs = (getauxval(AT_HWCAP2) & HWCAP2_FSGSBASE) != 0;
	int64_t best = INT64_MAX;
	unsigned long fs;

	snprintf(hp->tls_switch_via, sizeof(hp->tls_switch_via), "%s",
		 fsgs ? "wrfsbase" : "arch_prctl");
	if (fsgs)
		__asm__ __volatile__("rdfsbase %0" : "=r"(fs));
	else if (xsc__sys2(SYS_arch_prctl, ARCH_GET_FS, &fs) < 0)
		return XSC_HP_NONE;
	for (int r = 0; more(r); r++) {
		int64_t t0 = xsc__now();
		for (int i = 0; i < 64; i++) {
			if (fsgs)
				__asm__ __volatile__("wrfsbase %0" : : "r"(fs) : "memory");
			else if (xsc__sys2(SYS_arch_prctl, ARCH_SET_FS, fs) < 0)
				return XSC_HP_NONE;
		}
		int64_t t = xsc__now() - t0;
		if (r && t < best)
			best = t;
	}
	return (long)(best / 64);
}

/* The ping-pong's shared words and the partner's stack and TLS block, in
 * one mapping: if the partner never answers, the mapping is left to it. */
#define PP_MAP (36 * 1024)
#define PP_TLS 4096
#define PP_OURS 0
#define PP_THEIRS 1
#define PP_STOP 2
struct pingpong {
	_Atomic uint32_t word;	/* whose turn: PP_OURS, PP_THEIRS, PP_STOP */
	_Atomic int ctid;	/* cleared by the kernel when it exits */
	int cpu;		/* where the partner runs */
};

static long futex_wait(_Atomic uint32_t *w, uint32_t v, long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	return xsc__sys4(SYS_futex, w, FUTEX_WAIT_PRIVATE, v, &ts);
}

/* Waits until *w is not `was`: its new value, or -1 after a second
 * without progress. */
static long await(_Atomic uint32_t *w, uint32_t was)
{
	uint32_t v;

	while ((v = atomic_load_explicit(w, memory_order_acquire)) == was)
		if (futex_wait(w, v, 1000) == -ETIMEDOUT)
			return -1;
	return v;
}

/* Gives the turn to the other side. */
static void hand(_Atomic uint32_t *w, uint32_t v)
{
	/* release: pairs with the acquire load in await() */
	atomic_store_explicit(w, v, memory_order_release);
	xsc__sys3(SYS_futex, w, FUTEX_WAKE_PRIVATE, 1);
}

static void pin(int cpu)
{
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	xsc__sys3(SYS_sched_setaffinity, 0, sizeof(one), &one);
}

static void partner(void *arg)
{
	struct pingpong *p = arg;

	pin(p->cpu);
	while (await(&p->word, PP_OURS) == PP_THEIRS)
		hand(&p->word, PP_OURS);
}

long xsc__clone_thread(unsigned long flags, void *stack_top, int *ptid,
		       int *ctid, unsigned long tls, void (*fn)(void *),
		       void *arg);

/* One way of a futex ping-pong with a raw thread pinned to cpu (the
 * caller is pinned to its own), `trips` round trips a round. */
static long pingpong(int cpu, int trips)
{
	long m = xsc__sys6(SYS_mmap, 0, PP_MAP, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *map = (char *)m;
	struct pingpong *p = (struct pingpong *)map;
	unsigned long *tcb = (unsigned long *)(map + PP_TLS - 256), *cur;
	uint64_t all = ~0ULL, old;
	int64_t best = INT64_MAX;
	long ret;

	if (m < 0 && m > -4096)
		return XSC_HP_NONE;
	/* a TLS block of its own with a copy of the thread control block (as
	 * worker.c's raw threads): a stack-protector check reads the canary */
	__asm__("mov %%fs:0x10, %0" : "=r"(cur));
	memcpy(tcb, cur, 64);
	tcb[0] = tcb[2] = (unsigned long)tcb;
	tcb[1] = 0;
	p->cpu = cpu;
	atomic_store(&p->ctid, 1);
	/* born with every signal blocked: no handler of the program's runs on it */
	xsc__sys4(SYS_rt_sigprocmask, SIG_SETMASK, &all, &old, 8);
	ret = xsc__clone_thread(CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND |
				CLONE_THREAD | CLONE_SYSVSEM | CLONE_SETTLS |
				CLONE_CHILD_CLEARTID, map + PP_MAP, NULL,
				(int *)&p->ctid, (unsigned long)tcb, partner, p);
	xsc__sys4(SYS_rt_sigprocmask, SIG_SETMASK, &old, 0, 8);
	if (ret < 0) {
		xsc__sys2(SYS_munmap, map, PP_MAP);
		return XSC_HP_NONE;
	}
	for (int r = 0; more(r); r++) {	/* round 0: the partner pins itself */
		int64_t t0 = xsc__now();
		for (int i = 0; i < trips; i++) {
			hand(&p->word, PP_THEIRS);
			if (await(&p->word, PP_THEIRS) < 0)
				return XSC_HP_NONE;	/* the mapping stays its */
		}
		int64_t t = xsc__now() - t0;
		if (r && t < best)
			best = t;
	}
	hand(&p->word, PP_STOP);
	for (int c; (c = atomic_load(&p->ctid)) != 0;)
		xsc__sys4(SYS_futex, &p->ctid, FUTEX_WAIT, c, 0);
	xsc__sys2(SYS_munmap, map, PP_MAP);
	return (long)(best / (2 * trips));
}

/* A thread switch on the caller's core (me), and a wake-up across cores
 * (to the first other core of `allowed`): the scheduler would otherwise
 * place the two as it likes (here one way of a ping-pong was 30 us
 * across cores, where waking an idle virtual CPU takes the hypervisor,
 * and 0.9 us on one core, in one run). */
static void switches(struct xsc_hostprof *hp, int me, const cpu_set_t *allowed)
{
	int other = -1;

	hp->thread_switch_ns = hp->cross_core_wake_ns = XSC_HP_NONE;
	if (me < 0)
		return;
	for (int c = 0; c < CPU_SETSIZE && other < 0; c++)
		if (CPU_ISSET(c, allowed) && c != me)
			other = c;
	hp->thread_switch_ns = pingpong(me, 48);
	if (other >= 0)
		hp->cross_core_wake_ns = pingpong(other, 4);
}

static void xsave_area(struct xsc_hostprof *hp)
{
	unsigned a, b, c, d;

	hp->xsave_bytes = 0;
	hp->xsavec = 0;
	/* OSXSAVE: the kernel enabled xsave and XCR0 says for which state */
	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27)) ||
	    __get_cpuid_max(0, NULL) < 0xd)
		return;
	__cpuid_count(0xd, 0, a, b, c, d);
	hp->xsave_bytes = b;
	__cpuid_count(0xd, 1, a, b, c, d);
	hp->xsavec = (a >> 1) & 1;
}

long xsc__hostprof_load(void)
{
	char buf[128];
	cpu_set_t set;
	long n;
	int ncpu;

	CPU_ZERO(&set);	/* the kernel writes only its CPUs' bytes */
	n = xsc__sys3(SYS_sched_getaffinity, 0, sizeof(set), &set);
	ncpu = n > 0 ? CPU_COUNT(&set) : 0;

	if (ncpu < 1 || xsc__read_small("/proc/loadavg", buf, sizeof(buf)) <= 0)
		return -1;
	return (long)(strtod(buf, NULL) * 100 / ncpu);
}

void xsc__hostprof_measure(struct xsc_hostprof *hp, bool ring)
{
	int64_t t0 = xsc__now();
	cpu_set_t old;
	unsigned me;
	bool pinned;

	deadline = t0 + BUDGET_NS;
	CPU_ZERO(&old);	/* the kernel writes only its CPUs' bytes */
	pinned = xsc__sys3(SYS_sched_getaffinity, 0, sizeof(old), &old) > 0 &&
		 xsc__sys3(SYS_getcpu, &me, NULL, NULL) == 0;

	/* On the core it is on, as the runtime's kernel threads are: where
	 * the scheduler may move the caller, a call io_uring runs in its
	 * workers cost 300 ns in one process and 1400 ns in the next (32 a
	 * batch, this VM), pinned 300 ns in every one. */
	if (pinned)
		pin((int)me);
	hp->posted_batch1_ns = hp->posted_batch32_ns = XSC_HP_NONE;
	hp->posted_async_batch32_ns = XSC_HP_NONE;
	hp->null_syscall_ns = null_syscall();
	if (ring)
		posted(hp);
	hp->tls_switch_ns = tls_switch(hp);
	switches(hp, pinned ? (int)me : -1, &old);
	if (pinned)
		xsc__sys3(SYS_sched_setaffinity, 0, sizeof(old), &old);
	xsave_area(hp);
	hp->measure_us = (long)((xsc__now() - t0) / 1000);
	hp->load_pct = xsc__hostprof_load();
}
