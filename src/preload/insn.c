/*
 * insn.c - an x86-64 instruction length decoder, only as large as the
 * syscall-site rewriter needs (rewrite.c, site.c): is address `site` the
 * start of an instruction, walking from a function's first instruction?
 * And what is each instruction: one that only moves or computes data and
 * may run anywhere else ("plain"), a nop of padding, a direct branch and
 * its target, one that never falls through, an indirect jump.
 *
 * It knows the general-purpose one-byte opcodes, the two-byte (0f) map,
 * the 0f 38 / 0f 3a maps, legacy prefixes and REX, and ModRM/SIB/
 * displacement forms.  It refuses (answers false) on anything else: VEX
 * and EVEX (vector code has no system calls in glibc's wrappers), moffs
 * forms, far transfers, opcodes invalid in 64-bit mode, and a walk longer
 * than 4 KiB.  A refusal only leaves a site trapped; the one dangerous
 * answer is a wrong "yes", so each table entry below follows the Intel SDM
 * opcode maps (Vol. 2, Appendix A) and nothing is guessed; t_insn checks
 * every candidate site of the machine's libc against objdump.
 * Functions' bounds come from .eh_frame_hdr and the FDEs (xsc__fdes_*).
 */
#include <string.h>

#include "insn.h"

enum { NONE = 0, MODRM = 1, I8 = 2, I32 = 4, I16 = 8, BAD = 16, REL8 = I8, REL32 = 32 };

/* One-byte map: ModRM and immediate of each opcode in 64-bit mode
 * (prefixes, REX and 0f are handled before the table is read). */
static uint8_t one(uint8_t op)
{
	if (op < 0x40) {
		if ((op & 7) < 4)
			return MODRM;			/* ALU r/m forms */
		if ((op & 7) == 4)
			return I8;			/* ALU al, imm8 */
		if ((op & 7) == 5)
			return I32;			/* ALU eax, imm32 */
		return BAD;		/* push/pop seg, daa...: invalid; prefixes */
	}
	if (op >= 0x50 && op <= 0x5f)
		return NONE;				/* push/pop r64 */
	if (op >= 0x70 && op <= 0x7f)
		return REL8;				/* jcc rel8 */
	if (op >= 0x84 && op <= 0x8f)
		return op == 0x8c || op == 0x8e ? BAD : MODRM;	/* test..pop r/m; seg movs */
	if (op >= 0x90 && op <= 0x99)
		return NONE;				/* nop/xchg, cwde, cdq */
	if (op >= 0xb0 && op <= 0xb7)
		return I8;				/* mov r8, imm8 */
	if (op >= 0xb8 && op <= 0xbf)
		return I32;				/* mov r32, imm32 (imm64 with REX.W) */
	if (op >= 0xd0 && op <= 0xd3)
		return MODRM;				/* shifts */
	if (op >= 0xd8 && op <= 0xdf)
		return MODRM;				/* x87 */
	switch (op) {
	case 0x63: return MODRM;			/* movsxd */
	case 0x68: return I32;				/* push imm32 */
	case 0x69: return MODRM | I32;			/* imul r, r/m, imm32 */
	case 0x6a: return I8;				/* push imm8 */
	case 0x6b: return MODRM | I8;			/* imul r, r/m, imm8 */
	case 0x80: case 0x83: return MODRM | I8;	/* ALU r/m, imm8 */
	case 0x81: return MODRM | I32;			/* ALU r/m, imm32 */
	case 0x9c: case 0x9d: case 0x9e: case 0x9f:
		return NONE;				/* pushf, popf, sahf, lahf */
	case 0xa4: case 0xa5: case 0xa6: case 0xa7:
	case 0xaa: case 0xab: case 0xac: case 0xad: case 0xae: case 0xaf:
		return NONE;				/* string ops */
	case 0xa8: return I8;				/* test al, imm8 */
	case 0xa9: return I32;				/* test eax, imm32 */
	case 0xc0: case 0xc1: return MODRM | I8;	/* shifts by imm8 */
	case 0xc2: return I16;				/* ret imm16 */
	case 0xc3: return NONE;				/* ret */
	case 0xc6: return MODRM | I8;			/* mov r/m8, imm8 */
	case 0xc7: return MODRM | I32;			/* mov r/m, imm32 */
	case 0xc9: return NONE;				/* leave */
	case 0xcc: return NONE;				/* int3 */
	case 0xe8: case 0xe9: return REL32;		/* call, jmp rel32 */
	case 0xeb: return REL8;				/* jmp rel8 */
	case 0xf4: case 0xf5: return NONE;		/* hlt, cmc */
	case 0xf8: case 0xf9: case 0xfa: case 0xfb: case 0xfc: case 0xfd:
		return NONE;				/* clc..std */
	case 0xf6: case 0xf7: case 0xfe: case 0xff:
		return MODRM;		/* group 3 (test adds an immediate), 4, 5 */
	default:
		return BAD;
	}
}

