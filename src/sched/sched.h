/*
 * sched.h - internals of xsc threads (the M:N runtime).
 *
 * A vcpu is a kernel thread pinned to a core.  It owns a run queue and
 * an xsc handle (its private syscall pages: single producer, no atomic
 * read-modify-write on the posting path).  Timed waits need no timers of
 * their own: a timeout is a syscall entry (sync.c) whose completion
 * wakes the fiber like any other.  Fibers run
 * on vcpus; a fiber that makes a system call posts an entry tagged with
 * itself and switches back to its vcpu's scheduler context; the handle's
 * completion callback resumes it with the result.
 *
 * Parking protocol (no lost wake-ups across vcpus): a fiber that must
 * wait puts itself on a wait queue under that queue's spinlock and calls
 * xsc__suspend(lock), which switches to the scheduler; the scheduler
 * releases the lock only once the fiber's context is saved.  A waker
 * takes the lock, dequeues the fiber, releases the lock and calls
 * xsc__resume(); so a fiber can never be resumed while it is still
 * switching out.
 */
#ifndef XSC_SCHED_H
#define XSC_SCHED_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>

#include "fiber/ctx.h"
#include "libxsc.h"
#include "rawsys.h"
#include "xsc.h"

#include "sched/ext.h"
#include "usdt.h"

#define XSC_MAX_KEYS 64

enum fstate { F_READY, F_RUNNING, F_BLOCKED, F_DONE };

/* Which way a fiber's call went, and why (syscalls.c), counted per fiber
 * and per vcpu. */
enum xsc_way {
	XSC_WAY_POSTED,		/* posted: it may wait */
	XSC_WAY_BATCHED,	/* cannot wait, posted: others to batch it with */
	XSC_WAY_ALONE,		/* cannot wait, nothing to batch it with: made
				   by the caller */
	XSC_WAY_LOOKED,		/* a wait whose look (timeout 0) was its answer */
	XSC_WAY_LOOKED_POSTED,	/* a wait whose look found nothing: posted */
	XSC_WAY_SOLE,		/* a wait, or an open, made by the caller: the
				   only fiber of its vcpu, nothing in flight */
	XSC_WAY_CALLER,		/* the route, or its arguments, say the caller */
	XSC_WAYS
};

/* What a program's sched_yield did with no other fiber of its vcpu ready
 * (loop.c xsc__rt_yield_cpu). */
enum xsc_yield {
	XSC_YIELD_KEPT,		/* the vcpu kept its CPU */
	XSC_YIELD_KERNEL,	/* a kernel yield: a vcpu on its CPU has work */
	XSC_YIELDS
};

struct xsc_vcpu;

/* Wait queues (head/tail pointers of struct xsc_fiber via wnext). */
struct xsc_wq {
	void *head, *tail;
};

/* A fiber's values of the fiber-local keys, made at its first
 * xsc_setspecific.  gen[k] is the key's generation the value was set
 * under: a key deleted and created again reads NULL in every fiber. */
struct xsc_keyvals {
	void *val[XSC_MAX_KEYS];
	uint32_t gen[XSC_MAX_KEYS];
};

