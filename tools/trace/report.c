/*
 * report.c - the terminal report and the JSON document.
 *
 * Both show the same things: how the program ended, top system calls by
 * count and by time, top sequences (the heaviest edges of the syscall
 * graph) and the cluster candidates with their counts, share, crossings
 * saved, argument dependencies, value profiles and recommendation.  The
 * JSON adds every node and edge, so tests and scripts can check the graph
 * exactly.  Update both functions together.
 */
#include "tracei.h"

#include <stdlib.h>
#include <string.h>

static const struct xt_graph *sg;

static int cmp_sys_count(const void *a, const void *b)
{
	const struct xt_sysstat *x = &sg->sys[*(const int *)a];
	const struct xt_sysstat *y = &sg->sys[*(const int *)b];

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->nr - y->nr;
}

static int cmp_sys_time(const void *a, const void *b)
{
	const struct xt_sysstat *x = &sg->sys[*(const int *)a];
	const struct xt_sysstat *y = &sg->sys[*(const int *)b];

	if (x->time_ns != y->time_ns)
		return x->time_ns > y->time_ns ? -1 : 1;
	return x->nr - y->nr;
}

static int cmp_edge_w(const void *a, const void *b)
{
	const struct xt_edge *x = &sg->edges[*(const int *)a];
	const struct xt_edge *y = &sg->edges[*(const int *)b];

	if (x->weight != y->weight)
		return x->weight > y->weight ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* Index arrays sorted by a comparator; NULL on ENOMEM. */
static int *sorted(const struct xt_graph *g, int n,
		   int (*cmp)(const void *, const void *))
{
	int *ix = malloc((n + 1) * sizeof(int));

	if (!ix)
		return NULL;
	for (int i = 0; i < n; i++)
		ix[i] = i;
	sg = g;
	qsort(ix, n, sizeof(int), cmp);
	return ix;
}

static const char *arg_kind_name(int nr, int arg)
{
	switch (xt_sys_akind(nr, arg)) {
	case XT_A_FD: return "fd";
	case XT_A_LEN: return "len";
	case XT_A_CONST: return "flags";
	case XT_A_STR: return "path";
	case XT_A_INT: return "int";
	default: return "arg";
	}
}

static void outcome(FILE *f, const struct xt_trace *t)
{
	if (t->detached)
		fprintf(f, "detached (interrupted); the program runs on untraced");
	else if (t->exited && t->signal)
		fprintf(f, "program killed by signal %d (SIG%s)", t->signal,
			sigabbrev_np(t->signal) ? sigabbrev_np(t->signal) : "?");
	else if (t->exited)
		fprintf(f, "program exited with status %d", t->status);
	else
		fprintf(f, "program end not recorded");
}

static void text_syscalls(FILE *f, const struct xt_graph *g, int top, int bytime)
{
	int *ix = sorted(g, g->nsys, bytime ? cmp_sys_time : cmp_sys_count);

	if (!ix)
		return;
	fprintf(f, "\nTop system calls by %s\n  %10s %7s %12s %8s  %s\n",
		bytime ? "time" : "count", "calls", "share", "time(us)",
		"errors", "name");
	for (int i = 0; i < g->nsys && i < top; i++) {
		const struct xt_sysstat *s = &g->sys[ix[i]];
		fprintf(f, "  %10llu %6.1f%% %12.1f %8llu  %s\n",
			(unsigned long long)s->count,
			100.0 * (double)s->count / (double)g->t->n,
			(double)s->time_ns / 1e3, (unsigned long long)s->errors,
			xt_trace_name(g->t, s->nr));
	}
	free(ix);
}

static void text_edges(FILE *f, const struct xt_graph *g, int top)
{
	int *ix = sorted(g, g->nedges, cmp_edge_w);

	if (!ix)
		return;
	fprintf(f, "\nTop sequences (weight = times b directly followed a "
		"in one thread)\n");
	for (int i = 0; i < g->nedges && i < top; i++) {
		const struct xt_edge *e = &g->edges[ix[i]];
		fprintf(f, "  %10llu  %s -> %s\n", (unsigned long long)e->weight,
			g->nodes[e->from].label, g->nodes[e->to].label);
	}
	free(ix);
}

static void text_values(FILE *f, const struct xt_graph *g,
			const struct xt_cand *c)
{
	for (int v = 0; v < c->nval; v++) {
		const struct xt_vprof *p = &c->val[v];
		int nr = g->nodes[c->node[p->call]].nr;
		fprintf(f, "     value %s.arg%d(%s):", xt_trace_name(g->t, nr),
			p->arg, arg_kind_name(nr, p->arg));
		for (int k = 0; k < XT_NVAL && p->cnt[k]; k++) {
			const char *txt = xt_trace_text(g->t, p->text[k]);
			char kind = xt_sys_akind(nr, p->arg);
			if (*txt || kind == XT_A_STR)
				fprintf(f, " \"%.48s\"", txt);
			else if (kind == XT_A_CONST && p->val[k] > 9)
				fprintf(f, " %#lx", p->val[k]);
			else
				fprintf(f, " %ld", p->val[k]);
			fprintf(f, " (%.1f%%)", 100.0 * (double)p->cnt[k] /
				(double)p->total);
		}
		fputc('\n', f);
	}
}

static void text_cand(FILE *f, const struct xt_graph *g,
		      const struct xt_cand *c, int id)
{
	fprintf(f, "  #%d %s%s\n     ", id, c->loop ? "loop: " : "",
		c->kind);
	for (int j = 0; j < c->len; j++)
		fprintf(f, "%s%s", j ? " -> " : "", g->nodes[c->node[j]].label);
	if (c->loop)
		fprintf(f, " -> (repeat)\n     %llu runs, %llu iterations",
			(unsigned long long)c->occ, (unsigned long long)c->iters);
	else
		fprintf(f, "\n     %llu occurrences", (unsigned long long)c->occ);
	fprintf(f, ", %llu calls (%.1f%% of all), %llu crossings saved\n",
		(unsigned long long)c->calls, 100.0 * c->share,
		(unsigned long long)c->saved);
	for (int d = 0; d < c->ndep; d++) {
		const struct xt_dep *p = &c->dep[d];
		int nr = g->nodes[c->node[p->call]].nr;
		fprintf(f, "     dep   call %d %s.arg%d(%s) = result of call %d "
			"%s (%.0f%%)\n", p->call, xt_trace_name(g->t, nr),
			p->arg, arg_kind_name(nr, p->arg), p->from,
			xt_trace_name(g->t, g->nodes[c->node[p->from]].nr),
			100.0 * p->share);
	}
	if (c->ndep == 0 && c->len > 1)
		fprintf(f, "     dep   none: arguments are constants or set "
			"before the region\n");
	text_values(f, g, c);
	fprintf(f, "     => %s\n", c->rec);
}

void xt_report_text(FILE *f, const struct xt_graph *g,
		    const struct xt_cand *c, int nc, const struct xt_outopt *o)
{
	const struct xt_trace *t = g->t;

	fprintf(f, "xsc trace: %s\n  %zu calls, %d threads, %d processes, "
		"%.3f s in calls; ", o->cmd ? o->cmd : "", t->n, g->nthr,
		g->nproc, (double)g->total_ns / 1e9);
	outcome(f, t);
	fputc('\n', f);
	if (t->nbad) {
		fprintf(f, "  %zu malformed lines skipped:\n", t->nbad);
		for (size_t i = 0; i < t->nmsgs; i++)
			fprintf(f, "    %s\n", t->msgs[i]);
	}
	if (t->n == 0)
		return;
	text_syscalls(f, g, o->top, 0);
	text_syscalls(f, g, o->top, 1);
	text_edges(f, g, o->top);
	fprintf(f, "\nCluster candidates (%d)\n", nc);
	for (int i = 0; i < nc; i++)
		text_cand(f, g, &c[i], i + 1);
}

/* ---- JSON ------------------------------------------------------------------ */

void xt_put_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20 || ch >= 0x7f)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