/* Two-byte (0f xx) map. */
static uint8_t two(uint8_t op)
{
	if (op >= 0x80 && op <= 0x8f)
		return REL32;				/* jcc rel32 */
	if (op >= 0xc8 && op <= 0xcf)
		return NONE;				/* bswap */
	switch (op) {
	case 0x05: case 0x0b: case 0x31: case 0xa2:
		return NONE;			/* syscall, ud2, rdtsc, cpuid */
	case 0x04: case 0x0a: case 0x0c: case 0x0e: case 0x0f:
	case 0x06: case 0x07: case 0x08: case 0x09:
	case 0x24: case 0x25: case 0x26: case 0x27:
	case 0x30: case 0x32: case 0x33: case 0x34: case 0x35: case 0x36: case 0x37:
	case 0x39: case 0x3b: case 0x3c: case 0x3d: case 0x3e: case 0x3f:
	case 0x77: case 0x7a: case 0x7b:
	case 0xa0: case 0xa1: case 0xa6: case 0xa7: case 0xa8: case 0xa9: case 0xaa:
	case 0xb9: case 0xff:
		return BAD;	/* invalid, system, segment or rarely used: refuse */
	case 0x70: case 0x71: case 0x72: case 0x73:
	case 0xa4: case 0xac: case 0xba: case 0xc2: case 0xc4: case 0xc5: case 0xc6:
		return MODRM | I8;
	default:
		return MODRM;	/* the rest of the map: r/m forms, no immediate */
	}
}

/* Two-byte opcodes that only move or compute data, wherever they run
 * (unless rip-relative, checked apart): cmovcc, setcc, imul, cmpxchg,
 * xadd, movzx/movsx, bt*, bswap, and the SSE moves glibc's wrappers use
 * to build argument blocks (movups/movaps/movss/movsd and the like,
 * movdqa/movdqu, movq). */
static bool two_plain(uint8_t op)
{
	return (op >= 0x40 && op <= 0x4f) || (op >= 0x90 && op <= 0x9f) ||
	       (op >= 0xc8 && op <= 0xcf) || op == 0xaf || op == 0xb0 || op == 0xb1 ||
	       op == 0xc0 || op == 0xc1 || op == 0xb6 || op == 0xb7 || op == 0xbe ||
	       op == 0xbf || op == 0xa3 || op == 0xab || op == 0xb3 || op == 0xbb ||
	       op == 0xba || op == 0x10 || op == 0x11 || op == 0x28 || op == 0x29 ||
	       op == 0x6f || op == 0x7f || op == 0xd6;
}

/* Two- and three-byte opcodes that use the x87, MMX or SSE state (op2:
 * the byte after op, the third opcode byte or the ModRM): the SSE and MMX
 * rows of the map (10-17, 28-2f, 50-7f, c2, c4-c6, d0-fe), the 0f 38 and
 * 0f 3a maps but for movbe, crc32, adcx/adox and movdir (0f 38 f0-ff),
 * and group 15 (fxsave, ldmxcsr, stmxcsr, xsave...) but for the fences. */
