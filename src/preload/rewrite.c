/*
 * rewrite.c - trap once, then jump: a libc system call site is rewritten
 * after its first trap, so that a call libc makes inside itself costs a
 * jump and a function call, not a SIGSYS round trip.  site.c plans which
 * instruction before the syscall becomes "jmp stub"; this file carries
 * the plan out.  Why each rule, what is left trapping and the figures:
 * docs/transparent.md, "Trap once, then jump".
 *
 * Rules:
 *  - only libc.so.6's executable segment, only after a trap from that
 *    very site with a number the stub may take (xsc__tp_site_ok);
 *  - one instruction changes, by one locked 8-byte compare-and-exchange
 *    within a cache line; a trampoline is published only once every CPU
 *    is serialized (membarrier SYNC_CORE), and without membarrier none;
 *  - no page is writable and executable at once; a stub never changes
 *    once a site jumps to it;
 *  - every change is logged with the bytes it replaced (site.c reads the
 *    code as it was); a forked child with a runtime of its own copies the
 *    stubs (xsc__tp_rewrite_child); XSC_REWRITE=0 turns it all off.
 */
#include "preload.h"
#include "stats.h"

#include <cpuid.h>
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <linux/membarrier.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "internal.h"
#include "site.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

#define STUB_SIZE 80			/* one site's stub: XSC_STUB_CODE + 16, rounded up */
#define REGION (256 * 1024)		/* 3,276 stubs: libc has 526 sites */
#define NKEPT 256			/* sites left trapping, for -v */
#define NPATCH 2048			/* changes to libc's text */

void xsc__tp_site_entry(void);		/* stub_x86_64.S */
void xsc__tp_site_entry_novec(void);
/* the xsave area for the enabled state, and whether XSAVEC (compacted,
 * init-optimized) writes it; stub_x86_64.S reads both */
unsigned long xsc__tp_xsave_size;
unsigned char xsc__tp_xsavec;
/* sites whose function keeps no vector value across the call (site.c)
 * enter by xsc__tp_site_entry_novec, which saves only the argument
 * registers (the switch carries PKRU and the control words): not with
 * XSC_HW=xsaveall */
bool xsc__tp_novec = true;
const char *xsc__tp_novec_why = "";
/* xsc__tp_site_entry takes number nr from a stub only where
 * nr < xsc__tp_nr_max and xsc__tp_site_ok[nr]; any other goes back to
 * the site's syscall instruction and traps.  Set once at start-up. */
uint64_t xsc__tp_nr_max = XSC_NR_MAX;
unsigned char xsc__tp_site_ok[XSC_NR_MAX];

/* A site left trapping, and why (-v).  nr >= 0: only calls of that
 * number, which the shim must not take from a stub; the site may still
 * be rewritten for others (syscall()'s). */
struct kept {
	_Atomic uintptr_t ip;
	const char *_Atomic why;
	_Atomic int nr;
	_Atomic uint32_t traps;
};

static struct {
	bool on;
	bool slots;			/* trampolines allowed: CPUs can be
					   serialized (membarrier) */
	uintptr_t lo, hi;		/* libc's executable segment */
	struct xsc_fdes fdes;		/* where libc's functions start */
	uint32_t lock;			/* rewriting, the region, the log */
	unsigned char *rx, *rw;		/* the stub region's two views */
	size_t used;			/* bytes of stubs written */
	_Atomic long nsites;		/* sites rewritten */
	_Atomic long nslot;		/* of them through a trampoline */
	_Atomic long nnovec;		/* of them saving no vector state */
	_Atomic uint32_t traps[XSC_NR_MAX];	/* trapped calls per number */
	struct kept kept[NKEPT];	/* open addressing by ip */
	struct xsc_patch log[NPATCH];	/* every change to libc's text */
	size_t nlog;
	struct xsc_site_scratch scratch;	/* the planner's, under lock */
	const char *why;		/* why it is off, for -v */
	const char *noslots;		/* why trampolines are off, for -v */
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
	/* PKRU, where XCR0 has it, is in the area too; the novec entry
	 * leaves it to the fiber switch, which carries each context's own
	 * (switch.S), as it does MXCSR's */
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

static bool rewritable(long nr)
{
	const struct xsc_sysdef *d = xsc__sysdef(nr);

	return d && !d->refuse && !xsc__tp_needs_frame(nr);
}

/* Trampolines need every CPU serialized between writing one and
 * publishing the jump to it (site.c): membarrier's SYNC_CORE, which the
 * process registers for once (cheap while it has one thread). */
static void slots_init(void)
{
	long r = xsc__sys2(SYS_membarrier,
			   MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE, 0);

	rw.slots = r == 0;
	rw.noslots = r == 0 ? NULL : "membarrier cannot serialize the other CPUs "
		     "(MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE)";
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
	for (long nr = 0; nr < XSC_NR_MAX; nr++)
		xsc__tp_site_ok[nr] = rewritable(nr);
	slots_init();
	/* the entries' addresses, which every stub jumps through */
	*(uint64_t *)rw.rw = (uint64_t)(uintptr_t)xsc__tp_site_entry;
	*(uint64_t *)(rw.rw + 8) = (uint64_t)(uintptr_t)xsc__tp_site_entry_novec;
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
 * that from now on: otherwise a forked server's worker child (Apache's)
 * traps every call whose site its parent had not rewritten before the
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
	for (int i = 0; i < NKEPT; i++)
		atomic_store_explicit(&rw.kept[i].traps, 0, memory_order_relaxed);
	if (rw.slots)		/* a new process: its own registration */
		slots_init();
	rw.on = true;
out:
	xsc__sys1(SYS_close, fd);
}

