/*
 * hostprof.c - the host profile: loaded once per process, from a forced
 * file, the cache or a measurement (hostprof_measure.c), and the
 * decisions taken from it.  Costs move by 20x between hosts (a null
 * system call 45-120 ns on bare metal, about 1.1 us in a VM with
 * page-table isolation), so they are measured, never written into the
 * code.  The design: docs/design.md, "Host profile".
 *
 * Rules:
 *  - the cache file is valid for one boot_id, CPU, kernel release and
 *    io_uring_disabled setting; it is replaced by write and rename, so a
 *    reader never sees half of it;
 *  - a forked child keeps its profile; an exec'd one reads the cache;
 *  - under a seccomp filter io_uring is not measured and nothing cached;
 *  - XSC_HOST_PROFILE=FILE forces a profile: every cost key required, a
 *    missing or malformed one an error naming it, never a default.
 */
#include "hostprof.h"
#include "rawio.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "rawsys.h"

#define FORMAT 1

/* ---- the file format ------------------------------------------------------ */

enum { NUM, STR };
#define F(name, kind, need) { #name, offsetof(struct xsc_hostprof, name), \
			      sizeof(((struct xsc_hostprof *)0)->name), kind, need }
/* need: 1 a cost every file must have; 2 a key the cache must have; 0
 * optional */
static const struct key {
	const char *name;
	size_t off, size;
	int kind, need;
} keys[] = {
	F(boot_id, STR, 2),
	F(cpu, STR, 2),
	F(kernel, STR, 2),
	F(io_uring_disabled, STR, 2),
	F(null_syscall_ns, NUM, 1),
	F(posted_batch1_ns, NUM, 1),
	F(posted_batch32_ns, NUM, 1),
	F(posted_async_batch32_ns, NUM, 1),
	F(tls_switch_ns, NUM, 1),
	F(tls_switch_via, STR, 0),
	F(thread_switch_ns, NUM, 1),
	F(cross_core_wake_ns, NUM, 1),
	F(xsave_bytes, NUM, 1),
	F(xsavec, NUM, 1),
	F(measure_us, NUM, 0),
	F(load_pct, NUM, 0),
};
#undef F
#define NKEYS (sizeof(keys) / sizeof(keys[0]))

int xsc__hostprof_format(const struct xsc_hostprof *hp, char *buf, size_t len)
{
	int n = snprintf(buf, len, "# xsc host profile (docs/design.md, \"Host profile\")\n"
			 "format %d\n", FORMAT);

	for (size_t i = 0; i < NKEYS; i++) {
		const char *p = (const char *)hp + keys[i].off;
		size_t at = (size_t)n < len ? (size_t)n : len;
		/* what a forced file left out (the key lines, the optional
		 * keys) is left out */
		if (keys[i].kind == STR ? !*p : !keys[i].need && *(const long *)p <= 0)
			continue;
		if (keys[i].kind == STR)
			n += snprintf(buf + at, len - at, "%s %s\n", keys[i].name, p);
		else if (*(const long *)p == XSC_HP_NONE)
			n += snprintf(buf + at, len - at, "%s unavailable\n", keys[i].name);
		else
			n += snprintf(buf + at, len - at, "%s %ld\n", keys[i].name,
				      *(const long *)p);
	}
	return n;
}

/* Parses text into *hp.  need: the level of keys that must be there (1:
 * the costs, 2: also the cache key).  0, or -1 with the problem in err. */
