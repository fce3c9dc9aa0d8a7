/*
 * fdkind.h - transparent mode's descriptor kinds, learned from the
 * program's own calls and kept until a close (sched/fdkind.c): the
 * io_uring executor asks them before a system call of its own, the
 * runtime whether a call can wait.
 */
#ifndef XSC_FDKIND_H
#define XSC_FDKIND_H
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#pragma GCC visibility push(hidden)

extern _Atomic bool xsc__fdkind_on;
/* 1 on disk (a regular file or a block device), 0 not, -1 not known */
int xsc__fdkind_get(int fd);
uint32_t xsc__fdkind_seen(int fd);
void xsc__fdkind_learn(int fd, uint32_t seen, bool disk);
/* non-blocking, and not a file: a call honouring O_NONBLOCK cannot wait */
bool xsc__fdkind_nowait(int fd);
/* made by a socket, pipe, eventfd, timerfd or inotify call: no file
 * position (false: not known) */
bool xsc__fdkind_stream(int fd);
void xsc__fdkind_born(int fd, bool nonblock);
void xsc__fdkind_setnb(int fd, uint32_t seen, int nb);
/* O_NONBLOCK of fd's open file description, known exactly: 1, 0, or -1 */
int xsc__fdkind_nb(int fd);
void xsc__fdkind_share(int fd);
void xsc__fdkind_share_all(void);
uint64_t xsc__fdkind_closing(int first, int last, bool begin, uint64_t marked);

#pragma GCC visibility pop
#endif
