/* Multi-call semantics on every executor: bad input rejected before
 * anything runs, stop at the first failed checked call, forwarded fds,
 * lengths and statx sizes, a failed producer cancels its consumers,
 * EFAULT in a call's slot, private fds, looped chains that read a pipe in
 * short pieces, the path and crossings reported, a chain entry posted by
 * hand refused, no fd leak.
 * xsc-test: per-backend */
#include <fcntl.h>
#include <linux/stat.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "multicall.h"
#include "testlib.h"

static void set(struct xsc_mc *c, long nr, unsigned fl, long a0, long a1,
		long a2, long a3, long a4)
{
	memset(c, 0, sizeof(*c));
	c->nr = nr, c->flags = fl;
	c->args[0] = a0, c->args[1] = a1, c->args[2] = a2, c->args[3] = a3;
	c->args[4] = a4;
}

static int wfd;
static void *writer(void *arg)
{
	char chunk[700];
	(void)arg;
	for (int i = 0; i < 100; i++) {
		memset(chunk, 'a' + i % 26, sizeof(chunk));
		CHECK_EQ(write(wfd, chunk, 1 + (i * 37) % 700), 1 + (i * 37) % 700);
		if (i % 10 == 0)
			usleep(1000);
	}
	close(wfd);
	return NULL;
}

static void bad_input(struct xsc *x, int p[2])
{
	struct xsc_mc c[XSC_MC_MAX + 1];
	struct xsc_mc_opts o;
	char b[4];

	CHECK_EQ(xsc_multicall(x, c, 0), 0);
	CHECK_EQ(xsc_multicall(x, c, XSC_MC_MAX + 1), -E2BIG);
	set(&c[0], SYS_write, 0, p[1], (long)"zz", 2, 0, 0);
	set(&c[1], SYS_write, 0, p[1], (long)"zz", 2, 0, 0);
	xsc_mc_fwd(&c[1], 2, XSC_MC_RET(1));	/* not earlier */
	CHECK_EQ(xsc_multicall(x, c, 2), -EINVAL);
	xsc_mc_fwd(&c[1], 2, XSC_MC_RET(5));
	CHECK_EQ(xsc_multicall(x, c, 2), -EINVAL);
	c[1].fwd = 0, c[1].flags = 1u << 7;	/* unknown flag */
	CHECK_EQ(xsc_multicall(x, c, 2), -EINVAL);
	c[1].flags = XSC_MC_PRIVATE;		/* not an open */
	CHECK_EQ(xsc_multicall(x, c, 2), -EINVAL);
	c[1].flags = 0;
	xsc_mc_opts_init(&o);
	o.max_iter = 3, o.until_call = 2, o.until_op = XSC_MC_LE;
	CHECK_EQ(xsc_multicall_ex(x, c, 2, &o, NULL), -EINVAL);
	o.until_call = 0, o.max_iter = XSC_MC_ITER_MAX + 1;
	CHECK_EQ(xsc_multicall_ex(x, c, 2, &o, NULL), -E2BIG);
	/* loop body bounds: inside the chain, not empty, holding until_call;
	 * not without a loop */
	o.max_iter = 3, o.until_call = 0;
	o.loop_first = 1, o.loop_end = 2;	/* until_call before the body */
	CHECK_EQ(xsc_multicall_ex(x, c, 2, &o, NULL), -EINVAL);
	o.until_call = 1, o.loop_first = 1, o.loop_end = 1;
	CHECK_EQ(xsc_multicall_ex(x, c, 2, &o, NULL), -EINVAL);
	o.loop_end = 3;
	CHECK_EQ(xsc_multicall_ex(x, c, 2, &o, NULL), -EINVAL);
	o.loop_first = -1, o.loop_end = 0;
	CHECK_EQ(xsc_multicall_ex(x, c, 2, &o, NULL), -EINVAL);
	o.max_iter = 0, o.loop_first = 1, o.until_call = 0;
	CHECK_EQ(xsc_multicall_ex(x, c, 2, &o, NULL), -EINVAL);
	/* an epilogue call may not read the body's results */
	set(&c[2], SYS_write, 0, p[1], (long)"zz", 2, 0, 0);
	xsc_mc_fwd(&c[2], 2, XSC_MC_RET(1));
	xsc_mc_opts_init(&o);
	o.max_iter = 3, o.until_call = 1, o.until_op = XSC_MC_LE;
	o.loop_first = 1, o.loop_end = 2;
	CHECK_EQ(xsc_multicall_ex(x, c, 3, &o, NULL), -EINVAL);
	/* nothing ran: the pipe is empty */
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	CHECK_EQ(read(p[0], b, sizeof(b)), -1);
	fcntl(p[0], F_SETFL, 0);
}

