/*
 * strategies.h - the copy strategies of xcp, shared with `xsc bench copy`
 * (header-only: both programs include it).  Each copies nf files
 * src[i] -> dst[i] with block size bs and returns 0 or -errno.
 *
 *   plain       open, open, read/write loop, close, close (plain calls)
 *   mc          one multi-call per block: [read, write(RET(read))]
 *   mcloop      one looped multi-call per file: the same body repeated
 *               until read returns 0 (Clustering section 3.4); opens and
 *               closes in one chain each
 *   normal      WSC's NORMAL: file after file, plain calls (= plain)
 *   normal-collect  NORMAL+COLLECT: calls of one kind collected together
 *               (all opens, then rounds of all reads / all writes, then all
 *               closes), plain calls
 *   wsc-collect WSC+COLLECT: the same order, each kind posted into the
 *               syscall pages and flushed in batches of 8 (WSC threshold)
 *   normal-rw   NORMAL+RW: rounds that write block k and read block k+1 of
 *               every file (two buffers per file), plain calls
 *   wsc-rw      WSC+RW: the same rounds posted in batches of 8
 *   cfr         copy_file_range, the kernel's own specialized multi-call
 */
#ifndef XCP_STRATEGIES_H
#define XCP_STRATEGIES_H
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "xsc.h"

enum xcp_strategy { XCP_PLAIN, XCP_MC, XCP_MCLOOP, XCP_NORMAL, XCP_NCOLLECT,
		    XCP_WCOLLECT, XCP_NRW, XCP_WRW, XCP_CFR, XCP_N };

static const char *const xcp_names[XCP_N] = {
	"plain", "mc", "mcloop", "normal", "normal-collect", "wsc-collect",
	"normal-rw", "wsc-rw", "cfr" };

static inline long xcp_sys(long r)
{
	return r < 0 ? -errno : r;
}

#define XCP_OFLAGS (O_WRONLY | O_CREAT | O_TRUNC)

/* ---- one file at a time ---------------------------------------------- */

/* plain open(2) of both files: 0 and the fds, or -errno */
static inline int xcp_open_plain(const char *s, const char *d, int *in, int *out)
{
	*in = open(s, O_RDONLY);
	if (*in < 0)
		return -errno;
	*out = open(d, XCP_OFLAGS, 0644);
	if (*out < 0) {
		int err = -errno;
		close(*in);
		return err;
	}
	return 0;
}

static inline int xcp_plain(const char *s, const char *d, char *buf, long bs)
{
	int in = -1, out = -1;
	long n = xcp_open_plain(s, d, &in, &out);

	if (n < 0)
		return (int)n;
	while ((n = read(in, buf, (size_t)bs)) > 0)
		if (write(out, buf, (size_t)n) != n) {
			n = -EIO;
			break;
		}
	n = n < 0 ? (n == -EIO ? n : -errno) : 0;
	close(in);
	close(out);
	return (int)n;
}

static inline int xcp_cfr(const char *s, const char *d)
{
	int in = -1, out = -1;
	long n = xcp_open_plain(s, d, &in, &out);

	if (n < 0)
		return (int)n;
	while ((n = copy_file_range(in, NULL, out, NULL, 1 << 30, 0)) > 0)
		;
	n = n < 0 ? -errno : 0;
	close(in);
	close(out);
	return (int)n;
}

static inline void xcp_set(struct xsc_mc *c, long nr, unsigned fl, long a0,
			   long a1, long a2, long a3)
{
	memset(c, 0, sizeof(*c));
	c->nr = nr;
	c->flags = fl;
	c->args[0] = a0, c->args[1] = a1, c->args[2] = a2, c->args[3] = a3;
}

/* open both files in one chain: returns 0 and the fds, or -errno */
static inline int xcp_open2(struct xsc *x, const char *s, const char *d,
			    int *in, int *out)
{
	struct xsc_mc c[2];

	xcp_set(&c[0], SYS_openat, XSC_MC_CHECK, AT_FDCWD, (long)s, O_RDONLY, 0);
	xcp_set(&c[1], SYS_openat, XSC_MC_CHECK, AT_FDCWD, (long)d, XCP_OFLAGS, 0644);
	if (xsc_multicall(x, c, 2) != 2) {
		if (c[0].ret >= 0)
			close((int)c[0].ret);
		return (int)(c[0].ret < 0 ? c[0].ret : c[1].ret);
	}
	*in = (int)c[0].ret;
	*out = (int)c[1].ret;
	return 0;
}

