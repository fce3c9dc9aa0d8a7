/*
 * ucopy.c - fault-safe copies of caller memory.
 *
 * A few io_uring translations must read a small structure the caller
 * points to (a timespec, a pollfd) before the request can be described, or
 * write one field back after it.  A plain load from a bad pointer would
 * crash the process where the synchronous call returns -EFAULT, so these
 * copies go through the kernel: process_vm_readv/writev on our own pid
 * report -EFAULT instead.  They cost a crossing, and only the translations
 * that need them use them (see the notes in src/table.c).
 */
#include "internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rawsys.h"

/* Our pid, refreshed in a forked child (one getpid per copy would double
 * the cost of every checked copy). */
static _Atomic long self_pid;

static void forget_pid(void)
{
	atomic_store(&self_pid, 0);
}

static void watch_fork(void)
{
	pthread_atfork(NULL, NULL, forget_pid);
}

static long my_pid(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	long pid = atomic_load(&self_pid);

	if (!pid) {
		pthread_once(&once, watch_fork);
		pid = xsc__sys0(SYS_getpid);
		atomic_store(&self_pid, pid);
	}
	return pid;
}

static int xfer(long nr, void *local, void *remote, size_t len)
{
	struct iovec l = { local, len }, r = { remote, len };
	long ret = xsc__sys6(nr, my_pid(), (long)&l, 1, (long)&r, 1, 0);

	if (ret == (long)len)
		return 0;
	return ret < 0 && ret != -EFAULT ? (int)ret : -EFAULT;
}

int xsc__ucopy_in(void *dst, const void *usrc, size_t len)
{
	if (!usrc)
		return -EFAULT;
	return xfer(SYS_process_vm_readv, dst, (void *)usrc, len);
}

int xsc__ucopy_out(void *udst, const void *src, size_t len)
{
	if (!udst)
		return -EFAULT;
	return xfer(SYS_process_vm_writev, (void *)src, udst, len);
}