static bool two_vec(uint8_t op, uint8_t op2)
{
	if (op == 0x38)
		return op2 < 0xf0;
	if (op == 0xae)
		return !((op2 >> 6) == 3 && ((op2 >> 3) & 7) >= 5);
	return (op >= 0x10 && op <= 0x17) || (op >= 0x28 && op <= 0x2f) || op == 0x3a ||
	       (op >= 0x50 && op <= 0x7f) || op == 0xc2 || (op >= 0xc4 && op <= 0xc6) ||
	       (op >= 0xd0 && op <= 0xfe);
}

/* Bytes of ModRM, SIB and displacement at p, or 0 past end; *rip set
 * when the operand is rip-relative. */
static int modrm_len(const uint8_t *p, const uint8_t *end, bool *rip)
{
	uint8_t m, mod, rm;
	int n = 1;

	if (p >= end)
		return 0;
	m = p[0];
	mod = m >> 6;
	rm = m & 7;
	if (mod == 3)
		return 1;
	if (rm == 4) {				/* SIB */
		if (p + 1 >= end)
			return 0;
		n++;
		if (mod == 0 && (p[1] & 7) == 5)
			return n + 4;		/* no base: disp32 */
	} else if (mod == 0 && rm == 5) {
		*rip = true;
		return n + 4;			/* rip + disp32 */
	}
	return n + (mod == 1 ? 1 : mod == 2 ? 4 : 0);
}

/* A nop as assemblers pad code with (.p2align): 90, 66 90 and 0f 1f /0,
 * with operand-size and cs prefixes only.  q is the opcode, after the
 * prefixes at p; rex is the REX byte or 0. */
static bool is_nop(const uint8_t *p, const uint8_t *q, uint8_t rex)
{
	for (; p < q; p++)
		if (*p != 0x66 && *p != 0x2e)
			return false;
	if (q[0] == 0x90)
		return !(rex & 1);			/* 41 90 is xchg %eax,%r8d */
	return q[0] == 0x0f && q[1] == 0x1f && ((q[2] >> 3) & 7) == 0;
}

/* ALU, test, xchg, mov, lea, mov-immediate, shift, group 3 (test, not,
 * neg, mul, div), inc/dec, movsxd, imul, cwde/cdq: data only.  q: the
 * byte after the one-byte opcode op. */
static bool one_plain(uint8_t op, const uint8_t *q, const uint8_t *end)
{
	return (op < 0x40 && (op & 7) < 6) || (op >= 0x80 && op <= 0x8b && op != 0x82) ||
	       op == 0x8d || (op >= 0xb0 && op <= 0xbf) || op == 0xc6 || op == 0xc7 ||
	       op == 0xc0 || op == 0xc1 || (op >= 0xd0 && op <= 0xd3) || op == 0xf6 ||
	       op == 0xf7 || op == 0x63 || op == 0x69 || op == 0x6b ||
	       (op >= 0x91 && op <= 0x99) ||
	       ((op == 0xfe || op == 0xff) && q < end && ((*q >> 3) & 7) < 2);
}

/* The two- and three-byte maps (after 0f; *q: the next opcode byte):
 * the operand kind, or BAD at the end of the bytes. */
static uint8_t map_0f(const uint8_t **q, const uint8_t *end, struct xsc_insn *in)
{
	uint8_t op, k;

	if (*q >= end)
		return BAD;
	op = *(*q)++;
	in->vec = two_vec(op, *q < end ? **q : 0);
	if (op == 0x38 || op == 0x3a) {	/* three-byte maps */
		if (*q >= end)
			return BAD;
		(*q)++;
		k = op == 0x3a ? MODRM | I8 : MODRM;
	} else {
		k = two(op);
	}
	if (op == 0x1f)
		k = MODRM;		/* nop r/m */
	in->stop = op == 0x0b;		/* ud2 */
	in->plain = two_plain(op);
	in->branch = op >= 0x80 && op <= 0x8f;	/* jcc rel32 */
	in->cond = in->branch;
	return k;
}

