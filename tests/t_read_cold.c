/* A read of a regular file that is only partly in the page cache returns
 * what read(2) returns: the whole count (or up to end of file), never a
 * short count at the first page not cached.  io_uring's non-blocking form
 * (RWF_NOWAIT, which xsc adds so that O_NONBLOCK pipes and sockets answer
 * -EAGAIN) stops there; xsc then reads the rest in the blocking form
 * (docs/design.md, "Reads and writes").
 * For read, readv (40 iovecs: more than one window of the rest) and
 * preadv2 at the file position, through a handle and from a fiber, and
 * for read as a multi-call's first call on every path:
 *  1. the first 1 MiB of an 8 MiB file cached, the rest evicted: a 4 MiB
 *     read from offset 0 gives what the plain read gives in the same
 *     state (4 MiB), the right bytes, and the position after them;
 *  2. the same at offset 6 MiB: 2 MiB, up to end of file.
 * The test skips where the file system keeps the pages (tmpfs).
 * xsc-test: per-backend+auto
 * xsc-test: dear-host */
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "testlib.h"
#include "xsc.h"

#define MIB (1L << 20)
#define SIZE (8 * MIB)
#define NIOV 40

static char path[300];
static unsigned char *want, *got;

static unsigned char byte_at(long i)
{
	return (unsigned char)(i * 7 + (i >> 12));
}

/* Opens the file with [at, at + 1 MiB) cached and the rest evicted, the
 * position at `at`.  Returns the fd, or -1 if the pages stay resident. */
/* Opens the file with its first MiB from `at` in the page cache and some
 * page of the 4 MiB read from `at` after it not: what a partly cached
 * read needs.  The eviction is tried again when the kernel keeps the
 * pages once (t_read_cold[sqpoll] failed so once in a make-test loop,
 * with other tests loading the machine); -1 when it keeps them every
 * time (tmpfs). */
static int cold_from(long at)
{
	unsigned char vec[SIZE / 4096];
	long pg = sysconf(_SC_PAGESIZE);
	long end = at + 4 * MIB < SIZE ? at + 4 * MIB : SIZE;

	for (int attempt = 0; attempt < 20; attempt++) {
		int fd = open(path, O_RDONLY), cold = 0;
		void *m;

		CHECK_GE(fd, 0);
		CHECK_EQ(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
		CHECK_EQ(posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM), 0);	/* no readahead */
		CHECK_EQ(pread(fd, got, MIB, at), MIB);
		m = mmap(NULL, SIZE, PROT_READ, MAP_SHARED, fd, 0);
		CHECK(m != MAP_FAILED);
		CHECK_EQ(mincore(m, SIZE, vec), 0);
		for (long p = (at + MIB) / pg; p < end / pg; p++)
			if (!(vec[p] & 1))
				cold++;
		CHECK_EQ(munmap(m, SIZE), 0);
		CHECK_EQ(lseek(fd, at, SEEK_SET), at);
		if (cold)
			return fd;
		close(fd);
		if (attempt == 0)
			fprintf(stderr, "at %ld MiB: every page of the read stayed cached; "
				"evicting again\n", at / MIB);
		usleep(10000);
	}
	return -1;
}

enum how { READ, READV, PREADV2, NHOW };
static const char *const how_name[] = { "read", "readv", "preadv2" };

typedef long (*call_fn)(void *ctx, long nr, long a0, long a1, long a2,
			long a3, long a4, long a5);

static long by_handle(void *ctx, long nr, long a0, long a1, long a2, long a3,
		      long a4, long a5)
{
	return xsc_call(ctx, nr, a0, a1, a2, a3, a4, a5);
}

static long by_fiber(void *ctx, long nr, long a0, long a1, long a2, long a3,
		     long a4, long a5)
{
	(void)ctx;
	return xsc_syscall(nr, a0, a1, a2, a3, a4, a5);
}

static long plain(void *ctx, long nr, long a0, long a1, long a2, long a3,
		  long a4, long a5)
{
	(void)ctx;
	return syscall(nr, a0, a1, a2, a3, a4, a5);
}

static long one_read(call_fn call, void *ctx, enum how how, int fd, long len)
{
	static struct iovec iov[NIOV];
	long each = len / NIOV;

	for (int i = 0; i < NIOV; i++)
		iov[i] = (struct iovec){ got + i * each,
					 (size_t)(i == NIOV - 1 ? len - i * each : each) };
	switch (how) {
	case READ:
		return call(ctx, SYS_read, fd, (long)got, len, 0, 0, 0);
	case READV:
		return call(ctx, SYS_readv, fd, (long)iov, NIOV, 0, 0, 0);
	default:
		return call(ctx, SYS_preadv2, fd, (long)iov, NIOV, -1, 0, 0);
	}
}

