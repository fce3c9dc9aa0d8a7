/*
 * cancel.S - a system call that a cancel stops exactly (x86-64).
 *
 * long xsc__syscall_cp(const _Atomic int *canceled, long nr,
 *			const int64_t args[6])
 *
 * Returns -ECANCELED without entering the kernel if *canceled is set,
 * else makes the system call nr(args) and returns its raw result.  The
 * syscall threads run every entry through it (src/worker.c), and a fiber
 * the call it makes in its own kernel thread where a signal sent to the
 * fiber must end it (src/sched/syscalls.c call_sole).  The C side:
 * src/cancel.h.
 *
 * The test of the flag and the syscall instruction form the window
 * [xsc__cp_begin, xsc__cp_end), and rbx holds `canceled` throughout it.
 * A cancel sets the flag, then signals the thread; the handler
 * (worker.c's on_cancel) looks at the interrupted rip:
 *  - before the window: the test that follows sees the flag;
 *  - inside it, with *rbx set: the signal came after the test but before
 *    the call started, and would otherwise be lost (the call would then
 *    block for good).  The handler moves rip to xsc__cp_cancel: the call
 *    is never made (cancel.h xsc__cp_stopped);
 *  - at xsc__cp_end: the call was in the kernel and is over.  A blocking
 *    call the signal interrupted returns its own -EINTR (the handler has
 *    no SA_RESTART); a call that completed keeps its result.
 * A call the kernel restarts after the handler (ERESTARTNOINTR) has had
 * its rip moved back onto the syscall instruction, inside the window: it
 * had done nothing, and is canceled.  This is how musl makes pthread
 * cancellation points exact (src/thread/x86_64/syscall_cp.s there).
 * The syscall instruction clobbers rcx and r11 only, so rbx still holds
 * the flag when the kernel rewinds rip.  rcx is zeroed before the window
 * and the syscall instruction sets it to xsc__cp_end, so a handler tells
 * a call the kernel rewound (it was made, waited, and would restart)
 * from one never made (cancel.h xsc__cp_stopped_wait).
 */
	.text

	.globl	xsc__syscall_cp
	.hidden	xsc__syscall_cp
	.globl	xsc__cp_begin
	.hidden	xsc__cp_begin
	.globl	xsc__cp_end
	.hidden	xsc__cp_end
	.globl	xsc__cp_cancel
	.hidden	xsc__cp_cancel
	.globl	xsc__cp_intr
	.hidden	xsc__cp_intr
	.type	xsc__syscall_cp, @function
	.p2align 4
xsc__syscall_cp:
	.cfi_startproc
	pushq	%rbx
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset rbx, 0
	movq	%rdi, %rbx		/* the flag, for the handler too */
	movq	%rsi, %rax		/* nr */
	movq	%rdx, %r11		/* args; r11 is the syscall's anyway */
	movq	0(%r11), %rdi
	movq	8(%r11), %rsi
	movq	16(%r11), %rdx
	movq	24(%r11), %r10
	movq	32(%r11), %r8
	movq	40(%r11), %r9
	xorl	%ecx, %ecx		/* the syscall sets it to xsc__cp_end */
xsc__cp_begin:
	cmpl	$0, (%rbx)
	jne	xsc__cp_cancel
	syscall
xsc__cp_end:
	.cfi_remember_state
	popq	%rbx
	.cfi_adjust_cfa_offset -8
	.cfi_restore rbx
	ret
	.cfi_restore_state
xsc__cp_cancel:
	.cfi_remember_state
	movq	$-125, %rax		/* -ECANCELED (checked in worker.c) */
	popq	%rbx
	.cfi_adjust_cfa_offset -8
	.cfi_restore rbx
	ret
	.cfi_restore_state
xsc__cp_intr:
	movq	$-4, %rax		/* -EINTR (cancel.h xsc__cp_stopped_wait) */
	popq	%rbx
	.cfi_adjust_cfa_offset -8
	.cfi_restore rbx
	ret
	.cfi_endproc
	.size	xsc__syscall_cp, .-xsc__syscall_cp

	.section .note.GNU-stack, "", @progbits
