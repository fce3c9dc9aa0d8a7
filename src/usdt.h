/*
 * usdt.h - USDT probes, provider "xsc", for bpftrace, perf and SystemTap
 * (docs/observability.md says what each one's arguments are and which
 * questions they answer).
 *
 * A probe is one XSC_PROBEn(name, args...) line.  With sys/sdt.h
 * (Debian: systemtap-sdt-dev) it compiles to a single nop and an ELF
 * note (readelf -n: stapsdt) that says where the nop is and where each
 * argument lives (a register, a stack slot, a constant): nothing is
 * computed for it while no tracer is attached.  An argument that would
 * need computing is guarded instead: `if (XSC_PROBE_ENABLED(name))` reads
 * the probe's semaphore, which a tracer raises while it is attached.
 * Without sys/sdt.h the probes compile to nothing (CMakeLists.txt says so
 * at configure time) and XSC_PROBE_ENABLED is 0.
 *
 * Update XSC_PROBES, docs/observability.md and tests/t_usdt.sh together.
 */
#ifndef XSC_USDT_H
#define XSC_USDT_H

/* Every probe, for the semaphores (usdt.c) and the check that lists them */
#define XSC_PROBES(X) X(post) X(flush) X(complete) X(park) X(resume) \
	X(fallback) X(fork_rearm) X(signal_handoff)

#if XSC_HAVE_SDT
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

/* Raised by a tracer attached to the probe (it writes the word in this
 * process), read by XSC_PROBE_ENABLED: in .probes, as sys/sdt.h wants. */
#define XSC_PROBE_SEMAPHORE_DECL(name) \
	extern unsigned short xsc_##name##_semaphore \
		__attribute__((visibility("hidden"), section(".probes")));
XSC_PROBES(XSC_PROBE_SEMAPHORE_DECL)

#define XSC_PROBE_ENABLED(name) \
	__builtin_expect(__atomic_load_n(&xsc_##name##_semaphore, __ATOMIC_RELAXED) != 0, 0)
#define XSC_PROBE0(name) STAP_PROBE(xsc, name)
#define XSC_PROBE1(name, a) STAP_PROBE1(xsc, name, a)
#define XSC_PROBE2(name, a, b) STAP_PROBE2(xsc, name, a, b)
#define XSC_PROBE3(name, a, b, c) STAP_PROBE3(xsc, name, a, b, c)
#define XSC_PROBE4(name, a, b, c, d) STAP_PROBE4(xsc, name, a, b, c, d)
#else
/* sizeof: the arguments count as used, and are not evaluated */
#define XSC_PROBE_ENABLED(name) 0
#define XSC_PROBE0(name) ((void)0)
#define XSC_PROBE1(name, a) ((void)sizeof(a))
#define XSC_PROBE2(name, a, b) ((void)sizeof(a), (void)sizeof(b))
#define XSC_PROBE3(name, a, b, c) ((void)sizeof(a), (void)sizeof(b), (void)sizeof(c))
#define XSC_PROBE4(name, a, b, c, d) \
	((void)sizeof(a), (void)sizeof(b), (void)sizeof(c), (void)sizeof(d))
#endif

/* park's reason when the fiber does not wait for a system call of its
 * own (a call number, >= 0, otherwise) */
enum xsc_park_why {
	XSC_PARK_MUTEX = -1,	/* xsc_mutex_lock */
	XSC_PARK_COND = -2,	/* xsc_cond_wait */
	XSC_PARK_TIMED = -3,	/* xsc_cond_timedwait */
	XSC_PARK_SEM = -4,	/* xsc_sem_wait */
	XSC_PARK_FUTEX = -5,	/* an emulated futex (transparent mode) */
	XSC_PARK_JOIN = -6,	/* xsc_thread_join */
	XSC_PARK_ENTRY = -7,	/* no free syscall entry */
};

#endif
