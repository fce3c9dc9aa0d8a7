/*
 * emit.c - print the multi-call array that would replace a candidate
 * (`xsc trace --emit N`).
 *
 * The multi-call API is not fixed yet, so the emitted text defines the
 * struct it uses:
 *
 *   struct xsc_mcall { long nr; long args[6]; int check; int fwd[6]; };
 *
 * nr and args come from the first instance of the candidate in the trace;
 * fwd[i] is the index of an earlier call whose result becomes argument i
 * at run time (the dependencies found by cluster.c: fd from open, length
 * from read), or -1; check asks the executor to stop at a failing call.
 * Arguments that were user pointers become the addresses of buffers
 * emitted alongside, one per distinct address in the trace (so a read and
 * a write of the same buffer still share it), sized by the largest length
 * passed with them; paths become string literals.  A looped candidate
 * also defines XSC_CHAINn_LOOP: repeat the array while every call
 * returns > 0.
 */
#include "tracei.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MAXBUF (XT_MAXREGION * XT_NARGS)
#define MINBUF 4096

struct bufs {
	long addr[MAXBUF];
	long size[MAXBUF];
	int n;
};

/* Largest length argument of the call, the size of its buffers. */
static long call_len(const struct xt_event *e)
{
	const char *sig = xt_sys_info(e->nr)->sig;
	long len = 0;

	for (int i = 0; i < XT_NARGS; i++)
		if (sig[i] == XT_A_LEN && e->args[i] > len && e->args[i] < (1 << 24))
			len = e->args[i];
	return len;
}

static int buf_of(struct bufs *b, long addr, long len)
{
	int i;

	for (i = 0; i < b->n; i++)
		if (b->addr[i] == addr)
			break;
	if (i == b->n) {
		if (b->n == MAXBUF)
			return 0;
		b->addr[b->n] = addr;
		b->size[b->n++] = MINBUF;
	}
	if (len > b->size[i])
		b->size[i] = (len + MINBUF - 1) / MINBUF * MINBUF;
	return i;
}

static void put_c_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
			fprintf(f, "\\%03o", (unsigned char)*s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

static int is_ptr(const struct xt_trace *t, const struct xt_event *e, int i)
{
	char k = xt_sys_akind(e->nr, i);

	return e->args[i] && (k == XT_A_PTR || (k == XT_A_STR && !e->text[i]));
}

static void put_arg(FILE *f, const struct xt_trace *t, const struct xt_event *e,
		    int i, int id, struct bufs *b)
{
	if (xt_sys_akind(e->nr, i) == XT_A_IGN && xt_sys_info(e->nr)->name[0] != '?') {
		fputs("0", f);	/* beyond the call's arity: stale registers */
	} else if (xt_sys_akind(e->nr, i) == XT_A_STR && e->text[i]) {
		fputs("(long)", f);
		put_c_str(f, xt_trace_text(t, e->text[i]));
	} else if (is_ptr(t, e, i)) {
		fprintf(f, "(long)xsc_chain%d_buf%d", id,
			buf_of(b, e->args[i], call_len(e)));
	} else if (e->args[i] == -100 && xt_sys_akind(e->nr, i) == XT_A_FD) {
		fprintf(f, "-100 /* AT_FDCWD */");
	} else {
		fprintf(f, "%ld", e->args[i]);
	}
}

static void put_call(FILE *f, const struct xt_trace *t, const struct xt_cand *c,
		     const struct xt_event *e, int j, int id, struct bufs *b)
{
	int fwd[XT_NARGS] = { -1, -1, -1, -1, -1, -1 };

	for (int d = 0; d < c->ndep; d++)
		if (c->dep[d].call == j)
			fwd[c->dep[d].arg] = c->dep[d].from;
	fprintf(f, "\t{ %d /* %s */, { ", e->nr, xt_trace_name(t, e->nr));
	for (int i = 0; i < XT_NARGS; i++) {
		fputs(i ? ", " : "", f);
		put_arg(f, t, e, i, id, b);
	}
	fprintf(f, " }, 1, { %d, %d, %d, %d, %d, %d } },\n", fwd[0], fwd[1],
		fwd[2], fwd[3], fwd[4], fwd[5]);
}

/* Buffers first (the array refers to them), so collect them in a pass
 * that prints into a scratch stream. */
static int first_instance(const struct xt_graph *g, const struct xt_cand *c,
			  const struct xt_event **ev)
{
	const struct xt_thread *th = &g->thr[c->firsttid];

	for (size_t p = 0; p < th->n; p++) {
		if (th->ev[p] != c->first)
			continue;
		if (p + c->len > th->n)
			return -EINVAL;
		for (int j = 0; j < c->len; j++)
			ev[j] = &g->t->ev[th->ev[p + j]];
		return 0;
	}
	return -EINVAL;
}

int xt_emit(FILE *f, const struct xt_graph *g, const struct xt_cand *c,
	    int id)
{
	const struct xt_event *ev[XT_MAXREGION];
	struct bufs b = { .n = 0 };
	char *body = NULL;
	size_t blen = 0;
	FILE *m;

	if (c->first < 0 || first_instance(g, c, ev) < 0)
		return -EINVAL;
	m = open_memstream(&body, &blen);
	if (!m)
		return -ENOMEM;
	for (int j = 0; j < c->len; j++)
		put_call(m, g->t, c, ev[j], j, id, &b);
	fclose(m);
	fprintf(f, "/* xsc trace --emit %d: %s", id, c->kind);
	for (int j = 0; j < c->len; j++)
		fprintf(f, "%s%s", j ? " -> " : "\n *   ", g->nodes[c->node[j]].label);
	fprintf(f, "\n * %llu %s, %llu calls, %llu crossings saved.\n"
		" * %s\n * Arguments are those of the first instance (thread %d);"
		" fwd[i] names the\n * earlier call whose result is argument i."
		" */\n", (unsigned long long)c->occ, c->loop ? "runs" :
		"occurrences", (unsigned long long)c->calls,
		(unsigned long long)c->saved, c->rec, ev[0]->tid);
	fprintf(f, "#ifndef XSC_MCALL_DEFINED\n#define XSC_MCALL_DEFINED\n"
		"struct xsc_mcall { long nr; long args[6]; int check; "
		"int fwd[6]; };\n#endif\n");
	for (int i = 0; i < b.n; i++)
		fprintf(f, "static char xsc_chain%d_buf%d[%ld]; /* %#lx in the "
			"trace */\n", id, i, b.size[i], b.addr[i]);
	fprintf(f, "#define XSC_CHAIN%d_LEN %d\n#define XSC_CHAIN%d_LOOP %d\n"
		"static struct xsc_mcall xsc_chain%d[XSC_CHAIN%d_LEN] = {\n%s};\n",
		id, c->len, id, c->loop, id, id, body ? body : "");
	free(body);
	return 0;
}
