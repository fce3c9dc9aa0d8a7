/*
 * stats.c - transparent mode's counters when a process exits: the lines
 * `xsc run -v` prints (XSC_VERBOSE) and the JSON file `xsc run
 * --stats=FILE` asks for (XSC_STATS=FILE), both from one struct
 * tp_counters filled in one place (stats.h), so they cannot drift.
 *
 * Each process writes FILE.PID, its own process id appended: a forked
 * child writes its own, an exec'd program the one of its process id.
 * The file is written whole to FILE.PID.tmp and renamed over FILE.PID,
 * so a reader never sees half of one.  It is written where -v prints,
 * in a destructor: at exit() or the return from main, not at _exit() or
 * a fatal signal.  A process that ran natively (one thread: the runtime
 * never started) writes its file too, with "runtime": false.  Nothing is
 * said on stderr about the file unless -v.  Raw system calls only: the
 * runtime may be half gone at exit, and the calls must not be posted.
 */
#include "shim.h"
#include "stats.h"

#include <fcntl.h>

/* Every counter, read once: the -v lines and the JSON print these. */
static void counters_get(struct tp_counters *c)
{
	struct xsc_stats st;
	uint64_t waits = 0;

	memset(c, 0, sizeof(*c));
	c->runtime = xsc__tp;
	c->threads = (uint64_t)atomic_load(&tp.nthreads);
	c->kwakes = (uint64_t)atomic_load(&tp.kwakes);
	c->kwoken = (uint64_t)atomic_load(&tp.kwoken);
	c->preemptions = (uint64_t)atomic_load(&tp.npreempt);
	c->deferred = (uint64_t)atomic_load(&tp.ndeferred);
	c->handed = (uint64_t)atomic_load(&tp.nhanded);
	c->unhanded = (uint64_t)atomic_load(&tp.nunhanded);
	if (!xsc__tp)
		return;
	for (int i = 0; i < xsc__rt.n; i++) {
		c->trapped += TP(&xsc__rt.v[i])->ntrap;
		c->interposed += TP(&xsc__rt.v[i])->nfast;
		c->tls_loads += xsc__rt.v[i].tls_loads;
		c->switches += xsc__rt.v[i].switches;
		c->tls_arch_prctl += xsc__rt.v[i].tls_sys;
		for (int w = 0; w < XSC_WAYS; w++)
			c->way[w] += xsc__rt.v[i].way[w];
		c->yields_kept += xsc__rt.v[i].yields[XSC_YIELD_KEPT];
		c->yields_kernel += xsc__rt.v[i].yields[XSC_YIELD_KERNEL];
		c->watch_waits += xsc__rt.v[i].watch_waits;
		c->watch_stops += xsc__rt.v[i].watch_stops;
	}
	c->tls_ldt = atomic_load(&xsc__tls_nslot);
	c->tls_high = atomic_load(&xsc__tls_nhigh);
	xsc__tp_rewrite_counts(c);
	if (xsc_runtime_stats(&st, &waits) == 0) {
		c->posted = st.posted;
		c->completed = st.completed;
		c->flushes = st.flushes;
		c->crossings = st.crossings;
		c->on_uring = st.by_backend[XSC_BACKEND_URING];
		c->on_sqpoll = st.by_backend[XSC_BACKEND_SQPOLL];
		c->on_worker = st.by_backend[XSC_BACKEND_WORKER];
		c->on_inline = st.by_backend[XSC_BACKEND_INLINE];
		c->declined = st.declined;
		c->workers = st.workers;
		c->full_waits = st.full_waits;
		c->readiness_waits = waits;
	}
}

/* { "pid": P, "runtime": true, "threads": N, ... } and a newline. */
static int to_json(const struct tp_counters *c, long pid, char *buf, size_t size)
{
	size_t n = 0;

#define PUT(...) do { \
		int k = snprintf(buf + n, size - n, __VA_ARGS__); \
		if (k < 0 || (size_t)k >= size - n) \
			return -1; \
		n += (size_t)k; \
	} while (0)
	PUT("{\"pid\": %ld, \"runtime\": %s", pid, c->runtime ? "true" : "false");
#define TP_COUNTER_JSON(f, key) PUT(", \"" key "\": %llu", (unsigned long long)c->f);
	TP_COUNTERS(TP_COUNTER_JSON)
#undef TP_COUNTER_JSON
#define TP_WAY_JSON(w, key) PUT(", \"" key "\": %llu", (unsigned long long)c->way[w]);
	TP_WAYS(TP_WAY_JSON)
#undef TP_WAY_JSON
	PUT("}\n");
