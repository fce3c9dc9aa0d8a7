/*
 * fdwait.c - readiness waits without io_uring: one epoll thread per handle.
 *
 * xsc threads park a fiber whose call would wait for another party (a read
 * of an empty pipe, an accept) on the readiness of its fd, holding no entry
 * and no syscall thread (sched/syscalls.c wait_ready).  With a ring that is
 * a POLL_ADD (uring.c).  Without one (io_uring forbidden or missing, or the
 * worker executor) the waits go to this handle's epoll thread: the owner
 * adds a waiter and arms its fd (EPOLLONESHOT, the union of its waiters'
 * events), the thread sleeps in epoll_wait, moves the waiters an event
 * satisfies to a done list, re-arms the fd for the others and kicks the
 * owner, whose reap hands each to done_cb (id -1, the events, the tag),
 * so that no blocked call holds one of the 256 syscall threads.
 *
 * The thread starts with the handle (xsc_open, when there is a done_cb and
 * no ring), never under a fiber.  Memory comes from mmap: the owner may be
 * a fiber running on a program's TLS (transparent mode), where malloc is
 * not ours to call.  An fd that epoll refuses (a regular file: always
 * ready) makes the wait fail, and the call simply goes out.
 */
#include "fdwait.h"
#include "done.h"
#include "ownthreads.h"
#include "rawio.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rawsys.h"

struct waiter {
	uint64_t tag;
	uint32_t events;
	int32_t revents;
	struct waiter *next;
};

struct fdslot {
	struct waiter *w;	/* waiting on this fd */
	bool added;		/* registered with the epoll fd */
};

struct xsc_fdwait {
	pthread_mutex_t lock;
	int epfd, evfd;
	pthread_t th;
	_Atomic int tid;	/* the thread's id, once it runs */
	struct fdslot *fds;	/* indexed by fd, mmap'd, grown by mremap */
	size_t nfds;
	struct waiter *free;	/* spare nodes */
	struct waiter *done;	/* ready, for the owner's reap */
	struct xsc *x;
};

