/*
 * ownthreads.h - the runtime's threads made with pthread_create are not
 * the program's (ownthreads.c).
 */
#ifndef XSC_OWNTHREADS_H
#define XSC_OWNTHREADS_H
#include <stdbool.h>

#pragma GCC visibility push(hidden)

/* xsc__own_thread_start() after each is created, xsc__own_thread_end()
 * right before its start routine returns.  False when glibc's thread
 * count is not found: they then keep the process alive. */
bool xsc__own_threads_uncounted(void);
void xsc__own_thread_start(void);
void xsc__own_thread_end(void);

#pragma GCC visibility pop
#endif
