/*
 * switch.S - user-space context switch for x86-64 (System V ABI).
 *
 * struct xsc_ctx *xsc__ctx_swap(struct xsc_ctx *from, struct xsc_ctx *to)
 *
 * The saved state lives on the stack being left, so what is stored in
 * the context is rsp (offset 0 of struct xsc_ctx, see src/fiber/ctx.h)
 * and, where the OS enabled protection keys (xsc__ctx_pkru), PKRU (offset
 * 56): each context's own rights, as the kernel keeps each thread's.
 * wrpkru only when the two differ, which is rare.
 * Frame, from the saved rsp upwards (update xsc__ctx_make in
 * src/fiber/ctx.c when you change it):
 *
 *	 0  MXCSR (4 bytes), x87 control word (2 bytes), 2 bytes unused
 *	 8  r15
 *	16  r14
 *	24  r13
 *	32  r12
 *	40  rbx
 *	48  rbp
 *	56  return address
 *
 * Caller-saved registers need no saving: the caller of a function already
 * assumes they are clobbered.  MXCSR and the x87 control word are
 * callee-saved "control bits" in the ABI (section 3.2.1), so a fiber that
 * changes its rounding mode must not change anybody else's.  MXCSR's
 * sticky exception flags travel with it; the x87 status word does not
 * (Boost.Context makes the same choice).
 *
 * rsp always points into a valid stack and nothing is stored below it, so
 * a signal may arrive at any instruction.  The incoming "from" is
 * returned in rax on the other side, which lets the resumed context learn
 * who switched to it (used for the sanitizer bookkeeping).
 *
 * xsc__ctx_trampoline is where a fresh context "returns" to on its first
 * switch-in: r12 holds its struct xsc_ctx, rax the previous context, and
 * rsp is 16-byte aligned.  It calls xsc__ctx_entry(ctx, prev), which never
 * returns.  The CFI marks rip undefined so debuggers stop unwinding here.
 */
	.text

	.hidden	xsc__ctx_pkru		/* ctx.c: nonzero with protection keys */

	.globl	xsc__ctx_swap
	.hidden	xsc__ctx_swap
	.type	xsc__ctx_swap, @function
	.p2align 4
xsc__ctx_swap:
	.cfi_startproc
	pushq	%rbp
	.cfi_adjust_cfa_offset 8
	pushq	%rbx
	.cfi_adjust_cfa_offset 8
	pushq	%r12
	.cfi_adjust_cfa_offset 8
	pushq	%r13
	.cfi_adjust_cfa_offset 8
	pushq	%r14
	.cfi_adjust_cfa_offset 8
	pushq	%r15
	.cfi_adjust_cfa_offset 8
	subq	$8, %rsp
	.cfi_adjust_cfa_offset 8
	stmxcsr	(%rsp)
	fnstcw	4(%rsp)
	movl	(%rsp), %edx		/* ours, read back at the stores' sizes */
	movzwl	4(%rsp), %ecx		/* (so both forward from the store) */
	cmpb	$0, xsc__ctx_pkru(%rip)
	jne	3f
4:
	movq	%rsp, (%rdi)		/* from->sp */
	movq	%rdi, %rax		/* returned on the other side */
	movq	(%rsi), %rsp		/* to->sp: now on the other stack */
	.cfi_remember_state
	/* ldmxcsr and fldcw serialize: waiting on the (often cold) line of
	 * the other stack, they stalled every switch.  Load them only when
	 * they differ, which is rare; the result is the same. */
	cmpl	(%rsp), %edx
	jne	2f
	cmpw	4(%rsp), %cx
	jne	2f
1:	addq	$8, %rsp
	.cfi_adjust_cfa_offset -8
	popq	%r15
	.cfi_adjust_cfa_offset -8
	popq	%r14
	.cfi_adjust_cfa_offset -8
	popq	%r13
	.cfi_adjust_cfa_offset -8
	popq	%r12
	.cfi_adjust_cfa_offset -8
	popq	%rbx
	.cfi_adjust_cfa_offset -8
	popq	%rbp
	.cfi_adjust_cfa_offset -8
	ret
2:	.cfi_restore_state
	ldmxcsr	(%rsp)
	fldcw	4(%rsp)
	jmp	1b
3:	/* still on the stack being left: PKRU into from, to's if it differs */
	movl	%edx, %r8d
	movl	%ecx, %r9d
	xorl	%ecx, %ecx
	rdpkru				/* eax = PKRU, edx = 0 */
	movl	%eax, 56(%rdi)		/* from->pkru */
	cmpl	56(%rsi), %eax
	je	5f
	movl	56(%rsi), %eax		/* to->pkru */
	xorl	%ecx, %ecx
	xorl	%edx, %edx
	wrpkru
5:	movl	%r8d, %edx
	movl	%r9d, %ecx
	jmp	4b
	.cfi_endproc
	.size	xsc__ctx_swap, .-xsc__ctx_swap

	.globl	xsc__ctx_trampoline
	.hidden	xsc__ctx_trampoline
	.type	xsc__ctx_trampoline, @function
	.p2align 4
xsc__ctx_trampoline:
	.cfi_startproc
	.cfi_undefined rip
	movq	%r12, %rdi		/* the new context */
	movq	%rax, %rsi		/* who switched to it */
	call	xsc__ctx_entry@PLT	/* never returns */
	ud2
	.cfi_endproc
	.size	xsc__ctx_trampoline, .-xsc__ctx_trampoline

	.section .note.GNU-stack, "", @progbits