static int parse(char *text, struct xsc_hostprof *hp, int need, char *err, size_t elen)
{
	bool seen[NKEYS] = { false };
	long format = -1;
	int line = 0;
	size_t at;

	for (char *s = text, *nl; *s; s = nl) {
		nl = s + strcspn(s, "\n");
		if (*nl)
			*nl++ = '\0';
		line++;
		s += strspn(s, " \t");
		if (!*s || *s == '#')
			continue;
		char *v = s + strcspn(s, " \t");
		size_t klen = (size_t)(v - s);
		v += strspn(v, " \t");
		for (char *e = v + strlen(v); e > v && (e[-1] == ' ' || e[-1] == '\t' ||
							 e[-1] == '\r');)
			*--e = '\0';
		if (!*v) {
			snprintf(err, elen, "line %d: '%.*s' without a value", line, (int)klen, s);
			return -1;
		}
		if (klen == 6 && !strncmp(s, "format", 6)) {
			format = strtol(v, NULL, 10);
			continue;
		}
		for (size_t i = 0; i < NKEYS; i++) {
			char *p = (char *)hp + keys[i].off, *end;
			if (strlen(keys[i].name) != klen || strncmp(s, keys[i].name, klen))
				continue;
			seen[i] = true;
			if (keys[i].kind == STR) {
				snprintf(p, keys[i].size, "%s", v);
				break;
			}
			long n = strtol(v, &end, 10);
			if (!strcmp(v, "unavailable")) {
				n = XSC_HP_NONE;
			} else if (*end || end == v || n < 0) {
				snprintf(err, elen, "line %d: %s '%s' is neither a number "
					 "nor 'unavailable'", line, keys[i].name, v);
				return -1;
			}
			*(long *)p = n;
			break;
		}
	}
	if (need >= 2 && format != FORMAT) {
		snprintf(err, elen, "format %ld, not %d", format, FORMAT);
		return -1;
	}
	at = (size_t)snprintf(err, elen, "missing");
	for (size_t i = 0; i < NKEYS; i++)
		if (!seen[i] && keys[i].need && keys[i].need <= need && at < elen)
			at += (size_t)snprintf(err + at, elen - at, " %s", keys[i].name);
	return strcmp(err, "missing") ? -1 : 0;
}

/* ---- the cache ------------------------------------------------------------- */

