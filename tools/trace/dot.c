/*
 * dot.c - draw the syscall graph with Graphviz.
 *
 * Only the heaviest edges are drawn (--dot-edges, default 40) with the
 * nodes they touch; a real program's graph has hundreds of rare edges
 * that would hide the structure.  Edge labels are weights, pen width grows
 * with the logarithm of the weight, and the edges of the top cluster
 * candidates are red so the regions stand out.  xt_dot_render pipes the
 * text into `dot -T<fmt>` (Debian package graphviz).
 */
#include "tracei.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define HOT_CANDS 3

static const struct xt_graph *sg;

static int cmp_w(const void *a, const void *b)
{
	const struct xt_edge *x = &sg->edges[*(const int *)a];
	const struct xt_edge *y = &sg->edges[*(const int *)b];

	if (x->weight != y->weight)
		return x->weight > y->weight ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static void put_label(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		fputc(*s, f);
	}
}

/* Whether a -> b is a step of one of the top candidates. */
static int hot(const struct xt_cand *c, int nc, int a, int b)
{
	for (int i = 0; i < nc && i < HOT_CANDS; i++) {
		for (int j = 0; j < c[i].len; j++) {
			int nx = j + 1 < c[i].len ? c[i].node[j + 1] :
				 c[i].loop ? c[i].node[0] : -1;
			if (c[i].node[j] == a && nx == b)
				return 1;
		}
	}
	return 0;
}

void xt_dot(FILE *f, const struct xt_graph *g, const struct xt_cand *c,
	    int nc, const struct xt_outopt *o)
{
	int n = g->nedges < o->max_edges ? g->nedges : o->max_edges;
	int *ix = malloc((g->nedges + 1) * sizeof(int));
	char *used = calloc(g->nnodes + 1, 1);
	double maxw;

	if (!ix || !used)
		goto out;
	for (int i = 0; i < g->nedges; i++)
		ix[i] = i;
	sg = g;
	qsort(ix, g->nedges, sizeof(int), cmp_w);
	maxw = n ? (double)g->edges[ix[0]].weight : 1;
	fprintf(f, "digraph xsc_trace {\n  graph [label=\"xsc trace: ");
	put_label(f, o->cmd ? o->cmd : "");
	fprintf(f, " (%zu calls; top %d of %d edges)\", labelloc=t, "
		"fontname=Helvetica];\n  node [shape=box, style=\"rounded,filled\", "
		"fillcolor=\"#eef3fb\", fontname=Helvetica, fontsize=11];\n"
		"  edge [fontname=Helvetica, fontsize=10];\n", g->t->n, n,
		g->nedges);
	for (int i = 0; i < n; i++)
		used[g->edges[ix[i]].from] = used[g->edges[ix[i]].to] = 1;
	for (int i = 0; i < g->nnodes; i++) {
		if (!used[i])
			continue;
		fprintf(f, "  n%d [label=\"", i);
		put_label(f, g->nodes[i].label);
		fprintf(f, "\\n%llu\"];\n", (unsigned long long)g->nodes[i].count);
	}
	for (int i = 0; i < n; i++) {
		const struct xt_edge *e = &g->edges[ix[i]];
		double pw = 1 + 4 * log((double)e->weight) / log(maxw + 1);
		fprintf(f, "  n%d -> n%d [label=\"%llu\", penwidth=%.2f%s];\n",
			e->from, e->to, (unsigned long long)e->weight, pw,
			hot(c, nc, e->from, e->to) ? ", color=red, fontcolor=red" : "");
	}
	fprintf(f, "}\n");
out:
	free(ix);
	free(used);
}

int xt_dot_render(const char *path, const char *fmt, const struct xt_graph *g,
		  const struct xt_cand *c, int nc, const struct xt_outopt *o)
{
	char tflag[16];
	int p[2], st;
	void (*old)(int);
	pid_t pid;
	FILE *f;

	snprintf(tflag, sizeof(tflag), "-T%s", fmt);
	pid = xt_fork_piped(p, 0);
	if (pid < 0)
		return pid;
	if (pid == 0) {
		dup2(p[0], 0);
		close(p[0]);
		close(p[1]);
		execlp("dot", "dot", tflag, "-o", path, (char *)NULL);
		fprintf(stderr, "xsc trace: cannot run dot (Debian package "
			"graphviz): %s\n", strerror(errno));
		_exit(127);
	}
	close(p[0]);
	f = fdopen(p[1], "w");
	if (!f) {
		close(p[1]);
		waitpid(pid, &st, 0);
		return -ENOMEM;
	}
	old = signal(SIGPIPE, SIG_IGN);	/* dot may die before reading */
	xt_dot(f, g, c, nc, o);
	fclose(f);
	signal(SIGPIPE, old);
	if (waitpid(pid, &st, 0) < 0)
		return -errno;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -ECHILD;
}
