/*
 * tls.c - transparent mode: loading a thread's thread pointer.
 *
 * A program's threads are fibers, each with glibc's TLS block of its own,
 * so the FS base changes whenever a vcpu switches to a fiber of another
 * thread.  Three ways to load it, the cheapest the host allows: wrfsbase
 * (FSGSBASE); an LDT slot whose base is a TLS block below 4 GiB, where
 * the extension places glibc's thread stacks (xsc__tls_map_low); and
 * arch_prctl for the rest.  The design and the figures:
 * docs/transparent.md, "Thread pointers without a system call".
 *
 * Rules: a slot belongs to one thread and is loaded only by the kernel
 * thread running it (a fiber stays on its home vcpu), which loads its own
 * pointer again before the thread's exit is reaped (loop.c run): a kernel
 * context switch reloads a loaded selector from the table, so a slot is
 * never rewritten while some kernel thread has it loaded.  XSC_HW=noldt
 * leaves the LDT alone (a program that edits it itself: Wine, DOSEMU).
 */
#include "sched.h"

#include <asm/ldt.h>
#include <asm/prctl.h>
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "internal.h"
#include "rawsys.h"

int xsc__tls_how = XSC_TLS_ARCH_PRCTL;
intptr_t xsc__errno_off;
const char *xsc__tls_why = "";
_Atomic uint64_t xsc__tls_nslot, xsc__tls_nhigh;

#define NSLOT 8192		/* LDT_ENTRIES */
#define LOW_TOP (1ULL << 32)
/* below this, room for a program's brk heap (a non-PIE binary sits at
 * 4 MiB and its heap grows up from there) */
#define LOW_FLOOR (1ULL << 30)

static uint64_t used[NSLOT / 64];
static unsigned next_slot;
static uint32_t lock;
static uint64_t low_next = LOW_TOP;

static long write_slot(unsigned i, uint64_t base)
{
	struct user_desc d;

	memset(&d, 0, sizeof(d));
	d.entry_number = i;
	d.base_addr = (unsigned)base;
	d.limit = 0xfffff;
	d.seg_32bit = 1;
	d.limit_in_pages = 1;
	d.useable = 1;
	return xsc__sys3(SYS_modify_ldt, 0x11, (long)&d, sizeof(d));
}

/* Whether the LDT path works here: a slot written for a page below
 * 4 GiB, loaded (into %gs, which nothing uses yet at start-up) and read
 * through.  0, or the negative errno of what failed. */
int xsc__tls_ldt_probe(void)
{
	uint16_t sel = ((NSLOT - 1) << 3) | 7;
	uint64_t got = 0;
	long p, r;

	p = xsc__sys6(SYS_mmap, 0, 4096, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	if (p < 0)
		return (int)p;
	((volatile uint64_t *)p)[1] = 0x5a5a;
	r = write_slot(NSLOT - 1, (uint64_t)p);
	if (r == 0) {
		__asm__ __volatile__("mov %1, %%gs\n\tmov %%gs:8, %0"
				     : "=r"(got) : "r"(sel) : "memory");
		xsc__sys2(SYS_arch_prctl, ARCH_SET_GS, 0);
	}
	xsc__sys2(SYS_munmap, p, 4096);
	return r < 0 ? (int)r : got == 0x5a5a ? 0 : -ENOSYS;
}

/* A slot for the TLS block at fs, or 0: none (above 4 GiB, the table
 * full, the LDT path not in use, or modify_ldt refused). */
uint16_t xsc__tls_slot(uint64_t fs)
{
	unsigned i, k;

	if (xsc__tls_how != XSC_TLS_LDT || !fs)
		return 0;
	if (fs >= LOW_TOP) {
		atomic_fetch_add_explicit(&xsc__tls_nhigh, 1, memory_order_relaxed);
		return 0;
	}
	xsc__spin_lock(&lock);
	for (k = 0; k < NSLOT; k++) {
		i = (next_slot + k) % NSLOT;
		if (!(used[i / 64] & (1ULL << (i % 64))))
			break;
	}
	if (k == NSLOT) {
		xsc__spin_unlock(&lock);
		return 0;
	}
	used[i / 64] |= 1ULL << (i % 64);
	next_slot = (i + 1) % NSLOT;
	xsc__spin_unlock(&lock);
	if (write_slot(i, fs) < 0) {
		xsc__tls_slot_put((uint16_t)((i << 3) | 7));
		return 0;
	}
	atomic_fetch_add_explicit(&xsc__tls_nslot, 1, memory_order_relaxed);
	return (uint16_t)((i << 3) | 7);
}

/* Gives a slot back; no kernel thread may have it loaded (see the top). */
void xsc__tls_slot_put(uint16_t sel)
{
	unsigned i = sel >> 3;

	if (!sel)
		return;
	xsc__spin_lock(&lock);
	used[i / 64] &= ~(1ULL << (i % 64));
	xsc__spin_unlock(&lock);
}

/* A thread stack glibc asks for (mmap with MAP_STACK and no address),
 * placed below 4 GiB so that its TLS block gets a slot.  Returns the
 * mapping, or a negative errno: then the caller makes the call as the
 * program made it, and the kernel answers. */
long xsc__tls_map_low(const long *a)
{
	uint64_t len = ((uint64_t)a[1] + 0xfff) & ~0xfffULL, at;
	bool wrapped = false;
	long r = -ENOMEM;

	if (xsc__tls_how != XSC_TLS_LDT || !len || len > LOW_TOP - LOW_FLOOR)
		return -ENOMEM;
	xsc__spin_lock(&lock);
	at = low_next;
	xsc__spin_unlock(&lock);
	/* next fit, top down, at 64 KiB boundaries; a taken range (a stack
	 * made earlier, the program's own mapping) is stepped over a few
	 * times, and the search starts again at the top once, where stacks
	 * freed since left room */
	for (int tries = 0; tries < 16; tries++) {
		if (at < LOW_FLOOR + len) {
			if (wrapped)
				break;
			wrapped = true;
			at = LOW_TOP;
		}
		at = (at - len) & ~0xffffULL;
		r = xsc__sys6(SYS_mmap, (long)at, (long)len, a[2],
			      a[3] | MAP_FIXED_NOREPLACE, a[4], a[5]);
		if (r != -EEXIST)
			break;
	}
	if (r >= 0 && (uint64_t)r != at) {
		/* a kernel without MAP_FIXED_NOREPLACE took it as a hint */
		xsc__sys2(SYS_munmap, r, (long)len);
		return -ENOMEM;
	}
	if (r >= 0) {
		xsc__spin_lock(&lock);
		low_next = at;
		xsc__spin_unlock(&lock);
	}
	return r;
}
