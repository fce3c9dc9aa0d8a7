/*
 * graph.c - the syscall graph (the paper's GraphBuilder, Figure 4).
 *
 * Each event becomes a node: its syscall plus selected arguments, the
 * f (descriptor) and c (constant) arguments of its signature.  A
 * descriptor is shown as number and kind, "3:file", "4:sock", "1:inh"
 * (inherited, kind unknown), so read(3:file) and read(3:pipe) are
 * different nodes while the buffer and length are not part of the node.
 * Edges count how often one node immediately follows another in the same
 * thread; sequences never cross threads.
 *
 * Descriptor kinds come from replaying the trace: calls that create
 * descriptors (the syscall table: .newfd, fds_out) set the kind of the fd they
 * return, close forgets it, dup copies it.  Each process has one table;
 * clone with CLONE_FILES shares the parent's, fork copies it.  The same
 * replay serves live traces and strace logs, so both label alike.
 */
#include "tracei.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#define MAXFD 8192	/* larger descriptors count as "inh" */

/* ---- a small int -> int map (open addressing, key -1 empty) ---------- */

struct imap {
	long *key;
	int *val;
	int cap, n;
};

static int imap_get(const struct imap *m, long key, int dflt)
{
	if (!m->cap)
		return dflt;
	for (unsigned h = (unsigned)(key * 2654435761u) & (m->cap - 1);;
	     h = (h + 1) & (m->cap - 1)) {
		if (m->key[h] == key)
			return m->val[h];
		if (m->key[h] == -1)
			return dflt;
	}
}

static int imap_put(struct imap *m, long key, int val)
{
	if (2 * (m->n + 1) > m->cap) {
		struct imap b = { 0 };
		b.cap = m->cap ? m->cap * 2 : 64;
		b.key = malloc(b.cap * sizeof(*b.key));
		b.val = malloc(b.cap * sizeof(*b.val));
		if (!b.key || !b.val) {
			free(b.key);
			free(b.val);
			return -ENOMEM;
		}
		memset(b.key, 0xff, b.cap * sizeof(*b.key));
		for (int i = 0; i < m->cap; i++)
			if (m->key[i] != -1)
				imap_put(&b, m->key[i], m->val[i]);
		free(m->key);
		free(m->val);
		*m = b;
	}
	for (unsigned h = (unsigned)(key * 2654435761u) & (m->cap - 1);;
	     h = (h + 1) & (m->cap - 1)) {
		if (m->key[h] == key || m->key[h] == -1) {
			m->n += m->key[h] == -1;
			m->key[h] = key;
			m->val[h] = val;
			return 0;
		}
	}
}

static void imap_free(struct imap *m)
{
	free(m->key);
	free(m->val);
}

/* ---- descriptor tables -------------------------------------------------- */

struct fdtabs {
	unsigned char **tab;	/* MAXFD kinds each */
	int n;
	struct imap of_tid;	/* tid -> table */
	struct imap clone_of;	/* child tid -> event index of its clone */
};

static int tab_new(struct fdtabs *f, const unsigned char *copy)
{
	unsigned char **t = realloc(f->tab, (f->n + 1) * sizeof(*t));

	if (!t)
		return -ENOMEM;
	f->tab = t;
	t[f->n] = copy ? malloc(MAXFD) : calloc(1, MAXFD);
	if (!t[f->n])
		return -ENOMEM;
	if (copy)
		memcpy(t[f->n], copy, MAXFD);
	return f->n++;
}

static long clone_flags(const struct xt_event *e)
{
	if (e->nr == SYS_clone)
		return e->args[0];
	if (e->nr == SYS_clone3)
		return e->aux[0] < 0 ? 0 : e->aux[0];
	return 0;	/* fork, vfork */
}

/* The table of a thread, created on its first event: shared with or copied
 * from its parent when the clone that made it is in the trace. */
static int tab_of(struct fdtabs *f, const struct xt_trace *t, int tid)
{
	int ti = imap_get(&f->of_tid, tid, -1), ce, pt;

	if (ti >= 0)
		return ti;
	ce = imap_get(&f->clone_of, tid, -1);
	pt = ce >= 0 ? imap_get(&f->of_tid, t->ev[ce].tid, -1) : -1;
	if (pt >= 0 && (clone_flags(&t->ev[ce]) & CLONE_FILES))
		ti = pt;
	else
		ti = tab_new(f, pt >= 0 ? f->tab[pt] : NULL);
	if (ti < 0 || imap_put(&f->of_tid, tid, ti) < 0)
		return -ENOMEM;
	return ti;
}

