/*
 * multicall_cost.c - the time model behind the AUTO path of multi-calls.
 *
 * AUTO runs a chain on the path expected to finish first, not the one
 * that crosses into the kernel least often: a crossing saved on the
 * caller's thread is worth nothing if what replaces it takes longer.
 * Expected time, leaving out the calls' own kernel work:
 *
 *   inline   calls * Tsys
 *   uring    enters * Tenter + sync * Tsys + calls * Top
 *   worker   Thandoff + calls * Tsys: never less than inline, never taken
 *
 * enters and sync come from the chain (struct mc_cost); multicall.c
 * compares inline and uring (uring_faster()).  The constants come from
 * the host profile (hostprof.h), never written down: the choice hinges on
 * Tenter/Tsys and Top/Tsys, which differ by machine and by boot.  Where
 * the profile has no posted costs, io_uring never wins.  What each term
 * is: docs/multicall.md, "How AUTO chooses on an auto handle".
 */
#include "multicall.h"

#include <limits.h>
#include <stdatomic.h>

#include "hostprof.h"

enum { UNSET, SETTING, READY };

static struct mc_model model;
static _Atomic int state = UNSET;

static void from_profile(const struct xsc_hostprof *hp, struct mc_model *m)
{
	long b1 = hp ? hp->posted_batch1_ns : XSC_HP_NONE;
	long b32 = hp ? hp->posted_batch32_ns : XSC_HP_NONE;
	long top;

	m->tsys = hp && hp->null_syscall_ns > 0 ? (unsigned)hp->null_syscall_ns : 1;
	if (b1 < 0 || b32 < 0) {
		m->tenter = m->top = UINT_MAX / 1024;	/* io_uring never wins */
		return;
	}
	top = (32 * b32 - b1) / 31;
	top = top > 0 ? top : 1;
	m->top = (unsigned)top;
	m->tenter = (unsigned)(b1 - top > 0 ? b1 - top : 1);
}

const struct mc_model *xsc__mc_model(struct xsc *x)
{
	int expect = UNSET;

	/* acquire: pairs with the release store of READY, after which
	 * `model` is complete */
	if (atomic_load_explicit(&state, memory_order_acquire) == READY)
		return &model;
	if (atomic_compare_exchange_strong_explicit(&state, &expect, SETTING,
						    memory_order_acquire,
						    memory_order_acquire)) {
		from_profile(x->hp, &model);
		atomic_store_explicit(&state, READY, memory_order_release);
	}
	while (atomic_load_explicit(&state, memory_order_acquire) != READY)
		__builtin_ia32_pause();	/* a few divisions away */
	return &model;
}

void xsc__mc_model_set(const struct mc_model *m)
{
	if (m)
		model = *m;
	atomic_store_explicit(&state, m ? READY : UNSET, memory_order_release);
}
