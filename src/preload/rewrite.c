/*
 * rewrite.c - trap once, then jump: libc's system call sites rewritten so
 * that a call libc makes internally costs a jump and a function call, not
 * a SIGSYS round trip.
 *
 * Syscall user dispatch (preload.c) sees every call, but each trapped call
 * costs a signal delivery and a sigreturn.  The interposed functions
 * (wrap.c) avoid that only for the program's own calls to them; stdio's
 * writes, malloc's mmaps, the futexes of glibc's locks and everything else
 * libc does inside itself still trap.  So, as gVisor's systrap does, the
 * first trap from a site proves the site is a real, executed system call,
 * and the site is then rewritten in place:
 *
 *     b8 NN NN NN NN    mov  $nr, %eax          e9 RR RR RR RR  jmp stub
 *     0f 05             syscall          ==>    0f 05           syscall
 *
 * or, where one data instruction stands between them (glibc's futex
 * waits and wakes: "xor $0x80,%sil"), the same with that instruction left
 * in place and run by the stub, after the mov, as in the original order:
 * it must be position-independent (no branch, no rip-relative operand;
 * the decoder says).
 *
 * The stub (one per site, in a page within +-2 GiB of libc) loads the
 * number and the address after the site and jumps to xsc__tp_site_entry
 * (stub_x86_64.S), which keeps the kernel's ABI: every register but rax
 * (the result), rcx and r11 is as it was, the vector and x87 state too
 * (xsave/xrstor), flags as well; the red zone is stepped over before
 * anything is pushed; it returns with a jump, never a ret.
 *
 * What is rewritten, and why it is safe:
 *   - only sites in libc.so.6's executable segment (the library validated
 *     here: Debian 12's glibc has 436 such sites of 526 system call
 *     instructions, objdump -d), only after a trap from that very site,
 *     and only when the seven bytes are exactly the pattern above with the
 *     trapped number in the immediate;
 *   - only where the mov is an instruction of its own: the bytes
 *     "b8 <nr>" could also be the tail of a longer instruction (41 b8 is a
 *     mov to r8d, 8b b8 a load), which a jump there would break.  The
 *     function's start comes from libc's unwind table (.eh_frame_hdr,
 *     every function, static ones too) and a length decoder walks its
 *     instructions up to the site; an instruction it does not know, or a
 *     walk that does not land exactly on the site, leaves the site
 *     trapped (correctness before coverage, as K23 asks);
 *   - only numbers the shim may take outside a signal frame: not refused
 *     rows (rt_sigreturn is libc's restorer), not the emulations that need
 *     the trapped registers (clone, clone3, fork, vfork, rt_sigprocmask:
 *     preload.c's xsc__tp_needs_frame);
 *   - the five bytes change with one locked 8-byte compare-and-exchange
 *     within one cache line (Intel SDM vol. 3, 8.1.1-8.1.2: atomic even
 *     unaligned), so another CPU fetches either the old mov or the new
 *     jmp, never a mix; a site whose five bytes cross a cache line stays
 *     trapped (4 of 64 positions); the syscall instruction stays, so a thread that executed
 *     the old mov before the exchange still runs a trapped syscall, and a
 *     branch to it from elsewhere (with its own rax) is still trapped;
 *   - the page is made writable for the exchange and given back r-x, its
 *     permissions before; if that fails (a W^X policy) the site stays
 *     trapped;
 *   - stubs live in a memfd mapped twice: executable near libc and
 *     writable elsewhere, so no page is ever writable and executable; a
 *     stub never changes once a site jumps to it.
 * Not rewritten: sites that load rax from a register (syscall(), some
 * cancellable wrappers), code outside libc, the vDSO (its functions make
 * no system call unless the clock cannot be read in user space).
 *
 * A forked child keeps the rewritten sites (its memory is a copy) and
 * their stubs (the memfd is shared).  One that gets a runtime of its own
 * takes a private copy of the stubs and goes on rewriting
 * (xsc__tp_rewrite_child); one that does not rewrites nothing more, since
 * the stub page is its parent's too.  Outside a fiber (a forked child
 * without a runtime, our own threads, a signal handler) the entry makes
 * the system call itself, from the library's text, which dispatch lets
 * through.  XSC_REWRITE=0 turns it all off.
 */
