/*
 * stats.h - transparent mode's counters at exit (stats.c): one source
 * for what `xsc run -v` prints and what `xsc run --stats=FILE`
 * (XSC_STATS) writes as JSON, so the two cannot drift.
 *
 * X(field, json key): every counter, each a uint64_t.  A counter added
 * here is written to the JSON file at once; the -v lines (stats.c
 * report) print the ones their sentences name.
 */
#ifndef XSC_PRELOAD_STATS_H
#define XSC_PRELOAD_STATS_H

#include <stdint.h>

#include "sched/sched.h"	/* enum xsc_way */

#define TP_COUNTERS(X) \
	X(threads, "threads") \
	X(trapped, "calls_trapped") \
	X(interposed, "calls_interposed") \
	X(kwakes, "futex_kernel_wakes") \
	X(kwoken, "futex_kernel_woken") \
	X(preemptions, "preemptions") \
	X(deferred, "handlers_deferred") \
	X(handed, "signals_handed") \
	X(unhanded, "signals_on_vcpu") \
	X(tls_loads, "tls_loads") \
	X(switches, "switches") \
	X(tls_arch_prctl, "tls_arch_prctl") \
	X(tls_ldt, "tls_ldt_threads") \
	X(tls_high, "tls_high_threads") \
	X(sites, "sites_rewritten") \
	X(through_sites, "calls_through_sites") \
	X(sites_padding, "sites_in_padding") \
	X(sites_novec, "sites_novec") \
	X(sites_trapping, "sites_trapping") \
	X(posted, "calls_posted") \
	X(completed, "calls_completed") \
	X(flushes, "flushes") \
	X(crossings, "crossings") \
	X(on_uring, "completed_uring") \
	X(on_sqpoll, "completed_sqpoll") \
	X(on_worker, "completed_worker") \
	X(on_inline, "completed_inline") \
	X(declined, "declined") \
	X(workers, "syscall_threads") \
	X(full_waits, "full_waits") \
	X(readiness_waits, "readiness_waits") \
	X(yields_kept, "yields_kept") \
	X(yields_kernel, "yields_to_kernel") \
	X(watch_waits, "waits_watched") \
	X(watch_stops, "waits_watched_stopped")

/* W(enum xsc_way, json key): which way the threads' calls went
 * (sched/syscalls.c), in the array way[] */
#define TP_WAYS(W) \
	W(XSC_WAY_POSTED, "calls_posted_may_wait") \
	W(XSC_WAY_ALONE, "calls_made_alone") \
	W(XSC_WAY_BATCHED, "calls_posted_to_batch") \
	W(XSC_WAY_SOLE, "waits_made_whole") \
	W(XSC_WAY_LOOKED, "waits_answered_by_look") \
	W(XSC_WAY_LOOKED_POSTED, "waits_looked_and_posted") \
	W(XSC_WAY_CALLER, "calls_in_caller_by_route")

struct tp_counters {
	int runtime;		/* the runtime ran in this process */
#define TP_COUNTER_FIELD(f, key) uint64_t f;
	TP_COUNTERS(TP_COUNTER_FIELD)
#undef TP_COUNTER_FIELD
	uint64_t way[XSC_WAYS];	/* enum xsc_way, summed over the vcpus */
};

/* rewrite.c: its counters into c (sites, through_sites, sites_padding,
 * sites_trapping); the -v lines of what still traps, most first. */
void xsc__tp_rewrite_counts(struct tp_counters *c);

#endif