int xsc__insn_decode(const uint8_t *p, const uint8_t *end, struct xsc_insn *in)
{
	const uint8_t *q = p, *opc;
	bool osize = false, rexw = false, rip = false;
	uint8_t op, k, rex = 0;
	int n;

	memset(in, 0, sizeof(*in));
	for (;; q++) {				/* legacy prefixes */
		if (q >= end || q - p > 4)
			return 0;
		if (*q == 0x66)
			osize = true;
		else if (*q != 0x67 && *q != 0xf0 && *q != 0xf2 && *q != 0xf3 &&
			 *q != 0x2e && *q != 0x3e && *q != 0x26 && *q != 0x36 &&
			 *q != 0x64 && *q != 0x65)
			break;
	}
	if ((*q & 0xf0) == 0x40) {		/* REX, right before the opcode */
		rex = *q;
		rexw = (*q & 8) != 0;
		q++;
	}
	if (q >= end)
		return 0;
	opc = q;
	op = *q++;
	in->plain = one_plain(op, q, end);
	if (op == 0x0f) {
		k = map_0f(&q, end, in);
	} else {
		k = one(op);
		if (op >= 0xb8 && op <= 0xbf && rexw)
			return in->len = (int)(q - p) + 8;	/* movabs r64, imm64 */
		if ((op == 0xf6 || op == 0xf7) && q < end && ((*q >> 3) & 7) < 2)
			k |= op == 0xf6 ? I8 : I32;	/* test r/m, imm */
		in->stop = op == 0xc3 || op == 0xc2 || op == 0xe9 || op == 0xeb;
		/* jmp *r/m (ff /4, /5): its targets are not in the code */
		in->indirect = op == 0xff && q < end && (((*q >> 3) & 7) == 4 || ((*q >> 3) & 7) == 5);
		in->stop |= in->indirect;
		in->branch = (op >= 0x70 && op <= 0x7f) || op == 0xeb;	/* rel8 */
		in->cond = op >= 0x70 && op <= 0x7f;
		in->branch |= op == 0xe8 || op == 0xe9;			/* rel32 */
		in->call = op == 0xe8;
		in->vec = op >= 0xd8 && op <= 0xdf;			/* x87 */
	}
	if (k & BAD)
		return 0;
	if (k & MODRM) {
		if ((n = modrm_len(q, end, &rip)) == 0)
			return 0;
		q += n;
	}
	if (rip || (k & (REL8 | REL32)) == REL32)
		in->plain = false;
	if (k & I8)
		q += 1;
	if (k & I16)
		q += 2;
	if (k & I32)
		q += osize ? 2 : 4;
	if (k & REL32) {
		if (osize)
			return 0;	/* 16-bit branches: not in 64-bit code */
		q += 4;
	}
	if (q > end)
		return 0;
	if (k & REL32)
		memcpy(&in->rel, q - 4, 4);
	else if (in->branch)
		in->rel = (int8_t)q[-1];
	in->nop = is_nop(p, opc, rex);
	in->plain |= in->nop;		/* does nothing, anywhere */
	return in->len = (int)(q - p);
}

/* The length of the instruction at p, or 0: not one this decoder knows.
 * *plain: it may run anywhere else unchanged (no branch, call or return,
 * no rip-relative operand, a one-byte-map data instruction). */
int xsc__insn_len(const uint8_t *p, const uint8_t *end, bool *plain)
{
	struct xsc_insn in;
	int n = xsc__insn_decode(p, end, &in);

	*plain = in.plain;
	return n;
}

