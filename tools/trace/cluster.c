/*
 * cluster.c - cluster candidates from the syscall graph (the paper's
 * Figure 6 at trace level, with the loop rule and value profiles of
 * section 3.4).
 *
 * Regions.  Edges are walked by descending weight (ties: the order in
 * which the edges first appeared).  The paper's five conditions are about
 * source code, which a trace does not have; the trace-level stand-in for
 * "linear control flow between a and b" is that the succession is the
 * usual one: a -> b carries at least half of a's outgoing and half of b's
 * incoming weight.  Such an edge
 *   - starts a region {a, b} when neither node is in one,
 *   - appends b when a is the tail of a region, prepends a when b is a
 *     head, and joins two regions tail-to-head,
 *   - closes a loop when it goes from the tail to the head of the same
 *     region (or a == b): the region is a loop body (read -> write).
 *
 * Instances.  Each region is then matched against every thread's node
 * sequence: chains by non-overlapping occurrences, loops by runs (maximal
 * stretches following the cycle).  A chain of k calls met m times saves
 * m*(k-1) crossings as a multi-call; a loop run of L calls saves L-1 as a
 * looped multi-call.  Per instance (one chain occurrence, one loop
 * iteration) we look for argument dependencies (an f/n/i argument equal to
 * the positive result of an earlier call of the instance: fd from open,
 * length from read) and profile argument values.
 */
#include "tracei.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#define NDISTINCT 64

struct region {
	int node[XT_MAXREGION];
	int len, loop;
};

struct vcount {
	long val;
	uint32_t text;
	uint64_t cnt;
};

/* Per-candidate accumulators while scanning instances. */
struct acc {
	uint64_t inst;
	uint64_t dep[XT_MAXREGION][XT_NARGS][XT_MAXREGION];
	struct vcount vals[XT_MAXREGION][XT_NARGS][NDISTINCT];
	int nvals[XT_MAXREGION][XT_NARGS];
	uint64_t vtotal[XT_MAXREGION][XT_NARGS];
};

/* ---- growing regions ------------------------------------------------------ */

static const struct xt_graph *sort_g;

