/*
 * exec.c - a call run in the calling thread: the one path every inline
 * execution goes through (the dispatcher's inline entries, syscall
 * threads, fibers, multi-calls), so a refused row is refused everywhere
 * and a chain entry reaches the multi-call module.
 */
#include "exec.h"

#include <sys/syscall.h>

#include "rawsys.h"

const struct xsc_mc_ops *_Atomic xsc__mc_ops;

long xsc__call_here(long nr, const int64_t a[6])
{
	if (xsc__sysdef(nr)->refuse)
		return -EINVAL;
	return xsc__sys6(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

long xsc__exec_sync(const struct xsc_entry *e)
{
	if (e->sysno == XSC_NR_NOP)
		return 0;
	if (e->sysno == XSC_NR_MC) {
		const struct xsc_mc_ops *mc = xsc__mc();
		return mc ? mc->run(e) : -ENOSYS;
	}
	return xsc__call_here(e->sysno, e->args);
}
