/*
 * site.c - how a libc syscall site can become a jump, proven from the
 * code around it.  rewrite.c carries the plan out; t_insn checks the plan
 * of every syscall instruction of the machine's libc against objdump.
 * Why each rule: docs/transparent.md, "Trap once, then jump".
 *
 * Rules of a plan:
 *  - I, the instruction replaced, is in the run of "plain" instructions
 *    (insn.c) or conditional branches right before the syscall, at most
 *    16 and 48 bytes; the stub runs I up to the syscall as they were;
 *  - the decoder walks from the function's first instruction (libc's
 *    unwind table) and lands on I's start; no branch lands inside I;
 *    where the function cannot be walked, I has no legacy prefix;
 *  - I is the nearest whose 5 bytes (jmp rel32) lie within one cache
 *    line, else whose 2 bytes do, as a jmp rel8 to a trampoline;
 *  - the code is read as it was, rewrite.c's log of changes undone;
 *  - novec (the stub saves only xmm0-7) only where the whole function
 *    decodes, uses no x87, MMX or SSE state, no jump leaves it and its end
 *    does not fall through.
 */
#include <string.h>

#include "site.h"

enum { START = 1, TARGET = 2, PLAIN = 4, NOP = 8, STOP = 16, PREFIXED = 32, JCC = 64 };

#define RUN 16				/* instructions before the syscall */
#define REACH_BACK 128			/* a jmp rel8's reach from its end */
#define REACH_FWD 127

/* Bytes [a, a + n) within one 64-byte line: one locked exchange. */
static bool in_line(uintptr_t a, unsigned n)
{
	return (a & 63) + n <= 64;
}

static bool is_prefix(uint8_t b)
{
	return b == 0x66 || b == 0x67 || b == 0xf0 || b == 0xf2 || b == 0xf3 ||
	       b == 0x2e || b == 0x3e || b == 0x26 || b == 0x36 || b == 0x64 || b == 0x65;
}

/* Does [a, a + n) overlap a change in the log? */
static bool logged(const struct xsc_patch *log, size_t nlog, uintptr_t a, size_t n)
{
	for (size_t i = 0; i < nlog; i++)
		if (log[i].at < a + n && a < log[i].at + log[i].len)
			return true;
	return false;
}

/* Copies [base, base + n) of the text into s->code as it was before the
 * log's changes. */
static void copy_orig(struct xsc_site_scratch *s, uintptr_t base, size_t n,
		      const struct xsc_patch *log, size_t nlog)
{
	memcpy(s->code, (const void *)base, n);
	for (size_t i = 0; i < nlog; i++)
		for (unsigned j = 0; j < log[i].len; j++)
			if (log[i].at + j >= base && log[i].at + j < base + n)
				s->code[log[i].at + j - base] = log[i].orig[j];
}

enum { WHOLE, PARTIAL, INDIRECT };

/* Decodes s->code[0, nfn) (the function) and then the nops that follow
 * it up to nall (the padding before the next function), flagging each
 * instruction's start and kind and each branch target.  Returns the
 * offset the walk reached; *how: WHOLE when it decoded the whole
 * function and found no indirect jump, so the targets flagged are all
 * the function's.  *novec: the whole function decoded, none of its
 * instructions uses the x87, MMX or SSE state (the decoder refuses VEX
 * and EVEX), and no jump leaves it (calls may: what the callee leaves in
 * vector registers is dead by the ABI), nor does its end fall through
 * (its last instruction never falls through, or is a call: to a function
 * that does not return). */
