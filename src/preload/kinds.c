/*
 * kinds.c - transparent mode: what the program's own calls tell about its
 * descriptors (sched/fdkind.c).  Before each call of the program's
 * (dispatch and the handlers' calls, preload.c), and after it:
 *   - a stat of a descriptor (fstat, newfstatat or statx with
 *     AT_EMPTY_PATH and an empty path) that succeeded says whether it is
 *     a regular file or a block device;
 *   - close, dup2, dup3 and close_range mark the descriptors they close
 *     or replace as closing, and then as closed;
 *   - a socket, an accept, a pipe, an eventfd, a timerfd or an inotify
 *     made by the program is no file, and non-blocking as its flags say;
 *     fcntl(F_SETFL) and ioctl(FIONBIO) that succeed set or clear it;
 *   - a dup (dup, dup2, dup3, fcntl F_DUPFD) shares its descriptor's open
 *     file description with another, a fork every one with the child,
 *     a sendmsg with control data (SCM_RIGHTS) maybe with another
 *     process: from before the call on, O_NONBLOCK of those is not known
 *     exactly (xsc__fdkind_nb), since it may change through the other;
 *   - a ring of the program's own, a descriptor table shared with another
 *     process or unshared by one thread turn the kinds off for good.
 */
#include "shim.h"

#include <fcntl.h>
#include <linux/close_range.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>

/* fd's open file description is another descriptor's too (a dup's
 * source or copy); fd as the call gave or returned it */
static void share(long fd)
{
	if (fd >= 0 && fd <= INT_MAX)
		xsc__fdkind_share((int)fd);
}

static void off(void)
{
	atomic_store_explicit(&xsc__fdkind_on, false, memory_order_relaxed);
}

/* Reads len bytes of the program's memory at p, on pages the vcpu has
 * found readable before (tp_readable: no system call on the hot path):
 * 0, or -EFAULT. */
static int peek(void *dst, long p, size_t len)
{
	struct xsc_vcpu *v = xsc__vcpu();
	struct xsc_fiber *f = v ? v->cur : NULL;

	/* the running thread's own stack, where stat buffers mostly are */
	if (f && (uintptr_t)p >= f->tstack_lo && (uintptr_t)p + len <= f->tstack_hi) {
		memcpy(dst, (const void *)p, len);
		return 0;
	}
	if (!p || !v || tp_readable(v, (const uint32_t *)p) ||
	    tp_readable(v, (const uint32_t *)(p + (long)len - 1)))
		return -EFAULT;
	memcpy(dst, (const void *)p, len);
	return 0;
}

/* The control data a sendmsg or sendmmsg carries (descriptors, with
 * SCM_RIGHTS): true when any, or when it cannot be read (the call then
 * fails, or sends what it sends).  peek: a server's every sendmsg comes
 * here, and a probe of the msghdr each time was one rt_sigprocmask per
 * message (memcached). */
static bool sends_control(long nr, const long *a)
{
	struct mmsghdr m;
	unsigned n = nr == SYS_sendmsg ? 1 : (unsigned)a[2];

	for (unsigned i = 0; i < n && i < 1024; i++) {
		long p = a[1] + (long)(i * sizeof(m));
		if (peek(&m.msg_hdr, p, sizeof(m.msg_hdr)) < 0)
			return true;
		if (m.msg_hdr.msg_control && m.msg_hdr.msg_controllen)
			return true;
	}
	return false;
}

static bool empty_path(long p)
{
	char c;

	return peek(&c, p, 1) == 0 && c == 0;
}

static void stat_of(struct tp_kcall *k, long fd)
{
	if (fd < 0 || fd > INT_MAX)
		return;
	k->what = TP_KC_STAT;
	k->first = (int)fd;
	k->seen = xsc__fdkind_seen((int)fd);
}

static void closes(struct tp_kcall *k, long first, long last)
{
	if (first < 0 || first > INT_MAX || last < first)
		return;
	k->what = TP_KC_CLOSE;
	k->first = (int)first;
	k->last = last > INT_MAX ? INT_MAX : (int)last;
	k->marked = xsc__fdkind_closing(k->first, k->last, true, 0);
}

/* fstat of arg 0, or an at-call (newfstatat, statx) with AT_EMPTY_PATH
 * and "": the kind of its descriptor, arg 0 (the AT_ flags: the
 * argument the row names "flags"). */
static void stat_kind(struct tp_kcall *k, long nr, const long *a)
{
	if (nr == SYS_fstat)
		stat_of(k, a[0]);
	else if ((a[nr == SYS_statx ? 2 : 3] & AT_EMPTY_PATH) && empty_path(a[1]))
		stat_of(k, a[0]);
}

/* close(fd); dup2 and dup3 close their second descriptor, except onto
 * itself (dup2 returns it, dup3 fails with EINVAL); close_range closes a
 * range, unless it only marks it close-on-exec. */
static void close_kind(struct tp_kcall *k, long nr, const long *a)
{
	if (nr == SYS_close_range) {
		if (a[2] & CLOSE_RANGE_UNSHARE)
			off();	/* the vcpu's own table from here on */
		if (!(a[2] & CLOSE_RANGE_CLOEXEC))
			closes(k, (unsigned)a[0], (unsigned)a[1]);
	} else if (nr == SYS_close) {
		closes(k, a[0], a[0]);
	} else if (a[0] != a[1]) {
		share(a[0]);	/* a dup2 or dup3 */
		closes(k, a[1], a[1]);
	}
}

