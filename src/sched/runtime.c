/*
 * runtime.c - xsc threads: xsc_main, the vcpus (how many, on which CPUs,
 * their kernel threads) and the start of an extension's runtime (ext.h).
 * The scheduler each vcpu runs is loop.c; fibers are fiber.c; queues and
 * the switch are queue.c.
 */
#include "rq.h"
#include "probe.h"
#include "cpus.h"

#include <errno.h>
#include <stdio.h>
#include <asm/prctl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "rawsys.h"

struct xsc_rt xsc__rt;
__thread struct xsc_vcpu *xsc__self __attribute__((tls_model("initial-exec")));
const struct xsc_rt_ops *xsc__ext;

void xsc__rt_extend(const struct xsc_rt_ops *ops)
{
	xsc__ext = ops;
}

/* ---- xsc_main ---------------------------------------------------------------- */

struct main_args {
	int (*fn)(int, char **);
	int argc;
	char **argv;
};

static void *main_fiber(void *arg)
{
	struct main_args *m = arg;

	xsc__rt.main_ret = m->fn(m->argc, m->argv);
	atomic_store(&xsc__rt.stop, 1);
	for (int i = 0; i < xsc__rt.n; i++)
		xsc__kick(xsc__rt.v[i].x);
	return NULL;
}

_Static_assert(sizeof(struct xsc_stats) % sizeof(uint64_t) == 0,
	       "xsc_runtime_stats sums struct xsc_stats as uint64_t words");

XSC_EXPORT int xsc_runtime_stats(struct xsc_stats *s, uint64_t *waits)
{
	uint64_t *sum = (uint64_t *)s;
	uint64_t w = 0;

	if (!xsc__rt.v || !xsc__rt.n)
		return -ESRCH;
	memset(s, 0, sizeof(*s));
	/* every field a uint64_t (xsc.h); each read as its own atomic word,
	 * since the vcpus go on counting */
	for (int i = 0; i < xsc__rt.n; i++) {
		struct xsc *x = xsc__rt.v[i].x;
		if (!x)
			continue;
		const uint64_t *f = (const uint64_t *)&x->st;
		for (size_t k = 0; k < sizeof(*s) / sizeof(uint64_t); k++)
			sum[k] += __atomic_load_n(&f[k], __ATOMIC_RELAXED);
		w += __atomic_load_n(&x->waits_done, __ATOMIC_RELAXED);
	}
	if (waits)
		*waits = w;
	return 0;
}

XSC_EXPORT void xsc_runtime_config_init(struct xsc_runtime_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->pin = 1;
	cfg->stack_size = XSC_STACK_DEFAULT_SIZE;
	cfg->npages = 64;	/* 4096 calls in flight per kernel thread */
	cfg->syscall_cpu = -1;
	cfg->batch = 64;
}

/* ---- the CPUs the process may use ---------------------------------------
 *
 * The default number of kernel threads and their cores come from the
 * process's affinity mask capped by its cgroups' CPU quota (cpus.c).  Pinning
 * walks the allowed CPUs only; an explicit first_cpu or syscall_cpu
 * outside the mask is an error with a message. */

static int cpu_index(const int *cpus, int n, int cpu)
{
	for (int i = 0; i < n; i++)
		if (cpus[i] == cpu)
			return i;
	return -1;
}

static void apply_config(const struct xsc_runtime_config *cfg)
{
	if (cfg)
		xsc__rt.cfg = *cfg;
	else
		xsc_runtime_config_init(&xsc__rt.cfg);
	xsc__rt.cpu_for_poller = false;
	if (!xsc__rt.cfg.nthreads) {
		int n = xsc__cpus_usable();
		/* an SQPOLL poller spins on a CPU of its own while there is
		 * work (one for the process, uring_setup.c): one vcpu fewer.
		 * With as many vcpus as CPUs, a server closing every
		 * connection ran at 0.34-0.45x native requests/s on 2 CPUs,
		 * 0.65x with one vcpu; keep-alive 1.06x against 1.19x. */
		/* the vcpus' handles ask as xsc__vcpu_init configures them */
		xsc__rt.cpu_for_poller = n > 1 &&
			xsc__backend_asked(xsc__rt.cfg.backend, 0) == XSC_BACKEND_SQPOLL;
		n -= xsc__rt.cpu_for_poller;
		xsc__rt.cfg.nthreads = (unsigned)n;
	}
	if (!xsc__rt.cfg.stack_size)
		xsc__rt.cfg.stack_size = XSC_STACK_DEFAULT_SIZE;
	if (!xsc__rt.cfg.npages)
		xsc__rt.cfg.npages = 64;
	if (!xsc__rt.cfg.batch)
		xsc__rt.cfg.batch = 64;
}

