/*
 * sysinfo.c - the profiler's syscall table: names and argument kinds.
 *
 * Names come from sysnames.h, the library's list generated at build time
 * from the system's <asm/unistd_64.h> (scripts/gen-sysnames.sh), so every
 * x86-64 number has a name and the same name everywhere in xsc.
 * Argument kinds come from the signature table below, written by hand for
 * the calls that matter to clustering; a call missing from it has all its
 * arguments ignored (it still becomes a node, just without arguments).
 *
 * A signature has one letter per argument (enum xt_akind):
 *   f fd   p pointer   s path   n length   c constant/flags   i integer
 * The graph puts f and c arguments into node labels; the cluster analysis
 * profiles n, c and i values and looks for n and f arguments that equal an
 * earlier result.  Update graph.c's fd tracking when you add a call that
 * creates descriptors (newfd / pair).
 */
#include "tracei.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

static const char *const names[] = {
#define XSC_SYSNAME(nr, name) [nr] = #name,
#include "sysnames.h"
#undef XSC_SYSNAME
};
#define NNAMES ((int)(sizeof(names) / sizeof(names[0])))

/* Sorted by name: looked up by binary search. */
static const struct xt_sysinfo sigs[] = {
	{ "accept", "fpp---", XT_FD_SOCK, 0 },
	{ "accept4", "fppc--", XT_FD_SOCK, 0 },
	{ "access", "sc----", 0, 0 },
	{ "arch_prctl", "cp----", 0, 0 },
	{ "bind", "fpn---", 0, 0 },
	{ "brk", "p-----", 0, 0 },
	{ "chdir", "s-----", 0, 0 },
	{ "chmod", "si----", 0, 0 },
	{ "clock_gettime", "cp----", 0, 0 },
	{ "clock_nanosleep", "ccpp--", 0, 0 },
	{ "clone", "c-----", 0, 0 },
	{ "close", "f-----", 0, 0 },
	{ "connect", "fpn---", 0, 0 },
	{ "copy_file_range", "fpfpnc", 0, 0 },
	{ "creat", "si----", XT_FD_FILE, 0 },
	{ "dup", "f-----", XT_FD_DUP, 0 },
	{ "dup2", "ff----", XT_FD_DUP, 0 },
	{ "dup3", "ffc---", XT_FD_DUP, 0 },
	{ "epoll_create", "i-----", XT_FD_EPOLL, 0 },
	{ "epoll_create1", "c-----", XT_FD_EPOLL, 0 },
	{ "epoll_ctl", "fcfp--", 0, 0 },
	{ "epoll_pwait", "fpnipn", 0, 0 },
	{ "epoll_wait", "fpni--", 0, 0 },
	{ "eventfd2", "ic----", XT_FD_EVENT, 0 },
	{ "execve", "spp---", 0, 0 },
	{ "exit", "i-----", 0, 0 },
	{ "exit_group", "i-----", 0, 0 },
	{ "faccessat", "fsc---", 0, 0 },
	{ "faccessat2", "fscc--", 0, 0 },
	{ "fadvise64", "fiic--", 0, 0 },
	{ "fallocate", "fcii--", 0, 0 },
	{ "fchdir", "f-----", 0, 0 },
	{ "fchmod", "fi----", 0, 0 },
	{ "fchmodat", "fsi---", 0, 0 },
	{ "fchown", "fii---", 0, 0 },
	{ "fchownat", "fsiic-", 0, 0 },
	{ "fcntl", "fci---", 0, 0 },
	{ "fdatasync", "f-----", 0, 0 },
	{ "fgetxattr", "fspn--", 0, 0 },
	{ "flistxattr", "fpn---", 0, 0 },
	{ "flock", "fc----", 0, 0 },
	{ "fstat", "fp----", 0, 0 },
	{ "fstatfs", "fp----", 0, 0 },
	{ "fsync", "f-----", 0, 0 },
	{ "ftruncate", "fi----", 0, 0 },
	{ "futex", "pcip-i", 0, 0 },
	{ "getcwd", "pn----", 0, 0 },
	{ "getdents64", "fpn---", 0, 0 },
	{ "getpeername", "fpp---", 0, 0 },
	{ "getrandom", "pnc---", 0, 0 },
	{ "getsockname", "fpp---", 0, 0 },
	{ "getsockopt", "fccpp-", 0, 0 },
	{ "getxattr", "sspn--", 0, 0 },
	{ "inotify_init1", "c-----", XT_FD_INOTIFY, 0 },
	{ "io_uring_enter", "fiicpn", 0, 0 },
	{ "io_uring_setup", "np----", XT_FD_URING, 0 },
	{ "ioctl", "fcp---", 0, 0 },
	{ "kill", "ic----", 0, 0 },
	{ "lgetxattr", "sspn--", 0, 0 },
	{ "listen", "fi----", 0, 0 },
	{ "lseek", "fic---", 0, 0 },
	{ "lstat", "sp----", 0, 0 },
	{ "madvise", "pnc---", 0, 0 },
	{ "memfd_create", "sc----", XT_FD_MEMFD, 0 },
	{ "mkdir", "si----", 0, 0 },
	{ "mkdirat", "fsi---", 0, 0 },
	{ "mmap", "pnccfi", 0, 0 },
	{ "mprotect", "pnc---", 0, 0 },
	{ "mremap", "pnnc--", 0, 0 },
	{ "munmap", "pn----", 0, 0 },
	{ "nanosleep", "pp----", 0, 0 },
	{ "newfstatat", "fspc--", 0, 0 },
	{ "open", "sci---", XT_FD_FILE, 0 },
	{ "openat", "fsci--", XT_FD_FILE, 0 },
	{ "pidfd_open", "ic----", XT_FD_PIDFD, 0 },
	{ "pipe", "p-----", XT_FD_PIPE, 1 },
	{ "pipe2", "pc----", XT_FD_PIPE, 1 },
	{ "poll", "pni---", 0, 0 },
	{ "ppoll", "pnppn-", 0, 0 },
	{ "prctl", "ciiii-", 0, 0 },
	{ "pread64", "fpni--", 0, 0 },
	{ "preadv", "fpnii-", 0, 0 },
	{ "preadv2", "fpniic", 0, 0 },
	{ "prlimit64", "icpp--", 0, 0 },
	{ "pselect6", "ipppp-", 0, 0 },
	{ "pwrite64", "fpni--", 0, 0 },
	{ "pwritev", "fpnii-", 0, 0 },
	{ "pwritev2", "fpniic", 0, 0 },
	{ "read", "fpn---", 0, 0 },
	{ "readlink", "spn---", 0, 0 },
	{ "readlinkat", "fspn--", 0, 0 },
	{ "readv", "fpn---", 0, 0 },
	{ "recvfrom", "fpncpp", 0, 0 },
	{ "recvmmsg", "fpncp-", 0, 0 },
	{ "recvmsg", "fpc---", 0, 0 },
	{ "rename", "ss----", 0, 0 },
	{ "renameat", "fsfs--", 0, 0 },
	{ "renameat2", "fsfsc-", 0, 0 },
	{ "rmdir", "s-----", 0, 0 },
	{ "rt_sigaction", "cppn--", 0, 0 },
	{ "rt_sigprocmask", "cppn--", 0, 0 },
	{ "select", "ipppp-", 0, 0 },
	{ "sendfile", "ffpn--", 0, 0 },
	{ "sendmmsg", "fpnc--", 0, 0 },
	{ "sendmsg", "fpc---", 0, 0 },
	{ "sendto", "fpncpn", 0, 0 },
	{ "setsockopt", "fccpn-", 0, 0 },
	{ "shutdown", "fc----", 0, 0 },
	{ "signalfd4", "fpnc--", XT_FD_SIGNAL, 0 },
	{ "socket", "ccc---", XT_FD_SOCK, 0 },
	{ "socketpair", "cccp--", XT_FD_SOCK, 1 },
	{ "splice", "fpfpnc", 0, 0 },
	{ "stat", "sp----", 0, 0 },
	{ "statfs", "sp----", 0, 0 },
	{ "statx", "fsccp-", 0, 0 },
	{ "symlink", "ss----", 0, 0 },
	{ "symlinkat", "sfs---", 0, 0 },
	{ "tee", "ffnc--", 0, 0 },
	{ "tgkill", "iic---", 0, 0 },
	{ "timerfd_create", "cc----", XT_FD_TIMER, 0 },
	{ "timerfd_settime", "fcpp--", 0, 0 },
	{ "truncate", "si----", 0, 0 },
	{ "umask", "i-----", 0, 0 },
	{ "unlink", "s-----", 0, 0 },
	{ "unlinkat", "fsc---", 0, 0 },
	{ "utimensat", "fspc--", 0, 0 },
	{ "wait4", "ipcp--", 0, 0 },
	{ "write", "fpn---", 0, 0 },
	{ "writev", "fpn---", 0, 0 },
};
#define NSIGS ((int)(sizeof(sigs) / sizeof(sigs[0])))