#include "preload.h"

#include <cpuid.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "internal.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

#define STUB_SIZE 48			/* one site's stub */
#define REGION (256 * 1024)		/* 5,460 stubs: libc has 465 sites */
#define NNOPE 1024			/* sites known not rewritable */

void xsc__tp_site_entry(void);		/* stub_x86_64.S */
/* the xsave area for the enabled state, and whether XSAVEC (compacted,
 * init-optimized) writes it; stub_x86_64.S reads both */
unsigned long xsc__tp_xsave_size;
unsigned char xsc__tp_xsavec;

static struct {
	bool on;
	uintptr_t lo, hi;		/* libc's executable segment */
	struct xsc_fdes fdes;		/* where libc's functions start */
	uint32_t lock;			/* rewriting, and the region's bump */
	unsigned char *rx, *rw;		/* the stub region's two views */
	size_t used;			/* bytes of stubs written */
	_Atomic long nsites;		/* sites rewritten */
	_Atomic long nkept;		/* sites left trapped (about: the
					   cache of them is direct-mapped) */
	_Atomic uint32_t traps[XSC_NR_MAX];	/* trapped calls per number */
	_Atomic uintptr_t nope[NNOPE];	/* checked and left trapped: no decoding
					   again at each trap (direct-mapped) */
	const char *why;		/* why it is off, for -v */
} rw;

static int find_libc(struct dl_phdr_info *info, size_t size, void *arg)
{
	const char *name = info->dlpi_name, *base = strrchr(name, '/');

	(void)size;
	(void)arg;
	if (strcmp(base ? base + 1 : name, "libc.so.6"))
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		if (p->p_type == PT_LOAD && (p->p_flags & PF_X)) {
			rw.lo = info->dlpi_addr + p->p_vaddr;
			rw.hi = rw.lo + p->p_memsz;
		}
		if (p->p_type == PT_GNU_EH_FRAME)
			xsc__fdes_init(&rw.fdes, info->dlpi_addr + p->p_vaddr);
	}
	return 1;
}

/* The xsave area for every state component the OS enabled, or 0. */
static unsigned long xsave_size(void)
{
	unsigned a, b, c, d;

	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_XSAVE) || !(c & bit_OSXSAVE))
		return 0;
	__cpuid_count(0xd, 1, a, b, c, d);
	xsc__tp_xsavec = (a & 2) != 0;
	__cpuid_count(0xd, 0, a, b, c, d);	/* standard form: >= compacted */
	return ((unsigned long)b + 63) & ~63UL;
}

/* Maps the stub region's executable view within reach of a rel32 jump
 * from every byte of libc's text: just below it, else just above. */
static const char *map_region(void)
{
	long fd = xsc__sys2(SYS_memfd_create, (long)"xsc-sites", MFD_CLOEXEC);
	const char *why = NULL;

	if (fd < 0)
		return "memfd_create failed";
	if (xsc__sys2(SYS_ftruncate, fd, REGION) < 0) {
		why = "ftruncate of the stub region failed";
		goto out_close;
	}
	rw.rw = (void *)xsc__sys6(SYS_mmap, 0, REGION, PROT_READ | PROT_WRITE,
				  MAP_SHARED, fd, 0);
	if ((long)rw.rw < 0 && (long)rw.rw > -4096) {
		why = "cannot map the stub region";
		goto out_close;
	}
	/* the nearest free room below libc, then above it, 1 MiB to 1 GiB
	 * away: both ends of libc's text stay within a rel32 of it */
	for (uintptr_t d = 1UL << 20; d <= 1UL << 30 && !rw.rx; d <<= 1) {
		uintptr_t hint[2] = { (rw.lo & ~0xfffffUL) - d - REGION,
				      ((rw.hi + 0xfffff) & ~0xfffffUL) + d };
		for (int i = 0; i < 2 && !rw.rx; i++) {
			long p = xsc__sys6(SYS_mmap, (long)hint[i], REGION,
					   PROT_READ | PROT_EXEC,
					   MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0);
			if (p < 0 && p > -4096)
				continue;
			if ((uintptr_t)p != hint[i]) {	/* taken as a mere hint */
				xsc__sys2(SYS_munmap, p, REGION);
				continue;
			}
			rw.rx = (void *)p;
		}
	}
	if (!rw.rx) {
		xsc__sys2(SYS_munmap, (long)rw.rw, REGION);
		why = "no room for stubs within 2 GiB of libc";
	}
out_close:
	xsc__sys1(SYS_close, fd);
	return why;
}