/* Applies the configuration and allocates the vcpus (not started). */
static int vcpus_alloc(const struct xsc_runtime_config *cfg)
{
	xsc__umem_ours = xsc__fiber_umem;
	int cpus[CPU_SETSIZE], ncpus = xsc__cpus_allowed(cpus, CPU_SETSIZE), first = 0;
	int n;

	if (xsc__rt.v)
		return -EBUSY;
	apply_config(cfg);
	if (xsc__rt.cfg.pin && xsc__rt.cfg.first_cpu != 0 &&
	    (first = cpu_index(cpus, ncpus, xsc__rt.cfg.first_cpu)) < 0) {
		xsc__say("xsc: first_cpu %d is outside the process's CPU affinity "
			 "mask\n", xsc__rt.cfg.first_cpu);
		return -EINVAL;
	}
	if (xsc__rt.cfg.pin && xsc__rt.cfg.first_cpu == 0)
		first = 0;	/* the default: the first allowed CPU */
	if (xsc__rt.cfg.syscall_cpu >= 0 &&
	    cpu_index(cpus, ncpus, xsc__rt.cfg.syscall_cpu) < 0) {
		xsc__say("xsc: syscall_cpu %d is outside the process's CPU "
			 "affinity mask\n", xsc__rt.cfg.syscall_cpu);
		return -EINVAL;
	}
	n = (int)xsc__rt.cfg.nthreads;
	/* one more slot for the CPU left to a poller, should none come */
	size_t slots = (size_t)n + xsc__rt.cpu_for_poller;
	xsc__rt.v = aligned_alloc(64, sizeof(struct xsc_vcpu) * slots);
	if (!xsc__rt.v)
		return -ENOMEM;
	memset(xsc__rt.v, 0, sizeof(struct xsc_vcpu) * slots);
	xsc__rt.n = n;
	for (int i = 0; i < (int)slots; i++) {
		xsc__rt.v[i].id = i;
		xsc__rt.v[i].cpu = cpus[(first + i) % ncpus];
	}
	return 0;
}

/* A CPU was left to the SQPOLL poller before any ring existed; vcpu 0's
 * handle (opened) says whether there is one.  SQPOLL refused (a seccomp
 * filter, one usable CPU, the kernel), the CPU gets its vcpu back: the
 * slot vcpus_alloc kept. */
static void poller_check(void)
{
	const struct xsc *x = xsc__rt.v[0].x;

	if (!xsc__rt.cpu_for_poller || (x && x->sqpoll))
		return;
	xsc__rt.cpu_for_poller = false;
	xsc__rt.cfg.nthreads++;
	xsc__rt.n++;
}

/* Every kernel thread gets the same executors, or the program is told:
 * the handles of kernel threads 1.. are opened quiet (one line, not one
 * per thread), so a ring that kernel thread 0 got and another did not
 * (RLIMIT_MEMLOCK room for one ring) would otherwise go unsaid. */
static void report_routes(void)
{
	struct xsc *x0 = xsc__rt.v[0].x;

	for (int i = 1; i < xsc__rt.n; i++) {
		struct xsc *x = xsc__rt.v[i].x;
		if (!x || (x->have_ring == x0->have_ring && x->sqpoll == x0->sqpoll))
			continue;
		xsc__say("xsc: kernel thread %d: %s, unlike kernel thread 0 (%s)\n", i,
			 !x->have_ring ? x->reason : x->sqpoll ? "SQPOLL ring" : "io_uring ring",
			 !x0->have_ring ? "no io_uring" : x0->sqpoll ? "SQPOLL ring" :
			 "io_uring ring");
	}
}

/* Starts v on a thread of its own: each vcpu opens its own handle (and
 * ring: single issuer) on its own thread; waits until it has.  With
 * XSC_EXT_VCPU_BLOCKED it starts with every signal blocked: until its
 * first fiber or its first idle wait sets its mask (the extension's
 * switch_in and idle), a signal it took would run the program's handler
 * with no vcpu to run it on (xsc__self not set yet: natively, on a
 * thread of the runtime's).  With the xsc threads API it has its
 * creator's mask, as a new thread does. */
#define VCPU_STACK (8u << 20)	/* glibc's default (RLIMIT_STACK) */

static int vcpu_spawn(struct xsc_vcpu *v)
{
	pthread_attr_t attr;
	int ret;

	if (xsc__ext_has(XSC_EXT_VCPU_BLOCKED))
		xsc__attr_blocked(&attr);
	else
		pthread_attr_init(&attr);
	if (xsc__ext && xsc__tls_how == XSC_TLS_LDT) {
		/* a stack below 4 GiB: its thread pointer then has an LDT
		 * slot too (tls.c), and the loads of it (a reap, a handler
		 * between fibers) enter no kernel.  Never freed: a vcpu
		 * lives as long as the process. */
		const long m[6] = { 0, VCPU_STACK, PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0 };
		long p = xsc__tls_map_low(m);
		if (p >= 0 && !xsc__sys3(SYS_mprotect, p, 4096, PROT_NONE))	/* a guard */
			pthread_attr_setstack(&attr, (char *)p + 4096, VCPU_STACK - 4096);
	}
	ret = -pthread_create(&v->th, &attr, xsc__vcpu_thread, v);
	pthread_attr_destroy(&attr);

	if (ret)
		return ret;
	xsc__own_thread_start();	/* not a thread of the program's */
	while (!atomic_load(&v->inited))
		sched_yield();
	ret = atomic_load(&v->inited);
	return ret < 0 ? ret : 0;
}

