/* The AUTO path of multi-calls on an auto handle: chosen by expected
 * time (src/multicall_cost.c), not by crossings.  The model, from the
 * host profile, is sane; a read/write chain per block never goes to a syscall thread (a
 * hand-off that costs more than the two calls it saves) and runs inline;
 * with the model set by hand, a chain and a loop take io_uring exactly
 * when it is cheaper; a chain whose calls route to syscall threads runs
 * inline; paths the caller asks for are obeyed; results are always those
 * of the plain calls. */
#include <fcntl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "multicall.h"
#include "testlib.h"

static const char *pname(int p)
{
	return p == XSC_MC_URING ? "uring" : p == XSC_MC_WORKER ? "worker" : "inline";
}

static void set(struct xsc_mc *c, long nr, unsigned fl, long a0, long a1, long a2,
		long a3)
{
	memset(c, 0, sizeof(*c));
	c->nr = nr, c->flags = fl;
	c->args[0] = a0, c->args[1] = a1, c->args[2] = a2, c->args[3] = a3;
}

static void model(unsigned tsys, unsigned tenter, unsigned top)
{
	struct mc_model m = { tsys, tenter, top };
	xsc__mc_model_set(&m);
}

static char src[300], dst[300];
static const char data[] = "0123456789abcdefghijklmnopqrstuvwxyz";

/* One block per chain: [read(in), write(out, RET(0))], the shape of
 * xcp's "mc" strategy and bench copy's multi-call column. */
static struct xsc_mc_report rw_chain(struct xsc *x, int want)
{
	struct xsc_mc c[2];
	struct xsc_mc_opts o;
	struct xsc_mc_report rep;
	char buf[64], back[64];
	int in = open(src, O_RDONLY), out = open(dst, O_RDWR | O_CREAT | O_TRUNC, 0644);

	CHECK_GE(in, 0);
	CHECK_GE(out, 0);
	set(&c[0], SYS_read, XSC_MC_CHECK, in, (long)buf, 10, 0);
	set(&c[1], SYS_write, XSC_MC_CHECK, out, (long)buf, 0, 0);
	xsc_mc_fwd(&c[1], 2, XSC_MC_RET(0));
	xsc_mc_opts_init(&o);
	o.path = want;
	CHECK_EQ(xsc_multicall_ex(x, c, 2, &o, &rep), 2);
	CHECK_EQ(c[0].ret, 10);
	CHECK_EQ(c[1].ret, 10);
	CHECK_EQ(pread(out, back, sizeof(back), 0), 10);
	CHECK(memcmp(back, data, 10) == 0);
	close(in);
	close(out);
	return rep;
}

/* [openat PRIVATE, read, close]: nothing to classify, one enter. */
static struct xsc_mc_report orc_chain(struct xsc *x)
{
	struct xsc_mc c[3];
	struct xsc_mc_report rep;
	char buf[8] = { 0 };

	set(&c[0], SYS_openat, XSC_MC_CHECK | XSC_MC_PRIVATE, AT_FDCWD, (long)src, O_RDONLY, 0);
	set(&c[1], SYS_read, XSC_MC_CHECK, 0, (long)buf, 4, 0);
	xsc_mc_fwd(&c[1], 0, XSC_MC_RET(0));
	set(&c[2], SYS_close, XSC_MC_CHECK, 0, 0, 0, 0);
	xsc_mc_fwd(&c[2], 0, XSC_MC_RET(0));
	CHECK_EQ(xsc_multicall_ex(x, c, 3, NULL, &rep), 3);
	CHECK_EQ(c[1].ret, 4);
	CHECK(memcmp(buf, data, 4) == 0);
	CHECK_EQ(c[0].ret, 0);
	return rep;
}

/* A whole copy as one looped chain, 7-byte blocks. */
static struct xsc_mc_report copy_loop(struct xsc *x)
{
	struct xsc_mc c[6];
	struct xsc_mc_opts o;
	struct xsc_mc_report rep;
	char buf[7], back[64];

	set(&c[0], SYS_openat, XSC_MC_CHECK | XSC_MC_PRIVATE, AT_FDCWD, (long)src, O_RDONLY, 0);
	set(&c[1], SYS_openat, XSC_MC_CHECK | XSC_MC_PRIVATE, AT_FDCWD, (long)dst,
	    O_WRONLY | O_CREAT | O_TRUNC, 0644);
	set(&c[2], SYS_read, XSC_MC_CHECK, 0, (long)buf, sizeof(buf), 0);
	xsc_mc_fwd(&c[2], 0, XSC_MC_RET(0));
	set(&c[3], SYS_write, XSC_MC_CHECK, 0, (long)buf, 0, 0);
	xsc_mc_fwd(&c[3], 0, XSC_MC_RET(1));
	xsc_mc_fwd(&c[3], 2, XSC_MC_RET(2));
	set(&c[4], SYS_close, XSC_MC_CHECK, 0, 0, 0, 0);
	xsc_mc_fwd(&c[4], 0, XSC_MC_RET(0));
	set(&c[5], SYS_close, XSC_MC_CHECK, 0, 0, 0, 0);
	xsc_mc_fwd(&c[5], 0, XSC_MC_RET(1));
	xsc_mc_opts_init(&o);
	o.loop_first = 2, o.loop_end = 4;
	o.max_iter = XSC_MC_ITER_MAX;
	o.until_call = 2, o.until_op = XSC_MC_LE, o.until_val = 0;
	o.sum_call = 3;
	CHECK_EQ(xsc_multicall_ex(x, c, 6, &o, &rep), 6);
	CHECK_EQ((long)rep.sum, (long)sizeof(data) - 1);
	CHECK_EQ(rep.stop, XSC_MC_UNTIL);
	int fd = open(dst, O_RDONLY);
	CHECK_EQ(read(fd, back, sizeof(back)), (long)sizeof(data) - 1);
	CHECK(memcmp(back, data, sizeof(data) - 1) == 0);
	close(fd);
	return rep;
}

