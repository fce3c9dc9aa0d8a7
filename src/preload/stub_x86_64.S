/*
 * stub_x86_64.S - register-level pieces of transparent mode (see preload.c).
 *
 * xsc__tp_resume(const greg_t *g): loads every general register, rflags
 * and rsp from a ucontext gregs array (glibc's REG_* order) and jumps to
 * g[REG_RIP].  A cloned thread starts this way: the registers its parent
 * had at the clone instruction, rax = 0 and its own stack, exactly where
 * the kernel would have started it.  The three words it pushes lie just
 * below the new rsp, in space the thread has not used yet.
 *
 * xsc__tp_native_stub: runs the system call the registers describe from
 * inside the library's text (which syscall user dispatch always lets
 * through) and jumps back to the program at %gs:0 (struct xsc_vcpu's
 * tp_ret).  Used for calls that must start a second thread of control at
 * the program's own call site (vfork, clone of a process with a new
 * stack): the signal frame is gone by then, and the child, which shares
 * the GS base, returns to the same place.  The handler leaves the
 * selector at ALLOW, so while a vfork child borrows the vcpu's memory its
 * calls (even through interposed functions) run directly; the parent,
 * resumed when the child execs or exits, sets it back to BLOCK (offset 8
 * of struct xsc_vcpu, checked in preload.c).
 *
 * xsc__tp_restorer: rt_sigreturn for handlers we install; it has to live
 * in the library's text for the same reason.
 */
	.text

	.globl	xsc__tp_resume
	.hidden	xsc__tp_resume
	.type	xsc__tp_resume, @function
	.p2align 4
xsc__tp_resume:
	.cfi_startproc
	.cfi_undefined rip
	movq	120(%rdi), %rsp		/* REG_RSP */
	pushq	128(%rdi)		/* REG_RIP */
	pushq	136(%rdi)		/* REG_EFL */
	pushq	104(%rdi)		/* REG_RAX */
	movq	0(%rdi), %r8
	movq	8(%rdi), %r9
	movq	16(%rdi), %r10
	movq	24(%rdi), %r11
	movq	32(%rdi), %r12
	movq	40(%rdi), %r13
	movq	48(%rdi), %r14
	movq	56(%rdi), %r15
	movq	72(%rdi), %rsi
	movq	80(%rdi), %rbp
	movq	88(%rdi), %rbx
	movq	96(%rdi), %rdx
	movq	112(%rdi), %rcx
	movq	64(%rdi), %rdi
	popq	%rax
	popfq
	ret
	.cfi_endproc
	.size	xsc__tp_resume, .-xsc__tp_resume

	.globl	xsc__tp_native_stub
	.hidden	xsc__tp_native_stub
	.type	xsc__tp_native_stub, @function
	.p2align 4
xsc__tp_native_stub:
	syscall
	testq	%rax, %rax
	jz	1f
	movb	$1, %gs:8		/* parent: tp_sel = BLOCK again */
1:	jmp	*%gs:0
	.size	xsc__tp_native_stub, .-xsc__tp_native_stub

	.globl	xsc__tp_restorer
	.hidden	xsc__tp_restorer
	.type	xsc__tp_restorer, @function
	.p2align 4
xsc__tp_restorer:
	movq	$15, %rax		/* rt_sigreturn */
	syscall
	ud2
	.size	xsc__tp_restorer, .-xsc__tp_restorer

	.section .note.GNU-stack, "", @progbits
