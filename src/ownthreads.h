/*
 * ownthreads.h - the runtime's threads made with pthread_create are not
 * the program's, and take none of its signals (ownthreads.c).
 */
#ifndef XSC_OWNTHREADS_H
#define XSC_OWNTHREADS_H
#include <pthread.h>
#include <stdbool.h>

#pragma GCC visibility push(hidden)

/* xsc__own_thread_start() after each is created, xsc__own_thread_end()
 * right before its start routine returns.  False when glibc's thread
 * count is not found: they then keep the process alive. */
bool xsc__own_threads_uncounted(void);
void xsc__own_thread_start(void);
void xsc__own_thread_end(void);
/* A new pthread attr whose thread starts with every signal blocked (glibc
 * keeps its own two open): a runtime thread takes none of the program's
 * signals, not even before it sets its own mask. */
void xsc__attr_blocked(pthread_attr_t *attr);

#pragma GCC visibility pop
#endif
