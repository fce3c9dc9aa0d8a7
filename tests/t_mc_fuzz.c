/* Random multi-calls against a reference run with plain system calls.
 *
 * Two identical arenas (directories with the same files, the same
 * pre-opened fds, their own buffers).  Each trial draws a chain (open,
 * read, write, pread64, pwrite64, close, fsync, getppid; forwarded fds and
 * lengths; check and full flags; private opens; injected failures: ENOENT
 * paths, bad fds for EBADF, bad buffers for EFAULT, negative offsets;
 * sometimes a loop), runs it on arena A with the reference below and on
 * arena B with xsc_multicall_ex, then compares the return value, every
 * slot, the buffers, the files and the file positions.  On the uring
 * backend each chain also runs with the uring, worker and inline paths
 * forced.
 * xsc-test: per-backend
 * xsc-test: timeout=300 */
#include <fcntl.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "testlib.h"
#include "xsc.h"

#define BUFSZ 8192
#define NBUF 4

enum { OPEN, READ, WRITE, PREAD, PWRITE, CLOSE, FSYNC, PPID, NOPS };

struct arena {
	char dir[256];
	char path[3][300];	/* f0, f1, missing/x */
	int in, out;		/* pre-opened */
	char *buf[NBUF];
};

static unsigned long rnd_state = 88172645463325252ull;
static unsigned long rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}
static unsigned rn(unsigned n) { return (unsigned)(rnd() % n); }

/* one generated call, arena-independent */
struct gen {
	int op, flags;
	int fd_from;		/* -1 literal, else forwarded open index */
	int lit_fd;		/* 0 = in, 1 = out, 2 = bad */
	int len_from;		/* -1 literal, else forwarded read index */
	long len, off;
	int path, oflags, buf, bufoff;
	bool badbuf;
};

static void fill_file(const char *path, size_t len, unsigned seed)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	char *b = malloc(len + 1);
	for (size_t i = 0; i < len; i++)
		b[i] = (char)(seed * 31 + i * 7 + (i >> 8));
	CHECK_EQ(write(fd, b, len), (long)len);
	close(fd);
	free(b);
}

static void arena_reset(struct arena *a)
{
	char p[400];
	snprintf(p, sizeof(p), "%s/in", a->dir);
	fill_file(p, 30000, 1);
	snprintf(p, sizeof(p), "%s/out", a->dir);
	fill_file(p, 100, 2);
	fill_file(a->path[0], 10000, 3);
	fill_file(a->path[1], 5000, 4);
	lseek(a->in, 0, SEEK_SET);
	lseek(a->out, 0, SEEK_SET);
	for (int i = 0; i < NBUF; i++)
		memset(a->buf[i], 0x5a, BUFSZ);
}

static void arena_init(struct arena *a, const char *root, const char *name)
{
	char p[400];
	snprintf(a->dir, sizeof(a->dir), "%s/%s", root, name);
	CHECK_EQ(mkdir(a->dir, 0755), 0);
	snprintf(a->path[0], sizeof(a->path[0]), "%s/f0", a->dir);
	snprintf(a->path[1], sizeof(a->path[1]), "%s/f1", a->dir);
	snprintf(a->path[2], sizeof(a->path[2]), "%s/missing/x", a->dir);
	snprintf(p, sizeof(p), "%s/in", a->dir);
	fill_file(p, 1, 0);
	a->in = open(p, O_RDONLY);
	snprintf(p, sizeof(p), "%s/out", a->dir);
	fill_file(p, 1, 0);
	a->out = open(p, O_RDWR);
	for (int i = 0; i < NBUF; i++)
		a->buf[i] = malloc(BUFSZ);
}

