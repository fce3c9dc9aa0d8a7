/*
 * sysrow.c - `xsc info SYSCALL`: one row of the syscall table (src/table/)
 * and what happens to that call on each path: through a handle on this
 * machine (its route, and where it goes when io_uring declines it), under
 * xsc threads, in a multi-call and under `xsc run`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

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
	case XSC_SHIM_EMULATE: return "answered by the shim (threads are fibers: ids, signals, clone, futexes)";
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
	printf("  blocks:      %s\n", xsc__may_block(d) ? "may block" : "never blocks");
	printf("  thread:      %s\n", xsc__row_bound(d) ? xsc__thread_why(d) :
	       d->bound ? "any, except for some arguments (then the caller)" : "any thread");
	if (d->refuse)
		printf("  refused:     %s\n", d->refuse);
	printf("  route:       %s: %s\n", xsc_backend_name(r), why);
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
	printf("  xsc threads: the same route, from the fiber's kernel thread\n");
	printf("  multi-call:  %s\n", chain_text(d));
	printf("  xsc run:     %s%s\n", shim_text(d->shim ? d->shim : XSC_SHIM_POST),
	       d->shim_args ? " (for some arguments the other way: .shim_args)" : "");
	return 0;
}
