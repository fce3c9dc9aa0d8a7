/*
 * wrap.c - the hot libc wrappers, interposed by symbol.
 *
 * Syscall user dispatch alone would be complete (preload.c), but each call
 * would pay a SIGSYS round trip (~2.3 us here).  A program's direct calls
 * to these functions go through its PLT to the preload library instead and
 * cost a function call.  Each is the libc function's contract: the result,
 * or -1 with errno.  Outside a fiber (our own threads, signal handlers, a
 * forked child) they make the system call directly.
 *
 * Not covered by symbol (still intercepted, through SIGSYS): calls libc
 * makes internally, e.g. stdio's write, and everything not listed here.
 * Those that are cancellation points in glibc are here too
 * (cancel_point).
 */
#include "preload.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

static inline long ret(long r)
{
	if (r < 0 && r > -4096) {
		errno = (int)-r;
		return -1;
	}
	return r;
}

#define CALL(nr, a0, a1, a2, a3, a4, a5) \
	ret(xsc__tp_fast((nr), (long)(a0), (long)(a1), (long)(a2), (long)(a3), \
			 (long)(a4), (long)(a5)))

/* A cancellation point, made as glibc's own wrapper makes it in a process
 * with threads: asynchronous cancellation for the call's length.  A
 * cancel already pending acts here, before the call; one sent during it
 * comes to the fiber as glibc's SIGCANCEL, interrupts the call and
 * unwinds the thread from where the fiber raises it
 * (signals/handlers.c, cancel_as_thread).  Off a fiber the process has
 * no other thread, where glibc makes the call plainly too. */
static long cancel_point(long nr, long a0, long a1, long a2, long a3, long a4, long a5)
{
	struct xsc_vcpu *v = xsc__tp_program();
	int old;
	long r;

	if (!v || TP(v)->in_handler)
		return xsc__tp_fast(nr, a0, a1, a2, a3, a4, a5);
	pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &old);
	r = xsc__tp_fast(nr, a0, a1, a2, a3, a4, a5);
	if (old != PTHREAD_CANCEL_ASYNCHRONOUS)
		pthread_setcanceltype(old, NULL);
	return r;
}

#define CANCEL_CALL(nr, a0, a1, a2, a3, a4, a5) \
	ret(cancel_point((nr), (long)(a0), (long)(a1), (long)(a2), (long)(a3), \
			 (long)(a4), (long)(a5)))

XSC_EXPORT ssize_t read(int fd, void *b, size_t n)
{
	return CANCEL_CALL(SYS_read, fd, b, n, 0, 0, 0);
}

XSC_EXPORT ssize_t write(int fd, const void *b, size_t n)
{
	return CANCEL_CALL(SYS_write, fd, b, n, 0, 0, 0);
}

XSC_EXPORT ssize_t readv(int fd, const struct iovec *iov, int cnt)
{
	return CANCEL_CALL(SYS_readv, fd, iov, cnt, 0, 0, 0);
}

XSC_EXPORT ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
	return CANCEL_CALL(SYS_writev, fd, iov, cnt, 0, 0, 0);
}

XSC_EXPORT ssize_t pread64(int fd, void *b, size_t n, off_t off)
{
	return CANCEL_CALL(SYS_pread64, fd, b, n, off, 0, 0);
}

XSC_EXPORT ssize_t pwrite64(int fd, const void *b, size_t n, off_t off)
{
	return CANCEL_CALL(SYS_pwrite64, fd, b, n, off, 0, 0);
}

XSC_EXPORT ssize_t pread(int fd, void *b, size_t n, off_t off)
	__attribute__((alias("pread64")));
XSC_EXPORT ssize_t pwrite(int fd, const void *b, size_t n, off_t off)
	__attribute__((alias("pwrite64")));

static unsigned open_mode(int flags, va_list ap)
{
	return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ?
	       va_arg(ap, unsigned) : 0;
}

XSC_EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	va_list ap;
	unsigned mode;

	va_start(ap, flags);
	mode = open_mode(flags, ap);
	va_end(ap);
	return (int)CANCEL_CALL(SYS_openat, dirfd, path, flags, mode, 0, 0);
}

XSC_EXPORT int open(const char *path, int flags, ...)
{
	va_list ap;
	unsigned mode;

	va_start(ap, flags);
	mode = open_mode(flags, ap);
	va_end(ap);
	return (int)CANCEL_CALL(SYS_openat, AT_FDCWD, path, flags, mode, 0, 0);
}

XSC_EXPORT int open64(const char *path, int flags, ...)
	__attribute__((alias("open")));
XSC_EXPORT int openat64(int dirfd, const char *path, int flags, ...)
	__attribute__((alias("openat")));

XSC_EXPORT int close(int fd)
{
	return (int)CANCEL_CALL(SYS_close, fd, 0, 0, 0, 0, 0);
}

