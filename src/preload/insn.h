/*
 * insn.h - is an address the start of an instruction (insn.c)?  For the
 * syscall-site rewriter (rewrite.c) and its test (t_insn).
 */
#ifndef XSC_INSN_H
#define XSC_INSN_H

#include <stdbool.h>
#include <stdint.h>

/* A library's .eh_frame_hdr search table: where its functions start. */
struct xsc_fdes {
	const int32_t *pairs;	/* (function start, FDE), relative to hdr */
	uintptr_t hdr;
	uint32_t n;
};

/* Reads the table at hdr (PT_GNU_EH_FRAME); false if it is not of the
 * form GNU ld writes. */
bool xsc__fdes_init(struct xsc_fdes *t, uintptr_t hdr);
/* The start of the function holding address a, or 0. */
uintptr_t xsc__fdes_function(const struct xsc_fdes *t, uintptr_t a);
/* Is site the start of an instruction, decoding from start (a function's
 * first instruction)?  false also when the decoder cannot tell. */
bool xsc__insn_boundary(uintptr_t start, uintptr_t site);

#endif
