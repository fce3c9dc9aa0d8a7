/*
 * rawio.h - xsc's own small I/O with raw system calls, never stdio
 * (rawio.c).
 */
#ifndef XSC_RAWIO_H
#define XSC_RAWIO_H
#include <stddef.h>

#pragma GCC visibility push(hidden)

/* One line on stderr with write(2): stderr's lock may be held by a parked
 * fiber in transparent mode. */
void xsc__say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Reads a small file (/proc, /sys) into buf, NUL-terminated.  Returns
 * the length or -errno. */
long xsc__read_small(const char *path, char *buf, size_t len);
/* The value of field `name` ("Threads", "Seccomp") of /proc/self/status,
 * read whole line by line; -ENOENT when absent, -errno. */
long xsc__status_field(const char *name);
/* Moves a descriptor of xsc's own to the lowest free number at or above
 * the soft RLIMIT_NOFILE, out of the range the program allocates from.
 * Returns the new fd (the old one closed), or fd itself when there is no
 * room (soft limit = hard limit) or a call fails. */
int xsc__fd_aside(int fd);

#pragma GCC visibility pop
#endif