void xsc__tp_rewrite_init(void)
{
	const char *env = getenv("XSC_REWRITE");

	if (env && !strcmp(env, "0")) {
		rw.why = "XSC_REWRITE=0";
		return;
	}
	xsc__tp_xsave_size = xsave_size();
	if (!xsc__tp_xsave_size || xsc__tp_xsave_size > 16384) {
		rw.why = "no XSAVE, or an xsave area over 16 KiB";
		return;
	}
	dl_iterate_phdr(find_libc, NULL);
	if (!rw.lo) {
		rw.why = "libc.so.6 not found";
		return;
	}
	if ((rw.why = map_region()) != NULL)
		return;
	/* the entry's address, which every stub jumps through */
	*(uint64_t *)rw.rw = (uint64_t)(uintptr_t)xsc__tp_site_entry;
	rw.used = STUB_SIZE;
	rw.on = true;
}

void xsc__tp_rewrite_stop(void)
{
	rw.on = false;
}

/* A forked child with a runtime of its own (start.c rearm).  Its stubs so
 * far are in the memfd it shares with its parent, which goes on appending
 * to it, so the child takes a copy of its own, mapped at the same two
 * addresses (the jumps in its copy of libc stay valid), and rewrites in
 * that from now on: before, a forked server's worker child (Apache's)
 * trapped every call whose site its parent had not rewritten before the
 * fork (a munmap per request).  Called while the child has one thread: no
 * stub is running and the lock, if the fork caught another thread of the
 * parent holding it, is nobody's. */
void xsc__tp_rewrite_child(void)
{
	long fd, p;

	if (!rw.rx || rw.why)
		return;		/* never on, or off for a reason of its own */
	fd = xsc__sys2(SYS_memfd_create, (long)"xsc-sites", MFD_CLOEXEC);
	if (fd < 0) {
		rw.why = "memfd_create failed in a forked child";
		return;
	}
	if (xsc__sys2(SYS_ftruncate, fd, REGION) < 0 ||
	    xsc__sys4(SYS_pwrite64, fd, (long)rw.rw, (long)rw.used, 0) != (long)rw.used) {
		rw.why = "cannot copy the stub region in a forked child";
		goto out;
	}
	p = xsc__sys6(SYS_mmap, (long)rw.rx, REGION, PROT_READ | PROT_EXEC,
		      MAP_SHARED | MAP_FIXED, fd, 0);
	if (p != (long)rw.rx) {
		rw.why = "cannot map the stub region in a forked child";
		goto out;
	}
	p = xsc__sys6(SYS_mmap, (long)rw.rw, REGION, PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_FIXED, fd, 0);
	if (p != (long)rw.rw) {
		rw.why = "cannot map the stub region in a forked child";
		goto out;
	}
	rw.lock = 0;
	for (int i = 0; i < XSC_NR_MAX; i++)	/* -v: the child's own traps */
		atomic_store_explicit(&rw.traps[i], 0, memory_order_relaxed);
	rw.on = true;
out:
	xsc__sys1(SYS_close, fd);
}

/* Writes a site's stub: the mov, the instruction that stood between it
 * and the syscall (k bytes at mid, none for k = 0) at its place in the
 * order, the return address, the jump to the entry.  Returns the stub's
 * executable address, or 0. */
