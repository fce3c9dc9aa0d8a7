/*
 * rawsys.h - the raw system call layer (x86-64), as liburing's
 * src/arch/x86/syscall.h: returns the kernel's value or -errno and never
 * touches errno, so the executors and the shim never re-enter libc.
 */
#ifndef XSC_RAWSYS_H
#define XSC_RAWSYS_H

static inline long xsc__sys6(long n, long a1, long a2, long a3, long a4,
			     long a5, long a6)
{
	unsigned long ret;
	register long r10 __asm__("r10") = a4;
	register long r8 __asm__("r8") = a5;
	register long r9 __asm__("r9") = a6;

	__asm__ __volatile__("syscall"
			     : "=a"(ret)
			     : "a"(n), "D"(a1), "S"(a2), "d"(a3), "r"(r10),
			       "r"(r8), "r"(r9)
			     : "rcx", "r11", "memory");
	return (long)ret;
}

#define xsc__sys0(n) xsc__sys6((n), 0, 0, 0, 0, 0, 0)
#define xsc__sys1(n, a) xsc__sys6((n), (long)(a), 0, 0, 0, 0, 0)
#define xsc__sys2(n, a, b) xsc__sys6((n), (long)(a), (long)(b), 0, 0, 0, 0)
#define xsc__sys3(n, a, b, c) \
	xsc__sys6((n), (long)(a), (long)(b), (long)(c), 0, 0, 0)
#define xsc__sys4(n, a, b, c, d) \
	xsc__sys6((n), (long)(a), (long)(b), (long)(c), (long)(d), 0, 0)

#endif
