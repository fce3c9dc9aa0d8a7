/*
 * cancel.h - a system call a signal stops exactly (arch/x86_64/cancel.S).
 *
 * xsc__syscall_cp makes call nr unless *stop is set, and the handler of
 * the signal a canceller sends after setting *stop moves an interrupted
 * rip that is still before the call's end to the cancel path
 * (xsc__cp_stopped): the call then returns -ECANCELED, never made or
 * restarted (or -EINTR: xsc__cp_stopped_wait).  The syscall threads run
 * every entry so (worker.c), and a fiber a call it makes in its own
 * kernel thread where a signal must reach it (sched/syscalls.c
 * call_sole).
 */
#ifndef XSC_CANCEL_H
#define XSC_CANCEL_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <ucontext.h>

long xsc__syscall_cp(const _Atomic int *stop, long nr, const int64_t args[6]);
extern const char xsc__cp_begin[], xsc__cp_end[], xsc__cp_cancel[], xsc__cp_intr[];
_Static_assert(ECANCELED == 125, "cancel.S returns -125");

/* In the handler of the canceller's signal (uc: its frame): true, and
 * the call will return -ECANCELED, when the thread was inside the window
 * with its flag set (rbx holds the flag's address there). */
static inline bool xsc__cp_stopped(void *uc)
{
	greg_t *g = ((ucontext_t *)uc)->uc_mcontext.gregs;
	uintptr_t ip = (uintptr_t)g[REG_RIP];

	if (ip < (uintptr_t)xsc__cp_begin || ip >= (uintptr_t)xsc__cp_end ||
	    !__atomic_load_n((const int *)g[REG_RBX], __ATOMIC_RELAXED))
		return false;
	g[REG_RIP] = (greg_t)(uintptr_t)xsc__cp_cancel;
	return true;
}

/* The same for a call whose wait a signal must interrupt as the
 * kernel's would: one the kernel interrupted in its wait and rewound to
 * be made again (the syscall instruction ran: rcx is xsc__cp_end) returns
 * -EINTR instead of -ECANCELED, and its caller restarts it or not as the
 * handlers' SA_RESTART says. */
static inline bool xsc__cp_stopped_wait(void *uc)
{
	greg_t *g = ((ucontext_t *)uc)->uc_mcontext.gregs;

	if (!xsc__cp_stopped(uc))
		return false;
	if ((uintptr_t)g[REG_RCX] == (uintptr_t)xsc__cp_end)
		g[REG_RIP] = (greg_t)(uintptr_t)xsc__cp_intr;
	return true;
}

#endif
