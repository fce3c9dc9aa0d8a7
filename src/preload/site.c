/*
 * site.c - how a libc syscall site can become a jump, proven from the
 * code around it.  rewrite.c carries the plan out; t_insn checks the plan
 * of every syscall instruction of the machine's libc against objdump.
 *
 * A site is a syscall instruction and the run of instructions right
 * before it that only move or compute data (the decoder's "plain": no
 * rip-relative operand, no call, return or stack push) or branch
 * conditionally.  One plain instruction of the run, I, becomes a jump to
 * a stub (rewrite.c), which runs I and the instructions after it up to
 * the syscall, copied as they were, and enters the runtime with whatever
 * rax they leave: an immediate ("mov $nr,%eax"), a register (syscall():
 * "mov %rdi,%rax" at its top, "mov 0x8(%rsp),%r9" last), or zero
 * (read: "xor %eax,%eax").  A conditional jump in the stub is a jcc
 * rel32 to its target in libc, where the original code runs on (to the
 * syscall, which traps, or past it).  The syscall instruction stays as it
 * is: a branch to it or to any instruction after I runs the original code
 * and traps, and the entry jumps back to it for a number the shim must
 * not take from a stub.
 *
 * Only I changes, because a thread may stop at any instruction boundary
 * (preempted, or interrupted by a signal whose handler makes this very
 * rewrite) and resume there later: a boundary inside the changed bytes
 * would resume in the middle of the jump.  I has none: the decoder walks
 * the function from its first instruction (libc's unwind table) to the
 * syscall and lands on I's start, and no branch of the function lands
 * inside I.  It walks the whole function where it can; where it cannot,
 * I must not start with a legacy prefix, the one place code jumps into an
 * instruction ("jmp 1f; lock; 1: cmpxchg").  One locked exchange within a
 * cache line changes I's first bytes, so another CPU fetches the old
 * instruction or the jump.
 *
 * I is the nearest instruction before the syscall, in a run of at most 16
 * and 48 bytes, that holds a jmp rel32 (5 bytes) within one cache line.
 * Where none does (read's "mov 0x8(%rsp),%edi; xor %eax,%eax": 4 and 2
 * bytes; a candidate at 60-63 of a line), the nearest whose first 2 bytes
 * are within a line becomes a jmp rel8 to a trampoline: 5 bytes of
 * alignment padding within 128 bytes that become a jmp rel32 to the stub.
 * Padding is a run of nops right after an instruction that never falls
 * through (ret, jmp, ud2), that no branch of the function lands in:
 * nothing runs it (assemblers align with nops before a label, never after
 * one).  That needs all the function's branch targets, so the whole
 * function (its FDE's range) must decode and have no indirect jump (whose
 * targets the code does not say); the padding after it up to the next
 * function counts too.  rewrite.c writes the trampoline and serializes
 * every CPU before it publishes the jmp rel8.
 *
 * The code is read as it was: rewrite.c's log of what it changed (a jump
 * shorter than the instruction it replaces leaves a tail a walk would
 * misread; a used trampoline is padding no more) is undone in a copy.
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
 * the function's. */
static size_t walk(struct xsc_site_scratch *s, size_t nfn, size_t nall, int *how)
{
	struct xsc_insn in;
	bool indirect = false;
	size_t off = 0;
	int n;

	memset(s->flag, 0, nall);
	while (off < nfn && (n = xsc__insn_decode(s->code + off, s->code + nfn, &in)) > 0) {
		s->flag[off] |= START | (in.plain ? PLAIN : 0) | (in.nop ? NOP : 0) |
				(in.stop ? STOP : 0) | (in.cond ? JCC : 0) |
				(is_prefix(s->code[off]) ? PREFIXED : 0);
		if (in.branch) {
			int64_t t = (int64_t)off + n + in.rel;
			if (t >= 0 && (uint64_t)t < nall)
				s->flag[t] |= TARGET;
		}
		indirect |= in.indirect;
		off += (size_t)n;
	}
	*how = off < nfn ? PARTIAL : indirect ? INDIRECT : WHOLE;
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

	if (!xsc__fdes_range(t, sc, &start, &end, &next) || sc + 2 > end)
		return "no function's unwind entry (FDE) holds it, or a signal frame's";
	if (end - start > XSC_FN_MAX)
		return "its function is over 16 KiB: not walked";
	nall = next - start < XSC_FN_MAX ? next - start : XSC_FN_MAX;
	copy_orig(s, start, nall, log, nlog);
	o = sc - start;
	if (s->code[o] != 0x0f || s->code[o + 1] != 0x05)
		return "not a syscall instruction";
	reached = walk(s, end - start, nall, &how);
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