static int gen_chain(struct gen *g, unsigned n)
{
	int opens[64], nopen = 0, reads[64], nread = 0;

	for (unsigned i = 0; i < n; i++) {
		struct gen *c = &g[i];
		memset(c, 0, sizeof(*c));
		c->op = (int)rn(NOPS);
		c->fd_from = nopen && rn(3) ? opens[rn((unsigned)nopen)] : -1;
		c->lit_fd = rn(10) == 0 ? 2 : (int)(c->op == WRITE || c->op == PWRITE ||
						   c->op == FSYNC);
		if (c->op == CLOSE)
			c->lit_fd = 2;	/* the arenas' own fds stay open */
		c->len_from = -1;
		c->len = rn(4) == 0 ? BUFSZ : rn(3000);
		c->off = rn(20) == 0 ? -5 : (long)rn(20000);
		c->path = rn(8) == 0 ? 2 : (int)rn(2);
		c->oflags = rn(2) ? O_RDWR : O_RDONLY;
		c->buf = (int)rn(NBUF);
		c->bufoff = (int)rn(64);
		c->badbuf = rn(15) == 0;
		if (c->len + c->bufoff > BUFSZ)
			c->len = BUFSZ - c->bufoff;
		if (c->op == WRITE && nread && rn(2)) {
			c->len_from = reads[rn((unsigned)nread)];
			c->bufoff = 0;	/* a read returns at most BUFSZ */
		}
		if (rn(2))
			c->flags |= XSC_MC_CHECK;
		if (rn(3) == 0)
			c->flags |= XSC_MC_FULL;
		if (c->op == OPEN)
			opens[nopen++] = (int)i;
		if (c->op == READ || c->op == PREAD)
			reads[nread++] = (int)i;
	}
	/* private: opens consumed only as fds, one consumer a close */
	for (unsigned k = 0; k < n; k++) {
		bool closed = false, late = false;
		if (g[k].op != OPEN || rn(2))
			continue;
		for (unsigned j = k + 1; j < n; j++) {
			if (g[j].op == PPID || g[j].fd_from != (int)k)
				continue;
			late |= closed;
			closed |= g[j].op == CLOSE;
		}
		if (closed && !late)
			g[k].flags |= XSC_MC_PRIVATE;
	}
	return 0;
}

/* A loop with a prologue [0, lf), body [lf, le) and epilogue [le, n):
 * opens only in the prologue (their fds used in the body and the
 * epilogue, private ones closed in the epilogue), the body starts with
 * the read that ends the loop, counts forwarded within one part. */
static void gen_seg(struct gen *g, unsigned n, unsigned lf, unsigned le)
{
	gen_chain(g, n);
	for (unsigned i = 0; i < n; i++) {
		struct gen *c = &g[i];
		int seg = i < lf ? 0 : i < le ? 1 : 2;
		c->flags &= ~XSC_MC_PRIVATE;
		if (seg && c->op == OPEN)
			c->op = PPID;
		if (c->fd_from >= (int)lf || (c->fd_from >= 0 && g[c->fd_from].op != OPEN))
			c->fd_from = -1;
		int p = c->len_from;	/* a count from a read of the same part */
		if (p >= 0 && (p < (int)lf ? 0 : p < (int)le ? 1 : 2) != seg)
			c->len_from = -1;
		if (c->op == CLOSE && c->fd_from < 0)
			c->lit_fd = 2;	/* the arenas' own fds stay open */
	}
	/* the loop's read: from a prologue open or the arena's input */
	g[lf].op = READ;
	g[lf].fd_from = -1;
	for (unsigned k = 0; k < lf; k++)
		if (g[k].op == OPEN && rn(2))
			g[lf].fd_from = (int)k;
	g[lf].lit_fd = 0;
	g[lf].badbuf = false;
	g[lf].flags = 0;
	g[lf].len_from = -1;
	/* private: a prologue open used only as an fd and closed once, in
	 * the epilogue */
	for (unsigned k = 0; k < lf; k++) {
		int closes = 0, uses_after = 0, early = 0;
		if (g[k].op != OPEN || rn(3) == 0)
			continue;
		for (unsigned j = k + 1; j < n; j++) {
			if (g[j].op == PPID || g[j].fd_from != (int)k)
				continue;
			uses_after += closes > 0;
			early += g[j].op == CLOSE && j < le;
			closes += g[j].op == CLOSE;
		}
		if (closes == 1 && !uses_after && !early)
			g[k].flags |= XSC_MC_PRIVATE;
	}
}

