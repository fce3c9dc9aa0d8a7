/*
 * compat.h - the only place where httpd touches threads or system calls.
 *
 * httpd.c is written once, in plain blocking thread-per-connection style,
 * and built twice:
 *
 *   -DHTTPD_NPTL  ht_* are pthreads and plain libc calls (httpd-nptl).
 *   -DHTTPD_XSC   ht_* are xsc threads (M:N fibers) and the xsc blocking
 *                 wrappers, which post an entry to the kernel thread's
 *                 syscall pages and switch to the next ready fiber
 *                 (httpd-xsc).
 *
 * Every ht_* call returns the value or a negative errno, like the raw
 * system call and like the xsc wrappers; errno is never read by httpd.c,
 * so the NPTL side converts at this boundary (the one place that reads
 * errno, as the house style asks).
 *
 * ht_run(fn, argc, argv, rt) runs fn as the program's main: directly on
 * NPTL, as the first fiber of the xsc runtime on xsc threads.
 *
 * The xsc side uses the xsc threads API of include/xsc.h (section "xsc
 * threads"); ht_run() is the one place that knows struct
 * xsc_runtime_config -- update it when that struct changes.
 */
#ifndef HTTPD_COMPAT_H
#define HTTPD_COMPAT_H

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

/* Runtime knobs from the command line; ignored where they mean nothing. */
struct ht_runtime {
	int threads;	/* kernel threads of the xsc runtime; 0 = default */
	int entries;	/* syscall entries per kernel thread; 0 = default */
	int cpu;	/* pin everything to this core; -1 = no pinning */
	int syscall_cpu; /* core of SQPOLL pollers / syscall threads; -1 = none */
};

#if defined(HTTPD_NPTL) == defined(HTTPD_XSC)
#error "build with exactly one of -DHTTPD_NPTL or -DHTTPD_XSC"
#endif

/* ------------------------------------------------------------------ */
#ifdef HTTPD_NPTL
#include <pthread.h>

#define HT_FLAVOR "nptl"
typedef pthread_t ht_thread_t;

/* Converts a libc result (-1 and errno) into a value or -errno. */
static inline long ht_ret(long r)
{
	return r < 0 ? -errno : r;
}

/* Connection threads get a 256 KiB stack, not glibc's 8 MiB default:
 * httpd keeps its buffers on the heap, and 4096 connections should not
 * reserve 32 GiB of address space. */
static inline int ht_thread_create(ht_thread_t *t, void *(*fn)(void *), void *arg)
{
	pthread_attr_t a;
	int r;

	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, 256 * 1024);
	r = pthread_create(t, &a, fn, arg);
	pthread_attr_destroy(&a);
	return -r;
}

static inline int ht_thread_detach(ht_thread_t t)
{
	return -pthread_detach(t);
}

static inline long ht_read(int fd, void *b, size_t n) { return ht_ret(read(fd, b, n)); }
static inline long ht_write(int fd, const void *b, size_t n) { return ht_ret(write(fd, b, n)); }
static inline long ht_writev(int fd, const struct iovec *v, int n) { return ht_ret(writev(fd, v, n)); }
static inline long ht_recv(int fd, void *b, size_t n, int fl) { return ht_ret(recv(fd, b, n, fl)); }
static inline long ht_send(int fd, const void *b, size_t n, int fl) { return ht_ret(send(fd, b, n, fl)); }
static inline long ht_close(int fd) { return ht_ret(close(fd)); }
static inline long ht_fstat(int fd, struct stat *st) { return ht_ret(fstat(fd, st)); }

static inline long ht_openat(int dirfd, const char *path, int flags)
{
	return ht_ret(openat(dirfd, path, flags));
}

static inline long ht_accept4(int fd, struct sockaddr *sa, socklen_t *len, int fl)
{
	return ht_ret(accept4(fd, sa, len, fl));
}

static inline long ht_setsockopt(int fd, int lvl, int name, const void *v, socklen_t len)
{
	return ht_ret(setsockopt(fd, lvl, name, v, len));
}

static inline long ht_usleep(unsigned usec)
{
	return ht_ret(usleep(usec));
}

static inline int ht_run(int (*fn)(int, char **), int argc, char **argv,
			 const struct ht_runtime *rt)
{
	(void)rt;	/* --threads and --entries mean nothing to NPTL */
	return fn(argc, argv);
}
#endif /* HTTPD_NPTL */

/* ------------------------------------------------------------------ */
#ifdef HTTPD_XSC
#include "xsc.h"

#define HT_FLAVOR "xsc"
typedef xsc_thread_t ht_thread_t;

static inline int ht_thread_create(ht_thread_t *t, void *(*fn)(void *), void *arg)
{
	return xsc_thread_create(t, NULL, fn, arg);
}

static inline int ht_thread_detach(ht_thread_t t) { return xsc_thread_detach(t); }
static inline long ht_read(int fd, void *b, size_t n) { return xsc_read(fd, b, n); }
static inline long ht_write(int fd, const void *b, size_t n) { return xsc_write(fd, b, n); }
static inline long ht_writev(int fd, const struct iovec *v, int n) { return xsc_writev(fd, v, n); }
static inline long ht_recv(int fd, void *b, size_t n, int fl) { return xsc_recv(fd, b, n, fl); }
static inline long ht_send(int fd, const void *b, size_t n, int fl) { return xsc_send(fd, b, n, fl); }
static inline long ht_close(int fd) { return xsc_close_fd(fd); }
static inline long ht_fstat(int fd, struct stat *st) { return xsc_fstat(fd, st); }

static inline long ht_openat(int dirfd, const char *path, int flags)
{
	return xsc_openat(dirfd, path, flags, 0);
}

static inline long ht_accept4(int fd, struct sockaddr *sa, socklen_t *len, int fl)
{
	return xsc_accept4(fd, sa, (unsigned *)len, fl);
}

/* Once per connection and not a blocking call: the plain call is fine. */
static inline long ht_setsockopt(int fd, int lvl, int name, const void *v, socklen_t len)
{
	return setsockopt(fd, lvl, name, v, len) < 0 ? -errno : 0;
}

/* Only on the accept back-off path (EMFILE). */
static inline long ht_usleep(unsigned usec)
{
	return xsc_usleep(usec);
}

/* --entries N becomes ceil(N / 64) syscall pages per kernel thread;
 * --cpu N pins kernel thread i to core N + i (one thread unless
 * --threads says otherwise, so the whole server stays on core N). */
static inline int ht_run(int (*fn)(int, char **), int argc, char **argv,
			 const struct ht_runtime *rt)
{
	struct xsc_runtime_config cfg;

	xsc_runtime_config_init(&cfg);
	if (rt->threads > 0)
		cfg.nthreads = (unsigned)rt->threads;
	if (rt->entries > 0)
		cfg.npages = (unsigned)(rt->entries + XSC_ENTRIES_PER_PAGE - 1) /
			     XSC_ENTRIES_PER_PAGE;
	cfg.syscall_cpu = rt->syscall_cpu;
	if (rt->cpu >= 0) {
		cfg.pin = 1;
		cfg.first_cpu = rt->cpu;
		if (rt->threads <= 0)
			cfg.nthreads = 1;
	}
	return xsc_main(fn, argc, argv, &cfg);
}
#endif /* HTTPD_XSC */

#endif /* HTTPD_COMPAT_H */
