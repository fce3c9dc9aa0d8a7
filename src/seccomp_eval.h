/*
 * seccomp_eval.h - a seccomp filter's answer for one call (seccomp_eval.c).
 */
#ifndef XSC_SECCOMP_EVAL_H
#define XSC_SECCOMP_EVAL_H
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdbool.h>

#pragma GCC visibility push(hidden)

/* Whether the filter of len instructions lets the call d through
 * (SECCOMP_RET_ALLOW or SECCOMP_RET_LOG); false for every other action and
 * for a program the kernel would refuse. */
bool xsc__seccomp_allows(const struct sock_filter *f, unsigned len,
			 const struct seccomp_data *d);

#pragma GCC visibility pop
#endif