struct xsc_fiber {
	struct xsc_ctx ctx;
	struct xsc_stack *stack;
	struct xsc_fiber *rnext;	/* run queue link */
	uint64_t rticket;		/* its place in the run queue (queue.c) */
	struct xsc_fiber *wnext;	/* wait queue link */
	void *(*fn)(void *);
	void *arg;
	void *ret;
	long resumed;			/* the value its last resume gave */
	int err;			/* the fiber's libc errno while switched out */
	int state;
	bool resume_kept;		/* resumed while it still ran: its next
					   suspend returns at once */
	bool sigpipe;			/* its call failed with EPIPE and the
					   SIGPIPE went to another thread */
	struct xsc_vcpu *home;		/* where it runs once started (NULL before) */
	_Atomic int detached;
	_Atomic int joined;		/* a joiner exists or the fiber was detached */
	uint32_t join_lock;
	struct xsc_fiber *joiner;
	void *timed_q;			/* its timed wait's record (sync.c) */
	struct xsc_keyvals *kv;		/* its key values (NULL: none set) */
	/* a thread of a program the extension runs (ext.h) */
	uint64_t fs;			/* its thread pointer (0: not such a fiber) */
	uint16_t fs_sel;		/* its LDT selector (tls.c), 0: none */
	uint64_t sigmask;		/* its signal mask */
	int vtid;			/* its thread id as the program sees it */
	uint32_t *ctid;			/* CLONE_CHILD_CLEARTID word */
	void *robust;			/* set_robust_list head (kept, not walked) */
	size_t robust_len;
	uint64_t sig_pending;		/* signals sent to it, not yet handled
					   (written by the extension) */
	_Atomic int intr;		/* the extension asked to interrupt its
					   call: 1, 2 canceled */
	int call_id;			/* entry id + 1 of the posted call it
					   waits in (0: none): a call a signal
					   may cancel */
	bool creds_wide;		/* its next credential call is made for
					   every thread of the process */
	uintptr_t tstack_lo, tstack_hi;	/* its stack as its creator gave it
					   (0: not known) */
	uint32_t way[XSC_WAYS];		/* its calls, by enum xsc_way */
	uint32_t nsig;			/* signal handlers run on it (written by
					   the extension) */
	bool masked;			/* its call is made in a handler of the
					   extension's that holds its signals
					   blocked (a trapped call): it must not
					   wait in the kernel, where no signal
					   could end the wait */
	/* the extension's own state (ext.h) */
	_Alignas(16) unsigned char ext[XSC_FIBER_EXT];
	struct xsc_vcpu *turn_v;	/* the vcpu its descriptor turn counts on, or
					   NULL (fdq.c) */
	int closing_disk;		/* fd + 1: its close in flight found a regular
					   file or block device (fdkind.c) */
	/* a call it makes in its kernel thread that may wait there, which a
	 * signal sent to it must end (syscalls.c call_sole): the vcpu
	 * making it (NULL: none), whose here_stop stops it (cancel.h) */
	struct xsc_vcpu *_Atomic here_v;
	/* futex waits (futex.c) */
	const uint32_t *fx_addr;
	xsc_cond_t *fx_q;		/* the queue it waits in: a hash bucket's
					   or a private one (fdq.c) */
	uint32_t fx_bits;
	/* for debuggers: tools/gdb/xsc-gdb.py reads these by name (update
	 * it when you change them) */
	struct xsc_fiber *all_prev, *all_next;	/* xsc__fibers' list */
	uint64_t id;			/* its number there, from 1 */
	void *created_at;		/* the code that created it: the caller
					   of xsc_thread_create or of the
					   program's pthread_create (NULL: a
					   process's first thread) */
	long in_call;			/* nr + 1 of the system call it is in
					   (0: none), posted, run here or
					   emulated */
	const long *in_args;		/* that call's six arguments */
};