static void json_head(FILE *f, const struct xt_graph *g,
		      const struct xt_outopt *o)
{
	const struct xt_trace *t = g->t;

	fprintf(f, "{\n\"command\": ");
	xt_put_str(f, o->cmd ? o->cmd : "");
	fprintf(f, ",\n\"calls\": %zu, \"threads\": %d, \"processes\": %d, "
		"\"time_ns\": %llu, \"wall_s\": %.6f,\n", t->n, g->nthr,
		g->nproc, (unsigned long long)g->total_ns, t->wall_s);
	fprintf(f, "\"exit\": {\"recorded\": %s, \"status\": %d, \"signal\": %d, "
		"\"detached\": %s},\n", t->exited ? "true" : "false",
		t->status, t->signal, t->detached ? "true" : "false");
	fprintf(f, "\"malformed\": %zu, \"messages\": [", t->nbad);
	for (size_t i = 0; i < t->nmsgs; i++) {
		fputs(i ? ", " : "", f);
		xt_put_str(f, t->msgs[i]);
	}
	fprintf(f, "],\n");
}

static void json_graph(FILE *f, const struct xt_graph *g)
{
	int *ix = sorted(g, g->nsys, cmp_sys_count);

	fprintf(f, "\"syscalls\": [");
	for (int i = 0; ix && i < g->nsys; i++) {
		const struct xt_sysstat *s = &g->sys[ix[i]];
		fprintf(f, "%s\n {\"name\": \"%s\", \"count\": %llu, "
			"\"time_ns\": %llu, \"errors\": %llu}", i ? "," : "",
			xt_trace_name(g->t, s->nr), (unsigned long long)s->count,
			(unsigned long long)s->time_ns,
			(unsigned long long)s->errors);
	}
	free(ix);
	fprintf(f, "],\n\"nodes\": [");
	for (int i = 0; i < g->nnodes; i++) {
		fprintf(f, "%s\n {\"id\": %d, \"label\": ", i ? "," : "", i);
		xt_put_str(f, g->nodes[i].label);
		fprintf(f, ", \"count\": %llu, \"time_ns\": %llu}",
			(unsigned long long)g->nodes[i].count,
			(unsigned long long)g->nodes[i].time_ns);
	}
	ix = sorted(g, g->nedges, cmp_edge_w);
	fprintf(f, "],\n\"edges\": [");
	for (int i = 0; ix && i < g->nedges; i++) {
		const struct xt_edge *e = &g->edges[ix[i]];
		fprintf(f, "%s\n {\"from\": %d, \"to\": %d, \"weight\": %llu}",
			i ? "," : "", e->from, e->to,
			(unsigned long long)e->weight);
	}
	free(ix);
	fprintf(f, "],\n");
}