static inline void xcp_close2(struct xsc *x, int in, int out)
{
	struct xsc_mc c[2];

	xcp_set(&c[0], SYS_close, 0, in, 0, 0, 0);
	xcp_set(&c[1], SYS_close, 0, out, 0, 0, 0);
	xsc_multicall(x, c, 2);
}

/* one multi-call per block */
static inline int xcp_mc(struct xsc *x, const char *s, const char *d, char *buf,
			 long bs, int path)
{
	struct xsc_mc c[2];
	struct xsc_mc_opts o;
	int in = -1, out = -1, ret = xcp_open2(x, s, d, &in, &out);

	if (ret < 0)
		return ret;
	xsc_mc_opts_init(&o);
	o.path = path;
	for (;;) {
		xcp_set(&c[0], SYS_read, XSC_MC_CHECK, in, (long)buf, bs, 0);
		xcp_set(&c[1], SYS_write, XSC_MC_CHECK, out, (long)buf, 0, 0);
		xsc_mc_fwd(&c[1], 2, XSC_MC_RET(0));
		ret = xsc_multicall_ex(x, c, 2, &o, NULL);
		if (ret != 2 || c[0].ret == 0)
			break;
	}
	ret = ret == 2 ? 0 : (int)c[ret].ret;
	xcp_close2(x, in, out);
	return ret;
}

/* The whole copy as ONE looped multi-call: the opens are its prologue,
 * read -> write(n) its body, repeated until read returns 0, the closes its
 * epilogue.  The fds are private to the chain (on io_uring: direct
 * descriptors, nothing to classify), so a file costs two enters: the opens
 * with every block up to the read at EOF, whose short result breaks the
 * link, then the closes.  *cross gets the crossings. */
static inline int xcp_mcloop(struct xsc *x, const char *s, const char *d,
			     char *buf, long bs, int path, unsigned *cross)
{
	struct xsc_mc c[6];
	struct xsc_mc_opts o;
	struct xsc_mc_report rep;
	int r;

	xcp_set(&c[0], SYS_openat, XSC_MC_CHECK | XSC_MC_PRIVATE, AT_FDCWD, (long)s,
		O_RDONLY, 0);
	xcp_set(&c[1], SYS_openat, XSC_MC_CHECK | XSC_MC_PRIVATE, AT_FDCWD, (long)d,
		XCP_OFLAGS, 0644);
	xcp_set(&c[2], SYS_read, XSC_MC_CHECK, 0, (long)buf, bs, 0);
	xsc_mc_fwd(&c[2], 0, XSC_MC_RET(0));
	xcp_set(&c[3], SYS_write, XSC_MC_CHECK, 0, (long)buf, 0, 0);
	xsc_mc_fwd(&c[3], 0, XSC_MC_RET(1));
	xsc_mc_fwd(&c[3], 2, XSC_MC_RET(2));
	xcp_set(&c[4], SYS_close, XSC_MC_CHECK, 0, 0, 0, 0);
	xsc_mc_fwd(&c[4], 0, XSC_MC_RET(0));
	xcp_set(&c[5], SYS_close, XSC_MC_CHECK, 0, 0, 0, 0);
	xsc_mc_fwd(&c[5], 0, XSC_MC_RET(1));
	xsc_mc_opts_init(&o);
	o.path = path;
	o.loop_first = 2;
	o.loop_end = 4;
	o.until_call = 2;
	o.until_op = XSC_MC_LE;
	o.until_val = 0;
	o.max_iter = XSC_MC_ITER_MAX;
	o.batch = 64;	/* blocks per first submission; grows after */
	r = xsc_multicall_ex(x, c, 6, &o, &rep);
	if (cross)
		*cross = r < 0 ? 0 : rep.crossings;
	if (r < 0)
		return r;
	if (r == 6)
		return rep.stop == XSC_MC_UNTIL ? 0 : -EFBIG;	/* 2^30 blocks */
	/* stopped at call r: fds the chain did not close stay open */
	for (int k = 0; k < 2; k++)
		if (c[k].ret >= 0 && c[4 + k].ret != 0)
			close((int)c[k].ret);
	return (int)c[r].ret;
}

