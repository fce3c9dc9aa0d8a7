/*
 * sysinfo.c - the profiler's view of the syscall table: names and
 * argument kinds.
 *
 * Both come from the library's table (src/table.h): names generated at
 * build time from the system's <asm/unistd_64.h> (scripts/gen-sysnames.sh),
 * argument kinds from each row's .args (the vocabulary in src/table.c),
 * the kind of descriptor a call makes from its .newfd, and a pair of
 * descriptors from an fds_out argument.  A number the table does not
 * describe has all its arguments ignored (it still becomes a node, just
 * without arguments).  To teach the profiler a call, describe it in the
 * table (the rows in src/table/): every part of xsc then knows it the same way.
 *
 * A signature has one letter per argument (enum xt_akind, the same
 * letters as the table's enum xsc_akind):
 *   f fd   p pointer   s path   n length   c constant/flags   i integer
 * The graph puts f and c arguments into node labels; the cluster analysis
 * profiles n, c and i values and looks for n and f arguments that equal an
 * earlier result.
 */
#include "tracei.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include "table.h"
#include "xsc.h"

#define SAME(a, b) ((int)(a) == (int)(b))
_Static_assert(SAME(XT_A_FD, XSC_A_FD) && SAME(XT_A_PTR, XSC_A_PTR) &&
	       SAME(XT_A_STR, XSC_A_STR) && SAME(XT_A_LEN, XSC_A_LEN) &&
	       SAME(XT_A_CONST, XSC_A_CONST) && SAME(XT_A_INT, XSC_A_INT) &&
	       SAME(XT_A_IGN, XSC_A_NONE),
	       "the profiler's argument letters are the table's");

#define NNAMES XSC_NR_MAX

static const char *name_of(int nr)
{
	return xsc__sys_named(nr) ? xsc_syscall_name(nr) : NULL;
}

/* The table's descriptor kinds as the profiler's. */
static const unsigned char fdkind[XSC_NEWFD_NKINDS] = {
	[XSC_NEWFD_NONE] = 0, [XSC_NEWFD_FILE] = XT_FD_FILE,
	[XSC_NEWFD_SOCK] = XT_FD_SOCK, [XSC_NEWFD_PIPE] = XT_FD_PIPE,
	[XSC_NEWFD_EPOLL] = XT_FD_EPOLL, [XSC_NEWFD_EVENT] = XT_FD_EVENT,
	[XSC_NEWFD_TIMER] = XT_FD_TIMER, [XSC_NEWFD_SIGNAL] = XT_FD_SIGNAL,
	[XSC_NEWFD_MEMFD] = XT_FD_MEMFD, [XSC_NEWFD_URING] = XT_FD_URING,
	[XSC_NEWFD_INOTIFY] = XT_FD_INOTIFY, [XSC_NEWFD_PIDFD] = XT_FD_PIDFD,
	[XSC_NEWFD_DUP] = XT_FD_DUP,
};

static const struct xt_sysinfo unknown = { "?", "------", 0, 0 };
static struct xt_sysinfo info[NNAMES];
static char sigs[NNAMES][XT_NARGS + 1];
static int ready;

static int byname[NNAMES], nbyname;

static int cmp_name(const void *a, const void *b)
{
	return strcmp(name_of(*(const int *)a), name_of(*(const int *)b));
}

static void init(void)
{
	for (int nr = 0; nr < NNAMES; nr++) {
		const struct xsc_sysdef *d = xsc__sysdef(nr);

		if (!name_of(nr))
			continue;
		byname[nbyname++] = nr;
		if (!d || !d->args)
			continue;	/* undescribed: xt_sys_info says "?" */
		xsc__sys_akinds(d, sigs[nr]);
		sigs[nr][XT_NARGS] = 0;
		info[nr] = (struct xt_sysinfo){
			.name = name_of(nr),
			.sig = sigs[nr],
			.newfd = d->newfd < XSC_NEWFD_NKINDS ? fdkind[d->newfd] : 0,
			.pair = (unsigned char)(xsc__sys_pair_at(d) + 1),
		};
	}
	qsort(byname, nbyname, sizeof(int), cmp_name);
	ready = 1;
}

const char *xt_sys_name(int nr)
{
	return nr >= 0 && nr < NNAMES ? name_of(nr) : NULL;
}

int xt_sys_nr(const char *name)
{
	int lo = 0, hi;

	if (!ready)
		init();
	hi = nbyname - 1;
	while (lo <= hi) {
		int mid = (lo + hi) / 2, c = strcmp(name, name_of(byname[mid]));
		if (c == 0)
			return byname[mid];
		if (c < 0)
			hi = mid - 1;
		else
			lo = mid + 1;
	}
	return -ENOENT;
}

const struct xt_sysinfo *xt_sys_info(int nr)
{
	if (!ready)
		init();
	if (nr >= 0 && nr < NNAMES && info[nr].name)
		return &info[nr];
	return &unknown;
}

char xt_sys_akind(int nr, int arg)
{
	return xt_sys_info(nr)->sig[arg];
}

const char *xt_fdkind_name(int kind)
{
	static const char *const k[XT_FD_NKINDS] = {
		"inh", "file", "dir", "dev", "proc", "sock", "pipe", "epoll",
		"event", "timer", "signal", "memfd", "uring", "inotify",
		"pidfd", "none", "cwd", "dup", "path",
	};
	return kind >= 0 && kind < XT_FD_NKINDS ? k[kind] : "?";
}
