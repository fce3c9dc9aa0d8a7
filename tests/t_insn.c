/* The instruction decoder of the syscall-site rewriter
 * (src/preload/insn.c) against objdump, on this machine's libc.
 *
 * Every "b8 imm32 0f 05" (mov $imm32, %eax; syscall) in libc's executable
 * segment is a byte pattern the rewriter may be asked about.  objdump's
 * disassembly says which of them start an instruction.  The decoder, from
 * the function start libc's .eh_frame_hdr gives, must never call a
 * pattern an instruction start when objdump does not: rewriting it would
 * corrupt the instruction it is part of.  It may refuse a real site (that
 * site only stays trapped), but it must prove most of them, or the
 * rewriter would be useless: at least half (Debian 12's glibc: see the
 * count printed).
 *
 * And for every syscall instruction: the two instructions before it, as
 * the decoder finds them, are objdump's; every instruction of the walk
 * from the function's start is one of objdump's; one it calls plain
 * (which a stub may run in another place) is a data instruction with no
 * rip-relative operand in objdump's text.
 *
 * And the rewriter's plan of every syscall instruction (src/preload/
 * site.c), as on a first trap there: the instruction that becomes a jump
 * is one of objdump's, long enough for its jump, which stays within a
 * cache line, and no direct branch anywhere in libc lands inside it;
 * what the stub runs is objdump's instructions from there to the
 * syscall, data instructions as they are and conditional jumps to
 * objdump's targets; a trampoline is within a jmp rel8's reach, in nops
 * after an instruction that never falls through, and no branch lands
 * from the first of those nops to its end.  It prints how many sites take
 * each shape and which stay trapped, and why; most must have a plan.
 * Exit 77 without objdump (binutils). */
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "insn.h"
#include "site.h"
#include "testlib.h"

static struct {
	char path[512];
	uintptr_t bias, lo, hi, hdr;
} libc;

/* objdump's text of each instruction start (offset in the text), or NULL */
static char **text;

static bool data_insn(const char *t)
{
	static const char *const ok[] = { "mov", "add", "or", "adc", "sbb", "and",
					  "sub", "xor", "cmp", "test", "xchg", "lea",
					  "cmov", "set", "bt", "bswap", "imul", "xadd",
					  "sh", "sa", "ro", "rc", "not", "neg", "mul", "div",
					  "idiv", "inc", "dec", "clt", "cqt", "cwt",
					  "nop", "cs nop", "data16" };
	char m[16];

	if (!strncmp(t, "lock ", 5))
		t += 5;		/* an atomic update: the same anywhere */
	if (strstr(t, "(%rip)") || sscanf(t, "%15s", m) != 1)
		return false;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (!strncmp(ok[i][2] == ' ' ? t : m, ok[i], strlen(ok[i])))
			return true;
	return false;
}

/* objdump's padding: the nops assemblers align code with */
static bool nop_insn(const char *t)
{
	return !strncmp(t, "nop", 3) || !strncmp(t, "xchg   %ax,%ax", 14) ||
	       !strncmp(t, "cs nop", 6) || !strncmp(t, "data16", 6);
}

/* an instruction after which the next is never reached in order */
static bool stop_insn(const char *t)
{
	return !strncmp(t, "ret", 3) || !strncmp(t, "jmp", 3) || !strncmp(t, "ud2", 3) ||
	       !strncmp(t, "notrack jmp", 11);
}

/* The direct branch and call targets objdump prints ("jne    f8040
 * <...>"), anywhere in libc: a 1 at each. */
