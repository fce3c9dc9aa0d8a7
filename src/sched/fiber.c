/*
 * fiber.c - xsc threads: creating, ending, joining and reaping fibers,
 * the list of every fiber (for debuggers), fiber-local keys, and where a
 * parked fiber's stack is (for copies of posted results into it,
 * ucopy.c).
 */

#include "rq.h"

#include <errno.h>
#include <stdio.h>
#include <asm/prctl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "rawsys.h"

/* ---- fibers --------------------------------------------------------------- */

static void fiber_main(void *arg)
{
	struct xsc_fiber *f = arg;

	f->ret = f->fn(f->arg);
	xsc_thread_exit(f->ret);
}

static void fiber_exit_hook(struct xsc_ctx *ctx)
{
	(void)ctx;	/* fiber_main never returns into the trampoline */
}

static void run_key_dtors(struct xsc_fiber *f);

XSC_EXPORT void xsc_thread_exit(void *ret)
{
	struct xsc_vcpu *v = xsc__vcpu();
	struct xsc_fiber *f = v ? v->cur : NULL;

	if (!f)
		pthread_exit(ret);
	f->ret = ret;
	run_key_dtors(f);
	v = xsc__vcpu();	/* destructors may have switched vcpus */
	v->dead = f;
	xsc__ctx_exit(&f->ctx, &v->sched);
}

/* ---- the list of every fiber ------------------------------------------------- */

/* One lock for the process: a fiber is listed and unlisted once each in
 * its life, beside a stack and a record taken and given back, so the
 * list costs two uncontended lock rounds per fiber (docs/debugging.md
 * has the measurement).  Nothing in the runtime reads it. */
struct xsc_fiber_list xsc__fibers;

void xsc__fiber_listed(struct xsc_fiber *f, void *created_at)
{
	f->created_at = created_at;
	f->all_prev = NULL;
	spin_lock(&xsc__fibers.lock);
	f->id = ++xsc__fibers.next_id;
	f->all_next = xsc__fibers.head;
	if (xsc__fibers.head)
		xsc__fibers.head->all_prev = f;
	xsc__fibers.head = f;
	xsc__fibers.n++;
	spin_unlock(&xsc__fibers.lock);
}

void xsc__fiber_unlisted(struct xsc_fiber *f)
{
	spin_lock(&xsc__fibers.lock);
	if (f->all_prev)
		f->all_prev->all_next = f->all_next;
	else
		xsc__fibers.head = f->all_next;
	if (f->all_next)
		f->all_next->all_prev = f->all_prev;
	xsc__fibers.n--;
	spin_unlock(&xsc__fibers.lock);
	f->all_prev = f->all_next = NULL;
}

void xsc__fibers_forget(void)
{
	xsc__fibers.lock = 0;
	xsc__fibers.head = NULL;
	xsc__fibers.n = 0;
}

static void free_fiber(struct xsc_fiber *f)
{
	xsc__fiber_unlisted(f);
	free(f->kv);
	free(f);
}

/* Scheduler side of an exit: the fiber's stack is no longer in use. */
void xsc__reap_dead(struct xsc_vcpu *v, struct xsc_fiber *f)
{
	struct xsc_fiber *j;
	bool detached;

	if (f->home)
		atomic_fetch_sub_explicit(&f->home->nhomed, 1, memory_order_relaxed);
	if (f->fs) {	/* a program's thread: the extension's */
		free(f->kv);
		f->kv = NULL;
		xsc__ext->reap(f);
		return;
	}
	xsc__stack_put(f->stack);
	f->stack = NULL;
	spin_lock(&f->join_lock);
	f->state = F_DONE;
	j = f->joiner;
	detached = atomic_load(&f->detached);
	spin_unlock(&f->join_lock);
	(void)v;
	if (detached)
		free_fiber(f);
	else if (j)
		xsc__resume(j, 0);
}

/* A new fiber goes to an idle vcpu if there is one (a vcpu that is busy,
 * or blocked in an inline call, may not look at its queue for a while),
 * else to the one with the fewest threads (living there, or placed and
 * not started), round robin among equals, past the vcpus whose fiber
 * waits in the kernel (held: the new thread may be the one it waits
 * for).  Round robin alone may put a new thread beside a vcpu's only
 * one while another vcpu, busy for a moment, has none. */
