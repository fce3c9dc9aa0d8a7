/*
 * ucopy.c - fault-safe copies of caller memory.
 *
 * A few io_uring translations must read a small structure the caller
 * points to (a timespec, a pollfd) before the request can be described, or
 * write one field back after it.  A plain load from a bad pointer would
 * crash the process where the synchronous call returns -EFAULT, so these
 * copies go through the kernel: process_vm_readv/writev on our own pid
 * report -EFAULT instead.  They cost a crossing, and only the translations
 * that need them use them (see the notes in src/table.c).
 *
 * A sandbox may refuse those two calls: Docker's default seccomp profile
 * does without CAP_SYS_PTRACE.  The copies then failed with EPERM, and so
 * did the calls whose arguments they read (sigtimedwait, sigsuspend in
 * transparent mode: tests/tp/tp_sandbox_vm.c).  From the first refusal
 * on, each copy asks the kernel instead whether the memory can be read or
 * written (xsc__uprobe: calls every sandbox allows) and copies it itself.
 * Memory another thread unmaps between that probe and the copy is not
 * covered there.
 */
#include "ucopy.h"
#include "handle.h"

#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rawsys.h"

/* Our pid, refreshed in a forked child (one getpid per copy would double
 * the cost of every checked copy): a child made through libc's fork has
 * another fork generation (handle.c's child handler, registered when the
 * first handle opened).  Not a pthread_once and a handler of its own,
 * first made here: a copy runs in the scheduler too (a stat's completion
 * reaped), and pthread_atfork takes glibc's fork lock, which a thread of
 * the program holds while it forks: the vcpu slept in the kernel on it
 * (transparent mode, tests/tp/tp_forkexit.c: a fork beside a thread whose
 * pthread_exit loads libgcc_s). */
static _Atomic long self_pid;
static _Atomic unsigned self_gen;	/* the fork generation self_pid is of */

static long my_pid(void)
{
	unsigned gen = atomic_load(&xsc__fork_gen);
	long pid = atomic_load(&self_pid);

	if (!pid || atomic_load(&self_gen) != gen) {
		pid = xsc__sys0(SYS_getpid);
		atomic_store(&self_pid, pid);
		atomic_store(&self_gen, gen);
	}
	return pid;
}

#define PAGE 4096UL

/* Whether [a, a + len) can be read (write: written) by the kernel's
 * copy_from_user (copy_to_user): 0 or -EFAULT.  One call per page, each
 * one libc makes itself, so that no sandbox refuses it, and none with an
 * effect here: rt_sigprocmask with an invalid `how` reads the 8-byte set,
 * then fails with -EINVAL (-EFAULT if it cannot read it); with no set, it
 * writes the thread's mask to the old-mask pointer; rt_sigpending writes
 * as many bytes of the pending set as its size says (1 to 8).  A write
 * probe stores bytes only inside the range, which the caller then
 * overwrites; a read probe reads an 8-byte window on the page, inside the
 * range where it can. */
int xsc__uprobe(uintptr_t a, size_t len, bool write)
{
	uintptr_t end = a + len;

	if (end < a)
		return -EFAULT;
	for (uintptr_t pg = a & ~(PAGE - 1); pg < end; pg += PAGE) {
		uintptr_t lo = pg < a ? a : pg, hi = pg + PAGE < end ? pg + PAGE : end;
		long r;

		if (!write) {
			if (lo > pg + PAGE - 8)
				lo = pg + PAGE - 8;	/* on the page, past the range */
			r = xsc__sys4(SYS_rt_sigprocmask, -1, lo, 0, 8);
		} else if (hi - lo >= 8) {
			r = xsc__sys4(SYS_rt_sigprocmask, SIG_BLOCK, 0, lo, 8);
		} else {
			r = xsc__sys2(SYS_rt_sigpending, lo, hi - lo);
		}
		if (r == -EFAULT)
			return -EFAULT;
	}
	return 0;
}

/* process_vm_readv/writev refused once (a sandbox): never asked again */
static _Atomic bool vm_refused;

static int xfer(long nr, void *local, void *remote, size_t len)
{
	bool write = nr == SYS_process_vm_writev;

	if (!atomic_load_explicit(&vm_refused, memory_order_relaxed)) {
		struct iovec l = { local, len }, r = { remote, len };
		long ret = xsc__sys6(nr, my_pid(), (long)&l, 1, (long)&r, 1, 0);

		if (ret == (long)len)
			return 0;
		if (ret >= 0 || ret == -EFAULT)
			return -EFAULT;
		atomic_store(&vm_refused, true);	/* EPERM, ENOSYS, ... */
	}
	if (xsc__uprobe((uintptr_t)remote, len, write))
		return -EFAULT;
	memcpy(write ? remote : local, write ? local : remote, len);
	return 0;
}

int xsc__ucopy_in(void *dst, const void *usrc, size_t len)
{
	if (!usrc)
		return -EFAULT;
	return xfer(SYS_process_vm_readv, dst, (void *)usrc, len);
}

bool (*xsc__umem_ours)(uint64_t tag, uintptr_t p, size_t len);

/* [p, p + len) of the caller of entry `tag` is known to be there */
static bool ours(const struct xsc *x, uint64_t tag, const void *p, size_t len)
{
	return p && x->shared && xsc__umem_ours && xsc__umem_ours(tag, (uintptr_t)p, len);
}

int xsc__ucopy_in_for(const struct xsc *x, uint64_t tag, void *dst,
		      const void *usrc, size_t len)
{
	if (!ours(x, tag, usrc, len))
		return xsc__ucopy_in(dst, usrc, len);
	memcpy(dst, usrc, len);
	return 0;
}

/* xsc__ucopy_out, or a plain copy where the caller's memory is known to
 * be there: no system call.  1: copied plainly. */
int xsc__ucopy_out_for(const struct xsc *x, uint64_t tag, void *udst,
		       const void *src, size_t len)
{
	if (!ours(x, tag, udst, len))
		return xsc__ucopy_out(udst, src, len);
	memcpy(udst, src, len);
	return 1;
}

int xsc__ucopy_out(void *udst, const void *src, size_t len)
{
	if (!udst)
		return -EFAULT;
	return xfer(SYS_process_vm_writev, (void *)src, udst, len);
}