/* fcntl(fd, F_SETFL, flags), ioctl(fd, FIONBIO, &on); fcntl(fd,
 * F_DUPFD[_CLOEXEC], min) shares fd's description, as dup does */
static void setfl_kind(struct tp_kcall *k, long nr, const long *a)
{
	if (a[0] < 0 || a[0] > INT_MAX)
		return;
	if (nr == SYS_fcntl && ((int)a[1] == F_DUPFD || (int)a[1] == F_DUPFD_CLOEXEC)) {
		share(a[0]);
		k->what = TP_KC_DUP;
		return;
	}
	if (nr == SYS_fcntl ? (int)a[1] != F_SETFL : (unsigned)a[1] != FIONBIO)
		return;
	k->what = TP_KC_SETFL;
	k->first = (int)a[0];
	k->seen = xsc__fdkind_seen((int)a[0]);
}

void tp_kinds_before(long nr, const long *a, struct tp_kcall *k)
{
	uint64_t flags;

	k->what = TP_KC_NONE;
	if (!atomic_load_explicit(&xsc__fdkind_on, memory_order_relaxed))
		return;
	if (nr < 0 || nr >= XSC_NR_MAX)
		return;
	switch (xsc__sys[nr].fdkind) {	/* the row's .fdkind */
	case XSC_FDKIND_STAT:
		stat_kind(k, nr, a);
		break;
	case XSC_FDKIND_CLOSE:
		close_kind(k, nr, a);
		break;
	case XSC_FDKIND_NEW:
		k->what = TP_KC_NEW;
		break;
	case XSC_FDKIND_SETFL:
		setfl_kind(k, nr, a);
		break;
	case XSC_FDKIND_SHARE:
		if (nr == SYS_dup) {
			share(a[0]);
			k->what = TP_KC_DUP;
		} else if (nr == SYS_fork || sends_control(nr, a)) {
			xsc__fdkind_share_all();
		}
		break;
	case XSC_FDKIND_OFF:
		if (nr == SYS_io_uring_setup || (nr == SYS_unshare && (a[0] & CLONE_FILES)))
			off();
		if (nr != SYS_clone && nr != SYS_clone3)
			break;
		flags = (uint64_t)a[0];
		if (nr == SYS_clone3 &&
		    tp_copy_in(&flags, (const void *)a[0], sizeof(flags)) < 0)
			break;	/* the kernel refuses it */
		if ((flags & CLONE_FILES) && !(flags & CLONE_VM))
			off();
		else if (!(flags & CLONE_FILES))
			xsc__fdkind_share_all();	/* a process: glibc's fork */
		break;
	default:
		break;
	}
}

/* The mode the kernel wrote into the program's buffer, or -1. */
static long mode_of(long nr, const long *a)
{
	struct statx stx;
	struct stat st;

	if (nr == SYS_statx) {
		if (peek(&stx, a[4], offsetof(struct statx, stx_mode) +
			 sizeof(stx.stx_mode)) < 0 || !(stx.stx_mask & STATX_TYPE))
			return -1;
		return stx.stx_mode;
	}
	if (peek(&st.st_mode, (nr == SYS_fstat ? a[1] : a[2]) +
		 (long)offsetof(struct stat, st_mode), sizeof(st.st_mode)) < 0)
		return -1;
	return st.st_mode;
}

/* A new descriptor, or the pair written at fds_out. */
static void born(long nr, const long *a, long r)
{
	const struct xsc_sysdef *d = &xsc__sys[nr];
	bool nb = d->nonblock && (xsc__sys_arg((const int64_t *)a, d->nonblock) & O_NONBLOCK);
	int fds[2], at = xsc__sys_pair_at(d);

	_Static_assert(SOCK_NONBLOCK == O_NONBLOCK, "one bit for every kind of new descriptor");
	if (at < 0) {
		if (r <= INT_MAX)
			xsc__fdkind_born((int)r, nb);
	} else if (peek(fds, a[at], sizeof(fds)) == 0) {
		xsc__fdkind_born(fds[0], nb);
		xsc__fdkind_born(fds[1], nb);
	}
}

void tp_kinds_after(long nr, const long *a, const struct tp_kcall *k, long r)
{
	long mode;
	int on;

	switch (k->what) {
	case TP_KC_STAT:
		if (r == 0 && (mode = mode_of(nr, a)) >= 0)
			xsc__fdkind_learn(k->first, k->seen,
					  S_ISREG(mode) || S_ISBLK(mode));
		break;
	case TP_KC_CLOSE:
		xsc__fdkind_closing(k->first, k->last, false, k->marked);
		if (nr == SYS_dup2 || nr == SYS_dup3)
			share(r);	/* the copy */
		break;
	case TP_KC_DUP:
		share(r);
		break;
	case TP_KC_NEW:
		if (r >= 0)
			born(nr, a, r);
		break;
	case TP_KC_SETFL:
		if (r < 0)
			break;
		if (nr == SYS_fcntl)
			xsc__fdkind_setnb(k->first, k->seen, (a[2] & O_NONBLOCK) != 0);
		else	/* an int the kernel read: not known if we cannot */
			xsc__fdkind_setnb(k->first, k->seen,
					  peek(&on, a[2], sizeof(on)) ? -1 : on != 0);
		break;
	default:
		break;
	}
}

void tp_kinds_init(void)
{
	atomic_store(&xsc__fdkind_on, true);
}
