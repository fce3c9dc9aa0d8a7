/*
 * uring_prep.h - the io_uring translations of the syscall table, one file
 * per family (uring_rw.c, uring_fs.c, uring_net.c, uring_misc.c), as the
 * kernel's io_uring/ splits rw.c, fs.c, net.c.  Update src/table.c when
 * you add one here.
 */
#ifndef XSC_URING_PREP_H
#define XSC_URING_PREP_H
#include "uring.h"

#define A(x, id) ((x)->ent[(id)].args)
#define FITS_U32(v) ((uint64_t)(v) <= UINT32_MAX)
/* The kernel's MAX_RW_COUNT.  Transfers asking for more are clamped, and
 * whether the rest of the caller's range faults (-EFAULT) or not then
 * depends on which kernel path ran them: io_uring's non-blocking and
 * blocking forms answer differently, so such counts take the fallback. */
#define XSC_MAX_RW 0x7ffff000L
#define FITS_RW(v) ((uint64_t)(v) <= (uint64_t)XSC_MAX_RW)

/* uring.c */
int xsc__prep_nop(struct xsc *x, int id);

/* uring_rw.c */
int xsc__prep_read(struct xsc *x, int id);
int xsc__prep_write(struct xsc *x, int id);
int xsc__prep_readv(struct xsc *x, int id);
int xsc__prep_writev(struct xsc *x, int id);
int xsc__prep_preadv2(struct xsc *x, int id);
int xsc__prep_pwritev2(struct xsc *x, int id);
long xsc__done_read(struct xsc *x, int id);
long xsc__done_readv(struct xsc *x, int id);
long xsc__done_write(struct xsc *x, int id);
long xsc__done_writev(struct xsc *x, int id);
long xsc__finish_send(struct xsc *x, int id, long want, const struct iovec *uiov,
		      long cnt, int flags);
/* A short non-blocking write on a blocking fd, or a short non-blocking
 * read of a regular file or block device: the blocking call would have
 * kept going.  Queues an SQE for the rest (blocking form) and
 * returns XSC_PENDING, or the final result when nothing is left to do.
 * xsc__rest_done() takes each rest SQE's CQE. */
long xsc__rest_start(struct xsc *x, int id, long written);
long xsc__rest_done(struct xsc *x, int id);
/* A short read's fd type asked in the ring (uring.c xsc__nowait_done):
 * XSC_PENDING, or -1 where it cannot be; its CQE goes to
 * xsc__kind_done, which finishes the read. */
long xsc__kind_ask(struct xsc *x, int id, long res);
long xsc__kind_done(struct xsc *x, int id);

/* uring_fs.c */
bool xsc__open_may_wait(long flags);
bool xsc__open_here(const struct xsc *x, const int64_t a[6], enum xsc_here where);
bool xsc__openat_here(const struct xsc *x, const int64_t a[6], enum xsc_here where);
void xsc__prep_open_sqe(struct io_uring_sqe *sqe, long dfd, const char *path,
			long flags, long mode);
int xsc__prep_open(struct xsc *x, int id);
int xsc__prep_openat(struct xsc *x, int id);
int xsc__prep_openat2(struct xsc *x, int id);
int xsc__prep_close(struct xsc *x, int id);
long xsc__done_close(struct xsc *x, int id);
int xsc__prep_fsync(struct xsc *x, int id);
int xsc__prep_fdatasync(struct xsc *x, int id);
int xsc__prep_sync_file_range(struct xsc *x, int id);
int xsc__prep_fallocate(struct xsc *x, int id);
int xsc__prep_fadvise64(struct xsc *x, int id);
int xsc__prep_madvise(struct xsc *x, int id);
int xsc__prep_ftruncate(struct xsc *x, int id);
int xsc__prep_statx(struct xsc *x, int id);
int xsc__prep_stat(struct xsc *x, int id);
int xsc__prep_lstat(struct xsc *x, int id);
int xsc__prep_fstat(struct xsc *x, int id);
int xsc__prep_newfstatat(struct xsc *x, int id);
long xsc__done_stat(struct xsc *x, int id);
int xsc__prep_rename(struct xsc *x, int id);
int xsc__prep_renameat(struct xsc *x, int id);
int xsc__prep_renameat2(struct xsc *x, int id);
int xsc__prep_unlink(struct xsc *x, int id);
int xsc__prep_rmdir(struct xsc *x, int id);
int xsc__prep_unlinkat(struct xsc *x, int id);
int xsc__prep_mkdir(struct xsc *x, int id);
int xsc__prep_mkdirat(struct xsc *x, int id);
int xsc__prep_symlink(struct xsc *x, int id);
int xsc__prep_symlinkat(struct xsc *x, int id);
int xsc__prep_link(struct xsc *x, int id);
int xsc__prep_linkat(struct xsc *x, int id);
int xsc__prep_getxattr(struct xsc *x, int id);
int xsc__prep_setxattr(struct xsc *x, int id);
int xsc__prep_fgetxattr(struct xsc *x, int id);
int xsc__prep_fsetxattr(struct xsc *x, int id);

/* uring_net.c */
int xsc__prep_socket(struct xsc *x, int id);
int xsc__prep_connect(struct xsc *x, int id);
int xsc__prep_accept(struct xsc *x, int id);
int xsc__prep_accept4(struct xsc *x, int id);
int xsc__prep_bind(struct xsc *x, int id);
int xsc__prep_listen(struct xsc *x, int id);
int xsc__prep_sendto(struct xsc *x, int id);
int xsc__prep_recvfrom(struct xsc *x, int id);
int xsc__prep_sendmsg(struct xsc *x, int id);
int xsc__prep_recvmsg(struct xsc *x, int id);
int xsc__prep_shutdown(struct xsc *x, int id);
long xsc__done_accept(struct xsc *x, int id);
long xsc__done_recv(struct xsc *x, int id);
long xsc__done_sendto(struct xsc *x, int id);
long xsc__done_sendmsg(struct xsc *x, int id);
long xsc__done_recvmsg(struct xsc *x, int id);

/* uring_misc.c */
int xsc__prep_splice(struct xsc *x, int id);
int xsc__prep_tee(struct xsc *x, int id);
int xsc__prep_epoll_ctl(struct xsc *x, int id);
int xsc__prep_nanosleep(struct xsc *x, int id);
int xsc__prep_clock_nanosleep(struct xsc *x, int id);
long xsc__done_sleep(struct xsc *x, int id);
int xsc__prep_poll(struct xsc *x, int id);
long xsc__done_poll(struct xsc *x, int id);
int xsc__prep_epoll_wait(struct xsc *x, int id);
long xsc__done_epoll_wait(struct xsc *x, int id);
long xsc__done_waitid(struct xsc *x, int id);
int xsc__prep_futex(struct xsc *x, int id);
int xsc__prep_waitid(struct xsc *x, int id);
#endif