static void branch_targets(unsigned char *target, char **txt, uintptr_t n, uintptr_t bias,
			   uintptr_t lo)
{
	for (uintptr_t i = 0; i < n; i++) {
		char m[16], *end;
		unsigned long to;
		const char *t = txt[i];
		if (!t || sscanf(t, "%15s", m) != 1 || (m[0] != 'j' && strncmp(m, "call", 4) &&
							 strncmp(m, "loop", 4)))
			continue;
		t += strlen(m);
		while (*t == ' ')
			t++;
		to = strtoul(t, &end, 16);
		if (end == t || (*end != ' ' && *end != 0 && *end != '\n'))
			continue;	/* indirect: "*%rax", "*0x8(%rip)" */
		if (bias + to >= lo && bias + to < lo + n)
			target[bias + to - lo] = 1;
	}
}

/* Does objdump's text t use the x87, MMX or SSE/AVX state: a vector or
 * x87 register, or an instruction that reads or writes that state with
 * a memory operand only (the control and status words, MXCSR, the save
 * areas), or an x87 one? */
static bool vec_insn(const char *t)
{
	static const char *const m[] = { "f", "ldmxcsr", "stmxcsr", "fxsave", "fxrstor",
					  "xsave", "xrstor", "emms", "vzero", "v", "wait" };
	char w[16];

	if (strstr(t, "%xmm") || strstr(t, "%ymm") || strstr(t, "%zmm") ||
	    strstr(t, "%mm") || strstr(t, "%st") || strstr(t, "%k"))
		return true;
	if (sscanf(t, "%15s", w) != 1)
		return false;
	for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++)
		if (!strncmp(w, m[i], strlen(m[i])))
			return true;
	return false;
}

/* A plan whose stub saves no vector state (p->novec): the function of the
 * site, [lo, hi), must have no instruction that uses that state and no
 * jump out of it, in objdump's text.  0, or 1 after saying what. */
static int check_novec(uintptr_t lo, uintptr_t hi, const unsigned char *start)
{
	for (uintptr_t a = lo; a < hi; a++) {
		const char *t = text[a - libc.lo], *s;
		char m[16], *end;
		unsigned long to;
		if (!start[a - libc.lo] || !t)
			continue;
		if (vec_insn(t)) {
			fprintf(stderr, "libc+%#lx: '%s' in a function whose sites save no "
				"vector state\n", (unsigned long)(a - libc.bias), t);
			return 1;
		}
		if (sscanf(t, "%15s", m) != 1 || m[0] != 'j')
			continue;
		s = t + strlen(m);
		while (*s == ' ')
			s++;
		to = strtoul(s, &end, 16);
		if (end != s && (libc.bias + to < lo || libc.bias + to >= hi)) {
			fprintf(stderr, "libc+%#lx: '%s' jumps out of a function whose "
				"sites save no vector state\n", (unsigned long)(a - libc.bias), t);
			return 1;
		}
	}
	return 0;
}

/* Checks one site's plan against objdump: 0, or 1 after saying what is
 * wrong.  Every instruction the stub copies is one of objdump's, a data
 * instruction or a nop; the replaced one is long enough and no branch in
 * libc lands inside it; a trampoline is in padding after an instruction
 * that never falls through, with no branch target from its start. */
