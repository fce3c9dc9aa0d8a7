/*
 * stub_x86_64.S - register-level pieces of transparent mode (see
 * preload.c): a cloned thread's first instruction (xsc__tp_resume), calls
 * that must run at the program's own call site (xsc__tp_native_stub),
 * the restorer of the handlers the library installs (xsc__tp_restorer)
 * and the entry of rewritten libc syscall sites (xsc__tp_site_entry).
 * All of them live in the library's text, which syscall user dispatch
 * always lets through; each one's contract is above it.
 */
	.text

/*
 * xsc__tp_resume(const greg_t *g): loads every general register, rflags
 * and rsp from a ucontext gregs array (glibc's REG_* order) and jumps to
 * g[REG_RIP].  A cloned thread starts this way: the registers its parent
 * had at the clone instruction, rax = 0 and its own stack, exactly where
 * the kernel would have started it.  The three words it pushes lie just
 * below the new rsp, in space the thread has not used yet.
 */
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

/*
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
 * of struct xsc_vcpu, checked in shim.h).
 */
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

/*
 * xsc__tp_restorer: rt_sigreturn for the handlers the library installs,
 * from the library's text, so that dispatch lets it through.
 */
	.globl	xsc__tp_restorer
	.hidden	xsc__tp_restorer
	.type	xsc__tp_restorer, @function
	.p2align 4
xsc__tp_restorer:
	movq	$15, %rax		/* rt_sigreturn */
	syscall
	ud2
	.size	xsc__tp_restorer, .-xsc__tp_restorer

/*
 * xsc__tp_site_entry: where a rewritten libc syscall site goes (rewrite.c),
 * through its stub, with rax = the number (whatever the site's own
 * instructions left there) and rcx = the address after the site's syscall
 * instruction.  A number the shim must not take here (not
 * xsc__tp_site_ok[rax], rax < xsc__tp_nr_max) goes back to that syscall
 * instruction, which traps: the flags, the red zone and every register
 * but rcx and r11 (the syscall instruction's to set) as the stub left
 * them.  Any other call keeps the system call ABI as the kernel does:
 * rax gets the result, rcx the return address and r11 the flags; every
 * other general register, the flags, and the whole x87/SSE/AVX state
 * (xsave64/xrstor64 of every enabled component, compacted where the CPU
 * has XSAVEC: the program may keep vector values live across a system
 * call, the C code below and the threads that run while this one waits
 * may not) come back unchanged.
 * The 128-byte red zone below the program's rsp is stepped over first.
 * The frame, from the program's rsp S down: red zone, flags (S-136),
 * return address (S-144), rbx, rbp (S-160), the result slot, the six
 * arguments (a[0] lowest), then the xsave area, 64-byte aligned.
 *
 * xsc__tp_site_entry_novec is the entry of a site whose function keeps no
 * value in vector registers across the call but arguments it passes on
 * (site.c: no x87, MMX, SSE, VEX or EVEX instruction in it, no jump out
 * of it; every vector register is the caller's to save by the ABI): it
 * saves xmm0-7 (the argument and return registers, which such a
 * function may pass on untouched) instead of the whole state, which cost
 * about 70 ns a call with AVX-512.  The control state the ABI has callee
 * save (MXCSR, the x87 control word) is each fiber's across a switch
 * (arch/x86_64/switch.S), and the runtime never changes it.  r11 says
 * which save (the syscall instruction's to set anyway): 0 whole, 1 novec.
 */
	.globl	xsc__tp_site_entry_novec
	.hidden	xsc__tp_site_entry_novec
	.type	xsc__tp_site_entry_novec, @function
	.p2align 4
xsc__tp_site_entry_novec:
	.cfi_startproc
	.cfi_def_cfa rsp, 0
	.cfi_register rip, rcx
	movl	$1, %r11d
	jmp	xsc__tp_site_common
	.cfi_endproc
	.size	xsc__tp_site_entry_novec, .-xsc__tp_site_entry_novec

	.globl	xsc__tp_site_entry
	.hidden	xsc__tp_site_entry
	.type	xsc__tp_site_entry, @function
	.p2align 4
xsc__tp_site_entry:
	.cfi_startproc
	.cfi_def_cfa rsp, 0
	.cfi_register rip, rcx
	movl	$0, %r11d		/* mov: the flags are the program's */
