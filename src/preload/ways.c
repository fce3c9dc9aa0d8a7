/*
 * ways.c - transparent mode, `xsc run -v`: which way the program's calls
 * went (posted, or made by the caller) and why, for the process and for
 * the threads that made most calls, ended or not (the runtime counts
 * them per fiber and per vcpu: enum xsc_way, sched/syscalls.c).
 */
#include "shim.h"

#include "hostprof.h"
#include "internal.h"

#define NTOP 8

static struct {
	uint32_t lock;
	int n;
	struct {
		int vtid;
		uint64_t way[XSC_WAYS];
		uint64_t sum;
	} t[NTOP];
} top;

static void keep(int vtid, const uint32_t *way)
{
	uint64_t sum = 0;
	int at = -1;

	for (int w = 0; w < XSC_WAYS; w++)
		sum += way[w];
	if (!sum)
		return;
	xsc__spin_lock(&top.lock);
	for (int i = 0; i < top.n && at < 0; i++)
		if (top.t[i].vtid == vtid)
			at = i;	/* counted at its end, and alive at exit */
	if (at < 0 && top.n < NTOP)
		at = top.n++;
	else if (at < 0)
		for (int i = 0; i < NTOP; i++)
			if (top.t[i].sum < sum && (at < 0 || top.t[i].sum < top.t[at].sum))
				at = i;
	if (at >= 0) {
		top.t[at].vtid = vtid;
		top.t[at].sum = sum;
		for (int w = 0; w < XSC_WAYS; w++)
			top.t[at].way[w] = way[w];
	}
	xsc__spin_unlock(&top.lock);
}

/* A thread ended: its counts, if it is among the busiest. */
void tp_ways_reaped(const struct xsc_fiber *f)
{
	if (tp.verbose)
		keep(f->vtid, f->way);
}

static void line(const char *who, const uint64_t *w)
{
	xsc__say("xsc run: %s: %lu posted (may wait); cannot wait for a peer: %lu made alone, "
		 "%lu posted with others to batch; waits: %lu made by the only thread "
		 "of a vcpu (opens and transfers too), %lu answered by a look (timeout 0), %lu looked and "
		 "posted; %lu made by the caller by route\n",
		 who, (unsigned long)w[XSC_WAY_POSTED], (unsigned long)w[XSC_WAY_ALONE],
		 (unsigned long)w[XSC_WAY_BATCHED], (unsigned long)w[XSC_WAY_SOLE],
		 (unsigned long)w[XSC_WAY_LOOKED], (unsigned long)w[XSC_WAY_LOOKED_POSTED],
		 (unsigned long)w[XSC_WAY_CALLER]);
}

/* all: the process's counts (stats.c, summed over the vcpus).  The
 * threads still there count too: the one that exits, and those a process
 * ends without joining (a server that a signal ends), whose counts
 * another vcpu may still be adding to (they are counts, read once). */
void tp_ways_report(const uint64_t *all)
{
	const struct xsc_hostprof *hp = xsc__rt.n ? xsc__rt.v[0].x->hp : NULL;
	char who[48];

	xsc__spin_lock(&xsc__fibers.lock);
	for (struct xsc_fiber *f = xsc__fibers.head; f; f = f->all_next)
		keep(f->vtid, f->way);
	xsc__spin_unlock(&xsc__fibers.lock);
	line("the threads' calls", all);
	if (hp)
		xsc__say("xsc run: a call that cannot wait for a peer (on a non-blocking "
			 "descriptor, or waiting only for the disk) is made by its thread when "
			 "nothing else is runnable on its vcpu and nothing is posted (%s): "
			 "%s\n", hp->here_alone ? "on" : "off", hp->why_alone);
	for (int i = 0; i < top.n; i++) {
		snprintf(who, sizeof(who), "thread %d", top.t[i].vtid);
		line(who, top.t[i].way);
	}
}