static void stops(struct xsc *x, const char *dir)
{
	struct xsc_mc c[6];
	char path[300], buf[64] = { 0 };

	snprintf(path, sizeof(path), "%s/data", dir);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	CHECK_EQ(write(fd, "0123456789", 10), 10);
	close(fd);
	/* open -> read -> close; ENOENT checked stops at 0 */
	set(&c[0], SYS_openat, XSC_MC_CHECK, AT_FDCWD, (long)"/nonexistent/x", O_RDONLY, 0, 0);
	set(&c[1], SYS_read, 0, 0, (long)buf, 4, 0, 0);
	xsc_mc_fwd(&c[1], 0, XSC_MC_RET(0));
	set(&c[2], SYS_close, 0, 0, 0, 0, 0, 0);
	xsc_mc_fwd(&c[2], 0, XSC_MC_RET(0));
	CHECK_EQ(xsc_multicall(x, c, 3), 0);
	CHECK_EQ(c[0].ret, -ENOENT);
	CHECK_EQ(c[1].ret, -ECANCELED);
	CHECK_EQ(c[2].ret, -ECANCELED);
	/* unchecked: the consumers are canceled, independent calls run */
	c[0].flags = 0;
	set(&c[3], SYS_getppid, 0, 0, 0, 0, 0, 0);
	CHECK_EQ(xsc_multicall(x, c, 4), 4);
	CHECK_EQ(c[1].ret, -ECANCELED);
	CHECK_EQ(c[3].ret, getppid());
	/* private fd: statx size feeds the read count; EFAULT in a slot */
	struct statx stx;
	set(&c[0], SYS_statx, XSC_MC_CHECK, AT_FDCWD, (long)path, 0, STATX_SIZE, (long)&stx);
	set(&c[1], SYS_openat, XSC_MC_CHECK | XSC_MC_PRIVATE, AT_FDCWD, (long)path, O_RDONLY, 0, 0);
	set(&c[2], SYS_read, XSC_MC_CHECK | XSC_MC_FULL, 0, (long)buf, 0, 0, 0);
	xsc_mc_fwd(&c[2], 0, XSC_MC_RET(1));
	xsc_mc_fwd(&c[2], 2, XSC_MC_STATX_SIZE(0));
	set(&c[3], SYS_read, 0, 0, 8, 4, 0, 0);		/* bad buffer */
	xsc_mc_fwd(&c[3], 0, XSC_MC_RET(1));
	set(&c[4], SYS_close, XSC_MC_CHECK, 0, 0, 0, 0, 0);
	xsc_mc_fwd(&c[4], 0, XSC_MC_RET(1));
	CHECK_EQ(xsc_multicall(x, c, 5), 5);
	CHECK_EQ(c[2].ret, 10);
	CHECK(memcmp(buf, "0123456789", 10) == 0);
	CHECK_EQ(c[3].ret, 0);	/* at EOF: nothing to copy, no fault */
	CHECK_EQ(c[1].ret, 0);	/* private: the number is not reported */
	/* a checked failure stops; a private fd left open is installed */
	set(&c[2], SYS_read, XSC_MC_CHECK, 0, 8, 4, 0, 0);
	xsc_mc_fwd(&c[2], 0, XSC_MC_RET(0));	/* indices within c + 1 */
	set(&c[3], SYS_close, 0, 0, 0, 0, 0, 0);
	xsc_mc_fwd(&c[3], 0, XSC_MC_RET(0));
	CHECK_EQ(xsc_multicall(x, c + 1, 3), 1);
	CHECK_EQ(c[2].ret, -EFAULT);
	CHECK_EQ(c[3].ret, -ECANCELED);
	CHECK_GE(c[1].ret, 0);
	CHECK_EQ(close((int)c[1].ret), 0);	/* a real fd */
}