static long nr_of(int op)
{
	static const long nrs[NOPS] = { SYS_openat, SYS_read, SYS_write, SYS_pread64,
					SYS_pwrite64, SYS_close, SYS_fsync, SYS_getppid };
	return nrs[op];
}

static void materialize(const struct gen *g, unsigned n, struct arena *a,
			struct xsc_mc *c)
{
	for (unsigned i = 0; i < n; i++) {
		const struct gen *s = &g[i];
		struct xsc_mc *m = &c[i];
		long fd = s->lit_fd == 0 ? a->in : s->lit_fd == 1 ? a->out : 999;
		char *buf = s->badbuf ? (char *)8 : a->buf[s->buf] + s->bufoff;
		memset(m, 0, sizeof(*m));
		m->nr = nr_of(s->op);
		m->flags = (unsigned)s->flags;
		if (s->op == OPEN) {
			m->args[0] = AT_FDCWD;
			m->args[1] = (long)a->path[s->path];
			m->args[2] = s->oflags;
			continue;
		}
		m->args[0] = fd;
		if (s->fd_from >= 0 && s->op != PPID)
			xsc_mc_fwd(m, 0, XSC_MC_RET(s->fd_from));
		m->args[1] = (long)buf;
		m->args[2] = s->len;
		if (s->len_from >= 0)
			xsc_mc_fwd(m, 2, XSC_MC_RET(s->len_from));
		m->args[3] = s->off;
		if (s->op == PPID)
			m->args[0] = 0, m->fwd = 0;
	}
}

/* ---- the reference: plain system calls ---- */

static long sys6(long nr, const long *a)
{
	long r = syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	return r == -1 ? -errno : r;
}

static bool is_rw(long nr)
{
	return nr == SYS_read || nr == SYS_write || nr == SYS_pread64 ||
	       nr == SYS_pwrite64;
}

static int ref_run(struct xsc_mc *c, unsigned n, const struct xsc_mc_opts *o,
		   unsigned *iters)
{
	unsigned max = o->max_iter ? o->max_iter : 1;
	unsigned lf = o->max_iter ? (unsigned)o->loop_first : 0;
	unsigned le = o->max_iter && o->loop_end ? (unsigned)o->loop_end : n;
	int ret = (int)n;
	uint64_t closed = 0;

	for (unsigned i = 0; i < n; i++)
		c[i].ret = -ECANCELED;
	*iters = 0;
	for (unsigned i = 0;;) {
		bool body = i >= lf && i < le;
		long a[6];
		long r = 0;
		for (int b = 0; b < 6; b++) {
			a[b] = c[i].args[b];
			if (c[i].fwd >> b & 1) {
				long p = c[a[b] & 0xff].ret;
				if (p < 0)
					r = -ECANCELED;
				a[b] = p;
			}
		}
		if (!r)
			r = sys6(c[i].nr, a);
		c[i].ret = r;
		if (c[i].nr == SYS_close && r == 0 && (c[i].fwd & 1) &&
		    (c[c[i].args[0] & 0xff].flags & XSC_MC_PRIVATE))
			closed |= 1ull << (c[i].args[0] & 0xff);
		bool fail = (c[i].flags & XSC_MC_CHECK) &&
			    (r < 0 || ((c[i].flags & XSC_MC_FULL) &&
				       is_rw(c[i].nr) && r < a[2]));
		bool until = o->max_iter && body && (int)i == o->until_call &&
			     (o->until_op == XSC_MC_LE ? r <= o->until_val :
			      r == o->until_val);
		if (fail) {
			ret = (int)i;
			*iters += body;
			for (unsigned j = i + 1; j < n; j++)
				c[j].ret = -ECANCELED;
			break;
		}
		if (until || (body && i + 1 == le)) {
			++*iters;
			if (until || *iters >= max) {	/* the loop is over */
				for (unsigned j = i + 1; j < le; j++)
					c[j].ret = -ECANCELED;
				if (le == n)
					break;
				i = le;
			} else {
				i = lf;
				closed &= (1ull << lf) - 1;
			}
			continue;
		}
		if (++i == n)
			break;
	}
	for (unsigned k = 0; k < n; k++)
		if ((closed >> k & 1) && c[k].ret >= 0)
			c[k].ret = 0;
	return ret;
}