/* Failure before the first fiber leaves nothing behind: every vcpu's
 * handle is closed and the runtime can start again.  A handle is closed
 * by the thread that opened it, because io_uring's registered ring fd
 * belongs to that thread (liburing unregisters it from the caller's
 * table), and only after xsc_main's last kick, which reads it. */
XSC_EXPORT int xsc_main(int (*fn)(int, char **), int argc, char **argv,
			const struct xsc_runtime_config *cfg)
{
	struct main_args m = { fn, argc, argv };
	bool ran = false;
	cpu_set_t cpus;
	int n, ret;

	ret = vcpus_alloc(cfg);
	if (ret < 0)
		return ret;
	sched_getaffinity(0, sizeof(cpus), &cpus);
	n = xsc__rt.n;
	atomic_store(&xsc__rt.stop, 0);
	ret = xsc__vcpu_init(&xsc__rt.v[0]);
	if (ret < 0)
		goto out_free;
	poller_check();
	n = xsc__rt.n;
	for (int i = 1; i < n; i++) {
		ret = vcpu_spawn(&xsc__rt.v[i]);
		if (ret < 0)
			goto out_stop;
	}
	report_routes();
	ret = xsc_thread_create(NULL, &(xsc_thread_attr_t){ .detached = 1 },
				main_fiber, &m);
	if (ret < 0)
		goto out_stop;
	ran = true;
	xsc__vcpu_loop(&xsc__rt.v[0]);
	ret = xsc__rt.main_ret;
out_stop:
	if (!ran)	/* before stop: a vcpu that sees stop sees this */
		atomic_store(&xsc__rt.closing, CLOSE_AFTER_KICKS);
	atomic_store(&xsc__rt.stop, 1);
	for (int i = 1; i < n; i++) {
		if (!xsc__rt.v[i].th)
			continue;
		while (!atomic_load(&xsc__rt.v[i].inited))
			sched_yield();
		if (xsc__rt.v[i].x)
			xsc__kick(xsc__rt.v[i].x);
	}
	if (!ran)
		atomic_store(&xsc__rt.closing, CLOSE_NOW);
	for (int i = 1; i < n; i++)
		if (xsc__rt.v[i].th)
			pthread_join(xsc__rt.v[i].th, NULL);
	/* Abandoned fibers keep their entries: the handles are not closed
	 * while calls might still write into fiber memory; the process is
	 * expected to exit after xsc_main returns. */
	if (ran) {
		xsc__self = NULL;
		return ret;
	}
	xsc_close(xsc__rt.v[0].x);
out_free:
	xsc__self = NULL;
	sched_setaffinity(0, sizeof(cpus), &cpus);	/* vcpu_init pinned it */
	free(xsc__rt.v);
	xsc__rt.v = NULL;
	xsc__rt.n = 0;
	atomic_store(&xsc__rt.closing, CLOSE_NO);
	return ret;
}

/* ---- an extension's runtime (ext.h) -------------------------------------------- */

/* Fails with vcpus possibly already running (with the extension's calls
 * routed to them already): the caller cannot go on and aborts. */
int xsc__rt_start(const struct xsc_runtime_config *cfg)
{
	int ret = vcpus_alloc(cfg);

	if (ret == 0)
		xsc__ringwatch_init();
	for (int i = 0; ret == 0 && i < xsc__rt.n; i++) {
		ret = vcpu_spawn(&xsc__rt.v[i]);
		if (i == 0 && ret == 0)
			poller_check();
	}
	if (ret == 0) {
		report_routes();
		xsc__ringwatch_start();
	}
	return ret;
}

void xsc__rt_forget(void)
{
	for (int i = 0; i < xsc__rt.n; i++)
		if (xsc__rt.v[i].x)
			xsc__handle_forget(xsc__rt.v[i].x);
	free(xsc__rt.v);
	xsc__rt.v = NULL;
	xsc__rt.n = 0;
	atomic_store(&xsc__rt.stop, 0);
	atomic_store(&xsc__rt.closing, CLOSE_NO);
	atomic_store(&xsc__rt.nidle, 0);
	atomic_store(&xsc__rt.rr, 0);
	xsc__rt.quiet = true;
	xsc__futex_forget();
	xsc__fibers_forget();
	xsc__fdq_forget();
	xsc__sync_forget();
	xsc__sandbox_forget();
	xsc__ringwatch_forget();
}

void xsc__rt_adopt(struct xsc_fiber *f)
{
	struct xsc_vcpu *v = xsc__place(), *me = xsc__vcpu();

	f->state = F_READY;
	xsc__rq_push(v, f);
	if (v != me)
		xsc__kick(v->x);
}