static uintptr_t new_stub(uintptr_t ret, uint32_t nr, const void *mid, size_t k)
{
	unsigned char *w = rw.rw + rw.used;
	uintptr_t x = (uintptr_t)rw.rx + rw.used;
	size_t j = 0;
	int32_t slot;

	if (rw.used + STUB_SIZE > REGION || k > 15)
		return 0;
	w[j++] = 0xb8;				/* mov $nr, %eax */
	memcpy(w + j, &nr, 4);
	j += 4;
	memcpy(w + j, mid, k);			/* position-independent: checked */
	j += k;
	w[j++] = 0x48;				/* movabs $ret, %rcx */
	w[j++] = 0xb9;
	memcpy(w + j, &ret, 8);
	j += 8;
	slot = (int32_t)((intptr_t)rw.rx - (intptr_t)(x + j + 6));
	w[j++] = 0xff;				/* jmp *slot(%rip) */
	w[j++] = 0x25;
	memcpy(w + j, &slot, 4);
	j += 4;
	memset(w + j, 0xcc, STUB_SIZE - j);	/* int3: never reached */
	rw.used += STUB_SIZE;
	return x;
}

/* One locked exchange of the 8 bytes at p (within a cache line, aligned
 * or not): old -> new. */
static bool cas8(void *p, uint64_t old, uint64_t new_)
{
	bool ok;

	__asm__ __volatile__("lock cmpxchgq %3, %1"
			     : "=@ccz"(ok), "+m"(*(volatile uint64_t *)p), "+a"(old)
			     : "r"(new_)
			     : "memory");
	return ok;
}

static bool rewritable(long nr)
{
	const struct xsc_sysdef *d = xsc__sysdef(nr);

	return d && !d->refuse && !xsc__tp_needs_frame(nr);
}

/* A trap from the instruction before ip, for system call nr. */
/* Where the site of the syscall at ip - 2 is: the "mov $nr,%eax" right
 * before it, or one data instruction before that (which the stub then
 * runs: *mid, *k).  0 when it is neither, or not proven. */
static uintptr_t find_site(uintptr_t ip, long nr, uintptr_t *mid, size_t *k)
{
	uintptr_t prev[2], m;
	bool plain;

	if (xsc__insn_before(xsc__fdes_function(&rw.fdes, ip - 2), ip - 2, prev, &plain))
		return 0;
	m = prev[0];
	if (ip - 2 - m == 5 && *(const uint8_t *)m == 0xb8 &&
	    !memcmp((const void *)(m + 1), &(uint32_t){ (uint32_t)nr }, 4)) {
		*k = 0;
		return m;	/* mov; syscall */
	}
	if (!plain || !prev[1] || m - prev[1] != 5 || *(const uint8_t *)prev[1] != 0xb8 ||
	    memcmp((const void *)(prev[1] + 1), &(uint32_t){ (uint32_t)nr }, 4))
		return 0;
	*mid = m;
	*k = ip - 2 - m;
	return prev[1];		/* mov; one data instruction; syscall */
}