/* [pread64]: positional calls route to the syscall threads here. */
static struct xsc_mc_report pread_chain(struct xsc *x, int want)
{
	struct xsc_mc c[1];
	struct xsc_mc_opts o;
	struct xsc_mc_report rep;
	char buf[8] = { 0 };
	int fd = open(src, O_RDONLY);

	set(&c[0], SYS_pread64, XSC_MC_CHECK, fd, (long)buf, 3, 5);
	xsc_mc_opts_init(&o);
	o.path = want;
	CHECK_EQ(xsc_multicall_ex(x, c, 1, &o, &rep), 1);
	CHECK_EQ(c[0].ret, 3);
	CHECK(memcmp(buf, data + 5, 3) == 0);
	close(fd);
	return rep;
}

static void show(const char *what, const struct xsc_mc_report *r)
{
	printf("%-40s path %-6s (%s), %u crossings\n", what, pname(r->path), r->reason,
	       r->crossings);
}

int main(void)
{
	int fds0 = count_fds(), p[2];
	struct xsc_mc_report rep;
	struct xsc_probe pr;
	struct timespec t0, t1;
	struct xsc *x;
	const char *why;

	unsetenv("XSC_BACKEND");	/* an auto handle: AUTO chooses by time */
	CHECK_EQ(xsc_open(&x, NULL), 0);
	CHECK_EQ(pipe(p), 0);
	xsc_probe_get(x, &pr);
	bool ring = pr.uring && !pr.seccomp;
	snprintf(src, sizeof(src), "%s/src", scratch_dir());
	snprintf(dst, sizeof(dst), "%s/dst", scratch_dir());
	int fd = open(src, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK_EQ(write(fd, data, sizeof(data) - 1), (long)sizeof(data) - 1);
	close(fd);

	/* the model from the host profile */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	const struct mc_model *m = xsc__mc_model(x);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("model: Tsys %u ns, Tenter %u ns, Top %u ns (taken in %ld us)\n",
	       m->tsys, m->tenter, m->top,
	       (long)((t1.tv_sec - t0.tv_sec) * 1000000 + (t1.tv_nsec - t0.tv_nsec) / 1000));
	CHECK(m->tsys > 0 && m->tenter > 0 && m->top > 0);

	/* read/write per block: classifying two fds alone costs more than
	 * the two calls, and a syscall thread adds a hand-off: inline, two
	 * crossings, whatever the machine */
	rep = rw_chain(x, XSC_MC_AUTO);
	show("read/write, the profile's model", &rep);
	CHECK_EQ(rep.path, XSC_MC_INLINE);
	CHECK_EQ(rep.crossings, 2);
	model(45, 150, 40);		/* a host with 45 ns system calls */
	CHECK_EQ(rw_chain(x, XSC_MC_AUTO).path, XSC_MC_INLINE);
	model(100000, 100, 1);		/* even with very dear syscalls */
	CHECK_EQ(rw_chain(x, XSC_MC_AUTO).path, XSC_MC_INLINE);

	/* a chain io_uring runs in one enter: uring exactly when cheaper */
	model(1000, 500, 50);		/* 650 ns vs 3000 */
	rep = orc_chain(x);
	show("open/read/close, dear syscalls", &rep);
	CHECK_EQ(rep.path, ring ? XSC_MC_URING : XSC_MC_INLINE);
	model(50, 1000, 40);		/* 1120 ns vs 150 */
	rep = orc_chain(x);
	show("open/read/close, cheap syscalls", &rep);
	CHECK_EQ(rep.path, XSC_MC_INLINE);
	CHECK_EQ(rep.crossings, 3);

	/* a loop: per request, io_uring's work against a syscall */
	model(1000, 500, 50);
	rep = copy_loop(x);
	show("copy loop, Top < Tsys", &rep);
	CHECK_EQ(rep.path, ring ? XSC_MC_URING : XSC_MC_INLINE);
	model(50, 300, 60);
	rep = copy_loop(x);
	show("copy loop, Top > Tsys", &rep);
	CHECK_EQ(rep.path, XSC_MC_INLINE);
	CHECK_EQ(rep.iters, 7);	/* 5 full blocks, 1 byte, EOF */

	/* routes to the syscall threads: by time, inline anyway */
	xsc__mc_model_set(NULL);
	xsc__mc_model(x);		/* the host profile's again */
	int route = xsc_route(x, SYS_pread64, &why);
	printf("pread64 routes to %s (%s)\n", xsc_backend_name(route), why);
	rep = pread_chain(x, XSC_MC_AUTO);
	show("pread64, the profile's model", &rep);
	CHECK_EQ(rep.path, XSC_MC_INLINE);
	CHECK_EQ(rep.crossings, 1);

	/* asked-for paths are obeyed */
	CHECK_EQ(pread_chain(x, XSC_MC_WORKER).path, XSC_MC_WORKER);
	/* without a ring the asked path declines to the routes' fallback:
	 * syscall threads on an auto handle */
	CHECK_EQ(rw_chain(x, XSC_MC_URING).path, ring ? XSC_MC_URING :
		 pr.uring ? XSC_MC_INLINE : XSC_MC_WORKER);
	CHECK_EQ(rw_chain(x, XSC_MC_INLINE).path, XSC_MC_INLINE);

	finish_handle(x, p, fds0);
	return 0;
}