/* The cache file's path into buf; false when there is none to use. */
static bool cache_path(char *buf, size_t len)
{
	const char *dir = getenv("XSC_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	int n;

	if (dir && *dir)
		n = snprintf(buf, len, "%s/host-profile", dir);
	else if (xdg && *xdg == '/')	/* relative: invalid (XDG spec) */
		n = snprintf(buf, len, "%s/xsc/host-profile", xdg);
	else if (home && *home)
		n = snprintf(buf, len, "%s/.cache/xsc/host-profile", home);
	else
		return false;
	return n > 0 && (size_t)n < len;
}

static bool same_host(const struct xsc_hostprof *a, const struct xsc_hostprof *b)
{
	return !strcmp(a->boot_id, b->boot_id) && !strcmp(a->cpu, b->cpu) &&
	       !strcmp(a->kernel, b->kernel) &&
	       !strcmp(a->io_uring_disabled, b->io_uring_disabled);
}

/* The cached profile of this host (hp's key filled in) into *hp. */
static bool cache_read(const char *path, struct xsc_hostprof *hp)
{
	struct xsc_hostprof c = { 0 };
	char text[2048], err[256];

	if (xsc__read_small(path, text, sizeof(text)) <= 0 ||
	    parse(text, &c, 2, err, sizeof(err)) < 0 || !same_host(&c, hp))
		return false;
	memcpy(hp, &c, sizeof(c));
	return true;
}

/* mkdir -p dir, 0700; 0 or the last mkdir's -errno. */
static long make_dirs(char *dir)
{
	long r = 0;

	for (char *s = dir + (*dir == '/'); *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		xsc__sys2(SYS_mkdir, dir, 0700);	/* the last one says */
		*s = '/';
	}
	if (*dir && (r = xsc__sys2(SYS_mkdir, dir, 0700)) == -EEXIST)
		r = 0;
	return r;
}

int xsc__hostprof_save(const struct xsc_hostprof *hp, const char *path)
{
	char dir[256], tmp[300], text[2560];
	int len = xsc__hostprof_format(hp, text, sizeof(text));
	const char *slash = strrchr(path, '/');
	long fd, n;

	len += snprintf(text + len, sizeof(text) - (size_t)len, "# ");
	len += xsc__hostprof_source(hp, text + len, sizeof(text) - (size_t)len);
	len += snprintf(text + len, sizeof(text) - (size_t)len, "\n");
	if ((size_t)len >= sizeof(text) || !slash || (size_t)(slash - path) >= sizeof(dir))
		return -EINVAL;
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = '\0';
	if ((n = make_dirs(dir)) < 0)
		return (int)n;
	snprintf(tmp, sizeof(tmp), "%s/.host-profile.%ld", dir, xsc__sys0(SYS_getpid));
	fd = xsc__sys4(SYS_openat, AT_FDCWD, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
		       0644);
	if (fd < 0)
		return (int)fd;
	n = xsc__sys3(SYS_write, fd, text, len);
	xsc__sys1(SYS_close, fd);
	if (n == len)
		n = xsc__sys2(SYS_rename, tmp, path);
	else if (n >= 0)
		n = -EIO;
	if (n < 0)
		xsc__sys1(SYS_unlink, tmp);
	return n < 0 ? (int)n : 0;
}

/* ---- the decisions ------------------------------------------------------------ */

static const char *const src_word[] = { "measured", "cached", "forced" };

int xsc__hostprof_source(const struct xsc_hostprof *hp, char *buf, size_t len)
{
	switch (hp->source) {
	case XSC_HP_CACHED:
		return snprintf(buf, len, "cached in %s", hp->file);
	case XSC_HP_FORCED:
		return snprintf(buf, len, "forced by XSC_HOST_PROFILE=%s", hp->file);
	default:
		return snprintf(buf, len, "measured in %ld us%s%s", hp->measure_us,
				*hp->note ? "; " : "", hp->note);
	}
}

/* A fiber alone on its vcpu (nothing else runnable, nothing posted
 * waiting for a flush) gets nothing from posting a call that cannot wait:
 * the batch would be that call.  It makes it itself when a system call
 * costs less than one NOP posted and reaped alone, which is the least
 * posting it could cost (its park and resume come on top). */
static void alone(struct xsc_hostprof *hp, const char *src)
{
	long sys = hp->null_syscall_ns, b1 = hp->posted_batch1_ns;
	long sw = hp->thread_switch_ns > 0 ? hp->thread_switch_ns : 0;

	hp->here_alone = sys < 0 || b1 < 0 || sys < b1;
	hp->here_look_alone = sys < 0 || b1 < 0 || 2 * sys < b1 + 2 * sw;
	if (sys < 0 || b1 < 0)
		snprintf(hp->why_alone, sizeof(hp->why_alone), "the cost of a "
			 "posted call is unknown here (host profile, %s)", src);
	else
		snprintf(hp->why_alone, sizeof(hp->why_alone), "a system call "
			 "costs %ld ns here, a call posted alone %ld ns (host "
			 "profile, %s)", sys, b1, src);
}

/* A call that may run in the caller does so when that costs less than
 * posting it in the form it would take.  The posted side is a call in a
 * batch of 32 (the runtime flushes when nothing is runnable, or at 64
 * pending: busy programs post in batches) in the ring, or in io_uring's
 * worker threads for the calls io_uring hands there.  The call's own
 * work is the same on both sides and left out. */
static void decide(struct xsc_hostprof *hp)
{
	long sys = hp->null_syscall_ns, ring = hp->posted_batch32_ns;
	long async = hp->posted_async_batch32_ns;
	const char *src = src_word[hp->source];

	alone(hp, src);
	if (sys < 0 || ring < 0 || async < 0) {
		/* without a ring there is nothing to post to; with one, in the
		 * caller as where the costs are unknown */
		hp->here_ring = hp->here_async = hp->here_look = true;
		snprintf(hp->why_cheap, sizeof(hp->why_cheap), "runs in the caller: "
			 "the cost of a posted call is unknown here (io_uring not "
			 "measured; host profile, %s)", src);
		snprintf(hp->why_open, sizeof(hp->why_open), "io_uring; an open that "
			 "cannot wait for a peer runs in the caller: the cost of a "
			 "posted call is unknown here (host profile, %s)", src);
		return;
	}
	hp->here_ring = sys < ring;
	hp->here_async = sys < async;
	hp->here_look = 2 * sys < async;
	if (hp->here_async)
		snprintf(hp->why_cheap, sizeof(hp->why_cheap), "runs in the caller: "
			 "a system call costs %ld ns here, a posted call %ld ns (in "
			 "io_uring's workers; host profile, %s)", sys, async, src);
	else
		snprintf(hp->why_cheap, sizeof(hp->why_cheap), "io_uring: a posted "
			 "call costs %ld ns here (in io_uring's workers), a system call "
			 "%ld ns (host profile, %s)", async, sys, src);
	snprintf(hp->why_open, sizeof(hp->why_open), "io_uring; an open that may "
		 "wait for a peer (a FIFO, a device) runs in io_uring's workers, never "
		 "with O_NONBLOCK added; one that cannot runs in the caller where that "
		 "costs less: with O_NONBLOCK, O_PATH or O_DIRECTORY %s (a system call "
		 "%ld ns here, a posted call %ld ns), with other flags %s (a look at "
		 "the path and the call %ld ns, a posted call in io_uring's workers "
		 "%ld ns); by the only thread of a vcpu, with no look, where a call "
		 "that cannot wait is made alone (%s) (host profile, %s)",
		 hp->here_ring ? "it does" : "it is posted", sys, ring,
		 hp->here_look ? "it does" : "it is posted", 2 * sys, async,
		 hp->here_alone ? "here it is" : "not here", src);
}

unsigned xsc__hostprof_spin_ns(const struct xsc_hostprof *hp)
{
	/* The party that waits for another core sleeps when spinning has
	 * cost what the wake-up that ends a sleep costs: at most twice the
	 * wait it would have had knowing when the wait ends (spin-then-
	 * block, Karlin et al. 1991).  The cap keeps one bad measurement
	 * from spinning for long.  Unknown (one core allowed, or no thread
	 * could be started): 20 us. */
	if (!hp || hp->cross_core_wake_ns <= 0)
		return 20000;
	return hp->cross_core_wake_ns > 1000000 ? 1000000 : (unsigned)hp->cross_core_wake_ns;
}

/* ---- loading, once per process ------------------------------------------------ */

static struct xsc_hostprof prof;
static char err_text[512];
static const char *prof_err;
/* 0: not loaded; -1: loaded; otherwise the pid of the process whose
 * thread is loading it (a forked child that finds its parent's pid
 * there loads it itself: nobody in the child will finish) */
#define READY (-1L)
static _Atomic long state;
static void load_forced(const char *file)
{
	char text[4096], err[400];
	long n = xsc__read_small(file, text, sizeof(text));

	prof.source = XSC_HP_FORCED;
	snprintf(prof.file, sizeof(prof.file), "%s", file);
	if (n < 0)
		snprintf(err, sizeof(err), "%s", strerror((int)-n));
	if (n < 0 || parse(text, &prof, 1, err, sizeof(err)) < 0) {
		snprintf(err_text, sizeof(err_text), "XSC_HOST_PROFILE=%s: %s", file, err);
		prof_err = err_text;
		return;
	}
	decide(&prof);
}

/* Whether a load (xsc__hostprof_load()) is more than the cores: other
 * threads then wait for them, and so do the measurement's.  Such a
 * profile is cached (a busy machine should not measure in every
 * process) until a process finds the machine no longer busy, which
 * measures again: the cache keeps the quietest measurement it was
 * given the chance to take. */
static bool busy(long load_pct)
{
	return load_pct > 100;
}

static void load(void)
{
	const char *forced = getenv("XSC_HOST_PROFILE");
	char path[256];
	bool have_path = cache_path(path, sizeof(path));
	bool filtered = xsc__status_field("Seccomp") != 0;
	int r;

	if (forced && *forced) {
		load_forced(forced);
		return;
	}
	xsc__hostprof_identify(&prof);
	if (have_path && cache_read(path, &prof) && !(busy(prof.load_pct) &&
						      !busy(xsc__hostprof_load()))) {
		prof.source = XSC_HP_CACHED;
		snprintf(prof.file, sizeof(prof.file), "%s", path);
		decide(&prof);
		return;
	}
	xsc__hostprof_measure(&prof, !filtered);
	prof.source = XSC_HP_MEASURED;
	if (filtered)
		snprintf(prof.note, sizeof(prof.note), "not cached: a seccomp filter is "
			 "active, io_uring not measured");
	else if (!have_path)
		snprintf(prof.note, sizeof(prof.note), "not cached: no XSC_CACHE_DIR, "
			 "XDG_CACHE_HOME or HOME");
	else if ((r = xsc__hostprof_save(&prof, path)) < 0)
		snprintf(prof.note, sizeof(prof.note), "not cached: %s: %s", path,
			 strerror(-r));
	else
		snprintf(prof.note, sizeof(prof.note), "written to %s%s", path,
			 busy(prof.load_pct) ? "; on a busy machine: measured again "
			 "once it is not" : "");
	decide(&prof);
}

const struct xsc_hostprof *xsc__hostprof(const char **err)
{
	/* acquire: pairs with the release store of READY below, after
	 * which prof and prof_err are complete and never change */
	long s = atomic_load_explicit(&state, memory_order_acquire);

	while (s != READY) {
		long me = xsc__sys0(SYS_getpid);
		if (s == 0 &&
		    atomic_compare_exchange_strong_explicit(&state, &s, me,
							    memory_order_acquire,
							    memory_order_acquire)) {
			load();
			atomic_store_explicit(&state, READY, memory_order_release);
			break;
		}
		if (s != 0 && s != READY && s != me)	/* the parent's load */
			atomic_compare_exchange_strong(&state, &s, 0);
		else if (s == me)
			xsc__sys0(SYS_sched_yield);	/* another thread loads */
		s = atomic_load_explicit(&state, memory_order_acquire);
	}
	if (err)
		*err = prof_err;
	return prof_err ? NULL : &prof;
}