/* A trap from the syscall instruction before ip, for system call nr. */
void xsc__tp_rewrite_site(uintptr_t ip, long nr)
{
	_Atomic uintptr_t *no = &rw.nope[(ip >> 1) % NNOPE];
	uintptr_t site, page, w, mid = 0, stub;
	unsigned char bytes[8];
	uint64_t old, new_;
	size_t k = 0;
	int32_t rel;

	if (nr >= 0 && nr < XSC_NR_MAX)
		atomic_fetch_add_explicit(&rw.traps[nr], 1, memory_order_relaxed);
	if (!rw.on || ip - 7 < rw.lo || ip > rw.hi || !rewritable(nr) ||
	    atomic_load_explicit(no, memory_order_relaxed) == ip)
		return;
	site = find_site(ip, nr, &mid, &k);
	page = site & ~4095UL;
	/* the 8 bytes exchanged: from the site, or ending after it, in the
	 * site's cache line */
	w = (site & 63) <= 56 ? site : site - 3;
	if (!site || (w & ~63UL) != ((w + 7) & ~63UL) || (w & ~4095UL) != page) {
		atomic_fetch_add(&rw.nkept, 1);	/* stays trapped */
		atomic_store_explicit(no, ip, memory_order_relaxed);
		return;
	}
	xsc__spin_lock(&rw.lock);
	if (*(const uint8_t *)site != 0xb8 || !rw.on)
		goto out_unlock;	/* another thread rewrote it */
	stub = new_stub(ip, (uint32_t)nr, (const void *)mid, k);
	if (!stub)
		goto out_unlock;
	rel = (int32_t)((intptr_t)stub - (intptr_t)(site + 5));
	memcpy(&old, (const void *)w, 8);
	memcpy(bytes, &old, 8);
	bytes[site - w] = 0xe9;			/* jmp rel32 */
	memcpy(bytes + (site - w) + 1, &rel, 4);
	memcpy(&new_, bytes, 8);
	if (xsc__sys3(SYS_mprotect, page, 4096, PROT_READ | PROT_WRITE | PROT_EXEC) < 0) {
		rw.on = false;
		rw.why = "libc's text cannot be made writable (W^X policy?)";
		goto out_unlock;
	}
	if (cas8((void *)w, old, new_))
		atomic_fetch_add(&rw.nsites, 1);
	xsc__sys3(SYS_mprotect, page, 4096, PROT_READ | PROT_EXEC);
out_unlock:
	xsc__spin_unlock(&rw.lock);
}

/* From xsc__tp_site_entry: the call of a rewritten site, exactly as
 * syscall user dispatch would have handled its trap (preload.c
 * on_sigsys): program code on a fiber goes to the runtime, a call in the
 * program's signal handler to the handler rules, anything else (our own
 * threads, a vfork child, a forked child without a runtime) runs directly.
 * errno is the program's: the C code here must not change it. */
long xsc__tp_site_call(long nr, const long *a)
{
	struct xsc_vcpu *v = xsc__tp ? xsc__vcpu() : NULL;
	int *errp, saved;
	long r;

	/* a handler's calls follow the handler rules also when it runs
	 * between fibers (no v->cur): a process signal a vcpu took */
	if (!v || (!v->cur && !v->tp.in_handler) || v->tp.sel != TP_SEL_BLOCK)
		return xsc__sys6(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	errp = &errno;
	saved = *errp;
	if (v->tp.in_handler) {
		v->tp.sel = TP_SEL_ALLOW;
		r = xsc__tp_handler_call(v, nr, a);
		v->tp.sel = TP_SEL_BLOCK;
	} else {
		r = xsc__tp_enter(v, nr, a, &v->tp.nsite);
	}
	*errp = saved;
	return r;
}

/* xsc run -v: what was rewritten, and what still traps, most first. */
void xsc__tp_rewrite_report(void)
{
	uint64_t through = 0;
	char line[200];
	int n = 0;

	for (int i = 0; i < xsc__rt.n; i++)
		through += xsc__rt.v[i].tp.nsite;
	if (rw.why)
		xsc__say("xsc run: syscall sites not rewritten: %s\n", rw.why);
	else
		xsc__say("xsc run: %ld libc syscall sites rewritten, %lu calls "
			 "through them; %ld sites left trapped (no proven "
			 "instruction boundary, or across a cache line)\n",
			 atomic_load(&rw.nsites), (unsigned long)through,
			 atomic_load(&rw.nkept));
	for (int k = 0; k < 8; k++) {
		uint32_t best = 0;
		int bn = -1;
		for (int nr = 0; nr < XSC_NR_MAX; nr++) {
			uint32_t c = atomic_load_explicit(&rw.traps[nr], memory_order_relaxed);
			if (c > best) {
				best = c;
				bn = nr;
			}
		}
		if (bn < 0)
			break;
		n += snprintf(line + n, sizeof(line) - (size_t)n, " %s %u",
			      xsc_syscall_name(bn), best);
		atomic_store(&rw.traps[bn], 0);
		if (n >= (int)sizeof(line) - 1)
			break;
	}
	if (n)
		xsc__say("xsc run: still trapping (SIGSYS), by number:%s\n", line);
}