static int check_plan(const struct xsc_site_plan *p, const unsigned char *start,
		      const unsigned char *target)
{
	uintptr_t at = p->at - libc.lo, sc = p->sc - libc.lo, x, n, len, need = p->slot ? 2 : 5;
	unsigned y, r;
	const char *why = NULL;

	for (len = 1; !start[at + len]; len++)
		;
	if (!start[at])
		why = "the replaced instruction is not one of objdump's";
	else if (len < need)
		why = "the replaced instruction is shorter than its jump";
	else if ((p->at & 63) + need > 64)
		why = "the jump crosses a cache line";
	for (x = at + 1; !why && x < at + len; x++)
		if (target[x])
			why = "a branch lands inside the replaced instruction";
	if (!why && p->ncopy != sc - at)
		why = "the stub copies less or more than the code up to the syscall";
	for (x = at, y = 0, r = 0; !why && x < sc; x = n) {
		for (n = x + 1; !start[n]; n++)
			;
		if (text[x][0] == 'j' && strncmp(text[x], "jmp", 3)) {	/* jcc */
			unsigned long to = strtoul(strchr(text[x], ' '), NULL, 16);
			if (r == p->nreloc || p->target[r] != libc.bias + to ||
			    p->reloc[r] != y + 2 || p->code[y] != 0x0f)
				why = "a conditional jump in the stub goes elsewhere";
			y += 6;
			r++;
		} else if (!data_insn(text[x])) {
			why = "the stub copies an instruction that is not a data instruction";
		} else if (memcmp(p->code + y, (const void *)(libc.lo + x), n - x)) {
			why = "the stub's copy differs from the code";
		} else {
			y += n - x;
		}
	}
	if (!why && (y != p->ncode || r != p->nreloc))
		why = "the stub has more code than the site";
	if (!why && p->slot) {
		uintptr_t s = p->slot - libc.lo, q = s, b;
		long d = (long)p->slot - (long)(p->at + 2);
		if (d < -128 || d > 127)
			why = "the trampoline is out of a jmp rel8's reach";
		while (!why && !start[q])
			q--;	/* the nop the slot starts in */
		while (!why && q > 0) {	/* back to the first of the run */
			for (b = q - 1; b > 0 && !start[b]; b--)
				;
			if (!text[b] || !nop_insn(text[b]))
				break;
			q = b;
		}
		for (b = q - 1; !why && b > 0 && !start[b]; b--)
			;
		if (!why && (!text[b] || !stop_insn(text[b])))
			why = "the padding follows an instruction that falls through";
		for (x = q; !why && x < s + 5; x++)
			if ((start[x] && (!text[x] || !nop_insn(text[x]))) || target[x])
				why = "the trampoline is not in padding nothing runs";
	}
	if (!why)
		return 0;
	fprintf(stderr, "libc+%#lx: site plan at libc+%#lx%s: %s\n",
		(unsigned long)(p->sc - libc.bias), (unsigned long)(p->at - libc.bias),
		p->slot ? " with a trampoline" : "", why);
	return 1;
}

static int find(struct dl_phdr_info *info, size_t size, void *arg)
{
	const char *b = strrchr(info->dlpi_name, '/');

	(void)size;
	(void)arg;
	if (strcmp(b ? b + 1 : info->dlpi_name, "libc.so.6"))
		return 0;
	snprintf(libc.path, sizeof(libc.path), "%s", info->dlpi_name);
	libc.bias = info->dlpi_addr;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		if (p->p_type == PT_LOAD && (p->p_flags & PF_X)) {
			libc.lo = info->dlpi_addr + p->p_vaddr;
			libc.hi = libc.lo + p->p_memsz;
		}
		if (p->p_type == PT_GNU_EH_FRAME)
			libc.hdr = info->dlpi_addr + p->p_vaddr;
	}
	return 1;
}

