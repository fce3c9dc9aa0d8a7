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
 * rip-relative operand in objdump's text.  Exit 77 without objdump
 * (binutils). */
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "insn.h"
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
		/* what the rewriter would act on: "mov $nr,%eax; syscall", or a
		 * plain instruction between them (rewrite.c find_site) */
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
	printf("%ld syscall instructions, %ld decoded up to them, %ld with a "
	       "plain instruction before, %ld wrong answers in all\n", calls, decoded,
	       plains, wrong);
	for (uintptr_t i = 0; i < libc.hi - libc.lo; i++)
		free(text[i]);
	free(text);
	free(start);
	CHECK_EQ(wrong, 0);
	CHECK(sites > 0);
	CHECK(proven * 2 >= sites);
	return 0;
}