static size_t walk(struct xsc_site_scratch *s, size_t nfn, size_t nall, int *how,
		   bool *novec)
{
	struct xsc_insn in;
	bool indirect = false, closed = false;
	size_t off = 0;
	int n;

	*novec = true;
	memset(s->flag, 0, nall);
	while (off < nfn && (n = xsc__insn_decode(s->code + off, s->code + nfn, &in)) > 0) {
		s->flag[off] |= START | (in.plain ? PLAIN : 0) | (in.nop ? NOP : 0) |
				(in.stop ? STOP : 0) | (in.cond ? JCC : 0) |
				(is_prefix(s->code[off]) ? PREFIXED : 0);
		if (in.branch) {
			int64_t t = (int64_t)off + n + in.rel;
			if (t >= 0 && (uint64_t)t < nall)
				s->flag[t] |= TARGET;
			if (!in.call && (t < 0 || (uint64_t)t >= nfn))
				*novec = false;
		}
		indirect |= in.indirect;
		*novec &= !in.vec;
		closed = in.stop || in.call;
		off += (size_t)n;
	}
	*how = off < nfn ? PARTIAL : indirect ? INDIRECT : WHOLE;
	*novec &= *how != PARTIAL && closed;
	while (*how == WHOLE && off < nall &&
	       (n = xsc__insn_decode(s->code + off, s->code + nall, &in)) > 0 && in.nop) {
		s->flag[off] |= START | NOP;
		off += (size_t)n;
	}
	return off;
}

static size_t next_start(const struct xsc_site_scratch *s, size_t x, size_t n)
{
	do
		x++;
	while (x < n && !(s->flag[x] & START));
	return x;
}

static bool targets_in(const struct xsc_site_scratch *s, size_t a, size_t b)
{
	for (size_t x = a; x < b; x++)
		if (s->flag[x] & TARGET)
			return true;
	return false;
}

/* The first 5 bytes of padding in s->code[0, n) (at base) within reach
 * of a jmp rel8 that ends at `from`, not used before; 0 if none.
 * Padding: a run of nops right after an instruction that never falls
 * through, with no branch target in it. */
static uintptr_t find_slot(const struct xsc_site_scratch *s, uintptr_t base, size_t n,
			   uintptr_t from, const struct xsc_patch *log, size_t nlog)
{
	uintptr_t lo = from - REACH_BACK, hi = from + REACH_FWD;
	bool after_stop = false, landed;
	size_t x = 0, end;

	while (x < n) {
		if (!(s->flag[x] & NOP) || !after_stop) {
			after_stop = (s->flag[x] & STOP) != 0;
			x = next_start(s, x, n);
			continue;
		}
		for (end = x; end < n && (s->flag[end] & NOP); end = next_start(s, end, n))
			;
		landed = targets_in(s, x, end);	/* a branch lands in it: not padding */
		for (size_t y = x; y + 5 <= end && !landed; y++) {
			uintptr_t a = base + y;
			if (a >= lo && a <= hi && !logged(log, nlog, a, 5))
				return a;
		}
		after_stop = false;
		x = end;	/* the instruction after the padding */
	}
	return 0;
}

/* May the instruction at offset a, len bytes, become a jump: no branch
 * lands inside it, as far as the walk can tell. */
static bool whole_insn(const struct xsc_site_scratch *s, size_t a, size_t len, int how)
{
	return !targets_in(s, a + 1, a + len) && (how == WHOLE || !(s->flag[a] & PREFIXED));
}

/* The stub's code for s->code[a, o) at base: data instructions as they
 * are, each jcc as a jcc rel32 to the same place. */
