/*
 * uring_fs.c - file and directory calls on io_uring.
 *
 * The stat family has no io_uring opcode.  It runs as IORING_OP_STATX into
 * the entry's private buffer; on success the result is converted field by
 * field the way the kernel's cp_new_stat() does and written to the
 * caller's struct stat with a checked copy (process_vm_writev on our own
 * pid): a bad buffer gives -EFAULT, never a crash, and a failed lookup
 * leaves the buffer untouched, as stat(2) does.  (A linked /dev/zero read
 * into the buffer would avoid that crossing, but on this kernel a failed
 * STATX does not break its link, so the read would clobber the buffer.)
 */
#include "uring_prep.h"
#include "hostprof.h"
#include "ucopy.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>

#include "rawsys.h"

#define FD(v) ((int)(v))
#define PTR(v) ((void *)(v))
#define CPTR(v) ((const char *)(v))

/* io_uring's first attempt at an open does not block: it adds O_NONBLOCK
 * and LOOKUP_CACHED, and only an -EAGAIN sends it to its workers.  For a
 * FIFO that is another call: a writer with no reader gets -ENXIO where
 * open(2) waits, and a reader with no writer opens at once (its first
 * read sees end of file, and a writer waiting in its own open is let
 * through); a device's open sees O_NONBLOCK too (a tty does not wait for
 * its carrier).  So an open that might wait for a peer goes straight to
 * io_uring's workers (IOSQE_ASYNC), which run it as open(2) runs.  Opens
 * that never wait for one keep the first attempt: O_NONBLOCK asked for,
 * O_PATH (nothing is opened), O_DIRECTORY (anything else is -ENOTDIR
 * before the open); O_CREAT, O_TRUNC and O_TMPFILE go to the workers
 * anyway. */
bool xsc__open_may_wait(long flags)
{
	return !(flags & (O_NONBLOCK | O_PATH | O_DIRECTORY | O_CREAT | O_TRUNC |
			  __O_TMPFILE));
}

void xsc__prep_open_sqe(struct io_uring_sqe *sqe, long dfd, const char *path,
			long flags, long mode)
{
	io_uring_prep_openat(sqe, (int)dfd, path, (int)flags, (mode_t)mode);
	if (xsc__open_may_wait(flags))
		sqe->flags |= IOSQE_ASYNC;
}

/* .cheap_if of open and openat.  An open may run in the caller when it
 * cannot wait for a peer, and does where the host profile says that
 * costs less than posting it (x->here_*, hostprof.c decide()): flags
 * that never wait (above) against a posted call in the ring; otherwise
 * a look at what the path names first and then the open (two system
 * calls) against a posted call in io_uring's workers, where such an open
 * goes (IOSQE_ASYNC).  The look finds a regular file, a directory, a
 * symlink the open will refuse, a memory device (/dev/null, /dev/zero,
 * /dev/urandom: major 1), or nothing (the open gives its own error); a
 * FIFO or another device goes to io_uring's workers.  The look runs only
 * where no seccomp filter is active (xsc__cheap_here): the open itself
 * is always the program's own call, with its own arguments, so the
 * answer is the kernel's even when the path changes in between; such a
 * race can only make the caller wait in its open, as natively.  A sole
 * fiber (XSC_HERE_SOLE) looks at nothing: its waiting in the open, on a
 * FIFO or a device, keeps no other fiber waiting, and a signal for it
 * ends the wait (sched/syscalls.c call_sole); it makes the open as a
 * fiber alone does a call that cannot wait (here_alone, which its being
 * alone already held: a system call < a NOP posted alone < the open
 * posted alone to the workers). */
static bool open_here(const struct xsc *x, long dfd, long path, long flags,
		      enum xsc_here where)
{
	struct stat st;

	/* glibc's O_TMPFILE includes O_DIRECTORY: both bits, not either */
	if ((flags & (O_CREAT | O_TRUNC)) || (flags & O_TMPFILE) == O_TMPFILE)
		return false;
	if (!xsc__open_may_wait(flags))
		return where != XSC_HERE_BATCH ? x->here_alone : x->here_ring;
	if (where == XSC_HERE_SOLE)
		return x->here_alone;
	if (!(where == XSC_HERE_ALONE ? x->hp->here_look_alone : x->here_look))
		return false;
	if (xsc__sys4(SYS_newfstatat, dfd, path, &st,
		      (flags & O_NOFOLLOW) ? AT_SYMLINK_NOFOLLOW : 0) < 0)
		return true;
	switch (st.st_mode & S_IFMT) {
	case S_IFREG: case S_IFDIR: case S_IFLNK:
		return true;
	case S_IFCHR:
		return major(st.st_rdev) == 1;
	default:
		return false;
	}
}