/* ---- many files at once (WSC section 4) ------------------------------- */

struct xcp_set {
	int nf;
	const char *const *src, *const *dst;
	int *in, *out;
	char **buf[2];		/* per file, two buffers (RW rounds) */
	long *n;		/* bytes in buf[0] (-1: done) */
	long bs;
};

/* Runs one call per file i in `todo`; with x, posted in batches of 8
 * (batch_threshold) and collected, else plain.  ret[i] gets results. */
static inline void xcp_round(struct xsc *x, int nf, const long *nr,
			     const long (*a)[3], long *ret)
{
	int ids[1024];

	for (int i = 0; i < nf; i++) {
		if (nr[i] < 0)
			continue;
		if (!x) {
			ret[i] = xcp_sys(syscall(nr[i], a[i][0], a[i][1], a[i][2]));
			continue;
		}
		ids[i] = xsc_post(x, nr[i], a[i][0], a[i][1], a[i][2]);
	}
	if (!x)
		return;
	xsc_flush(x);
	for (int i = 0; i < nf; i++)
		if (nr[i] >= 0 && (ids[i] < 0 || xsc_take(x, ids[i], &ret[i]) < 0))
			ret[i] = ids[i] < 0 ? ids[i] : -EIO;
}

static inline int xcp_opens(struct xsc *x, struct xcp_set *f, long *nr,
			    long (*a)[3], long *ret)
{
	for (int k = 0; k < 2; k++) {
		for (int i = 0; i < f->nf; i++) {
			nr[i] = SYS_open;
			a[i][0] = (long)(k ? f->dst[i] : f->src[i]);
			a[i][1] = k ? XCP_OFLAGS : O_RDONLY;
			a[i][2] = 0644;
		}
		xcp_round(x, f->nf, nr, (const long (*)[3])a, ret);
		for (int i = 0; i < f->nf; i++)
			(k ? f->out : f->in)[i] = (int)ret[i];
	}
	for (int i = 0; i < f->nf; i++)
		if (f->in[i] < 0 || f->out[i] < 0)
			return f->in[i] < 0 ? f->in[i] : f->out[i];
	return 0;
}

static inline void xcp_closes(struct xsc *x, struct xcp_set *f, long *nr,
			      long (*a)[3], long *ret)
{
	for (int k = 0; k < 2; k++) {
		for (int i = 0; i < f->nf; i++) {
			int fd = k ? f->out[i] : f->in[i];
			nr[i] = fd >= 0 ? SYS_close : -1;
			a[i][0] = fd;
		}
		xcp_round(x, f->nf, nr, (const long (*)[3])a, ret);
	}
}

/* COLLECT: rounds of all reads, then all writes */
static inline int xcp_collect_rw(struct xsc *x, struct xcp_set *f, long *nr,
				 long (*a)[3], long *ret)
{
	for (int live = f->nf; live > 0;) {
		for (int i = 0; i < f->nf; i++) {
			nr[i] = f->n[i] < 0 ? -1 : SYS_read;
			a[i][0] = f->in[i], a[i][1] = (long)f->buf[0][i], a[i][2] = f->bs;
		}
		xcp_round(x, f->nf, nr, (const long (*)[3])a, ret);
		for (int i = 0; i < f->nf; i++) {
			if (f->n[i] < 0)
				continue;
			if (ret[i] < 0)
				return (int)ret[i];
			f->n[i] = ret[i] ? ret[i] : -1;
			live -= ret[i] == 0;
			nr[i] = ret[i] > 0 ? SYS_write : -1;
			a[i][0] = f->out[i], a[i][2] = ret[i];
		}
		xcp_round(x, f->nf, nr, (const long (*)[3])a, ret);
		for (int i = 0; i < f->nf; i++)
			if (nr[i] >= 0 && ret[i] != a[i][2])
				return ret[i] < 0 ? (int)ret[i] : -EIO;
	}
	return 0;
}

