/*
 * setxid.c - transparent mode: glibc's set*id round answered for the
 * program's threads, which are fibers, and for the runtime's kernel
 * threads (tp_setxid, from tp_kill's tgkill of SIGSETXID).
 *
 * Rules: the handler runs as the target thread (its thread pointer
 * loaded) with every signal but SIGSYS blocked and its calls trapped
 * (in_handler()); the thread pointer and the mask are put back after.
 */
#include "shim.h"

/* glibc's set*id (setuid(3) and its kin) signals every thread in its list
 * with SIGSETXID and waits, on a futex, until each one's handler has made
 * the call too.  Here those threads are fibers, vcpus and readiness
 * threads: a fiber blocked in a call would not run its handler for long,
 * and a kernel thread's handler wakes the futex in the kernel, where the
 * fiber does not wait.  So the handler runs at once, here, as the target
 * (its thread pointer loaded), its set*id call made once on this kernel
 * thread whichever thread it is for, with the same result for each
 * (in_handler; glibc aborts on results that differ): the initiator's own
 * call that follows is recorded as process-wide, and every kernel thread
 * of the runtime makes it (creds.c).  false: tid is none of those
 * threads. */
bool tp_setxid(int tid)
{
	struct xsc_vcpu *v = xsc__vcpu();
	struct xsc_fiber *f = v->cur;
	struct kact *k = &tp.act[SIGSETXID];
	uint64_t tcb = 0, all = ~SIGBIT(SIGSYS), old;
	uint16_t tsel = 0;
	unsigned char sel;
	siginfo_t si;

	if (k->handler == SIG_DFL || k->handler == SIG_IGN || !(k->flags & SA_SIGINFO))
		return false;
	xsc__spin_lock(&tp.lock);
	for (struct xsc_fiber *t = tp.tids[(unsigned)tid % NTID]; t; t = TP(t)->link)
		if (t->vtid == tid) {
			tcb = t->fs;
			tsel = t->fs_sel;
		}
	xsc__spin_unlock(&tp.lock);
	if (!tcb && tid && tid == atomic_load(&tp.wd_tid))
		tcb = (uint64_t)tp.wd_th;	/* glibc x86-64: a pthread_t is its TCB */
	if (!tcb)
		xsc__ringwatch_thread(tid, &tcb);
	for (int i = 0; !tcb && i < xsc__rt.n; i++) {
		struct xsc_vcpu *u = &xsc__rt.v[i];
		if (TP(u)->ktid == tid) {
			tcb = u->own_fs;
			tsel = u->own_sel;
		}
		else if (u->x)
			xsc__fdwait_thread(u->x, tid, &tcb);
	}
	if (!tcb)
		return false;
	memset(&si, 0, sizeof(si));
	si.si_signo = SIGSETXID;
	si.si_code = SI_TKILL;
	si.si_pid = (pid_t)xsc__sys0(SYS_getpid);
	si.si_uid = (uid_t)xsc__sys0(SYS_getuid);
	xsc__sys4(SYS_rt_sigprocmask, SIG_SETMASK, &all, &old, 8);
	set_fs(tcb, tsel);
	TP(v)->setxid = true;
	sel = TP(v)->sel;
	if (TP(v)->in_handler < TP_HFRAMES)
		TP(v)->hf[TP(v)->in_handler] = (struct tp_hframe){
			.sp = (uintptr_t)__builtin_frame_address(0), .sel = sel };
	TP(v)->in_handler++;
	TP(v)->sel = TP_SEL_BLOCK;	/* its calls trap: in_handler() */
	((void (*)(int, siginfo_t *, void *))k->handler)(SIGSETXID, &si, NULL);
	TP(v)->sel = sel;
	TP(v)->in_handler--;
	TP(v)->setxid = false;
	set_fs(f->fs, f->fs_sel);
	xsc__sys4(SYS_rt_sigprocmask, SIG_SETMASK, &old, 0, 8);
	return true;
}
