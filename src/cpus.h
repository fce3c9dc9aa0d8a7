/*
 * cpus.h - the CPUs this process may use (cpus.c).
 */
#ifndef XSC_CPUS_H
#define XSC_CPUS_H

#pragma GCC visibility push(hidden)

/* The CPUs of the affinity mask, in order, into cpus[]; their count
 * (>= 1; all online CPUs when the mask cannot be read). */
int xsc__cpus_allowed(int *cpus, int max);
/* The tightest CPU quota of the process's cgroups, in CPUs rounded up,
 * or 0 for none. */
int xsc__cpus_quota(void);
/* How many CPUs the process can keep busy: the affinity mask capped by
 * the quota. */
int xsc__cpus_usable(void);

#pragma GCC visibility pop
#endif