static void loop_pipe(struct xsc *x, const char *dir)
{
	struct xsc_mc c[2];
	struct xsc_mc_opts o;
	struct xsc_mc_report rep;
	char path[300], buf[512];
	pthread_t t;
	int p[2], total = 0;

	for (int i = 0; i < 100; i++)
		total += 1 + (i * 37) % 700;
	snprintf(path, sizeof(path), "%s/loop", dir);
	int out = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	CHECK_EQ(pipe(p), 0);
	wfd = p[1];
	pthread_create(&t, NULL, writer, NULL);
	set(&c[0], SYS_read, XSC_MC_CHECK, p[0], (long)buf, sizeof(buf), 0, 0);
	set(&c[1], SYS_write, XSC_MC_CHECK, out, (long)buf, 0, 0, 0);
	xsc_mc_fwd(&c[1], 2, XSC_MC_RET(0));
	xsc_mc_opts_init(&o);
	o.max_iter = 100000, o.until_call = 0, o.until_op = XSC_MC_LE;
	o.sum_call = 1;
	CHECK_EQ(xsc_multicall_ex(x, c, 2, &o, &rep), 2);
	pthread_join(t, NULL);
	CHECK_EQ(rep.stop, XSC_MC_UNTIL);
	CHECK_EQ(c[0].ret, 0);
	CHECK_EQ(c[1].ret, -ECANCELED);	/* not run in the last iteration */
	CHECK_EQ((long)rep.sum, total);
	CHECK_EQ(lseek(out, 0, SEEK_END), total);
	printf("pipe loop: %u iterations on %s (%s), %u crossings, %u resumes\n",
	       rep.iters, rep.path == XSC_MC_URING ? "uring" : rep.path == XSC_MC_WORKER ?
	       "worker" : "inline", rep.reason, rep.crossings, rep.resumes);
	/* the bound */
	lseek(out, 0, SEEK_SET);
	set(&c[0], SYS_read, 0, out, (long)buf, 100, 0, 0);
	o.max_iter = 3, o.sum_call = 0;
	CHECK_EQ(xsc_multicall_ex(x, c, 2, &o, &rep), 2);
	CHECK_EQ(rep.stop, XSC_MC_BOUND);
	CHECK_EQ(rep.iters, 3);
	CHECK_EQ((long)rep.sum, 300);
	close(p[0]);
	close(out);
}

/* The whole copy as ONE looped chain: the opens as its prologue, the
 * read/write body until read returns 0, the closes as its epilogue.  On
 * io_uring the fds are private (direct descriptors, never classified):
 * two enters for the file, one for the opens and every block (the short
 * read at EOF breaks the link), one for the closes. */
