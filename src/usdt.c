/*
 * usdt.c - the semaphores of the USDT probes (usdt.h): one word per
 * probe, in the .probes section, which a tracer raises while attached.
 */
#include "usdt.h"

#if XSC_HAVE_SDT
#define XSC_PROBE_SEMAPHORE_DEF(name) unsigned short xsc_##name##_semaphore;
XSC_PROBES(XSC_PROBE_SEMAPHORE_DEF)
#endif