int xsc__insn_before(uintptr_t start, uintptr_t at, uintptr_t prev[2], bool *plain)
{
	const uint8_t *p = (const uint8_t *)start, *want = (const uint8_t *)at;
	bool pl[2] = { false, false };

	prev[0] = prev[1] = 0;
	if (!start || start > at || at - start > 4096)
		return -1;
	while (p < want) {
		bool one;
		int n = xsc__insn_len(p, want + 15, &one);
		if (n == 0)
			return -1;
		prev[1] = prev[0];
		pl[1] = pl[0];
		prev[0] = (uintptr_t)p;
		pl[0] = one;
		p += n;
	}
	*plain = pl[0];
	return p == want ? 0 : -1;
}

bool xsc__insn_boundary(uintptr_t start, uintptr_t site)
{
	uintptr_t prev[2];
	bool plain;

	return xsc__insn_before(start, site, prev, &plain) == 0;
}

/* .eh_frame_hdr as GNU ld writes it: version 1, eh_frame_ptr pcrel
 * sdata4, the count udata4, the pairs datarel sdata4 (relative to the
 * header).  Anything else: no table, and no site is rewritten. */
bool xsc__fdes_init(struct xsc_fdes *t, uintptr_t hdr)
{
	const unsigned char *h = (const unsigned char *)hdr;

	memset(t, 0, sizeof(*t));
	if (!hdr || h[0] != 1 || h[1] != 0x1b || h[2] != 0x03 || h[3] != 0x3b)
		return false;
	memcpy(&t->n, h + 8, 4);
	t->hdr = hdr;
	t->pairs = (const int32_t *)(h + 12);
	return t->n > 0;
}

/* The index of the last table entry whose function starts at or before
 * a, or -1. */
static long fdes_find(const struct xsc_fdes *t, uintptr_t a)
{
	uint32_t lo = 0, hi = t->n;

	if (!t->pairs)
		return -1;
	while (hi - lo > 1) {	/* the last start <= a */
		uint32_t mid = lo + (hi - lo) / 2;
		if (t->hdr + (intptr_t)t->pairs[2 * mid] <= a)
			lo = mid;
		else
			hi = mid;
	}
	return t->hdr + (intptr_t)t->pairs[2 * lo] <= a ? (long)lo : -1;
}

uintptr_t xsc__fdes_function(const struct xsc_fdes *t, uintptr_t a)
{
	long i = fdes_find(t, a);

	return i < 0 ? 0 : t->hdr + (intptr_t)t->pairs[2 * i];
}

/* The FDE's own pc_begin, read as GNU ld writes it (pcrel sdata4), must
 * be the table's start: then its pc_range is the next 4 bytes.  An FDE
 * of another form (64-bit length, another encoding) gives no range, nor
 * does a signal frame's (its CIE's augmentation has an 'S': glibc's
 * __restore_rt), which starts a byte before its first instruction so
 * that unwinders find it from the return address minus one: a walk from
 * there would decode the bytes out of step. */
bool xsc__fdes_range(const struct xsc_fdes *t, uintptr_t a, uintptr_t *start,
		     uintptr_t *end, uintptr_t *next)
{
	long i = fdes_find(t, a);
	uintptr_t f, fde;
	uint32_t len, cie, range;
	int32_t pc;

	if (i < 0)
		return false;
	f = t->hdr + (intptr_t)t->pairs[2 * i];
	fde = t->hdr + (intptr_t)t->pairs[2 * i + 1];
	memcpy(&len, (const void *)fde, 4);
	memcpy(&cie, (const void *)(fde + 4), 4);
	memcpy(&pc, (const void *)(fde + 8), 4);
	memcpy(&range, (const void *)(fde + 12), 4);
	if (len < 16 || len == 0xffffffffu || cie == 0 || fde + 8 + (intptr_t)pc != f)
		return false;
	if (strchr((const char *)(fde + 4 - cie + 9), 'S'))
		return false;	/* CIE: length, id, version, augmentation */
	*start = f;
	*end = f + range;
	*next = (uint32_t)i + 1 < t->n ? t->hdr + (intptr_t)t->pairs[2 * (i + 1)] : *end;
	if (*next < *end)
		*next = *end;	/* overlapping entries: no padding after it */
	return a < *end;
}