static int fd_kind(const unsigned char *tab, long fd)
{
	if (fd == AT_FDCWD)
		return XT_FD_CWD;
	if (fd < 0)
		return XT_FD_NONE;
	return fd < MAXFD ? tab[fd] : XT_FD_INH;
}

static int has_flag(const struct xt_trace *t, const struct xt_event *e,
		    int arg, long bit, const char *name)
{
	return (e->args[arg] & bit) || strstr(xt_trace_text(t, e->text[arg]), name);
}

/* Kind of a descriptor returned by an open-like call. */
static int open_kind(const struct xt_trace *t, const struct xt_event *e)
{
	int fa = e->nr == SYS_openat ? 2 : 1;
	const char *path = xt_trace_text(t, e->text[fa - 1]);

	if (e->nr == SYS_creat)
		return XT_FD_FILE;
	if (has_flag(t, e, fa, O_PATH, "O_PATH"))
		return XT_FD_PATH;
	if (has_flag(t, e, fa, O_DIRECTORY, "O_DIRECTORY"))
		return XT_FD_DIR;
	if (strncmp(path, "/dev/", 5) == 0)
		return XT_FD_DEV;
	if (strncmp(path, "/proc/", 6) == 0 || strncmp(path, "/sys/", 5) == 0)
		return XT_FD_PROC;
	return XT_FD_FILE;
}

static int is_dupfd(const struct xt_trace *t, const struct xt_event *e)
{
	const char *c = xt_trace_text(t, e->text[1]);

	return e->nr == SYS_fcntl && (e->args[1] == F_DUPFD ||
	       e->args[1] == F_DUPFD_CLOEXEC || strncmp(c, "F_DUPFD", 7) == 0);
}

static void set_kind(unsigned char *tab, long fd, int kind)
{
	if (fd >= 0 && fd < MAXFD)
		tab[fd] = (unsigned char)kind;
}

/* What a completed call does to the descriptor table. */
static void fd_effects(const struct xt_trace *t, const struct xt_event *e,
		       unsigned char *tab)
{
	const struct xt_sysinfo *si = xt_sys_info(e->nr);
	int k = si->newfd;

	if (e->ret < 0 || (e->flags & XT_EV_NORET))
		return;
	if (e->nr == SYS_close) {
		set_kind(tab, e->args[0], XT_FD_INH);
	} else if (si->pair) {
		set_kind(tab, e->aux[0], k);
		set_kind(tab, e->aux[1], k);
	} else if (k == XT_FD_DUP || is_dupfd(t, e)) {
		set_kind(tab, e->ret, fd_kind(tab, e->args[0]));
	} else if (k == XT_FD_FILE) {
		set_kind(tab, e->ret, open_kind(t, e));
	} else if (k) {
		set_kind(tab, e->ret, k);
	}
}

/* ---- labels --------------------------------------------------------------- */

static const struct { long bit; const char *name; } oflags[] = {
	{ O_CREAT, "O_CREAT" }, { O_EXCL, "O_EXCL" }, { O_NOCTTY, "O_NOCTTY" },
	{ O_TRUNC, "O_TRUNC" }, { O_APPEND, "O_APPEND" },
	{ O_NONBLOCK, "O_NONBLOCK" }, { O_DIRECTORY, "O_DIRECTORY" },
	{ O_NOFOLLOW, "O_NOFOLLOW" }, { O_CLOEXEC, "O_CLOEXEC" },
	{ O_PATH, "O_PATH" },
};

/* Open flags spelled the way strace spells them. */
static int put_oflags(char *b, size_t n, long v)
{
	static const char *const acc[] = { "O_RDONLY", "O_WRONLY", "O_RDWR", "3" };
	int len = snprintf(b, n, "%s", acc[v & 3]);

	for (size_t i = 0; i < sizeof(oflags) / sizeof(oflags[0]); i++)
		if ((v & oflags[i].bit) == oflags[i].bit && len < (int)n)
			len += snprintf(b + len, n - len, "|%s", oflags[i].name);
	return len;
}

struct bitname {
	long bit;
	const char *name;
};