#undef PUT
	return (int)n;
}

/* FILE.PID, through FILE.PID.tmp; 0 or -errno. */
static long write_json(const char *file, const struct tp_counters *c)
{
	char path[4096], tmp[4096 + 8], buf[4096];
	long pid = xsc__sys0(SYS_getpid), fd, ret = 0;
	int len = to_json(c, pid, buf, sizeof(buf));

	if (len < 0 || snprintf(path, sizeof(path), "%s.%ld", file, pid) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = xsc__sys4(SYS_openat, AT_FDCWD, (long)tmp,
		       O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return fd;
	for (int off = 0; off < len && ret >= 0; off += (int)ret)
		ret = xsc__sys3(SYS_write, fd, (long)(buf + off), len - off);
	xsc__sys1(SYS_close, fd);
	if (ret >= 0)
		ret = xsc__sys2(SYS_rename, (long)tmp, (long)path);
	if (ret < 0)
		xsc__sys1(SYS_unlink, (long)tmp);
	return ret < 0 ? ret : 0;
}

/* The -v lines: the same counters, in sentences. */
static void say_counters(const struct tp_counters *c)
{
	if (xsc__tls_how != XSC_TLS_WRFSBASE)
		xsc__say("xsc run: thread pointer loads: %lu at %lu switches, %lu by "
			 "arch_prctl; %lu threads had an LDT slot, %lu a TLS block "
			 "above 4 GiB\n", (unsigned long)c->tls_loads,
			 (unsigned long)c->switches, (unsigned long)c->tls_arch_prctl,
			 (unsigned long)c->tls_ldt, (unsigned long)c->tls_high);
	xsc__say("xsc run: %lu threads as fibers, %lu calls trapped (SIGSYS), "
		 "%lu through interposed functions, %lu futex wakes passed to "
		 "the kernel (%lu kernel waiters woken), %lu preemptions, %lu "
		 "signal handlers deferred out of runtime locks\n",
		 (unsigned long)c->threads, (unsigned long)c->trapped,
		 (unsigned long)c->interposed, (unsigned long)c->kwakes,
		 (unsigned long)c->kwoken, (unsigned long)c->preemptions,
		 (unsigned long)c->deferred);
	xsc__say("xsc run: process %ld: %lu calls posted, %lu completed (uring "
		 "%lu, sqpoll %lu, syscall threads %lu, inline %lu) in %lu flushes, "
		 "%lu crossings\n", xsc__sys0(SYS_getpid), (unsigned long)c->posted,
		 (unsigned long)c->completed, (unsigned long)c->on_uring,
		 (unsigned long)c->on_sqpoll, (unsigned long)c->on_worker,
		 (unsigned long)c->on_inline, (unsigned long)c->flushes,
		 (unsigned long)c->crossings);
	if (c->handed || c->unhanded)
		xsc__say("xsc run: %lu process signals taken between threads: %lu "
			 "handed to a waiting thread, %lu run on a vcpu\n",
			 (unsigned long)(c->handed + c->unhanded),
			 (unsigned long)c->handed, (unsigned long)c->unhanded);
	if (c->yields_kept || c->yields_kernel)
		xsc__say("xsc run: sched_yield with no other thread ready on its "
			 "vcpu: %lu kept the CPU, %lu yielded to another vcpu on its "
			 "CPU\n", (unsigned long)c->yields_kept,
			 (unsigned long)c->yields_kernel);
	if (c->watch_waits)
		xsc__say("xsc run: calls made whole beside calls in flight on the ring: "
			 "%lu, %lu of them stopped by a completion (the ring's watcher)\n",
			 (unsigned long)c->watch_waits, (unsigned long)c->watch_stops);
}

/* At exit: the JSON first (the -v report of the sites that still trap
 * resets their counts as it prints them), then the -v lines. */
static void __attribute__((destructor)) report(void)
{
	const char *file = getenv("XSC_STATS");
	struct tp_counters c;
	long ret;

	if (!tp.main)
		return;	/* the program's main never ran under the shim */
	counters_get(&c);
	if (file && *file && (ret = write_json(file, &c)) < 0 && tp.verbose)
		xsc__say("xsc run: cannot write the stats to %s.%ld: %s\n", file,
			 xsc__sys0(SYS_getpid), strerror((int)-ret));
	if (tp.solo && tp.verbose)
		xsc__say("xsc run: one thread: ran natively (the runtime starts "
			 "with a second thread)\n");
	if (!xsc__tp || !tp.verbose)
		return;
	say_counters(&c);
	tp_ways_report(c.way);
	xsc__tp_rewrite_report(&c);
}