bool xsc__open_here(const struct xsc *x, const int64_t a[6], enum xsc_here where)
{
	return open_here(x, AT_FDCWD, a[0], a[1], where);
}

bool xsc__openat_here(const struct xsc *x, const int64_t a[6], enum xsc_here where)
{
	return open_here(x, a[0], a[1], a[2], where);
}

int xsc__prep_open(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	xsc__prep_open_sqe(xsc__sqe(x, id, 0), AT_FDCWD, CPTR(a[0]), a[1], a[2]);
	return 1;
}

int xsc__prep_openat(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	xsc__prep_open_sqe(xsc__sqe(x, id, 0), a[0], CPTR(a[1]), a[2], a[3]);
	return 1;
}

/* Its flags are in the caller's struct open_how, which only the kernel
 * reads: every openat2 goes to the workers. */
int xsc__prep_openat2(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	struct io_uring_sqe *sqe;

	if (!FITS_U32(a[3]))
		return 0;
	sqe = xsc__sqe(x, id, 0);

	io_uring_prep_openat2(sqe, FD(a[0]), CPTR(a[1]), PTR(a[2]));
	sqe->len = (unsigned)a[3];	/* the caller's size, not liburing's */
	sqe->flags |= IOSQE_ASYNC;
	return 1;
}

/* On an SQPOLL ring (the row's .uring.no_sqpoll) the poller, not the
 * caller, would drop the last reference, and the file would be released
 * a moment after the CQE (61 of 200 closes of a FIFO's write end were
 * seen by its reader more than 1 ms later): a lock, a FIFO's or a pipe's
 * other end, a socket's FIN still there after close(2) returned.  There
 * the entry's SQE is a NOP: its CQE comes from a round of the poller
 * after the one that posted every CQE seen before it, whose file
 * references are dropped by then (uring.c, xsc__sqpoll_barrier), and the
 * done function hands the close to its fallback, a thread that releases
 * the file before it answers.  Nobody spins for the poller meanwhile. */
int xsc__prep_close(struct xsc *x, int id)
{
	struct io_uring_sqe *sqe = xsc__sqe(x, id, 0);

	if (x->sqpoll)
		io_uring_prep_nop(sqe);
	else
		io_uring_prep_close(sqe, FD(A(x, id)[0]));
	return 1;
}

/* io_uring refuses to close io_uring descriptors (-EBADF) where close(2)
 * closes them.  An fd that is really invalid gives -EBADF synchronously
 * too, with no effect, so the retry is harmless. */
long xsc__done_close(struct xsc *x, int id)
{
	int res = slot_of(x, id)->res[0];
	return x->sqpoll || res == -EBADF ? XSC_RETRY_SYNC : res;
}

/* fsync, sync_file_range, fallocate and ftruncate always run in io-wq:
 * fenced (uring.h xsc__fence), so a close after them releases the file. */
int xsc__prep_fsync(struct xsc *x, int id)
{
	struct io_uring_sqe *sqe = xsc__sqe(x, id, 0);

	io_uring_prep_fsync(sqe, FD(A(x, id)[0]), 0);
	return xsc__fence(x, id, sqe);
}

int xsc__prep_fdatasync(struct xsc *x, int id)
{
	struct io_uring_sqe *sqe = xsc__sqe(x, id, 0);

	io_uring_prep_fsync(sqe, FD(A(x, id)[0]), IORING_FSYNC_DATASYNC);
	return xsc__fence(x, id, sqe);
}

int xsc__prep_sync_file_range(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	struct io_uring_sqe *sqe;

	if (!FITS_U32(a[2]) || !FITS_U32(a[3]))
		return 0;
	sqe = xsc__sqe(x, id, 0);
	io_uring_prep_rw(IORING_OP_SYNC_FILE_RANGE, sqe, FD(a[0]), NULL,
			 (unsigned)a[2], a[1]);
	sqe->sync_range_flags = (unsigned)a[3];
	return xsc__fence(x, id, sqe);
}