struct xsc_vcpu {
	/* the extension's own state (ext.h): first, where code running on
	 * the vcpu finds it at fixed offsets through %gs */
	_Alignas(64) unsigned char ext[XSC_VCPU_EXT];
	/* what each call of a fiber's reads and counts, in one cache line
	 * (the first ways included): a call made in the kernel evicts the
	 * runtime's lines, and each read again costs a miss */
	struct xsc *x;			/* this vcpu's syscall pages */
	struct xsc_fiber *cur;
	unsigned calls_run;		/* calls its fiber made since it was
					   switched in (syscalls.c) */
	_Atomic int rq_len;		/* both run lists (below) */
	bool yielded;			/* the fiber switched out by xsc_yield */
	bool poll_now;			/* ... and asks for a flush and reap at once
					   (a fiber preempted in its calls) */
	uint64_t way[XSC_WAYS];		/* its fibers' calls, by enum xsc_way */
	uint64_t yields[XSC_YIELDS];	/* its fibers' sched_yield with none
					   other ready, by enum xsc_yield */
	int id, cpu;
	pthread_t th;
	struct xsc_ctx sched;		/* the scheduler's own context */
	uint32_t *unlock_after;		/* parking protocol (see above) */
	struct xsc_fiber *dead;		/* exited fiber to reclaim */
	/* run queue: other vcpus push and steal, so it has a lock.  Two
	 * lists in one order: fibers that have run (they stay here) and new
	 * ones (another vcpu may take them); each push gets the next ticket
	 * and the older head runs first.  A steal takes new fibers from the
	 * front of their own list, never walking past the others. */
	uint32_t rq_lock;
	struct xsc_fiber *rq_head, *rq_tail;	/* fibers that have run */
	struct xsc_fiber *nq_head, *nq_tail;	/* new fibers */
	uint64_t rq_ticket;
	_Atomic int nq_len;			/* new fibers */
	_Atomic int idle;
	_Atomic int nhomed;		/* fibers whose home it is, alive */
	_Atomic int held;		/* its fiber waits in the kernel (call_held):
					   no new fiber is placed here, and the
					   watchdog may sleep; a fiber readied
					   here stops that call (ops->stop_held) */
	_Atomic int here_stop;		/* stops that call (cancel.h): set by
					   the extension, cleared before each */
	_Atomic int inited;		/* 1 running, -errno failed to start */
	/* fibers waiting for a free syscall entry (vcpu-local, no lock) */
	struct xsc_wq ewait;
	uint64_t switches;
	/* thread pointer loads made by a system call
	 * (arch_prctl) and by any means (tls.c) */
	uint64_t tls_sys, tls_loads;
	uint16_t own_sel;		/* the LDT selector of its own TLS, 0: none */
	_Atomic int holding;		/* descriptor turns its fibers hold (fdq.c) */
	unsigned sandbox_gen;		/* sandbox changes applied here (sandbox.c) */
	/* a wait made whole beside calls in flight on its ring (ringwatch.c) */
	bool ring_watch;		/* its ring signals the watcher's eventfd */
	_Atomic int ring_watched;	/* armed: a completion stops the wait */
	int watch_score;		/* < 0: such waits are looked at and posted */
	uint64_t watch_waits, watch_stops;	/* armed waits; stopped by the watcher */
	volatile int nlocks;		/* runtime spinlocks its kernel thread holds */
	volatile uint64_t deferred;	/* work the extension put off until
					   nlocks is 0 (ops->deferred) */
	_Atomic int scan;		/* the extension asks for ops->scan
					   before the next fiber runs */
	uint64_t own_fs;		/* its kernel thread's own thread pointer */
} __attribute__((aligned(64)));

struct xsc_rt {
	struct xsc_vcpu *v;
	int n;
	_Atomic int stop;
	_Atomic int closing;		/* xsc_main failed to start: CLOSE_* */
	_Atomic int nidle;
	_Atomic uint32_t wd_asleep;	/* the watchdog waits for a vcpu to
					   leave idle or a wait, or to have
					   two fibers (preload/signals/
					   preempt.c): the one that does wakes it */
	_Atomic unsigned sandbox_gen;	/* sandbox changes made (sandbox.c) */
	bool quiet;			/* every handle opened quiet (a forked child) */
	_Atomic unsigned rr;		/* round robin for new fibers */
	struct xsc_runtime_config cfg;
	int main_ret;
	bool cpu_for_poller;		/* one vcpu fewer: SQPOLL (runtime.c) */
};

extern struct xsc_rt xsc__rt;
extern __thread struct xsc_vcpu *xsc__self;	/* NULL outside a vcpu */

/* Fibers with a thread pointer of their own (f->fs, a program's threads
 * run by the extension): libc's TLS (and ours) follows the fiber, not the
 * kernel thread.  How a thread pointer is loaded (tls.c): wrfsbase
 * (HWCAP2_FSGSBASE), an LDT selector for a TLS block below 4 GiB with
 * arch_prctl for the others, or arch_prctl only.  Chosen by the
 * extension at its start. */
