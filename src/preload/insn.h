/*
 * insn.h - is an address the start of an instruction (insn.c)?  For the
 * syscall-site rewriter (rewrite.c) and its test (t_insn).
 */
#ifndef XSC_INSN_H
#define XSC_INSN_H

#include <stdbool.h>
#include <stdint.h>

/* What the decoder tells of one instruction. */
struct xsc_insn {
	int len;		/* its length; 0: one the decoder does not know */
	bool plain;		/* it may run in another place unchanged: a data
				   instruction, no branch, call or return, no
				   rip-relative operand */
	bool nop;		/* a nop of the forms assemblers pad with */
	bool stop;		/* never falls through: ret, jmp, ud2 */
	bool indirect;		/* a jump through a register or memory */
	bool branch;		/* a direct jump or call to next + rel */
	bool cond;		/* of them, a conditional jump (jcc) */
	bool call;		/* of them, a call */
	bool vec;		/* it uses the x87, MMX or SSE state (xmm
				   registers, MXCSR): VEX and EVEX are refused */
	int32_t rel;
};

/* Decodes the instruction at p (none past end): its length, or 0 when the
 * decoder does not know it. */
int xsc__insn_decode(const uint8_t *p, const uint8_t *end, struct xsc_insn *in);
/* The same, the length and *plain only. */
int xsc__insn_len(const uint8_t *p, const uint8_t *end, bool *plain);

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
/* The function holding a: [*start, *end) from its FDE, and *next, where
 * the next function starts (>= *end: the padding between them).  false
 * when a is past the FDE's range or the FDE is not of GNU ld's form. */
bool xsc__fdes_range(const struct xsc_fdes *t, uintptr_t a, uintptr_t *start,
		     uintptr_t *end, uintptr_t *next);
/* Is site the start of an instruction, decoding from start (a function's
 * first instruction)?  false also when the decoder cannot tell. */
bool xsc__insn_boundary(uintptr_t start, uintptr_t site);
/* Decodes from start to at, which must be an instruction start: 0 and
 * the starts of the two instructions before it in prev[0] (the nearer)
 * and prev[1] (0 where there are fewer), *plain for prev[0] (it may run
 * elsewhere unchanged: no control flow, no rip-relative operand); -1
 * when the decoder cannot tell. */
int xsc__insn_before(uintptr_t start, uintptr_t at, uintptr_t prev[2], bool *plain);

#endif