/* Returns 0, or 77 when the pages cannot be evicted here. */
static int cases(call_fn call, void *ctx, const char *via)
{
	for (int how = 0; how < NHOW; how++)
		for (long at = 0; at <= 6 * MIB; at += 6 * MIB) {
			long len = 4 * MIB, r, expect;
			int fd = cold_from(at);

			if (fd < 0)
				return 77;
			expect = one_read(plain, NULL, how, fd, len);	/* the kernel's answer */
			CHECK_EQ(expect, at + len <= SIZE ? len : SIZE - at);
			close(fd);
			fd = cold_from(at);
			if (fd < 0)
				return 77;
			memset(got, 0, (size_t)len);
			r = one_read(call, ctx, how, fd, len);
			if (r != expect)
				fprintf(stderr, "%s via %s at %ld MiB: %ld, natively %ld\n",
					how_name[how], via, at / MIB, r, expect);
			CHECK_EQ(r, expect);
			CHECK(memcmp(got, want + at, (size_t)expect) == 0);
			CHECK_EQ(lseek(fd, 0, SEEK_CUR), at + expect);
			close(fd);
		}
	return 0;
}

/* The same read as the first call of a multi-call [read, lseek] on each
 * path: the chain's lseek sees the position the whole read left. */
static void multicall_cases(struct xsc *x)
{
	static const int paths[] = { XSC_MC_AUTO, XSC_MC_URING, XSC_MC_WORKER,
				     XSC_MC_INLINE };

	for (unsigned p = 0; p < sizeof(paths) / sizeof(paths[0]); p++)
		for (long at = 0; at <= 6 * MIB; at += 6 * MIB) {
			long len = 4 * MIB, expect = at + len <= SIZE ? len : SIZE - at;
			int fd = cold_from(at);
			if (fd < 0)
				skip("the page cache kept this file's pages for 200 ms "
				     "(%s): no partly cached read", path);
			struct xsc_mc c[2] = {
				{ .nr = SYS_read, .args = { fd, (long)got, len } },
				{ .nr = SYS_lseek, .args = { fd, 0, SEEK_CUR } },
			};
			struct xsc_mc_opts o;
			struct xsc_mc_report rep;

			CHECK_GE(fd, 0);
			xsc_mc_opts_init(&o);
			o.path = paths[p];
			memset(got, 0, (size_t)len);
			CHECK_EQ(xsc_multicall_ex(x, c, 2, &o, &rep), 2);
			if (c[0].ret != expect)
				fprintf(stderr, "multi-call read on path %d at %ld MiB: %ld\n",
					rep.path, at / MIB, c[0].ret);
			CHECK_EQ(c[0].ret, expect);
			CHECK_EQ(c[1].ret, at + expect);
			CHECK(memcmp(got, want + at, (size_t)expect) == 0);
			close(fd);
		}
}

static int fiber_main(int argc, char **argv)
{
	(void)argc; (void)argv;
	if (cases(by_fiber, NULL, "fiber") == 77)
		skip("the page cache kept this file's pages for 200 ms (%s): "
		     "no partly cached read", path);
	return 0;
}

int main(int argc, char **argv)
{
	struct xsc_runtime_config rc;
	struct xsc *x;
	int fd, r;

	want = malloc(SIZE);
	got = malloc(SIZE);
	CHECK(want && got);
	for (long i = 0; i < SIZE; i++)
		want[i] = byte_at(i);
	snprintf(path, sizeof(path), "%s/f", scratch_dir());
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	CHECK_GE(fd, 0);
	CHECK_EQ(write(fd, want, SIZE), SIZE);
	CHECK_EQ(fsync(fd), 0);	/* dirty pages cannot be evicted */
	close(fd);

	CHECK_EQ(xsc_open(&x, NULL), 0);
	r = cases(by_handle, x, "handle");
	if (r == 77)
		skip("the page cache keeps this file's pages (%s): no partly cached read",
		     path);
	multicall_cases(x);
	CHECK_EQ(xsc_close(x), 0);
	xsc_runtime_config_init(&rc);
	rc.nthreads = 1;
	CHECK_EQ(xsc_main(fiber_main, argc, argv, &rc), 0);
	printf("ok (%s)\n", test_backend());
	return 0;
}