static int cmp_edge(const void *a, const void *b)
{
	const struct xt_edge *x = &sort_g->edges[*(const int *)a];
	const struct xt_edge *y = &sort_g->edges[*(const int *)b];

	if (x->weight != y->weight)
		return x->weight > y->weight ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int usual(const struct xt_graph *g, const struct xt_edge *e)
{
	return 2 * e->weight >= g->nodes[e->from].out &&
	       2 * e->weight >= g->nodes[e->to].in;
}

static void region_join(struct region *r, int *inreg, int ra, int rb)
{
	for (int i = 0; i < r[rb].len; i++) {
		r[ra].node[r[ra].len++] = r[rb].node[i];
		inreg[r[rb].node[i]] = ra;
	}
	r[rb].len = 0;
}

/* Applies one edge to the regions; returns the new region count. */
static int grow_edge(struct region *r, int nr, int *inreg, int a, int b)
{
	int ra = inreg[a], rb = inreg[b];

	if (ra < 0 && rb < 0) {
		r[nr] = (struct region){ .len = a == b ? 1 : 2, .loop = a == b };
		r[nr].node[0] = a;
		r[nr].node[1] = b;
		inreg[a] = inreg[b] = nr;
		return nr + 1;
	}
	if (ra >= 0 && r[ra].loop)
		return nr;
	if (rb >= 0 && r[rb].loop)
		return nr;
	if (ra >= 0 && rb < 0 && r[ra].node[r[ra].len - 1] == a &&
	    r[ra].len < XT_MAXREGION) {
		r[ra].node[r[ra].len++] = b;
		inreg[b] = ra;
	} else if (rb >= 0 && ra < 0 && r[rb].node[0] == b &&
		   r[rb].len < XT_MAXREGION) {
		memmove(&r[rb].node[1], &r[rb].node[0], r[rb].len * sizeof(int));
		r[rb].node[0] = a;
		r[rb].len++;
		inreg[a] = rb;
	} else if (ra >= 0 && ra == rb && r[ra].node[r[ra].len - 1] == a &&
		   r[ra].node[0] == b) {
		r[ra].loop = 1;
	} else if (ra >= 0 && rb >= 0 && ra != rb &&
		   r[ra].node[r[ra].len - 1] == a && r[rb].node[0] == b &&
		   r[ra].len + r[rb].len <= XT_MAXREGION) {
		region_join(r, inreg, ra, rb);
	}
	return nr;
}

static int is_read(int nr);
static int is_write(int nr);

static void rotate_to(struct region *r, int s)
{
	int tmp[XT_MAXREGION], k = r->len;

	for (int j = 0; j < k; j++)
		tmp[j] = r->node[(s + j) % k];
	memcpy(r->node, tmp, k * sizeof(int));
}

/* A loop has no natural first call; pick one so that results flow forward
 * inside an iteration: the first of a run of descriptor-creating calls
 * (open -> read -> close), else a read that feeds a write (read -> write,
 * not write -> read), which also lets the recommendation see the pair in
 * order. */
static void rotate(const struct xt_graph *g, struct region *r)
{
	int k = r->len;

	if (!r->loop || k < 2)
		return;
	for (int s = 0; s < k; s++) {
		int nr = g->nodes[r->node[s]].nr;
		int prev = g->nodes[r->node[(s + k - 1) % k]].nr;
		if (xt_sys_info(nr)->newfd && !xt_sys_info(prev)->newfd) {
			rotate_to(r, s);
			return;
		}
	}
	for (int s = 0; s < k; s++) {
		if (is_read(g->nodes[r->node[s]].nr) &&
		    is_write(g->nodes[r->node[(s + 1) % k]].nr)) {
			rotate_to(r, s);
			return;
		}
	}
}

static int find_regions(const struct xt_graph *g, uint64_t minw,
			struct region **out)
{
	int *order = malloc((g->nedges + 1) * sizeof(int));
	int *inreg = malloc((g->nnodes + 1) * sizeof(int));
	struct region *r = calloc(g->nedges + 1, sizeof(*r));
	int nr = 0;

	if (!order || !inreg || !r) {
		free(order);
		free(inreg);
		free(r);
		return -ENOMEM;
	}
	for (int i = 0; i < g->nedges; i++)
		order[i] = i;
	for (int i = 0; i < g->nnodes; i++)
		inreg[i] = -1;
	sort_g = g;
	qsort(order, g->nedges, sizeof(int), cmp_edge);
	for (int i = 0; i < g->nedges; i++) {
		const struct xt_edge *e = &g->edges[order[i]];
		if (e->weight < minw)
			break;
		if (usual(g, e))
			nr = grow_edge(r, nr, inreg, e->from, e->to);
	}
	free(order);
	free(inreg);
	for (int i = 0; i < nr; i++)
		rotate(g, &r[i]);
	*out = r;
	return nr;
}

/* ---- instances: dependencies and value profiles ------------------------- */

static void count_value(struct acc *a, const struct xt_trace *t,
			const struct xt_event *e, int j, int i)
{
	struct vcount *v = a->vals[j][i];
	int n = a->nvals[j][i];
	const char *txt = xt_trace_text(t, e->text[i]);

	a->vtotal[j][i]++;
	for (int k = 0; k < n; k++) {
		if (e->text[i] || v[k].text ?
		    strcmp(xt_trace_text(t, v[k].text), txt) == 0 :
		    v[k].val == e->args[i]) {
			v[k].cnt++;
			return;
		}
	}
	if (n < NDISTINCT) {
		v[n] = (struct vcount){ e->args[i], e->text[i], 1 };
		a->nvals[j][i]++;
	}
}

/* One instance: events ev[0..k-1] matching the region in order. */
static void instance(struct acc *a, const struct xt_trace *t, const int *ev,
		     int k)
{
	a->inst++;
	for (int j = 0; j < k; j++) {
		const struct xt_event *e = &t->ev[ev[j]];
		const char *sig = xt_sys_info(e->nr)->sig;
		for (int i = 0; i < XT_NARGS; i++) {
			if (sig[i] == XT_A_LEN || sig[i] == XT_A_CONST ||
			    sig[i] == XT_A_INT || sig[i] == XT_A_STR)
				count_value(a, t, e, j, i);
			if (sig[i] != XT_A_FD && sig[i] != XT_A_LEN &&
			    sig[i] != XT_A_INT)
				continue;
			for (int m = j - 1; m >= 0; m--) {
				const struct xt_event *p = &t->ev[ev[m]];
				/* Descriptors come from fd-creating calls,
				 * lengths from the others. */
				int mkfd = xt_sys_info(p->nr)->newfd != 0;
				if (mkfd != (sig[i] == XT_A_FD))
					continue;
				if (p->ret > 0 && !(p->flags & XT_EV_NORET) &&
				    p->ret == e->args[i]) {
					a->dep[j][i][m]++;
					break;
				}
			}
		}
	}
}

static int pos_in(const struct region *r, int node)
{
	for (int i = 0; i < r->len; i++)
		if (r->node[i] == node)
			return i;
	return -1;
}

static void note_first(struct xt_cand *c, int ev, int th)
{
	if (c->first < 0 || ev < c->first) {
		c->first = ev;
		c->firsttid = th;
	}
}

static void scan_chain(const struct xt_graph *g, const struct region *r,
		       struct xt_cand *c, struct acc *a, int th)
{
	const struct xt_thread *t = &g->thr[th];
	int evs[XT_MAXREGION];

	for (size_t i = 0; i + r->len <= t->n;) {
		int k = 0;
		while (k < r->len && g->evnode[t->ev[i + k]] == r->node[k]) {
			evs[k] = t->ev[i + k];
			k++;
		}
		if (k < r->len) {
			i++;
			continue;
		}
		c->occ++;
		c->calls += r->len;
		note_first(c, evs[0], th);
		instance(a, g->t, evs, r->len);
		i += r->len;
	}
}

static void scan_loop(const struct xt_graph *g, const struct region *r,
		      struct xt_cand *c, struct acc *a, int th)
{
	const struct xt_thread *t = &g->thr[th];
	int k = r->len, evs[XT_MAXREGION];

	for (size_t i = 0; i < t->n;) {
		int rot = pos_in(r, g->evnode[t->ev[i]]);
		size_t len = 0;
		if (rot < 0) {
			i++;
			continue;
		}
		while (i + len < t->n &&
		       g->evnode[t->ev[i + len]] == r->node[(rot + len) % k])
			len++;
		if (len >= (size_t)k && len >= 2) {
			c->occ++;
			c->calls += len;
			c->saved += len - 1;
			for (size_t s = (k - rot) % k; s + k <= len; s += k) {
				for (int j = 0; j < k; j++)
					evs[j] = t->ev[i + s + j];
				if (s == (size_t)(k - rot) % k)
					note_first(c, evs[0], th);
				instance(a, g->t, evs, k);
				c->iters++;
			}
		}
		i += len;
	}
}

/* ---- summarising ------------------------------------------------------------ */

static void finish_deps(struct xt_cand *c, const struct acc *a)
{
	for (int j = 0; j < c->len; j++)
		for (int i = 0; i < XT_NARGS; i++)
			for (int m = 0; m < j; m++) {
				uint64_t n = a->dep[j][i][m];
				if (!n || 2 * n < a->inst)
					continue;
				c->dep[c->ndep++] = (struct xt_dep){
					j, i, m, (double)n / (double)a->inst };
			}
}

static int cmp_vcount(const void *a, const void *b)
{
	const struct vcount *x = a, *y = b;

	return x->cnt != y->cnt ? (x->cnt > y->cnt ? -1 : 1) : 0;
}

/* Keeps, per call, the profiles of its length, constant, integer and path
 * arguments (at most two per call, the most concentrated first). */
static void finish_values(struct xt_cand *c, struct acc *a)
{
	for (int j = 0; j < c->len; j++) {
		int kept = 0;
		for (int i = 0; i < XT_NARGS && kept < 2; i++) {
			struct xt_vprof *v;
			int n = a->nvals[j][i];
			if (!n)
				continue;
			qsort(a->vals[j][i], n, sizeof(struct vcount), cmp_vcount);
			v = &c->val[c->nval++];
			memset(v, 0, sizeof(*v));
			v->call = j;
			v->arg = i;
			v->total = a->vtotal[j][i];
			for (int k = 0; k < XT_NVAL && k < n; k++) {
				v->val[k] = a->vals[j][i][k].val;
				v->text[k] = a->vals[j][i][k].text;
				v->cnt[k] = a->vals[j][i][k].cnt;
			}
			kept++;
		}
	}
}

static int is_read(int nr)
{
	return nr == SYS_read || nr == SYS_pread64 || nr == SYS_readv ||
	       nr == SYS_recvfrom || nr == SYS_preadv;
}

static int is_write(int nr)
{
	return nr == SYS_write || nr == SYS_pwrite64 || nr == SYS_writev ||
	       nr == SYS_sendto || nr == SYS_pwritev;
}

static int has_dep(const struct xt_cand *c, int call, int arg, int from)
{
	for (int i = 0; i < c->ndep; i++)
		if (c->dep[i].call == call && c->dep[i].arg == arg &&
		    c->dep[i].from == from)
			return 1;
	return 0;
}

/* read -> write of a buffer: which in-kernel copy the kernel already has. */
static int copy_rec(struct xt_cand *c, const struct xt_node *r,
		    const struct xt_node *w)
{
	int in = r->fdk[0], out = w->fdk[0];

	if (in == XT_FD_FILE && out == XT_FD_FILE)
		snprintf(c->rec, sizeof(c->rec), "copy_file_range(in, NULL, out, "
			 "NULL, len, 0) in place of the loop (specialized "
			 "read_write, paper 3.4): no user copy, one call per file");
	else if (in == XT_FD_FILE && out == XT_FD_SOCK)
		snprintf(c->rec, sizeof(c->rec), "sendfile(out, in, NULL, len): "
			 "file to socket inside the kernel");
	else if (in == XT_FD_PIPE || out == XT_FD_PIPE)
		snprintf(c->rec, sizeof(c->rec), "splice(in, NULL, out, NULL, len, "
			 "SPLICE_F_MOVE): one end is a pipe");
	else if (in == XT_FD_SOCK)
		snprintf(c->rec, sizeof(c->rec), "splice through a pipe "
			 "(socket -> pipe -> out), or a looped multi-call");
	else
		return 0;
	c->kind = "specialized call";
	return 1;
}

static void recommend(struct xt_cand *c, const struct xt_graph *g)
{
	const struct xt_node *n0 = &g->nodes[c->node[0]];
	const struct xt_node *n1 = c->len > 1 ? &g->nodes[c->node[1]] : NULL;

	c->kind = c->loop ? "looped multi-call" : "multi-call chain";
	if (n1 && c->len == 2 && is_read(n0->nr) && is_write(n1->nr) &&
	    has_dep(c, 1, 2, 0) && copy_rec(c, n0, n1))
		return;
	if (c->len == 1 && (is_read(n0->nr) || is_write(n0->nr))) {
		int pos = n0->nr == SYS_pread64 || n0->nr == SYS_pwrite64;
		c->kind = "specialized call";
		snprintf(c->rec, sizeof(c->rec), "%s: gather the run of %s "
			 "calls on one fd into one vectored call",
			 pos ? "preadv2/pwritev2" : "readv/writev",
			 xt_trace_name(g->t, n0->nr));
		return;
	}
	if (n1 && n0->nr == SYS_lseek && (n1->nr == SYS_read || n1->nr == SYS_write)) {
		c->kind = "specialized call";
		snprintf(c->rec, sizeof(c->rec), "%s (offset in the call, "
			 "no lseek)", n1->nr == SYS_read ? "pread64/preadv2" :
			 "pwrite64/pwritev2");
		return;
	}
	if (c->ndep == 0 && c->len > 1)
		snprintf(c->rec, sizeof(c->rec), "io_uring batching or a %s: "
			 "no call uses another's result, so all can be "
			 "submitted at once", c->kind);
	else
		snprintf(c->rec, sizeof(c->rec), "%s (xsc trace --emit): "
			 "%s", c->kind, c->loop ? "one crossing per run of "
			 "the loop" : "one crossing per occurrence");
}

static int cmp_cand(const void *a, const void *b)
{
	const struct xt_cand *x = a, *y = b;

	if (x->saved != y->saved)
		return x->saved > y->saved ? -1 : 1;
	return x->first < y->first ? -1 : x->first > y->first;
}

static void evaluate(const struct xt_graph *g, const struct region *r,
		     struct xt_cand *c, struct acc *a)
{
	memset(c, 0, offsetof(struct xt_cand, dep));
	c->ndep = c->nval = 0;
	memcpy(c->node, r->node, sizeof(c->node));
	c->len = r->len;
	c->loop = r->loop;
	c->first = -1;
	memset(a, 0, sizeof(*a));
	for (int th = 0; th < g->nthr; th++) {
		if (r->loop)
			scan_loop(g, r, c, a, th);
		else
			scan_chain(g, r, c, a, th);
	}
	if (!r->loop)
		c->saved = c->occ * (uint64_t)(r->len - 1);
	c->share = g->t->n ? (double)c->calls / (double)g->t->n : 0;
	finish_deps(c, a);
	finish_values(c, a);
	recommend(c, g);
}

int xt_cluster(const struct xt_graph *g, const struct xt_clopt *o,
	       struct xt_cand **out)
{
	struct region *r;
	struct xt_cand *c;
	struct acc *a;
	int nr, nc = 0;

	*out = NULL;
	nr = find_regions(g, o->min_weight ? o->min_weight : 2, &r);
	if (nr < 0)
		return nr;
	c = calloc(nr + 1, sizeof(*c));
	a = malloc(sizeof(*a));
	if (!c || !a) {
		free(r);
		free(c);
		free(a);
		return -ENOMEM;
	}
	for (int i = 0; i < nr; i++) {
		if (r[i].len == 0)
			continue;	/* joined into another */
		evaluate(g, &r[i], &c[nc], a);
		if (c[nc].saved > 0)
			nc++;
	}
	free(r);
	free(a);
	qsort(c, nc, sizeof(*c), cmp_cand);
	if (o->max_cands > 0 && nc > o->max_cands)
		nc = o->max_cands;
	*out = c;
	return nc;
}
