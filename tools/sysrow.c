/*
 * sysrow.c - `xsc info SYSCALL`: one row of the syscall table (src/table/)
 * and what happens to that call on each path: through a handle on this
 * machine (its route and why, with the host profile's costs where they
 * decided it, and where it goes when io_uring declines it), under xsc
 * threads, in a multi-call and under `xsc run`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostprof.h"
#include "probe.h"

/* The number called name (or written as a number), or -1. */
static long lookup(const char *arg)
{
	char *end;
	long nr = strtol(arg, &end, 10);

	if (*arg && !*end)
		return nr >= 0 && nr < XSC_NR_MAX && xsc__sys_named(nr) ? nr : -1;
	for (nr = 0; nr < XSC_NR_MAX; nr++)
		if (xsc__sys_named(nr) && !strcmp(xsc_syscall_name(nr), arg))
			return nr;
	return -1;
}

static const char *shim_text(enum xsc_shim s)
{
	switch (s) {
	case XSC_SHIM_POST: return "posted through the runtime: the thread (a fiber) parks, the call takes the route above";
	case XSC_SHIM_DIRECT: return "made directly on the vcpu (glibc holds a lock of its own around it, or it never waits)";
	case XSC_SHIM_EMULATE: return "answered by the shim (threads are fibers: ids, signals, clone, futexes, thread stacks)";
	default: return "?";
	}
}

static const char *chain_text(const struct xsc_sysdef *d)
{
	switch (d->chain.kind) {
	case XSC_CHAIN_RW: return "linkable: a transfer at the file position (a short count ends an XSC_MC_FULL chain)";
	case XSC_CHAIN_PRW: return "linkable: a transfer at an explicit offset";
	case XSC_CHAIN_OPEN: return "linkable: makes an fd later calls may forward";
	case XSC_CHAIN_CLOSE: return "linkable";
	case XSC_CHAIN_SYNC: return "linkable";
	case XSC_CHAIN_NOP: return "linkable (does nothing)";
	default: return "not linkable: a chain with it runs on a syscall thread or in the caller";
	}
}

static const char *akind_text(char k)
{
	switch (k) {
	case XSC_A_FD: return "fd";
	case XSC_A_PTR: return "pointer";
	case XSC_A_STR: return "string";
	case XSC_A_LEN: return "length";
	case XSC_A_CONST: return "constant";
	case XSC_A_INT: return "integer";
	default: return "?";
	}
}

static const char *newfd_text(int k)
{
	static const char *const t[XSC_NEWFD_NKINDS] = {
		[XSC_NEWFD_FILE] = "file", [XSC_NEWFD_SOCK] = "socket",
		[XSC_NEWFD_PIPE] = "pipe", [XSC_NEWFD_EPOLL] = "epoll",
		[XSC_NEWFD_EVENT] = "eventfd", [XSC_NEWFD_TIMER] = "timerfd",
		[XSC_NEWFD_SIGNAL] = "signalfd", [XSC_NEWFD_MEMFD] = "memfd",
		[XSC_NEWFD_URING] = "io_uring", [XSC_NEWFD_INOTIFY] = "inotify",
		[XSC_NEWFD_PIDFD] = "pidfd", [XSC_NEWFD_DUP] = "a copy of its fd",
	};
	return k > 0 && k < XSC_NEWFD_NKINDS && t[k] ? t[k] : "?";
}

/* The costs the choice between the caller and a posted form weighs. */
static void host_costs(const struct xsc_hostprof *hp)
{
	char src[512];

	xsc__hostprof_source(hp, src, sizeof(src));
	if (hp->posted_batch1_ns < 0 || hp->posted_batch32_ns < 0 ||
	    hp->posted_async_batch32_ns < 0)
		printf("  host:        a system call costs %ld ns; posted calls were not "
		       "measured (host profile, %s)\n", hp->null_syscall_ns, src);
	else
		printf("  host:        a system call costs %ld ns; a posted call %ld ns alone, "
		       "%ld ns in a batch of 32, %ld ns in io_uring's workers (host profile, "
		       "%s)\n", hp->null_syscall_ns, hp->posted_batch1_ns,
		       hp->posted_batch32_ns, hp->posted_async_batch32_ns, src);
}

int xsc_info_row(struct xsc *x, const char *arg)
{
	long nr = lookup(arg);
	const struct xsc_sysdef *d;
	const char *why;
	int r;

	if (nr < 0) {
		fprintf(stderr, "xsc info: no system call %s\n", arg);
		return 2;
	}
	d = &xsc__sys[nr];
	r = xsc_route(x, nr, &why);
	printf("%s (%ld): %s\n", xsc_syscall_name(nr), nr,
	       !d->args ? "not described by the table" :
	       *d->args ? d->args : "no arguments");
	if (d->args && *d->args) {
		char k[6];
		int n = xsc__sys_nargs(d);

		xsc__sys_akinds(d, k);
		printf("  arguments:  ");
		for (int i = 0; i < n && i < 6; i++)
			printf(" %s", akind_text(k[i]));
		printf("\n");
	}
	if (d->newfd)
		printf("  returns:     %s (%s)\n", xsc__sys_pair(d) ?
		       "two descriptors, written to fds_out" : "a descriptor",
		       newfd_text(d->newfd));
	printf("  blocks:      %s\n", xsc__may_block(d) ? "may block" : "never blocks");
	printf("  thread:      %s\n", xsc__row_bound(d) ? xsc__thread_why(d) :
	       d->bound ? "any, except for some arguments (then the caller)" : "any thread");
	if (d->refuse)
		printf("  refused:     %s\n", d->refuse);
	printf("  route:       %s: %s\n", xsc_backend_name(r), why);
	if (d->uring.prep)
		host_costs(x->hp);
	if (r == XSC_BACKEND_URING || r == XSC_BACKEND_SQPOLL)
		printf("  declined:    %s (arguments io_uring cannot express exactly)\n",
		       xsc_backend_name(xsc__fallback_route(x, nr)));
	if (d->uring.prep)	/* a note says "io_uring; its limits" */
		printf("  io_uring:    translated%s%s%s\n",
		       strncmp(d->uring.note, "io_uring", 8) ? ": " : "",
		       d->uring.note + (strncmp(d->uring.note, "io_uring", 8) ? 0 : 8),
		       d->uring.done ? "; the result is converted (done hook)" : "");
	else
		printf("  io_uring:    no form\n");
	if (d->uring.no_sqpoll)
		printf("  SQPOLL:      the fallback: %s\n", d->uring.no_sqpoll);
	printf("  xsc threads: the same route, from the fiber's kernel thread\n");
	printf("  multi-call:  %s\n", chain_text(d));
	printf("  xsc run:     %s%s\n", shim_text(d->shim ? d->shim : XSC_SHIM_POST),
	       d->shim_args ? " (for some arguments the other way: .shim_args)" : "");
	return 0;
}