enum { XSC_TLS_WRFSBASE, XSC_TLS_LDT, XSC_TLS_ARCH_PRCTL };
extern int xsc__tls_how;
extern const char *xsc__tls_why;	/* why not the LDT, where it is not used */
extern _Atomic uint64_t xsc__tls_nslot, xsc__tls_nhigh;	/* slots given, blocks above 4 GiB */
int xsc__tls_ldt_probe(void);
uint16_t xsc__tls_slot(uint64_t fs);
void xsc__tls_slot_put(uint16_t sel);
long xsc__tls_map_low(const long *a);

/* Loads the thread pointer fs, by its LDT selector sel if it has one;
 * counted per vcpu (v may be NULL) for `xsc run -v`. */
static inline void xsc__tls_load(uint64_t fs, uint16_t sel, uint64_t *nsys)
{
	if (__builtin_expect(xsc__tls_how == XSC_TLS_WRFSBASE, 1)) {
		__asm__ __volatile__("wrfsbase %0" :: "r"(fs) : "memory");
	} else if (sel) {
		__asm__ __volatile__("mov %0, %%fs" :: "r"(sel) : "memory");
	} else {
		xsc__sys2(SYS_arch_prctl, 0x1002 /* ARCH_SET_FS */, (long)fs);
		if (nsys)
			(*nsys)++;
	}
}

/* The thread pointer loaded now: glibc's thread descriptor starts with a
 * pointer to itself, so one FS-relative load reads it on every path. */
static inline uint64_t xsc__tls_now(void)
{
	uint64_t v;
	__asm__ __volatile__("mov %%fs:0, %0" : "=r"(v));
	return v;
}

/* errno of the TLS block loaded now.  Not &errno: glibc declares
 * __errno_location const, and a compiler may compute it once, before a
 * load of another thread pointer.  errno is initial-exec TLS of libc, at
 * the same offset from every thread pointer (set at start, tls.c). */
extern intptr_t xsc__errno_off;
static inline int *xsc__errno_now(void)
{
	return (int *)(xsc__tls_now() + (uint64_t)xsc__errno_off);
}
/* v's fiber is about to block v in a call run in the caller: an idle
 * vcpu steals v's new fibers first (queue.c). */
void xsc__rt_may_block(struct xsc_vcpu *v);
/* Nothing on v for the watchdog to do (preload/signals/preempt.c): v runs
 * its only fiber at most, and no new one waits for it; or no other fiber
 * is ready there, and the one it runs takes every signal another thread
 * takes (ops->solo), so that no process signal waits for the watchdog's
 * hand-over.  A fiber stays on the vcpu it first ran on (f->home), and
 * only new ones are taken by others, so with one homed its queue holds
 * that one alone.  A fiber popped and not yet run counts in neither:
 * run() looks again.  Any fiber pushed on v wakes the watchdog
 * (xsc__rq_push). */
bool xsc__rt_alone(struct xsc_vcpu *v);
/* v left idle or a whole wait, or got a new fiber (loop.c) */
void xsc__rt_busy(struct xsc_vcpu *v);
/* Wakes the watchdog if it sleeps: what it saw as quiet may not be. */
void xsc__rt_watch(void);

/* ringwatch.c: a fiber's wait made whole beside its vcpu's other fibers'
 * calls in flight on the ring, stopped when one of them completes.
 * init before the vcpus, add in each vcpu's init, start after them;
 * forget in a forked child.  may: v may make such a wait now; arm before
 * it (false: something completed already, reap it first), done after. */
int xsc__ringwatch_init(void);
bool xsc__ringwatch_wanted(void);	/* vcpus' rings then DEFER_TASKRUN */
void xsc__ringwatch_add(struct xsc_vcpu *v);
void xsc__ringwatch_start(void);
void xsc__ringwatch_forget(void);
/* tid is the watcher's: its thread pointer in *tcb (preload/setxid.c) */
bool xsc__ringwatch_thread(int tid, uint64_t *tcb);
bool xsc__ringwatch_may(const struct xsc_vcpu *v);
bool xsc__ringwatch_arm(struct xsc_vcpu *v);
void xsc__ringwatch_disarm(struct xsc_vcpu *v);
void xsc__ringwatch_done(struct xsc_vcpu *v, bool stopped);	/* disarms */
void xsc__ringwatch_passed(struct xsc_vcpu *v);	/* posted, or looked */
/* The program's sched_yield on vcpu v with no other fiber ready: a
 * kernel yield only for another vcpu on its CPU (loop.c). */