int main(void)
{
	char cmd[700], line[512];
	unsigned char *start;
	struct xsc_fdes t;
	long sites = 0, proven = 0, wrong = 0, patterns = 0, nstarts = 0;
	FILE *f;

	dl_iterate_phdr(find, NULL);
	CHECK(libc.lo && libc.hdr);
	CHECK(xsc__fdes_init(&t, libc.hdr));
	if (system("command -v objdump >/dev/null 2>&1") != 0)
		skip("objdump not installed (binutils)");
	start = calloc(libc.hi - libc.lo, 1);
	text = calloc(libc.hi - libc.lo, sizeof(*text));
	CHECK(start != NULL && text != NULL);
	snprintf(cmd, sizeof(cmd), "objdump -d --no-show-raw-insn '%s'", libc.path);
	f = popen(cmd, "r");
	CHECK(f != NULL);
	while (fgets(line, sizeof(line), f)) {
		char *end;
		unsigned long a = strtoul(line, &end, 16);
		if (end == line || *end != ':' || line[0] != ' ')
			continue;
		uintptr_t va = libc.bias + a;
		if (va >= libc.lo && va < libc.hi) {
			char *tab = strchr(end, '\t');
			start[va - libc.lo] = 1;
			text[va - libc.lo] = strdup(tab ? tab + 1 : "");
			nstarts++;
		}
	}
	pclose(f);
	CHECK(nstarts > 100000);	/* objdump disassembled it */
	for (uintptr_t a = libc.lo; a + 7 <= libc.hi; a++) {
		const unsigned char *p = (const unsigned char *)a;
		if (p[0] != 0xb8 || p[5] != 0x0f || p[6] != 0x05)
			continue;
		patterns++;
		bool truth = start[a - libc.lo] && start[a + 5 - libc.lo];
		bool said = xsc__insn_boundary(xsc__fdes_function(&t, a), a);
		sites += truth;
		proven += truth && said;
		if (said && !start[a - libc.lo]) {
			fprintf(stderr, "libc+%#lx: called an instruction start, objdump "
				"disagrees\n", (unsigned long)(a - libc.bias));
			wrong++;
		}
	}
	printf("%s: %ld patterns, %ld real sites, %ld proven by the decoder, "
	       "%ld wrongly\n", libc.path, patterns, sites, proven, wrong);

	/* the two instructions before every syscall instruction */
	long calls = 0, decoded = 0, plains = 0;
	for (uintptr_t a = libc.lo; a + 2 <= libc.hi; a++) {
		uintptr_t prev[2], want[2] = { 0, 0 };
		bool plain;
		if (!start[a - libc.lo] || strncmp(text[a - libc.lo], "syscall", 7))
			continue;
		calls++;
		for (uintptr_t b = a, n = 0; n < 2 && b > libc.lo; ) {
			b--;
			if (start[b - libc.lo])
				want[n++] = b;
		}
		if (xsc__insn_before(xsc__fdes_function(&t, a), a, prev, &plain))
			continue;
		decoded++;
		/* the two shapes glibc has most: "mov $nr,%eax; syscall", or a
		 * plain instruction between them */
		bool adjacent = a - prev[0] == 5 && *(const uint8_t *)prev[0] == 0xb8;
		bool between = plain && prev[1] && prev[0] - prev[1] == 5 &&
			       *(const uint8_t *)prev[1] == 0xb8;
		if ((adjacent && prev[0] != want[0]) ||
		    (between && (prev[0] != want[0] || prev[1] != want[1]))) {
			fprintf(stderr, "libc+%#lx: a rewrite candidate whose instructions "
				"differ from objdump's\n", (unsigned long)(a - libc.bias));
			wrong++;
			continue;
		}
		if (prev[0] != want[0])
			continue;	/* e.g. __restore_rt: its FDE starts a byte early */
		if (plain && !data_insn(text[prev[0] - libc.lo])) {
			fprintf(stderr, "libc+%#lx: '%s' called plain\n",
				(unsigned long)(prev[0] - libc.bias), text[prev[0] - libc.lo]);
			wrong++;
		}
		plains += plain;
	}
	/* every instruction of every walk to a syscall: an objdump start, and
	 * plain only when it is a data instruction (a mis-sized instruction
	 * or a wrong class shows here, not only at the sites) */
	long walked = 0, refused = 0;
	for (uintptr_t a = libc.lo; a + 2 <= libc.hi; a++) {
		if (!start[a - libc.lo] || strncmp(text[a - libc.lo], "syscall", 7))
			continue;
		uintptr_t p = xsc__fdes_function(&t, a);
		if (!p || !start[p - libc.lo] || a - p > 4096)
			continue;	/* as the rewriter: no walk from there */
		while (p < a) {
			bool plain;
			int n;
			if (!start[p - libc.lo]) {
				fprintf(stderr, "libc+%#lx: the decoder lands inside an "
					"instruction\n", (unsigned long)(p - libc.bias));
				wrong++;
				break;
			}
			n = xsc__insn_len((const uint8_t *)p, (const uint8_t *)a + 15, &plain);
			if (n == 0) {
				refused++;
				break;
			}
			walked++;
			if (plain && !data_insn(text[p - libc.lo])) {
				fprintf(stderr, "libc+%#lx: '%s' called plain\n",
					(unsigned long)(p - libc.bias), text[p - libc.lo]);
				wrong++;
			}
			p += (uintptr_t)n;
		}
	}
	printf("%ld instructions walked on the way to them, %ld walks refused\n",
	       walked, refused);

	/* the rewriter's plan of every syscall instruction (site.c), as on a
	 * first trap there: the shape it takes, and objdump's word on it */
	static struct xsc_site_scratch scratch;
	unsigned char *target = calloc(libc.hi - libc.lo, 1);
	long adjacent = 0, direct = 0, tramp = 0, crossing = 0, ncross = 0, kept = 0;
	long novec = 0;
	CHECK(target != NULL);
	branch_targets(target, text, libc.hi - libc.lo, libc.bias, libc.lo);
	for (uintptr_t a = libc.lo; a + 2 <= libc.hi; a++) {
		struct xsc_site_plan p;
		const char *why;
		if (!start[a - libc.lo] || strncmp(text[a - libc.lo], "syscall", 7))
			continue;
		/* "mov $nr,%eax" right before, its 5 bytes across a line */
		bool across = a - 5 >= libc.lo && start[a - 5 - libc.lo] &&
			      *(const uint8_t *)(a - 5) == 0xb8 && ((a - 5) & 63) > 59;
		ncross += across;
		why = xsc__site_plan(&t, a, NULL, 0, true, &scratch, &p);
		if (why) {
			kept++;
			printf("  left trapping: libc+%#lx: %s\n", (unsigned long)(a - libc.bias), why);
			continue;
		}
		wrong += check_plan(&p, start, target);
		if (p.novec) {
			uintptr_t lo, hi, next;
			novec++;
			if (!xsc__fdes_range(&t, a, &lo, &hi, &next) ||
			    (hi > libc.hi ? 1 : 0) || check_novec(lo, hi, start))
				wrong++;
		}
		if (p.slot) {
			printf("  through a trampoline: libc+%#lx (libc+%#lx -> libc+%#lx)\n",
			       (unsigned long)(a - libc.bias),
			       (unsigned long)(p.at - libc.bias),
			       (unsigned long)(p.slot - libc.bias));
			tramp++;
		}
		else if (p.ncopy == 5 && *(const uint8_t *)p.at == 0xb8)
			adjacent++;
		else
			direct++;
		crossing += across;
	}
	printf("plans of %ld syscall instructions: %ld 'mov $nr,%%eax' right before "
	       "(5-byte jump there), %ld another instruction up to %d bytes before "
	       "(5-byte jump), %ld a 2-byte jump to a trampoline in padding; %ld "
	       "left trapping; of the %ld sites whose 'mov $nr,%%eax' crosses a cache "
	       "line, %ld rewritten another way\n", calls, adjacent, direct, XSC_SITE_COPY,
	       tramp, kept, ncross, crossing);
	printf("%ld of the plans save no vector state (their functions keep none "
	       "across the call)\n", novec);
	free(target);
	printf("%ld syscall instructions, %ld decoded up to them, %ld with a "
	       "plain instruction before, %ld wrong answers in all\n", calls, decoded,
	       plains, wrong);
	for (uintptr_t i = 0; i < libc.hi - libc.lo; i++)
		free(text[i]);
	free(text);
	free(start);
	CHECK_EQ(wrong, 0);
	CHECK(kept * 2 <= calls);
	CHECK(novec > 0);
	CHECK(sites > 0);
	CHECK(proven * 2 >= sites);
	return 0;
}