struct xsc_vcpu *xsc__place(void)
{
	unsigned i = atomic_fetch_add(&xsc__rt.rr, 1);
	struct xsc_vcpu *best = NULL;
	int least = 0;

	if (atomic_load(&xsc__rt.nidle) > 0)
		for (int k = 0; k < xsc__rt.n; k++) {
			struct xsc_vcpu *v = &xsc__rt.v[(i + (unsigned)k) % (unsigned)xsc__rt.n];
			if (atomic_load(&v->idle))
				return v;
		}
	for (int k = 0; k < xsc__rt.n; k++) {
		struct xsc_vcpu *v = &xsc__rt.v[(i + (unsigned)k) % (unsigned)xsc__rt.n];
		int load = atomic_load_explicit(&v->nhomed, memory_order_relaxed) +
			   atomic_load_explicit(&v->nq_len, memory_order_relaxed);
		if (!atomic_load(&v->held) && (!best || load < least)) {
			best = v;
			least = load;
		}
	}
	return best ? best : &xsc__rt.v[i % (unsigned)xsc__rt.n];
}

XSC_EXPORT int xsc_thread_create(xsc_thread_t *t, const xsc_thread_attr_t *attr,
				 void *(*fn)(void *), void *arg)
{
	struct xsc_fiber *f;
	size_t size = attr && attr->stack_size ? attr->stack_size :
		      xsc__rt.cfg.stack_size;
	int ret;

	if (!xsc__rt.v)
		return -EPERM;	/* no runtime: call from inside xsc_main */
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	ret = xsc__stack_get(size, &f->stack);
	if (ret < 0) {
		free(f);
		return ret;
	}
	f->fn = fn;
	f->arg = arg;
	atomic_init(&f->detached, attr && attr->detached);
	ret = xsc__ctx_make(&f->ctx, f->stack->lo,
			    (size_t)((char *)f->stack->hi - (char *)f->stack->lo),
			    fiber_main, f, fiber_exit_hook);
	if (ret < 0) {
		xsc__stack_put(f->stack);
		free(f);
		return ret;
	}
	if (t)
		*t = f;
	f->state = F_READY;
	xsc__fiber_listed(f, __builtin_return_address(0));
	{
		struct xsc_vcpu *v = xsc__place(), *me = xsc__vcpu();
		xsc__rq_push(v, f);
		if (v != me)
			xsc__kick(v->x);
	}
	return 0;
}

XSC_EXPORT int xsc_thread_join(xsc_thread_t f, void **ret)
{
	struct xsc_fiber *me = xsc__cur();

	if (!f || f == me)
		return -EDEADLK;
	if (!me)
		return -EPERM;
	spin_lock(&f->join_lock);
	if (atomic_load(&f->detached) || f->joiner) {
		spin_unlock(&f->join_lock);
		return -EINVAL;
	}
	if (f->state != F_DONE) {
		f->joiner = me;
		XSC_PROBE3(park, me, me->vtid, XSC_PARK_JOIN);
		xsc__suspend(&f->join_lock);	/* xsc__reap_dead() resumes us */
	} else {
		spin_unlock(&f->join_lock);
	}
	if (ret)
		*ret = f->ret;
	free_fiber(f);
	return 0;
}

XSC_EXPORT int xsc_thread_detach(xsc_thread_t f)
{
	bool done;

	if (!f)
		return -ESRCH;
	spin_lock(&f->join_lock);
	if (atomic_load(&f->detached) || f->joiner) {
		spin_unlock(&f->join_lock);
		return -EINVAL;
	}
	done = f->state == F_DONE;
	atomic_store(&f->detached, 1);
	spin_unlock(&f->join_lock);
	if (done)
		free_fiber(f);
	return 0;
}

XSC_EXPORT xsc_thread_t xsc_thread_self(void)
{
	return xsc__cur();
}

/* ---- fiber-local keys ---------------------------------------------------- */

static void (*key_dtor[XSC_MAX_KEYS])(void *);
static _Atomic int key_used[XSC_MAX_KEYS];
/* Each create and delete of key k moves key_gen[k] on: a value set under
 * an earlier generation is not the key's value any more (POSIX: a new
 * key is NULL in all threads; xsc_getspecific once returned the value a
 * fiber had set under a deleted key of the same index). */