static void whole_file(struct xsc *x, const char *dir)
{
	struct xsc_mc c[6];
	struct xsc_mc_opts o;
	struct xsc_mc_report rep;
	char src[300], dst[300];
	static char data[81920 + 123], back[sizeof(data)], buf[4096];
	int fds0 = count_fds();

	snprintf(src, sizeof(src), "%s/whole.src", dir);
	snprintf(dst, sizeof(dst), "%s/whole.dst", dir);
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (char)(i * 13 + (i >> 9));
	int fd = open(src, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK_EQ(write(fd, data, sizeof(data)), (long)sizeof(data));
	close(fd);
	for (int round = 0; round < 3; round++) {
		/* round 1: the source is missing (the chain stops at call 0);
		 * round 2: a bound of 5 iterations, then the epilogue */
		set(&c[0], SYS_openat, XSC_MC_CHECK | XSC_MC_PRIVATE, AT_FDCWD,
		    (long)(round == 1 ? dst : src), O_RDONLY, 0, 0);
		if (round == 1)
			c[0].args[1] = (long)"/nonexistent/xsc";
		set(&c[1], SYS_openat, XSC_MC_CHECK | XSC_MC_PRIVATE, AT_FDCWD, (long)dst,
		    O_WRONLY | O_CREAT | O_TRUNC, 0644, 0);
		set(&c[2], SYS_read, XSC_MC_CHECK, 0, (long)buf, sizeof(buf), 0, 0);
		xsc_mc_fwd(&c[2], 0, XSC_MC_RET(0));
		set(&c[3], SYS_write, XSC_MC_CHECK, 0, (long)buf, 0, 0, 0);
		xsc_mc_fwd(&c[3], 0, XSC_MC_RET(1));
		xsc_mc_fwd(&c[3], 2, XSC_MC_RET(2));
		set(&c[4], SYS_close, XSC_MC_CHECK, 0, 0, 0, 0, 0);
		xsc_mc_fwd(&c[4], 0, XSC_MC_RET(0));
		set(&c[5], SYS_close, XSC_MC_CHECK, 0, 0, 0, 0, 0);
		xsc_mc_fwd(&c[5], 0, XSC_MC_RET(1));
		xsc_mc_opts_init(&o);
		o.loop_first = 2, o.loop_end = 4;
		o.max_iter = round == 2 ? 5 : XSC_MC_ITER_MAX;
		o.until_call = 2, o.until_op = XSC_MC_LE, o.until_val = 0;
		o.sum_call = 3;
		o.batch = 64;	/* a guess: no fstat needed */
		int r = xsc_multicall_ex(x, c, 6, &o, &rep);
		printf("whole-file chain (round %d): ret %d, path %s (%s), %u iterations, "
		       "%u crossings, %u submits, stop %d\n", round, r,
		       rep.path == XSC_MC_URING ? "uring" : rep.path == XSC_MC_WORKER ?
		       "worker" : "inline", rep.reason, rep.iters, rep.crossings,
		       rep.submits, rep.stop);
		if (round == 1) {	/* nothing after the failed open ran */
			CHECK_EQ(r, 0);
			CHECK_EQ(c[0].ret, -ENOENT);
			for (int i = 1; i < 6; i++)
				CHECK_EQ(c[i].ret, -ECANCELED);
			CHECK_EQ(rep.iters, 0);
			CHECK_EQ(rep.stop, XSC_MC_FAILED);
			continue;
		}
		CHECK_EQ(r, 6);
		CHECK_EQ(c[0].ret, 0);	/* private fds closed by the chain */
		CHECK_EQ(c[1].ret, 0);
		CHECK_EQ(c[4].ret, 0);
		CHECK_EQ(c[5].ret, 0);
		long want = round == 2 ? 5 * 4096 : (long)sizeof(data);
		CHECK_EQ((long)rep.sum, want);
		CHECK_EQ(rep.stop, round == 2 ? XSC_MC_BOUND : XSC_MC_UNTIL);
		CHECK_EQ(rep.iters, round == 2 ? 5 : sizeof(data) / 4096 + 2);
		if (round == 0) {	/* the last iteration read 0: no write */
			CHECK_EQ(c[2].ret, 0);
			CHECK_EQ(c[3].ret, -ECANCELED);
		}
		fd = open(dst, O_RDONLY);
		CHECK_EQ(read(fd, back, sizeof(back)), want);
		close(fd);
		CHECK(memcmp(back, data, (size_t)want) == 0);
		CHECK_EQ(count_fds(), fds0);
		if (!strcmp(test_backend(), "uring") && round == 0 && test_read_route() ==
		    XSC_BACKEND_URING) {	/* not on the fallback (no ring) */
			CHECK_EQ(rep.path, XSC_MC_URING);
			/* opens + 20 blocks, the short last block, the closes
			 * (+1: the direct-slot table registered once) */
			CHECK(rep.submits <= 3);
			CHECK(rep.crossings <= rep.submits + 1);
		}
	}
}

static void paths(struct xsc *x, const char *dir)
{
	struct xsc_mc c[4];
	struct xsc_mc_report rep;
	char path[300], buf[16];
	const char *be = test_backend();

	snprintf(path, sizeof(path), "%s/data", dir);
	set(&c[0], SYS_openat, XSC_MC_CHECK | XSC_MC_PRIVATE, AT_FDCWD, (long)path, O_RDONLY, 0, 0);
	set(&c[1], SYS_read, XSC_MC_CHECK, 0, (long)buf, 4, 0, 0);
	xsc_mc_fwd(&c[1], 0, XSC_MC_RET(0));
	set(&c[2], SYS_close, XSC_MC_CHECK, 0, 0, 0, 0, 0);
	xsc_mc_fwd(&c[2], 0, XSC_MC_RET(0));
	CHECK_EQ(xsc_multicall_ex(x, c, 3, NULL, &rep), 3);
	CHECK_EQ(c[1].ret, 4);
	struct xsc_probe pr;
	xsc_probe_get(x, &pr);
	/* uring and sqpoll without a ring: under a seccomp filter the asked
	 * ring is ignored and the handle chooses as an auto one (by time:
	 * plain calls); io_uring missing otherwise: the fallback routes of a
	 * blocking call, syscall threads */
	int want = !strcmp(be, "worker") ? XSC_MC_WORKER :
		   !strcmp(be, "inline") ? XSC_MC_INLINE :
		   pr.uring ? XSC_MC_URING : pr.seccomp ? XSC_MC_INLINE : XSC_MC_WORKER;
	printf("open/read/close: path %d (%s), %u crossings\n", rep.path, rep.reason,
	       rep.crossings);
	CHECK_EQ(rep.path, want);
	if (!strcmp(be, "uring") && pr.uring)
		CHECK_EQ(rep.crossings, 1);	/* one io_uring_enter */
	if (!strcmp(be, "inline"))
		CHECK_EQ(rep.crossings, 3);
}

/* The worker path hands a chain over as one entry of pseudo number
 * XSC_NR_MC whose arguments are the run and the run ^ a per-process
 * cookie.  An entry a program posts with that number by hand, pointing
 * at a well-formed run, is refused (-ENOSYS) whatever it guesses for the
 * cookie, and its calls never run: the pipe stays empty. */
static void forged(struct xsc *x, int p[2])
{
	struct xsc_mc c;
	struct xsc_mc_opts o;
	struct mc_run r = { 0 };
	char b[4];
	long ret;

	xsc_mc_opts_init(&o);
	set(&c, SYS_write, 0, p[1], (long)"F", 1, 0, 0);
	c.ret = 12345;
	r.x = x, r.c = &c, r.n = 1, r.o = &o, r.le = 1, r.max = 1;
	const long guess[] = { 0, 1, -1, (long)&r, (long)&r ^ 1, (long)&r ^ -1L };
	for (size_t i = 0; i < sizeof(guess) / sizeof(guess[0]); i++) {
		int id = xsc_post(x, XSC_NR_MC, (long)&r, guess[i]);
		CHECK_GE(id, 0);
		CHECK_EQ(xsc_take(x, id, &ret), 0);
		CHECK_EQ(ret, -ENOSYS);
	}
	CHECK_EQ(c.ret, 12345);
	CHECK(!r.stopped);
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	CHECK_EQ(read(p[0], b, sizeof(b)), -1);
	fcntl(p[0], F_SETFL, 0);
}

/* A chain's read or write that stops at a fault, on a regular file: the
 * count is what read(2)/write(2) give, the position moves by the count
 * as they move it, and the next call goes on from there.  io_uring moves
 * the position or not depending on how it ran the transfer (in one go,
 * or a non-blocking try and a retry that faulted), so every variant:
 * the faulting call first in the chain or after another, page cache
 * cold or warm, read or write, on each path. */
static void fault_pos(struct xsc *x, const char *dir)
{
	static const char digits[] = "0123456789";
	struct xsc_mc c[3];
	struct xsc_mc_opts o;
	char path[300], next[4], one;
	char *pg = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	CHECK(pg != MAP_FAILED);
	memcpy(pg + 4096 - 3, "abc", 3);
	CHECK_EQ(mprotect(pg + 4096, 4096, PROT_NONE), 0);
	snprintf(path, sizeof(path), "%s/cold", dir);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	for (int v = 0; v < 8; v++) {
		bool cold = v & 1, lead = v & 2, wr = v & 4;
		for (int path_i = XSC_MC_AUTO; path_i <= XSC_MC_INLINE; path_i++) {
			unsigned n = 0, f;
			CHECK_EQ(ftruncate(fd, 0), 0);
			CHECK_EQ(pwrite(fd, "0123456789", 10, 0), 10);
			CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
			CHECK_EQ(fdatasync(fd), 0);
			if (cold)
				CHECK_EQ(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
			if (lead)
				set(&c[n++], SYS_read, 0, fd, (long)&one, 1, 0, 0);
			f = n;
			set(&c[n++], wr ? SYS_write : SYS_read, 0, fd,
			    (long)(pg + 4096 - 3), 7, 0, 0);
			memset(next, 0, sizeof(next));
			set(&c[n++], SYS_read, 0, fd, (long)next, 2, 0, 0);
			xsc_mc_opts_init(&o);
			o.path = path_i;
			int r = xsc_multicall_ex(x, c, n, &o, NULL);
			if (r == -EOPNOTSUPP || r == -ENOSYS)
				continue;	/* that path declined the chain */
			long at = lead ? 1 : 0;
			if (c[f].ret != 3 || c[f + 1].ret != 2 ||
			    memcmp(next, digits + at + 3, 2) != 0 ||
			    lseek(fd, 0, SEEK_CUR) != at + 5) {
				fprintf(stderr, "fault_pos %s%s%s path %d: ret %ld, next "
					"ret %ld \"%.2s\", position %ld (want 3, 2 \"%.2s\", %ld)\n",
					wr ? "write" : "read", cold ? " cold" : "",
					lead ? " after a read" : "", path_i, (long)c[f].ret,
					(long)c[f + 1].ret, next, (long)lseek(fd, 0, SEEK_CUR),
					digits + at + 3, at + 5);
				exit(1);
			}
		}
	}
	close(fd);
	munmap(pg, 8192);
}

int main(void)
{
	int fds0 = count_fds(), p[2];
	struct xsc *x;

	CHECK_EQ(xsc_open(&x, NULL), 0);
	CHECK_EQ(pipe(p), 0);
	bad_input(x, p);
	forged(x, p);
	stops(x, scratch_dir());
	loop_pipe(x, scratch_dir());
	paths(x, scratch_dir());
	whole_file(x, scratch_dir());
	fault_pos(x, scratch_dir());
	finish_handle(x, p, fds0);
	return 0;
}