XSC_EXPORT int fsync(int fd)
{
	return (int)CANCEL_CALL(SYS_fsync, fd, 0, 0, 0, 0, 0);
}

XSC_EXPORT int fdatasync(int fd)
{
	return (int)CANCEL_CALL(SYS_fdatasync, fd, 0, 0, 0, 0, 0);
}

XSC_EXPORT int fstat(int fd, struct stat *st)
{
	return (int)CALL(SYS_fstat, fd, st, 0, 0, 0, 0);
}

XSC_EXPORT int stat(const char *path, struct stat *st)
{
	return (int)CALL(SYS_newfstatat, AT_FDCWD, path, st, 0, 0, 0);
}

XSC_EXPORT int lstat(const char *path, struct stat *st)
{
	return (int)CALL(SYS_newfstatat, AT_FDCWD, path, st, AT_SYMLINK_NOFOLLOW, 0, 0);
}

XSC_EXPORT int fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
	return (int)CALL(SYS_newfstatat, dirfd, path, st, flags, 0, 0);
}

XSC_EXPORT int accept(int fd, struct sockaddr *addr, socklen_t *len)
{
	return (int)CANCEL_CALL(SYS_accept4, fd, addr, len, 0, 0, 0);
}

XSC_EXPORT int accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags)
{
	return (int)CANCEL_CALL(SYS_accept4, fd, addr, len, flags, 0, 0);
}

XSC_EXPORT int connect(int fd, const struct sockaddr *addr, socklen_t len)
{
	return (int)CANCEL_CALL(SYS_connect, fd, addr, len, 0, 0, 0);
}

XSC_EXPORT ssize_t send(int fd, const void *b, size_t n, int flags)
{
	return CANCEL_CALL(SYS_sendto, fd, b, n, flags, 0, 0);
}

XSC_EXPORT ssize_t sendto(int fd, const void *b, size_t n, int flags,
			  const struct sockaddr *to, socklen_t tolen)
{
	return CANCEL_CALL(SYS_sendto, fd, b, n, flags, to, tolen);
}

XSC_EXPORT ssize_t recv(int fd, void *b, size_t n, int flags)
{
	return CANCEL_CALL(SYS_recvfrom, fd, b, n, flags, 0, 0);
}

XSC_EXPORT ssize_t recvfrom(int fd, void *b, size_t n, int flags,
			    struct sockaddr *from, socklen_t *fromlen)
{
	return CANCEL_CALL(SYS_recvfrom, fd, b, n, flags, from, fromlen);
}

XSC_EXPORT ssize_t sendmsg(int fd, const struct msghdr *m, int flags)
{
	return CANCEL_CALL(SYS_sendmsg, fd, m, flags, 0, 0, 0);
}

XSC_EXPORT ssize_t recvmsg(int fd, struct msghdr *m, int flags)
{
	return CANCEL_CALL(SYS_recvmsg, fd, m, flags, 0, 0, 0);
}

XSC_EXPORT int poll(struct pollfd *p, nfds_t n, int timeout)
{
	return (int)CANCEL_CALL(SYS_poll, p, n, timeout, 0, 0, 0);
}

XSC_EXPORT int epoll_wait(int ep, struct epoll_event *ev, int n, int timeout)
{
	return (int)CANCEL_CALL(SYS_epoll_wait, ep, ev, n, timeout, 0, 0);
}

XSC_EXPORT ssize_t sendfile(int out, int in, off_t *off, size_t n)
{
	return CALL(SYS_sendfile, out, in, off, n, 0, 0);
}

XSC_EXPORT ssize_t sendfile64(int out, int in, off_t *off, size_t n)
	__attribute__((alias("sendfile")));

XSC_EXPORT int nanosleep(const struct timespec *req, struct timespec *rem)
{
	return (int)CANCEL_CALL(SYS_nanosleep, req, rem, 0, 0, 0, 0);
}

/* returns the error number, not -1 */
XSC_EXPORT int clock_nanosleep(clockid_t clk, int flags, const struct timespec *req,
			       struct timespec *rem)
{
	long r = cancel_point(SYS_clock_nanosleep, clk, flags, (long)req, (long)rem, 0, 0);
	return r < 0 ? (int)-r : 0;
}

XSC_EXPORT int usleep(useconds_t us)
{
	struct timespec ts = { (time_t)(us / 1000000), (long)(us % 1000000) * 1000 };
	return nanosleep(&ts, NULL);
}

XSC_EXPORT unsigned sleep(unsigned s)
{
	struct timespec ts = { s, 0 }, rem = { 0, 0 };

	if (nanosleep(&ts, &rem) < 0)
		return (unsigned)rem.tv_sec + (rem.tv_nsec > 0);
	return 0;
}