static const char *plan(struct xsc_site_plan *p, const struct xsc_site_scratch *s,
			uintptr_t base, size_t a, size_t o, uintptr_t slot)
{
	p->at = base + a;
	p->sc = base + o;
	p->slot = slot;
	p->ncopy = (unsigned)(o - a);
	p->ncode = p->nreloc = 0;
	for (size_t x = a, n; x < o; x = n) {
		n = next_start(s, x, o);
		if (s->flag[x] & JCC) {
			const uint8_t *c = s->code + x;
			int32_t rel;
			uint8_t cc;
			if (c[0] == 0x0f) {		/* 0f 8x rel32 */
				cc = c[1] & 15;
				memcpy(&rel, c + 2, 4);
			} else {			/* 7x rel8 */
				cc = c[0] & 15;
				rel = (int8_t)c[1];
			}
			if (p->ncode + 6 > XSC_STUB_CODE || p->nreloc == XSC_STUB_RELOCS)
				return "its instructions do not fit a stub";
			p->code[p->ncode++] = 0x0f;
			p->code[p->ncode++] = (uint8_t)(0x80 | cc);
			p->reloc[p->nreloc] = (uint8_t)p->ncode;
			p->target[p->nreloc++] = base + n + (intptr_t)rel;
			memset(p->code + p->ncode, 0, 4);
			p->ncode += 4;
		} else {
			if (p->ncode + (n - x) > XSC_STUB_CODE)
				return "its instructions do not fit a stub";
			memcpy(p->code + p->ncode, s->code + x, n - x);
			p->ncode += (unsigned)(n - x);
		}
	}
	return NULL;
}

const char *xsc__site_plan(const struct xsc_fdes *t, uintptr_t sc,
			   const struct xsc_patch *log, size_t nlog, bool slots,
			   struct xsc_site_scratch *s, struct xsc_site_plan *p)
{
	uintptr_t start, end, next, slot;
	size_t run[RUN + 1], nall, reached, o;
	int nrun = 0, how;
	bool novec;

	if (!xsc__fdes_range(t, sc, &start, &end, &next) || sc + 2 > end)
		return "no function's unwind entry (FDE) holds it, or a signal frame's";
	if (end - start > XSC_FN_MAX)
		return "its function is over 16 KiB: not walked";
	nall = next - start < XSC_FN_MAX ? next - start : XSC_FN_MAX;
	copy_orig(s, start, nall, log, nlog);
	o = sc - start;
	if (s->code[o] != 0x0f || s->code[o + 1] != 0x05)
		return "not a syscall instruction";
	reached = walk(s, end - start, nall, &how, &novec);
	if (reached <= o || !(s->flag[o] & START))
		return "the decoder cannot walk its function up to it";
	/* the plain instructions right before it, nearest first; run[i] ends
	 * where run[i - 1] starts (run[-1]: the syscall) */
	run[0] = o;
	for (size_t a = o; nrun < RUN && a > 0; ) {
		do
			a--;
		while (a > 0 && !(s->flag[a] & START));
		if (!(s->flag[a] & (PLAIN | JCC)) || o - a > XSC_SITE_COPY ||
		    logged(log, nlog, start + a, o - a))
			break;
		run[++nrun] = a;
	}
	if (!nrun)
		return "no data instruction right before the syscall";
	p->novec = novec;
	for (int i = 1; i <= nrun; i++)
		if ((s->flag[run[i]] & PLAIN) && run[i - 1] - run[i] >= 5 &&
		    in_line(start + run[i], 5) && whole_insn(s, run[i], run[i - 1] - run[i], how) &&
		    !plan(p, s, start, run[i], o, 0))
			return NULL;
	if (!slots)
		return "no instruction before it holds a 5-byte jump within a cache "
		       "line, and trampolines are off";
	if (how == PARTIAL)
		return "no instruction before it holds a 5-byte jump within a cache "
		       "line, and its function does not decode to its end (its "
		       "branch targets are unknown: no trampoline)";
	if (how == INDIRECT)
		return "no instruction before it holds a 5-byte jump within a cache "
		       "line, and its function has an indirect jump (its branch "
		       "targets are unknown: no trampoline)";
	for (int i = 1; i <= nrun; i++)
		if ((s->flag[run[i]] & PLAIN) && run[i - 1] - run[i] >= 2 &&
		    in_line(start + run[i], 2) && whole_insn(s, run[i], run[i - 1] - run[i], how) &&
		    (slot = find_slot(s, start, reached, start + run[i] + 2, log, nlog)) &&
		    !plan(p, s, start, run[i], o, slot))
			return NULL;
	return "no instruction before it holds a 5-byte jump within a cache line, "
	       "and no padding within 128 bytes for a trampoline";
}