static void json_values(FILE *f, const struct xt_cand *c,
			const struct xt_trace *t)
{
	fprintf(f, ", \"values\": [");
	for (int v = 0; v < c->nval; v++) {
		const struct xt_vprof *p = &c->val[v];
		fprintf(f, "%s{\"call\": %d, \"arg\": %d, \"total\": %llu, "
			"\"top\": [", v ? ", " : "", p->call, p->arg,
			(unsigned long long)p->total);
		for (int k = 0; k < XT_NVAL && p->cnt[k]; k++) {
			fprintf(f, "%s{\"value\": %ld, \"text\": ", k ? ", " : "",
				p->val[k]);
			xt_put_str(f, xt_trace_text(t, p->text[k]));
			fprintf(f, ", \"count\": %llu}",
				(unsigned long long)p->cnt[k]);
		}
		fprintf(f, "]}");
	}
	fprintf(f, "]");
}

static void json_cand(FILE *f, const struct xt_graph *g,
		      const struct xt_cand *c, int id)
{
	fprintf(f, "\n {\"id\": %d, \"kind\": \"%s\", \"loop\": %s, "
		"\"nodes\": [", id, c->kind, c->loop ? "true" : "false");
	for (int j = 0; j < c->len; j++)
		fprintf(f, "%s%d", j ? ", " : "", c->node[j]);
	fprintf(f, "], \"labels\": [");
	for (int j = 0; j < c->len; j++) {
		fputs(j ? ", " : "", f);
		xt_put_str(f, g->nodes[c->node[j]].label);
	}
	fprintf(f, "],\n  \"occurrences\": %llu, \"iterations\": %llu, "
		"\"calls\": %llu, \"share\": %.6f, \"saved\": %llu, \"deps\": [",
		(unsigned long long)c->occ, (unsigned long long)c->iters,
		(unsigned long long)c->calls, c->share,
		(unsigned long long)c->saved);
	for (int d = 0; d < c->ndep; d++)
		fprintf(f, "%s{\"call\": %d, \"arg\": %d, \"from\": %d, "
			"\"share\": %.4f}", d ? ", " : "", c->dep[d].call,
			c->dep[d].arg, c->dep[d].from, c->dep[d].share);
	fprintf(f, "]");
	json_values(f, c, g->t);
	fprintf(f, ",\n  \"recommendation\": ");
	xt_put_str(f, c->rec);
	fprintf(f, "}");
}

void xt_report_json(FILE *f, const struct xt_graph *g,
		    const struct xt_cand *c, int nc, const struct xt_outopt *o)
{
	json_head(f, g, o);
	json_graph(f, g);
	fprintf(f, "\"candidates\": [");
	for (int i = 0; i < nc; i++) {
		fputs(i ? "," : "", f);
		json_cand(f, g, &c[i], i + 1);
	}
	fprintf(f, "]\n}\n");
}
