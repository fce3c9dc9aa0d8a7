/*
 * diff_calls.h - which system calls each differential test covers
 * (t_diff_fs.c, t_diff_net.c, t_diff_misc.c), read by those tests and by
 * t_table.
 *
 * The calls translated to io_uring are exactly the table's rows with an
 * io_uring prep: t_table fails when a translated row is missing here, or a
 * call here is not translated.  Each differential test fails when a call
 * of its list is never made through xsc, and checks that the call
 * completed on the ring where the kernel has the row's opcodes
 * (.uring.op); the opcodes come from the table, not from here.
 * DIFF_MISC_OTHER: untranslated calls t_diff_misc.c also compares (they
 * must complete on the fallback executors).
 */
#ifndef XSC_DIFF_CALLS_H
#define XSC_DIFF_CALLS_H

#include <sys/syscall.h>

#define DIFF_FS_CALLS \
	SYS_read, SYS_write, SYS_readv, SYS_writev, SYS_preadv2, SYS_pwritev2, \
	SYS_open, SYS_openat, SYS_openat2, SYS_close, SYS_fsync, SYS_fdatasync, \
	SYS_sync_file_range, SYS_fallocate, SYS_fadvise64, SYS_madvise, \
	SYS_ftruncate, SYS_statx, SYS_stat, SYS_lstat, SYS_fstat, SYS_newfstatat, \
	SYS_rename, SYS_renameat, SYS_renameat2, SYS_unlink, SYS_rmdir, \
	SYS_unlinkat, SYS_mkdir, SYS_mkdirat, SYS_symlink, SYS_symlinkat, \
	SYS_link, SYS_linkat, SYS_getxattr, SYS_setxattr, SYS_fgetxattr, \
	SYS_fsetxattr

#define DIFF_NET_CALLS \
	SYS_socket, SYS_connect, SYS_accept, SYS_accept4, SYS_bind, SYS_listen, \
	SYS_sendto, SYS_recvfrom, SYS_sendmsg, SYS_recvmsg, SYS_shutdown

#define DIFF_MISC_CALLS \
	SYS_splice, SYS_tee, SYS_epoll_ctl, SYS_nanosleep, SYS_clock_nanosleep, \
	SYS_poll, SYS_epoll_wait, SYS_epoll_pwait, SYS_futex, SYS_waitid

#define DIFF_MISC_OTHER \
	SYS_getppid, SYS_mmap, SYS_munmap, SYS_mprotect, SYS_brk, \
	SYS_getdents64, SYS_ioctl, SYS_fcntl, SYS_dup, SYS_pipe2, SYS_lseek, \
	SYS_getcwd, SYS_uname

#endif
