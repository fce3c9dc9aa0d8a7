/*
 * cpus.c - the CPUs this process may use: its affinity mask (taskset, a
 * container's cpuset) capped by the tightest CPU quota of its cgroup and
 * every ancestor, as the Go and Tokio runtimes read them.  cgroup v2's
 * cpu.max and v1's cpu.cfs_quota_us / cpu.cfs_period_us (hosts where the
 * cpu controller is still on v1: /sys/fs/cgroup/cpu,cpuacct or
 * /sys/fs/cgroup/cpu) count, each ceil(quota / period).
 */
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpus.h"
#include "rawio.h"

int xsc__cpus_allowed(int *cpus, int max)
{
	cpu_set_t set;
	int n = 0;

	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		for (int c = 0; c < CPU_SETSIZE && n < max; c++)
			if (CPU_ISSET(c, &set))
				cpus[n++] = c;
	if (!n) {
		long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
		for (; n < (ncpu > 0 ? ncpu : 1) && n < max; n++)
			cpus[n] = n;
	}
	return n;
}

/* ceil(quota / period) from one cgroup directory, or 0 for no limit */
static int dir_quota(const char *dir, bool v2)
{
	char path[700], val[64];
	long long quota, period;

	if (v2) {
		snprintf(path, sizeof(path), "%s/cpu.max", dir);
		if (xsc__read_small(path, val, sizeof(val)) <= 0 ||
		    sscanf(val, "%lld %lld", &quota, &period) != 2)
			return 0;
	} else {
		snprintf(path, sizeof(path), "%s/cpu.cfs_quota_us", dir);
		if (xsc__read_small(path, val, sizeof(val)) <= 0 ||
		    sscanf(val, "%lld", &quota) != 1)
			return 0;
		snprintf(path, sizeof(path), "%s/cpu.cfs_period_us", dir);
		if (xsc__read_small(path, val, sizeof(val)) <= 0 ||
		    sscanf(val, "%lld", &period) != 1)
			return 0;
	}
	if (quota <= 0 || period <= 0)
		return 0;
	long long c = (quota + period - 1) / period;
	return c > 0 && c < 1 << 20 ? (int)c : 0;
}

/* The tightest quota on `rel` and its ancestors under mount `root`, the
 * mount itself included (a container sees its own cgroup there). */
static int walk(const char *root, char *rel, bool v2)
{
	char dir[640];
	int best = 0;

	for (;;) {
		snprintf(dir, sizeof(dir), "%s%s", root, strcmp(rel, "/") ? rel : "");
		int c = dir_quota(dir, v2);
		if (c > 0 && (!best || c < best))
			best = c;
		char *slash = strrchr(rel, '/');
		if (!slash || (slash == rel && !rel[1]))
			break;
		if (slash == rel)
			rel[1] = 0;
		else
			*slash = 0;
	}
	return best;
}

/* The path of the line of /proc/self/cgroup whose controller list holds
 * `ctl` ("" for v2's "0::"), NUL-terminated in place, or NULL. */
static char *cgroup_path(char *buf, const char *ctl)
{
	for (char *line = buf; line && *line;) {
		char *nl = strchr(line, '\n'), *next = nl ? nl + 1 : NULL;
		if (nl)
			*nl = 0;
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (c2) {
			*c2 = 0;
			bool match = !*ctl ? !strcmp(line, "0") && c2 == c1 + 1 : false;
			for (char *tok = c1 + 1, *end; *ctl && tok && *tok; tok = end) {
				end = strchr(tok, ',');
				size_t len = end ? (size_t)(end++ - tok) : strlen(tok);
				if (len == strlen(ctl) && !strncmp(tok, ctl, len))
					match = true;
			}
			*c2 = ':';
			if (match)
				return c2 + 1;
		}
		if (nl)
			*nl = '\n';
		line = next;
	}
	return NULL;
}

int xsc__cpus_quota(void)
{
	static const char *const v1_roots[] = { "/sys/fs/cgroup/cpu,cpuacct",
						"/sys/fs/cgroup/cpu" };
	char cg[4096], rel[600];
	int best = 0;

	if (xsc__read_small("/proc/self/cgroup", cg, sizeof(cg)) <= 0)
		return 0;
	for (int v2 = 0; v2 < 2; v2++) {
		char copy[sizeof(cg)];
		memcpy(copy, cg, sizeof(cg));
		const char *p = cgroup_path(copy, v2 ? "" : "cpu");
		if (!p || strlen(p) >= sizeof(rel))
			continue;
		for (int r = 0; r < (v2 ? 1 : 2); r++) {
			strcpy(rel, p);
			int c = walk(v2 ? "/sys/fs/cgroup" : v1_roots[r], rel, v2);
			if (c > 0 && (!best || c < best))
				best = c;
		}
	}
	return best;
}

int xsc__cpus_usable(void)
{
	int cpus[CPU_SETSIZE], n = xsc__cpus_allowed(cpus, CPU_SETSIZE);
	int q = xsc__cpus_quota();

	return q > 0 && q < n ? q : n;
}