/* Writes a site's stub: the instructions from the replaced one up to the
 * syscall (site.c: as they were, jumps relocated), the return address,
 * the jump to the entry.  Returns the stub's executable address, or 0. */
static uintptr_t new_stub(const struct xsc_site_plan *p)
{
	unsigned char *w = rw.rw + rw.used;
	uintptr_t x = (uintptr_t)rw.rx + rw.used, ret = p->sc + 2;
	size_t j = p->ncode;
	int32_t slot;

	if (rw.used + STUB_SIZE > REGION || p->ncode > XSC_STUB_CODE)
		return 0;
	memcpy(w, p->code, p->ncode);
	for (unsigned i = 0; i < p->nreloc; i++) {	/* jcc rel32 back into libc */
		int32_t rel = (int32_t)((intptr_t)p->target[i] -
					(intptr_t)(x + p->reloc[i] + 4));
		memcpy(w + p->reloc[i], &rel, 4);
	}
	w[j++] = 0x48;				/* movabs $ret, %rcx */
	w[j++] = 0xb9;
	memcpy(w + j, &ret, 8);
	j += 8;
	slot = (int32_t)((intptr_t)rw.rx + (p->novec ? 8 : 0) - (intptr_t)(x + j + 6));
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

/* Makes the pages of [a, a + n) writable (w) or gives them back r-x. */
static bool text_writable(uintptr_t a, size_t n, bool w)
{
	uintptr_t lo = a & ~4095UL, hi = (a + n + 4095) & ~4095UL;

	return xsc__sys3(SYS_mprotect, lo, hi - lo,
			 PROT_READ | PROT_EXEC | (w ? PROT_WRITE : 0)) == 0;
}

/* Replaces the n bytes at a (within one cache line) by b, in one locked
 * exchange of the 8 bytes around them, logged with the site sc.  A
 * failure to make the page writable (a W^X policy) turns rewriting off. */
static bool patch(uintptr_t a, const uint8_t *b, unsigned n, uintptr_t sc)
{
	uintptr_t w = (a & 63) <= 56 ? a : (a | 63) - 7;	/* the 8 bytes */
	struct xsc_patch *e = &rw.log[rw.nlog];
	uint8_t bytes[8];
	uint64_t old, new_;
	bool ok;

	if (rw.nlog == NPATCH)
		return false;
	memcpy(&old, (const void *)w, 8);
	memcpy(bytes, &old, 8);
	memcpy(bytes + (a - w), b, n);
	memcpy(&new_, bytes, 8);
	if (!text_writable(a, n, true)) {
		rw.on = false;
		rw.why = "libc's text cannot be made writable (W^X policy?)";
		return false;
	}
	e->at = a;
	e->sc = sc;
	e->len = (uint8_t)n;
	memcpy(e->orig, (const void *)a, n);
	ok = cas8((void *)w, old, new_);
	text_writable(a, n, false);
	rw.nlog += ok;
	return ok;
}

/* Writes the trampoline at slot (padding nothing runs: site.c) as a jmp
 * to stub, then serializes every CPU, so none can run stale bytes there
 * once a jump to it is published. */
static bool write_slot(uintptr_t slot, uintptr_t stub)
{
	struct xsc_patch *e = &rw.log[rw.nlog];
	int32_t rel = (int32_t)((intptr_t)stub - (intptr_t)(slot + 5));

	if (rw.nlog == NPATCH)
		return false;
	if (!text_writable(slot, 5, true)) {
		rw.on = false;
		rw.why = "libc's text cannot be made writable (W^X policy?)";
		return false;
	}
	e->at = slot;
	e->sc = 0;
	e->len = 5;
	memcpy(e->orig, (const void *)slot, 5);
	rw.nlog++;			/* used, whatever follows */
	*(volatile uint8_t *)slot = 0xe9;
	memcpy((void *)(slot + 1), &rel, 4);
	text_writable(slot, 5, false);
	if (xsc__sys2(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE, 0) < 0) {
		rw.slots = false;
		rw.noslots = "membarrier failed to serialize the other CPUs";
		return false;
	}
	return true;
}

/* The entry for a site left trapping at ip (-v), added if add. */
static struct kept *kept_at(uintptr_t ip, bool add)
{
	for (unsigned i = 0, h = (unsigned)(ip * 0x9e3779b1u) % NKEPT; i < NKEPT; i++) {
		struct kept *k = &rw.kept[(h + i) % NKEPT];
		uintptr_t cur = atomic_load_explicit(&k->ip, memory_order_acquire);
		if (cur == ip)
			return k;
		if (cur == 0) {
			if (!add)
				return NULL;
			if (atomic_compare_exchange_strong(&k->ip, &cur, ip) || cur == ip)
				return k;
		}
	}
	return NULL;			/* full: not named */
}

/* Counts a trap from a site left trapping at ip, and says why; a reason
 * of the site's own (nr < 0) is not replaced by one of a number's. */
static void keep(uintptr_t ip, const char *why, int nr)
{
	struct kept *k = kept_at(ip, true);

	if (!k)
		return;
	if (nr < 0 || !atomic_load_explicit(&k->why, memory_order_acquire) ||
	    atomic_load_explicit(&k->nr, memory_order_relaxed) >= 0) {
		atomic_store_explicit(&k->nr, nr, memory_order_relaxed);
		atomic_store_explicit(&k->why, why, memory_order_release);
	}
	atomic_fetch_add_explicit(&k->traps, 1, memory_order_relaxed);
}

static bool rewritten(uintptr_t sc)
{
	for (size_t i = 0; i < rw.nlog; i++)
		if (rw.log[i].sc == sc)
			return true;
	return false;
}

/* Carries out the plan of the site at sc (under the lock): the stub,
 * the trampoline where there is one, the jump. */
static const char *rewrite(uintptr_t sc)
{
	struct xsc_site_plan p;
	const char *why;
	uintptr_t stub, to;
	uint8_t j[5];
	int32_t rel;

	if (rewritten(sc))
		return NULL;		/* another thread was first */
	why = xsc__site_plan(&rw.fdes, sc, rw.log, rw.nlog, rw.slots, &rw.scratch, &p);
	if (why)
		return why;
	p.novec &= xsc__tp_novec;	/* off here: the whole save at every site */
	if (!(stub = new_stub(&p)))
		return "no room for more stubs";
	to = p.slot ? p.slot : stub;
	if (p.slot && !write_slot(p.slot, stub))
		return rw.why ? rw.why : rw.noslots;
	if (p.slot) {
		j[0] = 0xeb;			/* jmp rel8 */
		j[1] = (uint8_t)(int8_t)((intptr_t)to - (intptr_t)(p.at + 2));
	} else {
		rel = (int32_t)((intptr_t)to - (intptr_t)(p.at + 5));
		j[0] = 0xe9;			/* jmp rel32 */
		memcpy(j + 1, &rel, 4);
	}
	if (!patch(p.at, j, p.slot ? 2 : 5, sc))
		return rw.why ? rw.why : "the exchange failed (the code changed)";
	atomic_fetch_add(&rw.nsites, 1);
	if (p.slot)
		atomic_fetch_add(&rw.nslot, 1);
	if (p.novec)
		atomic_fetch_add(&rw.nnovec, 1);
	return NULL;
}

/* Why calls of number nr are left to their site's trap. */
static const char *why_number(long nr)
{
	const struct xsc_sysdef *d = xsc__sysdef(nr);

	if (xsc__tp_needs_frame(nr))
		return "its emulation needs the trapped registers (the signal frame)";
	if (d && d->refuse)
		return "a call the table refuses in library mode, made from its own site";
	return "a number the table does not know";
}

/* A trap from the syscall instruction before ip, for system call nr. */
void xsc__tp_rewrite_site(uintptr_t ip, long nr)
{
	struct kept *k;
	const char *why;

	if (nr >= 0 && nr < XSC_NR_MAX)
		atomic_fetch_add_explicit(&rw.traps[nr], 1, memory_order_relaxed);
	if (!rw.on)
		return;
	if (ip - 2 < rw.lo || ip > rw.hi) {
		keep(ip, "outside libc's text", -1);
		return;
	}
	if (!rewritable(nr)) {
		keep(ip, why_number(nr), (int)nr);
		return;
	}
	k = kept_at(ip, false);
	if (k && atomic_load_explicit(&k->nr, memory_order_relaxed) < 0) {
		atomic_fetch_add_explicit(&k->traps, 1, memory_order_relaxed);
		return;			/* proven not rewritable before */
	}
	xsc__spin_lock(&rw.lock);
	why = rw.on ? rewrite(ip - 2) : NULL;
	xsc__spin_unlock(&rw.lock);
	if (why)
		keep(ip, why, -1);
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
	if (!v || (!v->cur && !TP(v)->in_handler) || TP(v)->sel != TP_SEL_BLOCK)
		return xsc__sys6(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	errp = &errno;
	saved = *errp;
	if (TP(v)->in_handler) {
		TP(v)->sel = TP_SEL_ALLOW;
		r = xsc__tp_handler_call(v, nr, a);
		TP(v)->sel = TP_SEL_BLOCK;
	} else {
		r = xsc__tp_enter(v, nr, a, &TP(v)->nsite);
	}
	*errp = saved;
	return r;
}

/* -v: one site left trapping, by where it is (libc+offset, the nearest
 * exported symbol) and why. */
static void say_kept(const struct kept *k, uint32_t traps)
{
	uintptr_t ip = atomic_load(&k->ip);
	const char *why = atomic_load(&k->why);
	int nr = atomic_load(&k->nr);
	char where[160], num[64] = "";
	Dl_info di;

	if (dladdr((void *)(ip - 2), &di) && di.dli_fname) {
		const char *base = strrchr(di.dli_fname, '/');
		int n = snprintf(where, sizeof(where), "%s+%#lx",
				 base ? base + 1 : di.dli_fname,
				 (unsigned long)(ip - 2 - (uintptr_t)di.dli_fbase));
		if (di.dli_sname && n > 0 && (size_t)n < sizeof(where))
			snprintf(where + n, sizeof(where) - (size_t)n, " (%s+%#lx)",
				 di.dli_sname, (unsigned long)(ip - 2 - (uintptr_t)di.dli_saddr));
	} else {
		snprintf(where, sizeof(where), "%#lx", (unsigned long)(ip - 2));
	}
	if (nr >= 0 && strcmp(xsc_syscall_name(nr), "?"))
		snprintf(num, sizeof(num), "%s: ", xsc_syscall_name(nr));
	else if (nr >= 0)
		snprintf(num, sizeof(num), "number %d: ", nr);
	xsc__say("xsc run: site %s left trapping (%u traps): %s%s\n", where, traps,
		 num, why ? why : "?");
}

/* The counters of xsc run -v and --stats (stats.h). */
void xsc__tp_rewrite_counts(struct tp_counters *c)
{
	c->through_sites = 0;
	for (int i = 0; i < xsc__rt.n; i++)
		c->through_sites += TP(&xsc__rt.v[i])->nsite;
	c->sites_trapping = 0;
	for (int i = 0; i < NKEPT; i++)	/* trapped here (a forked child: since) */
		c->sites_trapping += atomic_load(&rw.kept[i].traps) != 0;
	c->sites = (uint64_t)atomic_load(&rw.nsites);
	c->sites_padding = (uint64_t)atomic_load(&rw.nslot);
	c->sites_novec = (uint64_t)atomic_load(&rw.nnovec);
}

/* xsc run -v: what was rewritten (c), and what still traps, most first
 * (the sites' counts are reset as they are printed: after the JSON). */
void xsc__tp_rewrite_report(const struct tp_counters *c)
{
	char line[200];
	int n = 0;

	if (rw.why)
		xsc__say("xsc run: syscall sites not rewritten: %s\n", rw.why);
	else
		xsc__say("xsc run: %lu libc syscall sites rewritten, %lu calls "
			 "through them (%lu sites through a trampoline in padding; "
			 "%lu saving no vector state: %s); %lu sites left trapping%s%s\n",
			 (unsigned long)c->sites, (unsigned long)c->through_sites,
			 (unsigned long)c->sites_padding, (unsigned long)c->sites_novec,
			 xsc__tp_novec ? "their functions keep none across the call" :
			 xsc__tp_novec_why, (unsigned long)c->sites_trapping,
			 rw.noslots ? "; no trampolines: " : "", rw.noslots ? rw.noslots : "");
	for (int j = 0; j < 12; j++) {	/* the sites, most traps first */
		uint32_t best = 0;
		int bi = -1;
		for (int i = 0; i < NKEPT; i++) {
			uint32_t c = atomic_load(&rw.kept[i].traps);
			if (c > best) {
				best = c;
				bi = i;
			}
		}
		if (bi < 0)
			break;
		say_kept(&rw.kept[bi], best);
		atomic_store(&rw.kept[bi].traps, 0);
	}
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