static const struct bitname prot[] = {
	{ PROT_READ, "PROT_READ" }, { PROT_WRITE, "PROT_WRITE" },
	{ PROT_EXEC, "PROT_EXEC" }, { 0, NULL },
};
static const struct bitname mapf[] = {
	{ MAP_SHARED, "MAP_SHARED" }, { MAP_PRIVATE, "MAP_PRIVATE" },
	{ MAP_FIXED, "MAP_FIXED" }, { MAP_ANONYMOUS, "MAP_ANONYMOUS" },
	{ MAP_DENYWRITE, "MAP_DENYWRITE" }, { MAP_NORESERVE, "MAP_NORESERVE" },
	{ MAP_POPULATE, "MAP_POPULATE" }, { MAP_STACK, "MAP_STACK" }, { 0, NULL },
};
static const struct bitname atf[] = {
	{ AT_SYMLINK_NOFOLLOW, "AT_SYMLINK_NOFOLLOW" },
	{ AT_EMPTY_PATH, "AT_EMPTY_PATH" }, { AT_REMOVEDIR, "AT_REMOVEDIR" },
	{ 0, NULL },
};

/* Flag words spelled as strace spells them, so live traces and logs give
 * the same labels; bits without a name are left as a hex remainder. */
static int put_bits(char *b, size_t n, long v, const struct bitname *t,
		    const char *zero)
{
	int len = 0;

	for (; t->name && len < (int)n; t++) {
		if ((v & t->bit) == t->bit) {
			len += snprintf(b + len, n - len, "%s%s", len ? "|" : "",
					t->name);
			v &= ~t->bit;
		}
	}
	if (v && len < (int)n)
		len += snprintf(b + len, n - len, "%s%#lx", len ? "|" : "", v);
	if (len == 0)
		len = snprintf(b, n, "%s", zero);
	return len;
}

static const struct bitname *flag_table(int nr, int i, const char **zero)
{
	*zero = "0";
	if ((nr == SYS_mmap && i == 2) || (nr == SYS_mprotect && i == 2)) {
		*zero = "PROT_NONE";
		return prot;
	}
	if (nr == SYS_mmap && i == 3)
		return mapf;
	if ((nr == SYS_newfstatat && i == 3) || (nr == SYS_unlinkat && i == 2) ||
	    (nr == SYS_faccessat2 && i == 3) || (nr == SYS_utimensat && i == 3))
		return atf;
	return NULL;
}

static int put_const(char *b, size_t n, const struct xt_trace *t,
		     const struct xt_event *e, int i)
{
	const char *txt = xt_trace_text(t, e->text[i]), *zero;
	int fl = (e->nr == SYS_openat && i == 2) || (e->nr == SYS_open && i == 1);
	const struct bitname *bt = flag_table(e->nr, i, &zero);

	if (*txt)
		return snprintf(b, n, "%s", txt);
	if (fl)
		return put_oflags(b, n, e->args[i]);
	if (bt)
		return put_bits(b, n, e->args[i], bt, zero);
	if (e->args[i] >= 0 && e->args[i] < 10)
		return snprintf(b, n, "%ld", e->args[i]);
	return snprintf(b, n, "%#lx", e->args[i]);
}

static void make_label(char *b, size_t n, const struct xt_trace *t,
		       const struct xt_event *e, const unsigned char *tab,
		       unsigned char *fdk)
{
	const char *sig = xt_sys_info(e->nr)->sig;
	int len = snprintf(b, n, "%s(", xt_trace_name(t, e->nr)), first = 1;

	for (int i = 0; i < XT_NARGS && len < (int)n; i++) {
		if (sig[i] != XT_A_FD && sig[i] != XT_A_CONST)
			continue;
		if (!first && len < (int)n)
			len += snprintf(b + len, n - len, ",");
		first = 0;
		if (sig[i] == XT_A_CONST) {
			len += put_const(b + len, n - len, t, e, i);
			continue;
		}
		fdk[i] = (unsigned char)fd_kind(tab, e->args[i]);
		if (fdk[i] == XT_FD_CWD || fdk[i] == XT_FD_NONE)
			len += snprintf(b + len, n - len, "%s",
					xt_fdkind_name(fdk[i]));
		else
			len += snprintf(b + len, n - len, "%ld:%s", e->args[i],
					xt_fdkind_name(fdk[i]));
	}
	if (len < (int)n)
		snprintf(b + len, n - len, ")");
}

