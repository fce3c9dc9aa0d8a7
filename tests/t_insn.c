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
 * count printed).  Exit 77 without objdump (binutils). */
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
	CHECK(start != NULL);
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
			start[va - libc.lo] = 1;
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
	free(start);
	CHECK_EQ(wrong, 0);
	CHECK(sites > 0);
	CHECK(proven * 2 >= sites);
	return 0;
}