/* ---- comparing ---- */

static void close_above(int base)
{
	for (int fd = base; fd < base + 80; fd++)
		close(fd);
}

static bool cmp_file(const char *pa, const char *pb)
{
	char ca[40000], cb[40000];
	int fa = open(pa, O_RDONLY), fb = open(pb, O_RDONLY);
	long na = read(fa, ca, sizeof(ca)), nb = read(fb, cb, sizeof(cb));
	close(fa);
	close(fb);
	return na == nb && (na < 0 || memcmp(ca, cb, (size_t)na) == 0);
}

static bool compare(struct arena *a, struct arena *b)
{
	char pa[400], pb[400];
	const char *names[] = { "in", "out", "f0", "f1" };
	for (int i = 0; i < 4; i++) {
		snprintf(pa, sizeof(pa), "%s/%s", a->dir, names[i]);
		snprintf(pb, sizeof(pb), "%s/%s", b->dir, names[i]);
		if (!cmp_file(pa, pb)) {
			fprintf(stderr, "file %s differs\n", names[i]);
			return false;
		}
	}
	if (lseek(a->in, 0, SEEK_CUR) != lseek(b->in, 0, SEEK_CUR) ||
	    lseek(a->out, 0, SEEK_CUR) != lseek(b->out, 0, SEEK_CUR)) {
		fprintf(stderr, "file positions differ\n");
		return false;
	}
	for (int i = 0; i < NBUF; i++)
		if (memcmp(a->buf[i], b->buf[i], BUFSZ)) {
			fprintf(stderr, "buffer %d differs\n", i);
			return false;
		}
	return true;
}

static void dump(const struct xsc_mc *ca, const struct xsc_mc *cb, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		fprintf(stderr, "  %2u nr=%3ld fl=%u fwd=%x a0=%ld a2=%ld a3=%ld: ref %ld xsc %ld\n",
			i, ca[i].nr, ca[i].flags, ca[i].fwd, ca[i].args[0], ca[i].args[2],
			ca[i].args[3], ca[i].ret, cb[i].ret);
}

static unsigned paths_seen[4];
static int *g_keep, g_nkeep;

static bool keep_ok(void)
{
	for (int i = 0; i < g_nkeep; i++)
		if (fcntl(g_keep[i], F_GETFD) < 0) {
			fprintf(stderr, "fd %d was closed by the chain\n", g_keep[i]);
			return false;
		}
	return true;
}

