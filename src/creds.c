/*
 * creds.c - process-wide credential changes, as each kernel thread takes them.
 *
 * Credentials belong to a kernel thread.  glibc's setuid, setgid,
 * setgroups and the like change every thread of the process (it signals
 * each one to make the same call, then makes it itself), and a program
 * counts on that: after setuid() returns, none of its threads is root.
 * The kernel threads that run a program's calls for it through xsc are
 * not the program's threads: vcpus, syscall threads, a parked main
 * thread; an SQPOLL ring's poller keeps the credentials of the thread
 * that created the ring.  So a process-wide change is recorded here, in
 * order, and every such kernel thread makes the same calls on itself
 * before it runs another call of the program (a vcpu: before its next
 * fiber or call; a syscall thread: before its next entry; the parked
 * thread: at once, woken on the generation word).  io_uring requests
 * carry their submitter's credentials, so a ring (not SQPOLL) needs
 * nothing more.  A fiber's Landlock domain (sched/sandbox.c) is recorded
 * here too, as prctl(PR_SET_NO_NEW_PRIVS) and landlock_restrict_self on a
 * duplicate of the ruleset: every kernel thread takes it the same way.
 */
#include <errno.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include "creds.h"
#include "rawio.h"
#include "rawsys.h"

#define MAX_CREDS 64

static struct {
	uint32_t lock;
	long nr[MAX_CREDS];
	long a[MAX_CREDS][3];
	void *buf[MAX_CREDS];	/* setgroups' list, capset's header + data */
} creds;

_Atomic unsigned xsc__creds_gen;
_Atomic unsigned xsc__creds_parked = UINT_MAX;	/* UINT_MAX: none parked */

bool xsc__creds_process_wide(long nr)
{
	const struct xsc_sysdef *d = xsc__sysdef(nr);

	return d && d->creds == XSC_CREDS_PROCESS;
}

unsigned xsc__creds_record(long nr, const long *a)
{
	unsigned gen;
	void *buf = NULL;

	if (nr == SYS_setgroups && a[0] > 0) {
		size_t len = (size_t)a[0] * sizeof(uint32_t);
		buf = malloc(len);
		if (!buf) {
			xsc__say("xsc: out of memory for the other kernel threads' "
				 "credentials; stopping\n");
			abort();
		}
		memcpy(buf, (const void *)a[1], len);
	}
	while (__atomic_exchange_n(&creds.lock, 1, __ATOMIC_ACQUIRE))
		__builtin_ia32_pause();
	gen = atomic_load(&xsc__creds_gen);
	if (gen == MAX_CREDS) {
		xsc__say("xsc: more than %d process-wide credential changes; "
			 "stopping rather than run a call with the old ones\n",
			 MAX_CREDS);
		abort();
	}
	creds.nr[gen] = nr;
	memcpy(creds.a[gen], a, sizeof(creds.a[gen]));
	creds.buf[gen] = buf;
	atomic_store(&xsc__creds_gen, gen + 1);
	__atomic_store_n(&creds.lock, 0, __ATOMIC_RELEASE);
	/* the parked thread takes it at once */
	xsc__sys6(SYS_futex, (long)&xsc__creds_gen, FUTEX_WAKE_PRIVATE, INT_MAX, 0, 0, 0);
	return gen + 1;
}

void xsc__creds_apply(unsigned *have)
{
	unsigned want = atomic_load(&xsc__creds_gen);

	for (; *have < want; (*have)++) {
		unsigned i = *have;
		long a0 = creds.a[i][0], a1 = creds.a[i][1], a2 = creds.a[i][2], r;

		if (creds.nr[i] == SYS_setgroups)
			a1 = (long)creds.buf[i];
		r = xsc__sys6(creds.nr[i], a0, a1, a2, 0, 0, 0);
		if (r < 0) {
			xsc__say("xsc: a kernel thread cannot take the program's new "
				 "credentials or sandbox (system call %ld: %s); "
				 "stopping\n",
				 creds.nr[i], strerror((int)-r));
			abort();
		}
	}
}