/* RW: each round writes block k and reads block k+1 of every file */
static inline int xcp_rw_rounds(struct xsc *x, struct xcp_set *f, long *nr,
				long (*a)[3], long *ret)
{
	int nf = f->nf, live = nf;
	long *rr = ret + nf;	/* second half: read results */

	for (int i = 0; i < nf; i++)
		f->n[i] = 0;	/* nothing to write yet */
	while (live > 0) {
		/* writes in slots [0,nf), reads in [nf,2nf) of one batch */
		for (int i = 0; i < nf; i++) {
			nr[i] = f->n[i] > 0 ? SYS_write : -1;
			a[i][0] = f->out[i], a[i][1] = (long)f->buf[0][i], a[i][2] = f->n[i];
			nr[nf + i] = f->n[i] < 0 ? -1 : SYS_read;
			a[nf + i][0] = f->in[i], a[nf + i][1] = (long)f->buf[1][i];
			a[nf + i][2] = f->bs;
		}
		xcp_round(x, 2 * nf, nr, (const long (*)[3])a, ret);
		for (int i = 0; i < nf; i++) {
			if (nr[i] >= 0 && ret[i] != a[i][2])
				return ret[i] < 0 ? (int)ret[i] : -EIO;
			if (nr[nf + i] < 0)
				continue;
			if (rr[i] < 0)
				return (int)rr[i];
			f->n[i] = rr[i] ? rr[i] : -1;
			live -= rr[i] == 0;
			char *t = f->buf[0][i];	/* the block read is written next */
			f->buf[0][i] = f->buf[1][i];
			f->buf[1][i] = t;
		}
	}
	return 0;
}

/* x == NULL: the NORMAL variants (plain calls); rw selects the order. */
static inline int xcp_wsc(struct xsc *x, const char *const *src,
			  const char *const *dst, int nf, long bs, bool rw)
{
	struct xcp_set f = { nf, src, dst, NULL, NULL, { NULL, NULL }, NULL, bs };
	long *nr = calloc(2 * (size_t)nf, sizeof(long));
	long (*a)[3] = calloc(2 * (size_t)nf, sizeof(*a));
	long *ret = calloc(2 * (size_t)nf, sizeof(long));
	char *mem = malloc(2 * (size_t)nf * (size_t)bs);
	int err = -ENOMEM;

	f.in = calloc((size_t)nf, sizeof(int));
	f.out = calloc((size_t)nf, sizeof(int));
	f.buf[0] = calloc((size_t)nf, sizeof(char *));
	f.buf[1] = calloc((size_t)nf, sizeof(char *));
	f.n = calloc((size_t)nf, sizeof(long));
	if (nr && a && ret && mem && f.in && f.out && f.buf[0] && f.buf[1] && f.n) {
		for (int i = 0; i < nf; i++) {
			f.buf[0][i] = mem + (size_t)(2 * i) * (size_t)bs;
			f.buf[1][i] = mem + (size_t)(2 * i + 1) * (size_t)bs;
		}
		err = xcp_opens(x, &f, nr, a, ret);
		if (!err)
			err = rw ? xcp_rw_rounds(x, &f, nr, a, ret)
				 : xcp_collect_rw(x, &f, nr, a, ret);
		xcp_closes(x, &f, nr, a, ret);
	}
	free(nr), free(a), free(ret), free(mem);
	free(f.in), free(f.out), free(f.buf[0]), free(f.buf[1]), free(f.n);
	return err;
}

/* Copies nf files with strategy s.  x is needed by the xsc strategies
 * (wsc-* want a handle with batch_threshold 8). */
static inline int xcp_copy(int s, struct xsc *x, const char *const *src,
			   const char *const *dst, int nf, long bs, int path)
{
	char *buf;
	int ret = 0;

	if (s == XCP_NCOLLECT || s == XCP_WCOLLECT || s == XCP_NRW || s == XCP_WRW)
		return xcp_wsc(s == XCP_WCOLLECT || s == XCP_WRW ? x : NULL, src,
			       dst, nf, bs, s == XCP_NRW || s == XCP_WRW);
	buf = aligned_alloc(4096, ((size_t)bs + 4095) & ~(size_t)4095);
	if (!buf)
		return -ENOMEM;
	for (int i = 0; i < nf && ret == 0; i++) {
		switch (s) {
		case XCP_PLAIN: case XCP_NORMAL:
			ret = xcp_plain(src[i], dst[i], buf, bs); break;
		case XCP_MC: ret = xcp_mc(x, src[i], dst[i], buf, bs, path); break;
		case XCP_MCLOOP:
			ret = xcp_mcloop(x, src[i], dst[i], buf, bs, path, NULL); break;
		default: ret = xcp_cfr(src[i], dst[i]);
		}
	}
	free(buf);
	return ret;
}
#endif
