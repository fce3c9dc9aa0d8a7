/*
 * site.h - how a libc syscall site can become a jump (site.c): the plan
 * the rewriter (rewrite.c) carries out, and t_insn checks against objdump.
 */
#ifndef XSC_SITE_H
#define XSC_SITE_H

#include <stddef.h>

#include "insn.h"

#define XSC_SITE_COPY 48	/* bytes of instructions a stub runs, at most */
#define XSC_STUB_CODE 56	/* the same relocated (a jcc rel8 grows by 4) */
#define XSC_STUB_RELOCS 8	/* jumps in them */
#define XSC_FN_MAX 16384	/* a function longer than this is not walked */

/* Bytes of libc's text the rewriter changed, and what they were. */
struct xsc_patch {
	uintptr_t at;
	uintptr_t sc;		/* the site's syscall instruction; 0 for a
				   trampoline in padding */
	uint8_t len;		/* 2 or 5 */
	uint8_t orig[5];
};

/* A site's plan: the instruction at `at` (before the syscall at sc)
 * becomes a jmp rel32 to the stub, or, where slot is set, a jmp rel8 to
 * slot, 5 bytes of padding that become a jmp rel32 to the stub.  The
 * stub runs code[0..ncode): the ncopy bytes from `at` to sc, the data
 * instructions as they were, each conditional jump as a jcc rel32 whose
 * 4 bytes at reloc[i] are to reach target[i] (the stub's address makes
 * them). */
struct xsc_site_plan {
	uintptr_t at, sc, slot;
	/* its function keeps no value in vector registers across the call
	 * but arguments passed on (site.c walk): the stub saves xmm0-7, not
	 * the whole extended state */
	bool novec;
	unsigned ncopy, ncode, nreloc;
	uint8_t code[XSC_STUB_CODE];
	uint8_t reloc[XSC_STUB_RELOCS];
	uintptr_t target[XSC_STUB_RELOCS];
};

/* The planner's memory: one function's code and a flag byte for each. */
struct xsc_site_scratch {
	uint8_t code[XSC_FN_MAX];
	uint8_t flag[XSC_FN_MAX];
};

/* Plans the site of the syscall instruction at sc, in the function t
 * places it in.  log[0..nlog) is what was changed so far (read through,
 * and trampolines not reused); slots: whether a trampoline may be
 * planned.  NULL and *p, or why the site cannot be proven safe. */
const char *xsc__site_plan(const struct xsc_fdes *t, uintptr_t sc,
			   const struct xsc_patch *log, size_t nlog, bool slots,
			   struct xsc_site_scratch *s, struct xsc_site_plan *p);

#endif