void xsc__creds_park(unsigned have)
{
	atomic_store(&xsc__creds_parked, have);
	for (;;) {
		unsigned g = atomic_load(&xsc__creds_gen);
		if (g != have) {
			xsc__creds_apply(&have);
			atomic_store(&xsc__creds_parked, have);
			continue;
		}
		xsc__sys6(SYS_futex, (long)&xsc__creds_gen, FUTEX_WAIT_PRIVATE, g, 0, 0, 0);
	}
}

/* ---- one kernel thread's own changes -------------------------------------- */

/* A raw set*id, setgroups or capset changes the calling kernel thread
 * alone.  When that thread is a vcpu, the calls it routes to its syscall
 * threads must run with the same credentials: each makes the same calls
 * before its next entry, so a blocking call can keep going to a syscall
 * thread instead of holding the vcpu (which stalled every fiber on it). */
#define MAX_OWN 32

struct xsc__own_creds {
	long nr[MAX_OWN];
	long a[MAX_OWN][3];
	void *buf[MAX_OWN];	/* setgroups' list; capset's header + data */
};

int xsc__creds_own_record(struct xsc *x, long nr, const long *a)
{
	unsigned gen = atomic_load(&x->own_gen);
	void *buf = NULL;
	size_t len = 0;

	if (gen == MAX_OWN) {
		xsc__say("xsc: more than %d credential changes of one kernel "
			 "thread; stopping rather than run a call with the old "
			 "ones\n", MAX_OWN);
		abort();
	}
	if (!x->own && !(x->own = calloc(1, sizeof(*x->own))))
		return -ENOMEM;
	if (nr == SYS_setgroups && a[0] > 0)
		len = (size_t)a[0] * sizeof(uint32_t);
	else if (nr == SYS_capset)	/* header, then 1 (v1) or 2 data blocks */
		len = 8 + (*(const uint32_t *)a[0] == _LINUX_CAPABILITY_VERSION_1 ? 12 : 24);
	if (len && !(buf = malloc(len)))
		return -ENOMEM;
	if (nr == SYS_setgroups && len)
		memcpy(buf, (const void *)a[1], len);
	else if (nr == SYS_capset) {
		memcpy(buf, (const void *)a[0], 8);
		memcpy((char *)buf + 8, (const void *)a[1], len - 8);
	}
	x->own->nr[gen] = nr;
	memcpy(x->own->a[gen], a, sizeof(x->own->a[gen]));
	x->own->buf[gen] = buf;
	atomic_store(&x->own_gen, gen + 1);	/* release: the entry first */
	return 0;
}

void xsc__creds_own_apply(struct xsc *x, unsigned *have)
{
	unsigned want = atomic_load(&x->own_gen);

	for (; *have < want; (*have)++) {
		unsigned i = *have;
		long nr = x->own->nr[i], a0 = x->own->a[i][0], a1 = x->own->a[i][1],
		     a2 = x->own->a[i][2], r;
		char *buf = x->own->buf[i];

		if (nr == SYS_setgroups)
			a1 = (long)buf;
		else if (nr == SYS_capset) {
			a0 = (long)buf;
			a1 = (long)(buf + 8);
		}
		r = xsc__sys6(nr, a0, a1, a2, 0, 0, 0);
		if (r < 0 && nr != SYS_setfsuid && nr != SYS_setfsgid) {
			xsc__say("xsc: a syscall thread cannot take its vcpu's new "
				 "credentials (system call %ld: %s); stopping\n",
				 nr, strerror((int)-r));
			abort();
		}
	}
}

void xsc__creds_own_free(struct xsc *x)
{
	if (!x->own)
		return;
	for (unsigned i = 0; i < atomic_load(&x->own_gen); i++)
		free(x->own->buf[i]);
	free(x->own);
	x->own = NULL;
}