int xsc__prep_fallocate(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	if (!FITS_U32(a[1]))
		return 0;
	struct io_uring_sqe *sqe = xsc__sqe(x, id, 0);

	io_uring_prep_fallocate(sqe, FD(a[0]), (int)a[1], a[2], a[3]);
	return xsc__fence(x, id, sqe);
}

int xsc__prep_fadvise64(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	if (!FITS_U32(a[2]) || a[2] == 0 || a[3] != (int)a[3])
		return 0;	/* len 0 means "to the end": older kernels differ */
	io_uring_prep_fadvise(xsc__sqe(x, id, 0), FD(a[0]), a[1], (off_t)a[2],
			      (int)a[3]);
	return 1;
}

int xsc__prep_madvise(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	if (!FITS_U32(a[1]) || a[1] == 0 || a[2] != (int)a[2])
		return 0;
	io_uring_prep_madvise(xsc__sqe(x, id, 0), PTR(a[0]), (off_t)a[1], (int)a[2]);
	return 1;
}

/* ftruncate(2) checks the length before the fd (-EINVAL wins over
 * -EBADF); io_uring resolves the fd first: negative lengths declined. */
int xsc__prep_ftruncate(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	if (a[1] < 0)
		return 0;
	struct io_uring_sqe *sqe = xsc__sqe(x, id, 0);

	io_uring_prep_rw(XSC_OP_FTRUNCATE, sqe, FD(a[0]), NULL, 0, a[1]);
	return xsc__fence(x, id, sqe);
}

int xsc__prep_statx(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	if (!a[1])
		return 0;	/* NULL path with AT_EMPTY_PATH: 6.11+ syscall only */
	io_uring_prep_statx(xsc__sqe(x, id, 0), FD(a[0]), CPTR(a[1]), (int)a[2],
			    (unsigned)a[3], PTR(a[4]));
	return 1;
}

/* statx into the entry's private buffer (see the top of the file). */
static int stat_common(struct xsc *x, int id, int dfd, long path, long ubuf,
		       int flags)
{
	if (!path)
		return 0;
	slot_of(x, id)->uptr = PTR(ubuf);
	io_uring_prep_statx(xsc__sqe(x, id, 0), dfd, CPTR(path), flags,
			    STATX_BASIC_STATS, &aux_of(x, id)->stx);
	return 1;
}

int xsc__prep_stat(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	return stat_common(x, id, AT_FDCWD, a[0], a[1], 0);
}

int xsc__prep_lstat(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	return stat_common(x, id, AT_FDCWD, a[0], a[1], AT_SYMLINK_NOFOLLOW);
}

int xsc__prep_fstat(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	if (a[0] < 0 || a[0] > INT32_MAX)
		return 0;	/* statx would read AT_FDCWD as the cwd */
	return stat_common(x, id, FD(a[0]), (long)"", a[1], AT_EMPTY_PATH);
}

int xsc__prep_newfstatat(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	const long ok = AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | AT_EMPTY_PATH;
	if (a[3] & ~ok)
		return 0;	/* newfstatat's own -EINVAL */
	return stat_common(x, id, FD(a[0]), a[1], a[2], (int)a[3]);
}

/* The kernel's cp_new_stat(), from a statx buffer. */
static void stat_from_statx(struct stat *st, const struct statx *sx)
{
	memset(st, 0, sizeof(*st));
	st->st_dev = makedev(sx->stx_dev_major, sx->stx_dev_minor);
	st->st_ino = sx->stx_ino;
	st->st_nlink = sx->stx_nlink;
	st->st_mode = sx->stx_mode;
	st->st_uid = sx->stx_uid;
	st->st_gid = sx->stx_gid;
	st->st_rdev = makedev(sx->stx_rdev_major, sx->stx_rdev_minor);
	st->st_size = (off_t)sx->stx_size;
	st->st_blksize = sx->stx_blksize;
	st->st_blocks = (blkcnt_t)sx->stx_blocks;
	st->st_atim.tv_sec = sx->stx_atime.tv_sec;
	st->st_atim.tv_nsec = sx->stx_atime.tv_nsec;
	st->st_mtim.tv_sec = sx->stx_mtime.tv_sec;
	st->st_mtim.tv_nsec = sx->stx_mtime.tv_nsec;
	st->st_ctim.tv_sec = sx->stx_ctime.tv_sec;
	st->st_ctim.tv_nsec = sx->stx_ctime.tv_nsec;
}

