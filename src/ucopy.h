/*
 * ucopy.h - fault-safe access to caller memory (ucopy.c): 0 or -EFAULT.
 */
#ifndef XSC_UCOPY_H
#define XSC_UCOPY_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#pragma GCC visibility push(hidden)

struct xsc;

int xsc__ucopy_in(void *dst, const void *usrc, size_t len);
int xsc__ucopy_out(void *udst, const void *src, size_t len);
/* The caller of an entry on one of the runtime's own handles (its tag:
 * a fiber) has [p, p + len) mapped and writable for sure: the live part
 * of its own stack (sched/fiber.c: parked in the call, from its saved
 * stack pointer; still running, from the frame running), where a stat
 * buffer, a sleep's timespec or a pollfd mostly is.  NULL, or false: the
 * checked copy.  The _for copies: 0 or -EFAULT, out_for 1 when plain. */
extern bool (*xsc__umem_ours)(uint64_t tag, uintptr_t p, size_t len);
int xsc__ucopy_out_for(const struct xsc *x, uint64_t tag, void *udst,
		       const void *src, size_t len);
int xsc__ucopy_in_for(const struct xsc *x, uint64_t tag, void *dst,
		      const void *usrc, size_t len);
/* whether the kernel could read (write) [a, a + len): 0 or -EFAULT */
int xsc__uprobe(uintptr_t a, size_t len, bool write);

#pragma GCC visibility pop
#endif