/* ---- nodes, edges, threads ---------------------------------------------- */

static unsigned hash_str(const char *s)
{
	unsigned h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

static int grow(void **p, int *cap, int need, size_t size)
{
	void *np;
	int c = *cap ? *cap : 64;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	np = realloc(*p, (size_t)c * size);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = c;
	return 0;
}

static int rehash_nodes(struct xt_graph *g)
{
	int cap = g->nhcap ? g->nhcap * 2 : 256;
	int *h = malloc(cap * sizeof(int));

	if (!h)
		return -ENOMEM;
	memset(h, 0xff, cap * sizeof(int));
	for (int i = 0; i < g->nnodes; i++) {
		unsigned k = hash_str(g->nodes[i].label) & (cap - 1);
		while (h[k] >= 0)
			k = (k + 1) & (cap - 1);
		h[k] = i;
	}
	free(g->nhash);
	g->nhash = h;
	g->nhcap = cap;
	return 0;
}

int xt_graph_node(const struct xt_graph *g, const char *label)
{
	if (!g->nhcap)
		return -ENOENT;
	for (unsigned k = hash_str(label) & (g->nhcap - 1); g->nhash[k] >= 0;
	     k = (k + 1) & (g->nhcap - 1))
		if (strcmp(g->nodes[g->nhash[k]].label, label) == 0)
			return g->nhash[k];
	return -ENOENT;
}

static int node_of(struct xt_graph *g, const char *label, int nr,
		   const unsigned char *fdk)
{
	int i = xt_graph_node(g, label);
	struct xt_node *nd;

	if (i >= 0)
		return i;
	if (2 * (g->nnodes + 1) > g->nhcap && rehash_nodes(g) < 0)
		return -ENOMEM;
	if (grow((void **)&g->nodes, &g->capn, g->nnodes + 1, sizeof(*nd)) < 0)
		return -ENOMEM;
	nd = &g->nodes[g->nnodes];
	memset(nd, 0, sizeof(*nd));
	nd->label = strdup(label);
	if (!nd->label)
		return -ENOMEM;
	nd->nr = nr;
	memcpy(nd->fdk, fdk, XT_NARGS);
	i = g->nnodes++;
	for (unsigned k = hash_str(label) & (g->nhcap - 1);;
	     k = (k + 1) & (g->nhcap - 1)) {
		if (g->nhash[k] < 0) {
			g->nhash[k] = i;
			break;
		}
	}
	return i;
}

static int edge_add(struct xt_graph *g, struct imap *eidx, int from, int to)
{
	long key = (long)from << 32 | (unsigned)to;
	int i = imap_get(eidx, key, -1);

	if (i < 0) {
		if (grow((void **)&g->edges, &g->cape, g->nedges + 1,
			 sizeof(*g->edges)) < 0)
			return -ENOMEM;
		i = g->nedges++;
		g->edges[i] = (struct xt_edge){ from, to, 0, (uint32_t)i };
		if (imap_put(eidx, key, i) < 0)
			return -ENOMEM;
	}
	g->edges[i].weight++;
	g->nodes[from].out++;
	g->nodes[to].in++;
	return 0;
}

static int thread_add(struct xt_graph *g, struct imap *tidx, int tid, int ev)
{
	int i = imap_get(tidx, tid, -1);
	struct xt_thread *th;

	if (i < 0) {
		if (grow((void **)&g->thr, &g->capt, g->nthr + 1,
			 sizeof(*g->thr)) < 0)
			return -ENOMEM;
		i = g->nthr++;
		memset(&g->thr[i], 0, sizeof(g->thr[i]));
		g->thr[i].tid = tid;
		if (imap_put(tidx, tid, i) < 0)
			return -ENOMEM;
	}
	th = &g->thr[i];
	if (th->n == th->cap) {
		int cap = (int)th->cap;
		if (grow((void **)&th->ev, &cap, cap + 1, sizeof(int)) < 0)
			return -ENOMEM;
		th->cap = (size_t)cap;
	}
	th->ev[th->n++] = ev;
	return i;
}

static int sys_add(struct xt_graph *g, struct imap *sidx,
		   const struct xt_event *e)
{
	int i = imap_get(sidx, e->nr, -1);
	int cap = g->nsys;

	if (i < 0) {
		struct xt_sysstat *s = realloc(g->sys, (cap + 1) * sizeof(*s));
		if (!s)
			return -ENOMEM;
		g->sys = s;
		i = g->nsys++;
		g->sys[i] = (struct xt_sysstat){ .nr = e->nr };
		if (imap_put(sidx, e->nr, i) < 0)
			return -ENOMEM;
	}
	g->sys[i].count++;
	g->sys[i].time_ns += e->dur_ns;
	g->sys[i].errors += e->ret < 0 && !(e->flags & XT_EV_NORET);
	return 0;
}

/* One event: label under the current fd table, count, link to the
 * previous node of its thread, then apply its fd effects. */
static int add_event(struct xt_graph *g, struct fdtabs *f, struct imap *maps,
		     size_t ei)
{
	const struct xt_event *e = &g->t->ev[ei];
	unsigned char fdk[XT_NARGS] = { 0 };
	char label[512];
	int tab = tab_of(f, g->t, e->tid), nd, th;
	size_t prev;

	if (tab < 0)
		return tab;
	make_label(label, sizeof(label), g->t, e, f->tab[tab], fdk);
	nd = node_of(g, label, e->nr, fdk);
	if (nd < 0)
		return nd;
	g->evnode[ei] = nd;
	g->nodes[nd].count++;
	g->nodes[nd].time_ns += e->dur_ns;
	g->total_ns += e->dur_ns;
	th = thread_add(g, &maps[0], e->tid, (int)ei);
	if (th < 0 || sys_add(g, &maps[2], e) < 0)
		return -ENOMEM;
	if (g->thr[th].n > 1) {
		prev = g->thr[th].ev[g->thr[th].n - 2];
		if (edge_add(g, &maps[1], g->evnode[prev], nd) < 0)
			return -ENOMEM;
	}
	fd_effects(g->t, e, f->tab[tab]);
	return 0;
}

static int index_clones(struct fdtabs *f, const struct xt_trace *t)
{
	for (size_t i = 0; i < t->n; i++) {
		const struct xt_event *e = &t->ev[i];
		int c = e->nr == SYS_clone || e->nr == SYS_clone3 ||
			e->nr == SYS_fork || e->nr == SYS_vfork;
		if (c && e->ret > 0 && !(e->flags & XT_EV_NORET) &&
		    imap_put(&f->clone_of, e->ret, (int)i) < 0)
			return -ENOMEM;
	}
	return 0;
}

int xt_graph_build(struct xt_graph *g, const struct xt_trace *t)
{
	struct fdtabs f = { 0 };
	struct imap maps[3] = { { 0 } };	/* threads, edges, syscalls */
	int err = 0;

	memset(g, 0, sizeof(*g));
	g->t = t;
	g->evnode = malloc((t->n + 1) * sizeof(int));
	if (!g->evnode)
		return -ENOMEM;
	err = index_clones(&f, t);
	for (size_t i = 0; i < t->n && err == 0; i++)
		err = add_event(g, &f, maps, i);
	g->nproc = f.n;
	for (int i = 0; i < f.n; i++)
		free(f.tab[i]);
	free(f.tab);
	imap_free(&f.of_tid);
	imap_free(&f.clone_of);
	for (int i = 0; i < 3; i++)
		imap_free(&maps[i]);
	if (err < 0)
		xt_graph_free(g);
	return err;
}

void xt_graph_free(struct xt_graph *g)
{
	for (int i = 0; i < g->nnodes; i++)
		free(g->nodes[i].label);
	for (int i = 0; i < g->nthr; i++)
		free(g->thr[i].ev);
	free(g->nodes);
	free(g->edges);
	free(g->evnode);
	free(g->thr);
	free(g->sys);
	free(g->nhash);
	memset(g, 0, sizeof(*g));
}

uint64_t xt_graph_weight(const struct xt_graph *g, int from, int to)
{
	for (int i = 0; i < g->nedges; i++)
		if (g->edges[i].from == from && g->edges[i].to == to)
			return g->edges[i].weight;
	return 0;
}

uint64_t xt_graph_weight_l(const struct xt_graph *g, const char *from,
			   const char *to)
{
	int a = xt_graph_node(g, from), b = xt_graph_node(g, to);

	return a < 0 || b < 0 ? 0 : xt_graph_weight(g, a, b);
}
