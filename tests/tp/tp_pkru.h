/*
 * tp_pkru.h - reading and writing PKRU, the rights a thread has to each
 * protection key's pages (tp_pkru, t_ctx_pkru).  Only where CPUID says
 * the OS enabled protection keys (OSPKE): elsewhere both instructions
 * fault.  Header-only.
 */
#ifndef TP_PKRU_H
#define TP_PKRU_H

#include <stdint.h>

static inline uint32_t rdpkru(void)
{
	uint32_t a, d;

	__asm__ volatile("rdpkru" : "=a"(a), "=d"(d) : "c"(0));
	return a;
}

static inline void wrpkru(uint32_t v)
{
	__asm__ volatile("wrpkru" : : "a"(v), "c"(0), "d"(0) : "memory");
}

#endif
