/*
 * rawio.c - xsc's own small I/O, with raw system calls and never stdio,
 * whose locks and FILE allocations the runtime must not take (a parked
 * fiber may hold stderr's lock in transparent mode, and malloc is not
 * ours to call there): a line on stderr, a small /proc or /sys file read
 * whole, a field of /proc/self/status, and a descriptor of xsc's own
 * moved out of the range the program's descriptors come from.
 */
#include "rawio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "rawsys.h"

/* A line on stderr through write(2), not stdio: stderr's lock may be held
 * by a parked fiber in transparent mode. */
void xsc__say(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 1) {	/* cut, but still a line of its own */
		n = sizeof(buf) - 1;
		if (fmt[0] && fmt[strlen(fmt) - 1] == '\n')
			buf[n - 1] = '\n';
	}
	if (n > 0)
		xsc__sys3(SYS_write, 2, buf, n);
}

/* The soft limit is raised for the one F_DUPFD and put back at once: a
 * number at or above it is one the program's own calls never get, and
 * descriptors above the soft limit stay valid.  xsc creates its fds at
 * start-up or in xsc_open, before the program's threads use them.  With
 * no room above (soft = hard), the highest free number below the limit:
 * the program's numbers then match native except for its last few. */
int xsc__fd_aside(int fd)
{
	struct rlimit old, up;
	long nfd = -1;

	if (fd < 0 || xsc__sys4(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, &old) < 0)
		return fd;
	up = old;
	up.rlim_cur = old.rlim_max - old.rlim_cur > 64 ? old.rlim_cur + 64 : old.rlim_max;
	if (up.rlim_cur > old.rlim_cur &&
	    xsc__sys4(SYS_prlimit64, 0, RLIMIT_NOFILE, &up, NULL) == 0) {
		nfd = xsc__sys3(SYS_fcntl, fd, F_DUPFD_CLOEXEC, old.rlim_cur);
		xsc__sys4(SYS_prlimit64, 0, RLIMIT_NOFILE, &old, NULL);
	}
	for (rlim_t n = old.rlim_cur; nfd < 0 && n > (rlim_t)fd + 1 &&
	     n + 64 > old.rlim_cur; n--)
		nfd = xsc__sys3(SYS_fcntl, fd, F_DUPFD_CLOEXEC, n - 1);
	if (nfd < 0)
		return fd;
	xsc__sys1(SYS_close, fd);
	return (int)nfd;
}

long xsc__read_small(const char *path, char *buf, size_t len)
{
	long fd = xsc__sys4(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC, 0);
	size_t got = 0;
	long n = 0;

	if (fd < 0)
		return fd;
	while (got + 1 < len &&
	       (n = xsc__sys3(SYS_read, fd, buf + got, len - 1 - got)) > 0)
		got += (size_t)n;
	xsc__sys1(SYS_close, fd);
	if (len)
		buf[got] = '\0';
	return n < 0 ? n : (long)got;
}

long xsc__status_field(const char *name)
{
	char buf[4096 + 1];
	size_t have = 0, nlen = strlen(name);
	long fd = xsc__sys4(SYS_openat, AT_FDCWD, "/proc/self/status",
			    O_RDONLY | O_CLOEXEC, 0);
	long n, ret = -ENOENT;

	if (fd < 0)
		return fd;
	/* line by line through a window: a long line (Groups: of a user in
	 * many groups) must not push the field out of it */
	while ((n = xsc__sys3(SYS_read, fd, buf + have, sizeof(buf) - 1 - have)) > 0) {
		char *line = buf, *nl;
		have += (size_t)n;
		buf[have] = '\0';
		while ((nl = memchr(line, '\n', have - (size_t)(line - buf))) != NULL) {
			if (!strncmp(line, name, nlen) && line[nlen] == ':') {
				ret = strtol(line + nlen + 1, NULL, 10);
				goto out;
			}
			line = nl + 1;
		}
		if (line == buf) {	/* a line longer than the window */
			have = 0;
			continue;	/* (never the one asked for) */
		}
		have -= (size_t)(line - buf);
		memmove(buf, line, have);
	}
out:
	xsc__sys1(SYS_close, fd);
	return ret;
}