static void *map(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static struct waiter *node(struct xsc_fdwait *f)
{
	if (!f->free) {
		enum { N = 4096 / sizeof(struct waiter) };
		struct waiter *c = map(N * sizeof(*c));
		if (!c)
			return NULL;
		for (size_t i = 0; i < N; i++) {
			c[i].next = f->free;
			f->free = &c[i];
		}
	}
	struct waiter *w = f->free;
	f->free = w->next;
	return w;
}

static bool grow(struct xsc_fdwait *f, int fd)
{
	size_t want = f->nfds ? f->nfds : 1024;

	while (want <= (size_t)fd)
		want *= 2;
	if (want == f->nfds)
		return true;
	void *p = f->fds ? mremap(f->fds, f->nfds * sizeof(*f->fds),
				  want * sizeof(*f->fds), MREMAP_MAYMOVE)
			 : map(want * sizeof(*f->fds));
	if (p == MAP_FAILED || !p)
		return false;
	f->fds = p;	/* new pages of an anonymous mapping are zero */
	f->nfds = want;
	return true;
}

/* (Re)arms fd for the union of its waiters' events; lock held. */
static int arm(struct xsc_fdwait *f, int fd)
{
	struct epoll_event ev = { .events = EPOLLONESHOT, .data.fd = fd };
	struct fdslot *s = &f->fds[fd];
	long r;

	for (struct waiter *w = s->w; w; w = w->next)
		ev.events |= w->events;
	r = xsc__sys4(SYS_epoll_ctl, f->epfd, s->added ? EPOLL_CTL_MOD : EPOLL_CTL_ADD,
		      fd, &ev);
	if (r == -ENOENT && s->added)	/* the fd was closed and reused */
		r = xsc__sys4(SYS_epoll_ctl, f->epfd, EPOLL_CTL_ADD, fd, &ev);
	if (r == 0)
		s->added = true;
	return (int)r;
}

static void *waiter_thread(void *arg)
{
	struct xsc_fdwait *f = arg;
	struct epoll_event evs[64];

	atomic_store(&f->tid, (int)xsc__sys0(SYS_gettid));
	for (;;) {
		long n = xsc__sys4(SYS_epoll_wait, f->epfd, evs, 64, -1);
		bool moved = false;

		if (n < 0)
			continue;	/* -EINTR */
		pthread_mutex_lock(&f->lock);
		for (long i = 0; i < n; i++) {
			int fd = evs[i].data.fd;
			uint32_t re = evs[i].events;
			if (fd == f->evfd) {
				pthread_mutex_unlock(&f->lock);
				xsc__own_thread_end();
				return NULL;	/* the handle closes */
			}
			struct waiter **pp = &f->fds[fd].w;
			while (*pp) {
				struct waiter *w = *pp;
				if (re & (w->events | EPOLLERR | EPOLLHUP)) {
					*pp = w->next;
					w->revents = (int32_t)re;
					w->next = f->done;
					f->done = w;
					moved = true;
				} else {
					pp = &w->next;
				}
			}
			if (f->fds[fd].w)
				arm(f, fd);	/* the others wait on */
		}
		pthread_mutex_unlock(&f->lock);
		if (moved)
			xsc__kick(f->x);
	}
}

int xsc__fdwait_start(struct xsc *x)
{
	struct xsc_fdwait *f = map(sizeof(*f));
	struct epoll_event ev = { .events = EPOLLIN };

	if (!f)
		return -ENOMEM;
	pthread_mutex_init(&f->lock, NULL);
	f->x = x;
	f->epfd = xsc__fd_aside((int)xsc__sys1(SYS_epoll_create1, EPOLL_CLOEXEC));
	f->evfd = xsc__fd_aside((int)xsc__sys2(SYS_eventfd2, 0, EFD_CLOEXEC));
	ev.data.fd = f->evfd;
	if (f->epfd < 0 || f->evfd < 0 ||
	    xsc__sys4(SYS_epoll_ctl, f->epfd, EPOLL_CTL_ADD, f->evfd, &ev) < 0 ||
	    /* the program's signals are not for this thread: one it sent
	     * to the process would otherwise be taken here (and kill it,
	     * for a signal with the default action every thread blocks) */
	    xsc__own_thread_spawn(&f->th, 0, waiter_thread, f, &f->tid) != 0) {
		if (f->epfd >= 0)
			close(f->epfd);
		if (f->evfd >= 0)
			close(f->evfd);
		munmap(f, sizeof(*f));
		return -EAGAIN;
	}
	x->fdw = f;
	return 0;
}

int xsc__fdwait_add(struct xsc *x, int fd, unsigned events, uint64_t tag)
{
	struct xsc_fdwait *f = x->fdw;
	struct waiter *w;
	int r;

	if (fd < 0)
		return -EBADF;
	pthread_mutex_lock(&f->lock);
	if (fd == f->evfd || fd == f->epfd || !grow(f, fd) || !(w = node(f))) {
		pthread_mutex_unlock(&f->lock);
		return -ENOMEM;
	}
	w->tag = tag;
	w->events = events;
	w->next = f->fds[fd].w;
	f->fds[fd].w = w;
	r = arm(f, fd);
	if (r < 0) {	/* epoll refuses it (a regular file): no wait */
		f->fds[fd].w = w->next;
		w->next = f->free;
		f->free = w;
	} else {
		x->inflight_waits++;
	}
	pthread_mutex_unlock(&f->lock);
	return r;
}

int xsc__fdwait_reap(struct xsc *x)
{
	struct xsc_fdwait *f = x->fdw;
	struct waiter *w, *last = NULL;
	int n = 0;

	if (!f || !__atomic_load_n(&f->done, __ATOMIC_RELAXED))
		return 0;
	pthread_mutex_lock(&f->lock);
	w = f->done;
	f->done = NULL;
	pthread_mutex_unlock(&f->lock);
	for (struct waiter *i = w; i; i = i->next, n++) {
		xsc__wait_done(x, i->tag, i->revents);
		last = i;
	}
	if (last) {
		pthread_mutex_lock(&f->lock);
		last->next = f->free;
		f->free = w;
		pthread_mutex_unlock(&f->lock);
	}
	return n;
}

bool xsc__fdwait_thread(const struct xsc *x, int tid, uint64_t *tcb)
{
	const struct xsc_fdwait *f = x->fdw;

	if (!f || atomic_load(&f->tid) != tid)
		return false;
	*tcb = (uint64_t)f->th;	/* glibc x86-64: a pthread_t is its TCB */
	return true;
}

/* A forked child's copy: the thread is the parent's, the fds the child's. */
void xsc__fdwait_forget(struct xsc *x)
{
	struct xsc_fdwait *f = x->fdw;

	if (!f)
		return;
	xsc__sys1(SYS_close, f->epfd);
	xsc__sys1(SYS_close, f->evfd);
	if (f->fds)
		munmap(f->fds, f->nfds * sizeof(*f->fds));
	munmap(f, sizeof(*f));
	x->fdw = NULL;
}

void xsc__fdwait_stop(struct xsc *x)
{
	struct xsc_fdwait *f = x->fdw;
	uint64_t one = 1;

	if (!f)
		return;
	if (xsc__sys3(SYS_write, f->evfd, &one, sizeof(one)) == sizeof(one))
		pthread_join(f->th, NULL);
	close(f->epfd);
	close(f->evfd);
	/* the node chunks stay mapped: a few pages per handle that waited */
	if (f->fds)
		munmap(f->fds, f->nfds * sizeof(*f->fds));
	munmap(f, sizeof(*f));
	x->fdw = NULL;
}