long xsc__done_stat(struct xsc *x, int id)
{
	struct xsc_slot *s = slot_of(x, id);
	struct stat st;
	int r;

	if (s->res[0] < 0)
		return s->res[0];
	stat_from_statx(&st, &aux_of(x, id)->stx);
	r = xsc__ucopy_out_for(x, s->tag, s->uptr, &st, sizeof(st));
	if (r == 1)
		return 0;	/* the caller's own stack: no crossing */
	x->st.crossings++;
	return r;
}

int xsc__prep_rename(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	io_uring_prep_renameat(xsc__sqe(x, id, 0), AT_FDCWD, CPTR(a[0]), AT_FDCWD,
			       CPTR(a[1]), 0);
	return 1;
}

int xsc__prep_renameat(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	io_uring_prep_renameat(xsc__sqe(x, id, 0), FD(a[0]), CPTR(a[1]), FD(a[2]),
			       CPTR(a[3]), 0);
	return 1;
}

int xsc__prep_renameat2(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	io_uring_prep_renameat(xsc__sqe(x, id, 0), FD(a[0]), CPTR(a[1]), FD(a[2]),
			       CPTR(a[3]), (unsigned)a[4]);
	return 1;
}

int xsc__prep_unlink(struct xsc *x, int id)
{
	io_uring_prep_unlinkat(xsc__sqe(x, id, 0), AT_FDCWD, CPTR(A(x, id)[0]), 0);
	return 1;
}

int xsc__prep_rmdir(struct xsc *x, int id)
{
	io_uring_prep_unlinkat(xsc__sqe(x, id, 0), AT_FDCWD, CPTR(A(x, id)[0]),
			       AT_REMOVEDIR);
	return 1;
}

int xsc__prep_unlinkat(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	io_uring_prep_unlinkat(xsc__sqe(x, id, 0), FD(a[0]), CPTR(a[1]), (int)a[2]);
	return 1;
}

int xsc__prep_mkdir(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	io_uring_prep_mkdirat(xsc__sqe(x, id, 0), AT_FDCWD, CPTR(a[0]), (mode_t)a[1]);
	return 1;
}

int xsc__prep_mkdirat(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	io_uring_prep_mkdirat(xsc__sqe(x, id, 0), FD(a[0]), CPTR(a[1]), (mode_t)a[2]);
	return 1;
}

int xsc__prep_symlink(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	io_uring_prep_symlinkat(xsc__sqe(x, id, 0), CPTR(a[0]), AT_FDCWD, CPTR(a[1]));
	return 1;
}

int xsc__prep_symlinkat(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	io_uring_prep_symlinkat(xsc__sqe(x, id, 0), CPTR(a[0]), FD(a[1]), CPTR(a[2]));
	return 1;
}

int xsc__prep_link(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	io_uring_prep_linkat(xsc__sqe(x, id, 0), AT_FDCWD, CPTR(a[0]), AT_FDCWD,
			     CPTR(a[1]), 0);
	return 1;
}

int xsc__prep_linkat(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	io_uring_prep_linkat(xsc__sqe(x, id, 0), FD(a[0]), CPTR(a[1]), FD(a[2]),
			     CPTR(a[3]), (int)a[4]);
	return 1;
}

/* getxattr(path, name, value, size) and friends. */
int xsc__prep_getxattr(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	if (!FITS_U32(a[3]))
		return 0;
	io_uring_prep_getxattr(xsc__sqe(x, id, 0), CPTR(a[1]), PTR(a[2]),
			       CPTR(a[0]), (unsigned)a[3]);
	return 1;
}

int xsc__prep_setxattr(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	if (!FITS_U32(a[3]))
		return 0;
	io_uring_prep_setxattr(xsc__sqe(x, id, 0), CPTR(a[1]), CPTR(a[2]),
			       CPTR(a[0]), (int)a[4], (unsigned)a[3]);
	return 1;
}

int xsc__prep_fgetxattr(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	if (!FITS_U32(a[3]))
		return 0;
	io_uring_prep_fgetxattr(xsc__sqe(x, id, 0), FD(a[0]), CPTR(a[1]), PTR(a[2]),
				(unsigned)a[3]);
	return 1;
}

int xsc__prep_fsetxattr(struct xsc *x, int id)
{
	const int64_t *a = A(x, id);
	if (!FITS_U32(a[3]))
		return 0;
	io_uring_prep_fsetxattr(xsc__sqe(x, id, 0), FD(a[0]), CPTR(a[1]), CPTR(a[2]),
				(int)a[4], (unsigned)a[3]);
	return 1;
}