static _Atomic uint32_t key_gen[XSC_MAX_KEYS];

XSC_EXPORT int xsc_key_create(xsc_key_t *k, void (*dtor)(void *))
{
	for (int i = 0; i < XSC_MAX_KEYS; i++) {
		int z = 0;
		if (atomic_compare_exchange_strong(&key_used[i], &z, 1)) {
			atomic_fetch_add(&key_gen[i], 1);
			key_dtor[i] = dtor;
			*k = (xsc_key_t)i;
			return 0;
		}
	}
	return -EAGAIN;
}

XSC_EXPORT int xsc_key_delete(xsc_key_t k)
{
	if (k >= XSC_MAX_KEYS || !atomic_load(&key_used[k]))
		return -EINVAL;
	key_dtor[k] = NULL;
	atomic_fetch_add(&key_gen[k], 1);
	atomic_store(&key_used[k], 0);
	return 0;
}

/* f's value of key k, if it was set under the key's current generation */
static void *key_value(const struct xsc_fiber *f, unsigned k)
{
	const struct xsc_keyvals *kv = f->kv;

	if (!kv || kv->gen[k] != atomic_load(&key_gen[k]))
		return NULL;
	return kv->val[k];
}

XSC_EXPORT void *xsc_getspecific(xsc_key_t k)
{
	struct xsc_fiber *f = xsc__cur();
	return f && k < XSC_MAX_KEYS ? key_value(f, k) : NULL;
}

XSC_EXPORT int xsc_setspecific(xsc_key_t k, const void *v)
{
	struct xsc_fiber *f = xsc__cur();

	if (!f)
		return -EPERM;
	if (k >= XSC_MAX_KEYS || !atomic_load(&key_used[k]))
		return -EINVAL;
	if (!f->kv && !(f->kv = calloc(1, sizeof(*f->kv))))
		return -ENOMEM;
	f->kv->gen[k] = atomic_load(&key_gen[k]);
	f->kv->val[k] = (void *)v;
	return 0;
}

/* As pthreads: up to 4 rounds while destructors set values again. */
static void run_key_dtors(struct xsc_fiber *f)
{
	for (int round = 0; f->kv && round < 4; round++) {
		bool again = false;
		for (int i = 0; i < XSC_MAX_KEYS; i++) {
			void *val = key_value(f, (unsigned)i);
			void (*d)(void *) = key_dtor[i];
			if (!val || !d)
				continue;
			f->kv->val[i] = NULL;
			d(val);
			again = true;
		}
		if (!again)
			break;
	}
	free(f->kv);
	f->kv = NULL;
}

/* The stack fiber f runs on: [*lo, *hi), false when not known. */
static bool stack_of(const struct xsc_fiber *f, uintptr_t *lo, uintptr_t *hi)
{
	if (f->fs) {	/* a program's thread: the stack its creator gave */
		*lo = f->tstack_lo;
		*hi = f->tstack_hi;
		return *hi != 0;
	} else if (f->ctx.stack_size) {
		*lo = (uintptr_t)f->ctx.stack_lo;
		*hi = *lo + f->ctx.stack_size;
	} else {
		return false;
	}
	return true;
}

/* xsc__umem_ours (ucopy.c): a call's buffer in the live part of its
 * fiber's own stack, up to the top (the stack it was made with, or for a
 * program's thread the one its creator gave): memory it has run on,
 * above any guard page.  Parked in the call, from its saved stack
 * pointer: mapped while it waits in that very call.  Still running (it
 * flushes itself), from the frame running now, when that frame is on its
 * stack (not a signal stack).  Tags on the runtime's handles are fibers,
 * or carry a low bit (sync.c's timers, fdq.c's turns, XSC_TAG_OWN). */
__attribute__((noinline)) bool xsc__fiber_umem(uint64_t tag, uintptr_t p, size_t len)
{
	const struct xsc_fiber *f = (const struct xsc_fiber *)(uintptr_t)tag;
	uintptr_t lo, hi, from = (uintptr_t)__builtin_frame_address(0);

	if (!f || (tag & 3) || !stack_of(f, &lo, &hi))
		return false;
	if (f != xsc__cur())
		from = (uintptr_t)f->ctx.sp;
	else if (from < lo || from >= hi)
		return false;
	return p >= from && p + len <= hi && p + len > p;
}