void xsc__rt_yield_cpu(struct xsc_vcpu *v);
/* 64 calls of v's fiber without a switch: flush, reap, and yield if that
 * readied a fiber (syscalls.c) */
void xsc__rt_call_tick(struct xsc_vcpu *v);
/* A call of the running fiber, routed as its calls are (syscalls.c) */
long xsc__fiber_call(long nr, const long *a);
/* A program's own io_uring (ringwait.c): a ring made by io_uring_setup
 * (its result fd, the call's arguments), and a wait for its completions
 * that parks the fiber instead of holding its vcpu */
void xsc__ring_made(long fd, const long *a);
long xsc__ring_wait(const long *a);

/* Between the runtime's files (queue.c, fiber.c, loop.c, runtime.c; the
 * run queue itself: rq.h). */
struct xsc_fiber *xsc__steal(struct xsc_vcpu *v);	/* new fibers of another vcpu */
struct xsc_vcpu *xsc__place(void);	/* where a new fiber goes */
void xsc__reap_dead(struct xsc_vcpu *v, struct xsc_fiber *f);	/* its stack is free */
bool xsc__fiber_umem(uint64_t tag, uintptr_t p, size_t len);	/* xsc__umem_ours */
void *xsc__vcpu_thread(void *arg);	/* a vcpu's kernel thread */
int xsc__vcpu_init(struct xsc_vcpu *v);	/* its handle, on its thread */
void xsc__vcpu_loop(struct xsc_vcpu *v);	/* the scheduler, until stop */
/* xsc__rt.closing: when xsc_main fails before its first fiber, the
 * vcpus close their own handles as they stop, after its kicks. */
enum { CLOSE_NO, CLOSE_AFTER_KICKS, CLOSE_NOW };

/* A table indexed by descriptor number (fdtab.c): `per` descriptors of
 * `size` bytes in each chunk, chunks made when first asked for with
 * `make`, never moved or freed; fds below XSC_FDTAB_MAX (the kernel's
 * default nr_open). */
#define XSC_FDTAB_MAX (1u << 20)
struct xsc_fdtab {
	size_t size;
	unsigned per;			/* a power of two, at least 4096 */
	void *_Atomic chunk[XSC_FDTAB_MAX / 4096];
	uint32_t lock;
};
void *xsc__fdtab_make(struct xsc_fdtab *t, unsigned c);

/* Chunk c, or NULL when it was never made (made now with `make`, which
 * may fail) or is past the table.  Inline, and by shifts (per is a power
 * of two): the descriptor's kind is looked up on each call of the
 * program's that is made directly (sched/fdkind.c). */
static inline void *xsc__fdtab_chunk(struct xsc_fdtab *t, unsigned c, bool make)
{
	void *p;

	if (c >= XSC_FDTAB_MAX >> __builtin_ctz(t->per))
		return NULL;
	p = atomic_load_explicit(&t->chunk[c], memory_order_acquire);
	return p || !make ? p : xsc__fdtab_make(t, c);
}

static inline void *xsc__fdtab_at(struct xsc_fdtab *t, int fd, bool make)
{
	unsigned s = (unsigned)__builtin_ctz(t->per);
	char *p;

	if (fd < 0 || !(p = xsc__fdtab_chunk(t, (unsigned)fd >> s, make)))
		return NULL;
	return p + (size_t)((unsigned)fd & (t->per - 1)) * t->size;
}

/* The vcpu running the caller, or NULL outside a vcpu.  xsc__self is
 * initial-exec TLS: a vcpu thread sets its own copy, and in transparent
 * mode, where every fiber has a TLS block of its own, the scheduler stores
 * it into the fiber's copy each time it switches the FS base to it
 * (loop.c run()), so the lookup is one FS-relative load everywhere and
 * needs no FSGSBASE instructions. */
