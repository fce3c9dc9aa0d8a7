/*
 * ownthreads.h - the runtime's threads made with pthread_create are not
 * the program's, and take none of its signals (ownthreads.c).
 */
#ifndef XSC_OWNTHREADS_H
#define XSC_OWNTHREADS_H
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

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
/* Starts fn(arg) as such a thread (xsc__attr_blocked; a stack of `stack`
 * bytes, 0: glibc's default; xsc__own_thread_start), then waits until fn
 * has stored its kernel thread id in *tid, its first act: glibc's set*id
 * round, which signals every thread in its list, finds it answered
 * (preload/setxid.c).  0, or pthread_create's error. */
int xsc__own_thread_spawn(pthread_t *th, size_t stack, void *(*fn)(void *), void *arg,
			  _Atomic int *tid);

#pragma GCC visibility pop
#endif
