/*
 * libxsc.h - all of libxsc's internal headers at once, for the xsc
 * threads runtime (src/sched/) and the shim (src/preload/), which use a
 * little of almost every module.  The library's own files include only
 * the headers they use.
 */
#ifndef XSC_LIBXSC_H
#define XSC_LIBXSC_H
#include "internal.h"
#include "creds.h"
#include "dispatch.h"
#include "done.h"
#include "exec.h"
#include "fdkind.h"
#include "fdwait.h"
#include "handle.h"
#include "ownthreads.h"
#include "probe.h"
#include "rawio.h"
#include "sigpipe.h"
#include "ucopy.h"
#include "uring.h"
#include "worker.h"
#endif