static inline struct xsc_vcpu *xsc__vcpu(void)
{
	__asm__ __volatile__("" ::: "memory");
	return xsc__self;
}

/* Whether a signal another thread sent to fiber f is pending and not
 * blocked (the extension's f->sig_pending), so that a wait must not
 * begin.  Always false for the xsc threads API. */
static inline bool xsc__signal_pending(const struct xsc_fiber *f)
{
	return f->fs && (__atomic_load_n(&f->sig_pending, __ATOMIC_ACQUIRE) & ~f->sigmask);
}

static inline struct xsc_fiber *xsc__cur(void)
{
	struct xsc_vcpu *v = xsc__vcpu();
	return v ? v->cur : NULL;
}

/* Starts the vcpus on threads of their own (the caller is not one) and
 * returns once all of them run: the extension's start. */
int xsc__rt_start(const struct xsc_runtime_config *cfg);
/* In a forked child (one kernel thread, the parent's memory): drops the
 * parent's vcpus and every lock and wait queue their threads may have
 * held, so that xsc__rt_start can start a runtime of the child's own.
 * The parent's rings are not touched (they are shared with the parent);
 * the child's copies of their fds are closed. */
void xsc__rt_forget(void);
void xsc__futex_forget(void);
void xsc__sync_forget(void);
void xsc__sandbox_forget(void);
/* Places a fiber created outside xsc_thread_create on a run queue. */
void xsc__rt_adopt(struct xsc_fiber *f);

/* Every fiber whose record exists, for debuggers (tools/gdb/xsc-gdb.py
 * walks it in a stopped process or a core): a list under a lock,
 * entered when a fiber is made and left when its record is freed (a
 * joined or detached fiber's, a program's thread's at its reap). */
struct xsc_fiber_list {
	uint32_t lock;
	long n;				/* fibers in the list */
	uint64_t next_id;
	struct xsc_fiber *head;
};
extern struct xsc_fiber_list xsc__fibers;
void xsc__fiber_listed(struct xsc_fiber *f, void *created_at);
void xsc__fiber_unlisted(struct xsc_fiber *f);
/* A forked child: the parent's fibers are not its own (xsc__rt_forget). */
void xsc__fibers_forget(void);

void xsc__spin_lock(uint32_t *l);
bool xsc__spin_trylock(uint32_t *l);	/* true: taken */
void xsc__spin_unlock(uint32_t *l);

/* Records of one size from mmap'd slabs, not malloc (pool.c says why);
 * usable from fibers, the scheduler and foreign threads.  get() zeroes. */
struct xsc_pool {
	uint32_t lock;
	uint32_t size;	/* a multiple of 16, >= sizeof(void *) */
	void *free;
};
#define XSC_POOL_INIT(type) { 0, (sizeof(type) + 63) & ~63u, NULL }
void *xsc__pool_get(struct xsc_pool *p);
void xsc__pool_put(struct xsc_pool *p, void *r);

/* Suspend and resume: the one way a fiber waits (libdill's model).
 * The fiber that must wait calls xsc__suspend(lock): it switches out, the
 * scheduler releases lock (may be NULL) once its context is saved (the
 * parking protocol above), and the call returns the value of the one
 * xsc__resume(f, val) that ends the wait: a system call's result (the
 * completion callback), 0 for a wake-up (mutex, condition variable,
 * semaphore, futex, join, a free syscall entry, fd readiness) or
 * -ETIMEDOUT (a timed wait's deadline).  Exactly one resume per suspend:
 * wakers that race (a timed wait's timer and its signal) decide first
 * which of them resumes (xsc__claim).  A resume that comes while the
 * fiber still runs (its own xsc_poll reaped its call) is kept, and its
 * next suspend returns the value without switching; such a suspend takes
 * no lock (its waker never needs one).  xsc__resume may be called from
 * any vcpu or thread. */
long xsc__suspend(uint32_t *lock);
void xsc__resume(struct xsc_fiber *f, long val);
/* Posts a call from the running fiber into its vcpu's pages; when they
 * are full the fiber waits for a free entry (the vcpu keeps running
 * others).  Returns the entry id or -errno. */