xsc__tp_site_common:
	leaq	-128(%rsp), %rsp
	.cfi_adjust_cfa_offset 128
	pushfq
	.cfi_adjust_cfa_offset 8
	pushq	%rcx
	.cfi_adjust_cfa_offset 8
	.cfi_offset rip, -144
	/* a number the shim must not take here (or none it knows) goes
	 * back to the site's own syscall instruction, which traps */
	cmpq	xsc__tp_nr_max(%rip), %rax
	jae	3f
	leaq	xsc__tp_site_ok(%rip), %rcx
	cmpb	$0, (%rcx,%rax)
	je	3f
	pushq	%rbx
	.cfi_adjust_cfa_offset 8
	.cfi_offset rbx, -152
	pushq	%rbp
	.cfi_adjust_cfa_offset 8
	.cfi_offset rbp, -160
	movq	%rsp, %rbp
	.cfi_def_cfa_register rbp
	subq	$8, %rsp		/* the result, -8(%rbp) */
	pushq	%r9			/* a[5] */
	pushq	%r8
	pushq	%r10
	pushq	%rdx
	pushq	%rsi
	pushq	%rdi			/* a[0] */
	movq	%rsp, %rbx
	movq	%rax, %rdi		/* nr */
	movq	%rbx, %rsi		/* a */
	andq	$-64, %rsp
	subq	xsc__tp_xsave_size(%rip), %rsp
	movq	%r11, -8(%rbp)		/* which save, kept over the call */
	testl	%r11d, %r11d
	jnz	4f
	xorl	%eax, %eax		/* the xsave header must start zeroed */
	movq	%rax, 512(%rsp)
	movq	%rax, 520(%rsp)
	movq	%rax, 528(%rsp)
	movq	%rax, 536(%rsp)
	movq	%rax, 544(%rsp)
	movq	%rax, 552(%rsp)
	movq	%rax, 560(%rsp)
	movq	%rax, 568(%rsp)
	movl	$-1, %eax
	movl	$-1, %edx
	cmpb	$0, xsc__tp_xsavec(%rip)
	je	1f
	xsavec64 (%rsp)		/* compacted: components in their initial state
				   (AVX-512 after vzeroupper...) cost nothing */
	jmp	2f
1:	xsave64	(%rsp)
2:	call	xsc__tp_site_call	/* rdi = nr, rsi = a: xsave keeps both */
	movq	-8(%rbp), %rcx
	movq	%rax, -8(%rbp)
	testl	%ecx, %ecx
	jnz	5f
	movl	$-1, %eax
	movl	$-1, %edx
	xrstor64 (%rsp)
6:	movq	%rbx, %rsp
	popq	%rdi
	popq	%rsi
	popq	%rdx
	popq	%r10
	popq	%r8
	popq	%r9
	movq	-8(%rbp), %rax
	movq	%rbp, %rsp
	popq	%rbp
	.cfi_def_cfa rsp, 152
	.cfi_restore rbp
	popq	%rbx
	.cfi_adjust_cfa_offset -8
	.cfi_restore rbx
	popq	%rcx			/* the return address */
	.cfi_adjust_cfa_offset -8
	.cfi_register rip, rcx
	movq	(%rsp), %r11		/* the flags, as syscall leaves r11 */
	popfq
	.cfi_adjust_cfa_offset -8
	leaq	128(%rsp), %rsp		/* lea: the flags stay as they are */
	.cfi_adjust_cfa_offset -128
	jmp	*%rcx
	/* back to the syscall instruction (2 bytes before the return
	 * address) with every other register as the site left it: rcx and
	 * r11 are the syscall instruction's to set */
	.cfi_def_cfa rsp, 144
	.cfi_offset rip, -144
3:	popq	%rcx
	.cfi_adjust_cfa_offset -8
	.cfi_register rip, rcx
	popfq
	.cfi_adjust_cfa_offset -8
	leaq	128(%rsp), %rsp
	.cfi_adjust_cfa_offset -128
	leaq	-2(%rcx), %r11
	jmp	*%r11
	/* the novec save and restore (the area is over 144 bytes) */
	.cfi_def_cfa rbp, 160
	.cfi_offset rip, -144
	.cfi_offset rbx, -152
	.cfi_offset rbp, -160
4:
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7
	movups	%xmm\n, 16+16*\n(%rsp)
	.endr
	jmp	2b
5:
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7
	movups	16+16*\n(%rsp), %xmm\n
	.endr
	jmp	6b
	.cfi_endproc
	.size	xsc__tp_site_entry, .-xsc__tp_site_entry

	.section .note.GNU-stack, "", @progbits