static void trial(struct xsc *x, struct arena *a, struct arena *b, int base,
		  int path, bool loop)
{
	struct gen g[16];
	struct xsc_mc ca[16], cb[16];
	struct xsc_mc_opts o;
	struct xsc_mc_report rep;
	unsigned n = 1 + rn(loop ? 4 : 10), iters;
	bool seg = loop && rn(2);

	xsc_mc_opts_init(&o);
	o.path = path;
	if (seg) {	/* prologue, body, epilogue */
		unsigned lf = rn(4), lb = 1 + rn(3), le = lf + lb;
		n = le + rn(4);
		gen_seg(g, n, lf, le);
		o.loop_first = (int)lf;
		o.loop_end = le == n && rn(2) ? 0 : (int)le;
		o.max_iter = 1 + rn(30);
		o.until_call = (int)lf;
		o.until_op = rn(3) ? XSC_MC_LE : XSC_MC_EQ;
		o.until_val = 0;
		o.batch = rn(3) * 3;
	} else {
		gen_chain(g, n);
	}
	if (loop && !seg) {
		for (unsigned i = 0; i < n; i++)
			g[i].flags &= ~XSC_MC_PRIVATE;
		g[0].op = READ;
		g[0].fd_from = -1;
		g[0].lit_fd = 0;
		g[0].badbuf = false;
		g[0].flags = 0;
		for (unsigned i = 1; i < n; i++) {
			if (g[i].fd_from == 0)
				g[i].fd_from = -1;
			if (g[i].op == CLOSE && g[i].fd_from < 0)
				g[i].lit_fd = 2;
		}
		o.max_iter = 1 + rn(30);
		o.until_call = 0;
		o.until_op = rn(3) ? XSC_MC_LE : XSC_MC_EQ;
		o.until_val = 0;
		o.batch = rn(3) * 3;
	}
	arena_reset(a);
	arena_reset(b);
	materialize(g, n, a, ca);
	materialize(g, n, b, cb);
	int ra = ref_run(ca, n, &o, &iters);
	close_above(base);
	int rb = xsc_multicall_ex(x, cb, n, &o, &rep);
	close_above(base);
	paths_seen[rep.path]++;
	bool bad = ra != rb || (loop && iters != rep.iters);
	for (unsigned i = 0; i < n; i++)
		bad |= ca[i].ret != cb[i].ret;
	if (!bad && (!compare(a, b) || !keep_ok()))
		bad = true;
	if (bad) {
		fprintf(stderr, "mismatch (path %d asked, %d ran: %s; loop %d): ref %d "
			"xsc %d, iters %u/%u\n", path, rep.path, rep.reason, loop, ra,
			rb, iters, rep.iters);
		dump(ca, cb, n);
		exit(1);
	}
}

int main(void)
{
	struct arena a, b;
	struct xsc *x;
	int fds0 = count_fds(), trials = test_sanitized() ? 300 : 1500;
	bool uring;

	CHECK_EQ(xsc_open(&x, NULL), 0);
	arena_init(&a, scratch_dir(), "a");
	arena_init(&b, scratch_dir(), "b");
	/* fill the holes below the highest inherited fd: opens then get
	 * numbers >= base, which close_above() cleans */
	int keep[1024], nkeep = 0, base, maxfd = 0;
	for (int fd = 0; fd < 1024; fd++)
		if (fcntl(fd, F_GETFD) >= 0)
			maxfd = fd;
	while ((base = open("/dev/null", O_RDONLY)) < maxfd && nkeep < 1024)
		keep[nkeep++] = base;
	close(base);
	g_keep = keep;
	g_nkeep = nkeep;
	uring = !strcmp(test_backend(), "uring") || !strcmp(test_backend(), "auto");
	for (int t = 0; t < trials; t++) {
		trial(x, &a, &b, base, XSC_MC_AUTO, t % 4 == 3);
		if (uring && t % 3 == 0)
			for (int p = XSC_MC_URING; p <= XSC_MC_INLINE; p++)
				trial(x, &a, &b, base, p, t % 2 == 0);
	}
	printf("paths: uring %u, worker %u, inline %u\n", paths_seen[XSC_MC_URING],
	       paths_seen[XSC_MC_WORKER], paths_seen[XSC_MC_INLINE]);
	CHECK_EQ(xsc_close(x), 0);
	close(a.in), close(a.out), close(b.in), close(b.out);
	while (nkeep)
		close(keep[--nkeep]);
	for (int i = 0; i < NBUF; i++)
		free(a.buf[i]), free(b.buf[i]);
	CHECK_EQ(count_fds(), fds0);
	printf("ok (%s)\n", test_backend());
	return 0;
}