int xsc__post_fiber(long nr, const long *a, uint64_t tag);
/* Sandbox changes made by a fiber (sandbox.c): true if nr with these
 * arguments is one; then xsc__rt_sandbox_call runs it in place of a plain
 * call, and every vcpu catches up before it runs another fiber. */
bool xsc__rt_sandboxing(long nr, const long *a);
long xsc__rt_sandbox_call(struct xsc_vcpu *v, long nr, const long *a);
void xsc__rt_sandbox_catch_up(struct xsc_vcpu *v);
/* Process-wide credential changes (creds.c) this vcpu has not taken. */
static inline bool xsc__rt_creds_behind(const struct xsc_vcpu *v)
{
	return __builtin_expect(atomic_load_explicit(&xsc__creds_gen, memory_order_acquire) !=
				atomic_load_explicit(&v->x->creds_gen, memory_order_relaxed), 0);
}
void xsc__rt_creds_catch_up(struct xsc_vcpu *v);

/* Fibers that wait on one descriptor take turns (fdq.c).  Before a call
 * that may wait for another party is posted: NULL, or the record the
 * fiber now holds the turn of (it may have waited for it), which
 * xsc__fdq_leave(q, nr, a, ret) gives back once the call returned ret.  A
 * readiness wait's completion tagged XSC_TAG_FDQ calls xsc__fdq_ready. */
struct xsc_fdq;
#define XSC_TAG_FDQ 2ULL
struct xsc_fdq *xsc__fdq_enter(struct xsc_vcpu *v, long nr, const long *a);
void xsc__fdq_leave(struct xsc_fdq *q, long nr, const long *a, long ret);
void xsc__fdq_ready(struct xsc_fdq *q);
void xsc__fdq_forget(void);
/* fd was closed or replaced: what it is must be learned again */
void xsc__fdq_closed(int fd);

/* Completion of a timed condition wait's timer entry (sync.c). */
void xsc__timed_done(void *rec);

void xsc__wq_push(void *q, struct xsc_fiber *f);
/* Unlinks i from w, prev being its predecessor (NULL: i is the head). */
static inline void xsc__wq_unlink(struct xsc_wq *w, struct xsc_fiber *prev,
				  struct xsc_fiber *i)
{
	if (prev)
		prev->wnext = i->wnext;
	else
		w->head = i->wnext;
	if (w->tail == i)
		w->tail = prev;
}
struct xsc_fiber *xsc__wq_pop(void *q);
bool xsc__wq_remove(void *q, struct xsc_fiber *f);

/* Emulated futexes (futex.c): the fiber parks, the kernel thread goes on.
 * abs_mono: absolute CLOCK_MONOTONIC deadline or NULL. */
long xsc__futex_wait(const uint32_t *uaddr, uint32_t val,
		     const struct timespec *abs_mono, uint32_t bits);
long xsc__futex_wake(const uint32_t *uaddr, int n, uint32_t bits);
bool xsc__futex_interrupt(struct xsc_fiber *f);
/* The same on a private queue q instead of the address's hash bucket
 * (every waiter and waker of uaddr must use q): no walk past other
 * addresses' waiters.  Untimed, every bit. */
long xsc__futex_wait_q(xsc_cond_t *q, const uint32_t *uaddr, uint32_t val);
long xsc__futex_wake_q(xsc_cond_t *q, const uint32_t *uaddr, int n);
long xsc__futex_requeue(const uint32_t *uaddr, int nwake, int nmove,
			const uint32_t *uaddr2, const uint32_t *cmpval);
/* Timed waits shared by condition variables and futexes (sync.c). */
struct xsc_timed;
int xsc__timed_arm(xsc_cond_t *c, const struct timespec *abs_mono,
		   struct xsc_timed **out);
int xsc__timed_park(struct xsc_timed *t);	/* c->lock held, f queued */
void xsc__timed_disarm(struct xsc_timed *t);	/* never parked */
bool xsc__claim(struct xsc_fiber *f);
#endif
