/*
 * ext.h - the runtime's extension contract.
 *
 * The runtime (src/sched) runs fibers; a layer above it may run a
 * program's own threads as fibers (transparent mode, src/preload).  The
 * runtime defines here what such a layer gets and gives, and knows
 * nothing else of it: the layer registers one ops table before the
 * vcpus start, and keeps its own state in the extension areas of each
 * fiber and vcpu (ext[]: raw bytes the runtime never reads; the vcpu's
 * is first in struct xsc_vcpu, where code on the vcpu finds it through
 * %gs).  The fields the runtime itself reads are its own, named in
 * struct xsc_fiber and struct xsc_vcpu (sched.h): sig_pending, intr,
 * call_id, creds_wide, tstack_lo/hi, deferred, scan, own_fs.
 *
 * Every op may be NULL.  All run on the vcpu's kernel thread: start,
 * reap, scan, deferred and idle in its scheduler context, call_begin,
 * call_posted and call_end on the calling fiber, switch_in just before
 * a fiber with a thread pointer of its own (f->fs) is switched in.
 */
#ifndef XSC_SCHED_EXT_H
#define XSC_SCHED_EXT_H

#include <stdbool.h>

struct xsc_fiber;
struct xsc_vcpu;

#define XSC_FIBER_EXT 256	/* bytes of a fiber's extension area */
#define XSC_VCPU_EXT 9216	/* bytes of a vcpu's */

/* ops->call_end's answer: issue the call again (its handlers ran and
 * the call is one the kernel restarts) */
#define XSC_CALL_RESTART (-4096L - 1)

enum {
	/* vcpu threads start with every signal blocked, until the first
	 * fiber's switch_in or idle sets their mask */
	XSC_EXT_VCPU_BLOCKED = 1 << 0,
	/* the extension raises a posted write's SIGPIPE itself */
	XSC_EXT_OWN_SIGPIPE = 1 << 1,
};

struct xsc_rt_ops {
	unsigned flags;					/* XSC_EXT_* */
	void (*vcpu_start)(struct xsc_vcpu *v);		/* before its first fiber */
	/* a fiber with f->fs ended and its stack is no longer in use: the
	 * runtime has freed nothing of it, the extension frees it */
	void (*reap)(struct xsc_fiber *f);
	/* v->scan was set: look at v's fibers (cancel calls a signal
	 * interrupts) */
	void (*scan)(struct xsc_vcpu *v);
	/* v->deferred is set and v's kernel thread holds no runtime lock */
	void (*deferred)(struct xsc_vcpu *v);
	/* f (with f->fs) is about to post call nr; f->call_id is set after */
	void (*call_begin)(struct xsc_fiber *f, long nr, const long *a);
	/* f's call is posted (f->call_id set) and a signal was pending */
	void (*call_posted)(struct xsc_fiber *f);
	/* f->intr was set while its call ran: what the call returns, or
	 * XSC_CALL_RESTART */
	long (*call_end)(struct xsc_fiber *f, long nr, long r);
	/* f's call made in its kernel thread (f->here_v set) was stopped
	 * (its vcpu's here_stop, set by the extension, which then signals the
	 * thread: cancel.h): run the handlers of what is pending for f now,
	 * on f, and say whether each had SA_RESTART.  A call stopped before
	 * it began is made again; one stopped in its wait (-EINTR) too when
	 * this says so, else it returns -EINTR */
	bool (*here_stopped)(struct xsc_fiber *f);
	/* f is switched in on v: its signal mask */
	void (*switch_in)(struct xsc_vcpu *v, struct xsc_fiber *f);
	/* v has nothing to run and is about to sleep */
	void (*idle)(struct xsc_vcpu *v);
	/* f, with nothing else runnable on its vcpu and nothing in flight,
	 * is about to wait in the kernel while other fibers live there:
	 * true if nothing of the extension's could ready one of them
	 * meanwhile without interrupting the wait or stopping it
	 * (stop_held: a signal it hands over readies the fiber); NULL:
	 * never (syscalls.c sole()) */
	bool (*may_wait)(struct xsc_fiber *f);
	/* a fiber was readied on v while v's fiber waits whole in its
	 * kernel thread (v->held): stop that call, as for a signal
	 * (v->here_stop, then the thread signalled), so that v runs the
	 * fiber and posts the call, or the rest of the wait.  From any
	 * thread; it must not read v's fibers, which may end meanwhile.
	 * NULL: such calls are made only where no other fiber lives
	 * (syscalls.c sole()) */
	void (*stop_held)(struct xsc_vcpu *v);
	/* v's kernel thread, as v last set its mask, takes every signal
	 * another thread of the program takes: a process signal never
	 * waits for the watchdog's hand-over there (sched.h
	 * xsc__rt_alone).  From any thread; reads v's own fields only.
	 * The extension wakes the watchdog (xsc__rt_watch) when a thread
	 * blocks more.  NULL: never */
	bool (*solo)(struct xsc_vcpu *v);
};

/* The ops registered (NULL: none, the xsc threads API alone). */
extern const struct xsc_rt_ops *xsc__ext;

/* Registers ops; once, before xsc__rt_start. */
void xsc__rt_extend(const struct xsc_rt_ops *ops);

static inline bool xsc__ext_has(unsigned flag)
{
	return xsc__ext && (xsc__ext->flags & flag);
}

#endif
