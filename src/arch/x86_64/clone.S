/*
 * clone.S - a kernel thread without libc (x86-64).
 *
 * long xsc__clone_thread(unsigned long flags, void *stack_top, int *ptid,
 *			  int *ctid, unsigned long tls, void (*fn)(void *),
 *			  void *arg)
 *
 * Raw clone(2): the child starts on stack_top (16-byte aligned), calls
 * fn(arg) and leaves with exit(2) (this thread only); it never returns
 * into the parent's frames.  Returns the child's tid or -errno in the
 * parent.  Used for the syscall threads of transparent mode, which must
 * not take any of glibc's locks (see src/worker.c).
 */
	.text
	.globl	xsc__clone_thread
	.hidden	xsc__clone_thread
	.type	xsc__clone_thread, @function
xsc__clone_thread:
	.cfi_startproc
	mov	8(%rsp), %rax		/* arg (7th argument) */
	sub	$16, %rsi
	mov	%r9, 0(%rsi)		/* fn, popped by the child */
	mov	%rax, 8(%rsi)		/* arg */
	mov	%rcx, %r10		/* ctid: 4th kernel argument */
	mov	$56, %eax		/* SYS_clone: flags, sp, ptid, ctid, tls */
	syscall
	test	%rax, %rax
	jz	1f
	ret				/* parent: tid or -errno */
1:
	.cfi_undefined rip
	xor	%ebp, %ebp		/* child: outermost frame */
	pop	%rax
	pop	%rdi
	call	*%rax
	mov	$60, %eax		/* SYS_exit: this thread only */
	xor	%edi, %edi
	syscall
	ud2
	.cfi_endproc
	.size	xsc__clone_thread, .-xsc__clone_thread

	.section .note.GNU-stack, "", @progbits
