/*
 * seccomp_eval.c - what a program's seccomp filter answers for one call,
 * found by running the classic BPF program the way the kernel does
 * (kernel/seccomp.c: the checked instructions only), before the filter is
 * installed: xsc's own threads must know whether they may still make the
 * call after it (a filter that kills on io_uring_enter would kill the
 * process at the next one, where natively the program never makes it).
 */
#include "seccomp_eval.h"

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define BPF_MEMWORDS_N 16

/* A = A op src; false for an operation the kernel refuses. */
static bool alu(unsigned op, uint32_t *a, uint32_t src)
{
	switch (op) {
	case BPF_ADD: *a += src; return true;
	case BPF_SUB: *a -= src; return true;
	case BPF_MUL: *a *= src; return true;
	case BPF_DIV: if (!src) return false; *a /= src; return true;
	case BPF_MOD: if (!src) return false; *a %= src; return true;
	case BPF_AND: *a &= src; return true;
	case BPF_OR: *a |= src; return true;
	case BPF_XOR: *a ^= src; return true;
	case BPF_LSH: *a = src < 32 ? *a << src : 0; return true;
	case BPF_RSH: *a = src < 32 ? *a >> src : 0; return true;
	case BPF_NEG: *a = -*a; return true;
	default: return false;
	}
}

/* The action's result, or -1 for a program the kernel would refuse. */
static long run(const struct sock_filter *f, unsigned len, const struct seccomp_data *d)
{
	uint32_t a = 0, x = 0, mem[BPF_MEMWORDS_N] = { 0 };
	const unsigned char *raw = (const unsigned char *)d;

	for (unsigned pc = 0; pc < len; pc++) {
		const struct sock_filter *i = &f[pc];
		uint32_t k = i->k, src;

		switch (BPF_CLASS(i->code)) {
		case BPF_LD:
			if (i->code == (BPF_LD | BPF_W | BPF_ABS)) {
				if (k > (uint32_t)sizeof(*d) - 4 || (k & 3))
					return -1;
				memcpy(&a, raw + k, 4);
			} else if (i->code == (BPF_LD | BPF_W | BPF_LEN)) {
				a = sizeof(*d);
			} else if (i->code == (BPF_LD | BPF_IMM)) {
				a = k;
			} else if (i->code == (BPF_LD | BPF_MEM) && k < BPF_MEMWORDS_N) {
				a = mem[k];
			} else {
				return -1;
			}
			break;
		case BPF_LDX:
			if (i->code == (BPF_LDX | BPF_W | BPF_LEN))
				x = sizeof(*d);
			else if (i->code == (BPF_LDX | BPF_IMM))
				x = k;
			else if (i->code == (BPF_LDX | BPF_MEM) && k < BPF_MEMWORDS_N)
				x = mem[k];
			else
				return -1;
			break;
		case BPF_ST:
		case BPF_STX:
			if (k >= BPF_MEMWORDS_N)
				return -1;
			mem[k] = BPF_CLASS(i->code) == BPF_ST ? a : x;
			break;
		case BPF_ALU:
			if (!alu(BPF_OP(i->code), &a, BPF_SRC(i->code) == BPF_X ? x : k))
				return -1;
			break;
		case BPF_JMP: {
			bool t;
			src = BPF_SRC(i->code) == BPF_X ? x : k;
			switch (BPF_OP(i->code)) {
			case BPF_JA:
				pc += k;
				continue;
			case BPF_JEQ: t = a == src; break;
			case BPF_JGT: t = a > src; break;
			case BPF_JGE: t = a >= src; break;
			case BPF_JSET: t = (a & src) != 0; break;
			default: return -1;
			}
			pc += t ? i->jt : i->jf;
			break;
		}
		case BPF_RET:
			if (BPF_RVAL(i->code) == BPF_K)
				return k;
			if (BPF_RVAL(i->code) == BPF_A)
				return a;
			return -1;
		case BPF_MISC:
			if (BPF_MISCOP(i->code) == BPF_TAX)
				x = a;
			else
				a = x;
			break;
		default:
			return -1;
		}
	}
	return -1;	/* ran off the end: the kernel refuses such a program */
}

bool xsc__seccomp_allows(const struct sock_filter *f, unsigned len,
			 const struct seccomp_data *d)
{
	long r = run(f, len, d);

	if (r < 0)
		return false;
	r &= SECCOMP_RET_ACTION_FULL;
	return r == SECCOMP_RET_ALLOW || r == SECCOMP_RET_LOG;
}