static const struct xt_sysinfo unknown = { "?", "------", 0, 0 };
static const struct xt_sysinfo *bynr[NNAMES];
static int ready;

static const struct xt_sysinfo *find_sig(const char *name)
{
	int lo = 0, hi = NSIGS - 1;

	while (lo <= hi) {
		int mid = (lo + hi) / 2, c = strcmp(name, sigs[mid].name);
		if (c == 0)
			return &sigs[mid];
		if (c < 0)
			hi = mid - 1;
		else
			lo = mid + 1;
	}
	return NULL;
}

static int byname[NNAMES], nbyname;

static int cmp_name(const void *a, const void *b)
{
	return strcmp(names[*(const int *)a], names[*(const int *)b]);
}

/* The signature table must stay sorted with six letters per entry: checked
 * here once, loudly, rather than giving wrong answers. */
static void init(void)
{
	for (int i = 0; i < NSIGS; i++) {
		if (strlen(sigs[i].sig) != XT_NARGS ||
		    (i && strcmp(sigs[i - 1].name, sigs[i].name) >= 0)) {
			fprintf(stderr, "xsc trace: bad signature table at %s\n",
				sigs[i].name);
			abort();
		}
	}
	for (int nr = 0; nr < NNAMES; nr++) {
		bynr[nr] = names[nr] ? find_sig(names[nr]) : NULL;
		if (names[nr])
			byname[nbyname++] = nr;
	}
	qsort(byname, nbyname, sizeof(int), cmp_name);
	ready = 1;
}

const char *xt_sys_name(int nr)
{
	return nr >= 0 && nr < NNAMES ? names[nr] : NULL;
}

int xt_sys_nr(const char *name)
{
	int lo = 0, hi;

	if (!ready)
		init();
	hi = nbyname - 1;
	while (lo <= hi) {
		int mid = (lo + hi) / 2, c = strcmp(name, names[byname[mid]]);
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
	if (nr >= 0 && nr < NNAMES && bynr[nr])
		return bynr[nr];
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
