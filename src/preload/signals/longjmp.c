/*
 * longjmp.c - transparent mode: handlers left by a jump.  The trampoline
 * records each running handler's frame (tp_hframe_push); the interposed
 * siglongjmp, longjmp, _longjmp and __longjmp_chk look where a jump
 * lands, close the handlers it leaves and, when it leaves them all, set
 * the mask as the fiber's.
 *
 * Rules: from handler_jump to the landing no system call is made; the
 * real jump functions are looked up before main() (tp_jumps_init).
 */
#include "signals.h"

#include <setjmp.h>

/* A handler that siglongjmps out never returns through the trampoline,
 * which counted it (in_handler): the thread's calls then all ran directly
 * on the vcpu, as a handler's do, and the first blocking one held it
 * (with one vcpu, the thread that was to answer never ran: tp_sigjmp).
 * Each running handler is recorded with the trampoline's frame and the
 * alternate stack it runs on; the jump functions (below) look where a
 * jump lands, and the handlers it leaves are closed. */
void tp_hframe_push(struct tp_hframe *h, uintptr_t sp, unsigned char sel,
		    const ucontext_t *uc)
{
	uintptr_t lo = (uintptr_t)uc->uc_stack.ss_sp;

	h->sp = sp;
	h->sel = sel;
	h->lo = h->hi = 0;
	if (!(uc->uc_stack.ss_flags & SS_DISABLE) && sp >= lo &&
	    sp - lo < uc->uc_stack.ss_size) {
		h->lo = lo;
		h->hi = lo + uc->uc_stack.ss_size;
	}
}

/* Whether a jump to stack pointer sp stays inside handler h: on the stack
 * h runs on, below its trampoline. */
static bool hframe_holds(const struct tp_hframe *h, uintptr_t sp)
{
	if (h->lo)
		return sp >= h->lo && sp < h->hi && sp < h->sp;
	return sp < h->sp;
}

/* A jump to stack pointer sp from program code on vcpu v's fiber; mask:
 * the signal mask the jump restores, NULL if none.  Closes the handlers
 * the jump leaves.  true: it leaves them all and lands in thread code;
 * the mask is then set here, as the fiber's (the caller jumps without
 * setting it again). */
static bool handler_jump(struct xsc_vcpu *v, uintptr_t sp, const uint64_t *mask)
{
	struct xsc_fiber *f = v->cur;
	int d = TP(v)->in_handler, keep = d;
	unsigned char sel;
	uint64_t nm;

	while (keep > 0 && (keep > TP_HFRAMES || !hframe_holds(&TP(v)->hf[keep - 1], sp)))
		keep--;
	if (keep > 0 || !f) {
		TP(v)->in_handler = keep;	/* into an outer handler */
		return false;
	}
	sel = TP(v)->hf[0].sel;
	/* the mask: the one saved, or the handler's, which natively stays */
	if (mask)
		nm = *mask;
	else if (xsc__sys4(SYS_rt_sigprocmask, SIG_BLOCK, 0, (long)&nm, 8) < 0)
		nm = f->sigmask;
	nm &= ~TP_NEVER_BLOCKED;
	if (nm != f->sigmask)
		tp_account(f->sigmask, nm);
	f->sigmask = nm;
	tp_vcpu_mask(v, nm);
	xsc__sys4(SYS_rt_sigprocmask, SIG_SETMASK, (long)&nm, 0, 8);
	TP(v)->in_handler = 0;
	f->in_call = 0;		/* a call the handler interrupted is left too */
	/* program code: its calls go to the runtime again (a vfork child
	 * borrowing the vcpu keeps making them directly) */
	TP(v)->sel = TP(v)->vfork ? sel : TP_SEL_BLOCK;
	return true;
}

/* The jump functions, interposed by symbol (the program's calls; glibc's
 * own, for its cancellation, never leave a program's handler).  All four
 * are glibc's siglongjmp underneath: the mask is restored if sigsetjmp
 * saved it, then the registers.  When the jump leaves every handler, the
 * mask is set by handler_jump (as the fiber's, not only the kernel
 * thread's) and the jump is made by a copy of the buffer that saved
 * none: from there to the landing no system call is made. */
typedef void (*jump_fn)(struct __jmp_buf_tag *, int);
static jump_fn real_siglongjmp, real_longjmp, real_ulongjmp, real_longjmp_chk;

void tp_jumps_init(void)	/* before main(): dlsym is not for handlers */
{
	real_siglongjmp = (jump_fn)dlsym(RTLD_NEXT, "siglongjmp");
	real_longjmp = (jump_fn)dlsym(RTLD_NEXT, "longjmp");
	real_ulongjmp = (jump_fn)dlsym(RTLD_NEXT, "_longjmp");
	real_longjmp_chk = (jump_fn)dlsym(RTLD_NEXT, "__longjmp_chk");
}

/* The stack pointer a jump buffer lands on: glibc x86-64 keeps it at
 * JB_RSP (6), mangled with the thread's pointer guard (%fs:0x30) and
 * rotated left by 17 (PTR_MANGLE). */
static uintptr_t jmp_sp(const struct __jmp_buf_tag *env)
{
	uintptr_t m = (uintptr_t)env->__jmpbuf[6], guard;

	__asm__("movq %%fs:0x30, %0" : "=r"(guard));
	return ((m >> 17) | (m << 47)) ^ guard;
}

static _Noreturn void jump(struct __jmp_buf_tag *env, int val, jump_fn *real,
			   const char *name)
{
	struct xsc_vcpu *v;

	if (xsc__tp && (v = xsc__vcpu()) != NULL && v->cur && TP(v)->in_handler &&
	    real_siglongjmp) {
		const uint64_t *mask = env->__mask_was_saved ?
				       (const uint64_t *)&env->__saved_mask : NULL;
		if (handler_jump(v, jmp_sp(env), mask)) {
			struct __jmp_buf_tag copy = *env;
			copy.__mask_was_saved = 0;
			real_siglongjmp(&copy, val);
		}
	}
	if (!*real)	/* called before main(), from a constructor */
		*real = (jump_fn)dlsym(RTLD_NEXT, name);
	(*real)(env, val);
	__builtin_unreachable();
}

XSC_EXPORT void siglongjmp(sigjmp_buf env, int val)
{
	jump(env, val, &real_siglongjmp, "siglongjmp");
}

XSC_EXPORT void longjmp(jmp_buf env, int val)
{
	jump(env, val, &real_longjmp, "longjmp");
}

XSC_EXPORT void _longjmp(jmp_buf env, int val)
{
	jump(env, val, &real_ulongjmp, "_longjmp");
}

XSC_EXPORT void __longjmp_chk(jmp_buf env, int val)
{
	jump(env, val, &real_longjmp_chk, "__longjmp_chk");
}
