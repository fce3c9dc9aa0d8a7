/*
 * events.c - the trace container: a growing array of events, a string pool
 * for argument texts (paths, symbolic constants from strace logs), names of
 * syscalls the table does not know, and the first few problem messages.
 *
 * Strings are pool offsets rather than pointers so the pool can grow with
 * realloc; offset 0 is the empty string and means "no text".
 */
#include "tracei.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define MAX_MSGS 50

void xt_trace_init(struct xt_trace *t)
{
	memset(t, 0, sizeof(*t));
	t->status = -1;
}

void xt_trace_free(struct xt_trace *t)
{
	for (int i = 0; i < t->nxnames; i++)
		free(t->xnames[i]);
	for (size_t i = 0; i < t->nmsgs; i++)
		free(t->msgs[i]);
	free(t->xnames);
	free(t->msgs);
	free(t->ev);
	free(t->pool);
	memset(t, 0, sizeof(*t));
}

struct xt_event *xt_trace_push(struct xt_trace *t)
{
	struct xt_event *e;

	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 4096;
		e = realloc(t->ev, cap * sizeof(*e));
		if (!e)
			return NULL;
		t->ev = e;
		t->cap = cap;
	}
	e = &t->ev[t->n++];
	memset(e, 0, sizeof(*e));
	e->aux[0] = e->aux[1] = -1;
	return e;
}

uint32_t xt_trace_str(struct xt_trace *t, const char *s, size_t len)
{
	size_t need = t->pool_len + len + 1 + (t->pool_len == 0);
	uint32_t off;

	if (need > UINT32_MAX)
		return 0;
	if (need > t->pool_cap) {
		size_t cap = t->pool_cap ? t->pool_cap : 65536;
		char *p;
		while (cap < need)
			cap *= 2;
		p = realloc(t->pool, cap);
		if (!p)
			return 0;
		t->pool = p;
		t->pool_cap = cap;
	}
	if (t->pool_len == 0)
		t->pool[t->pool_len++] = '\0';
	off = (uint32_t)t->pool_len;
	memcpy(t->pool + off, s, len);
	t->pool[off + len] = '\0';
	t->pool_len += len + 1;
	return off;
}

const char *xt_trace_text(const struct xt_trace *t, uint32_t off)
{
	return off && off < t->pool_len ? t->pool + off : "";
}

const char *xt_trace_name(const struct xt_trace *t, int nr)
{
	const char *n = xt_sys_name(nr);

	if (n)
		return n;
	if (nr >= XT_NR_EXTRA && nr - XT_NR_EXTRA < t->nxnames)
		return t->xnames[nr - XT_NR_EXTRA];
	return "unknown";
}

/* Number of a syscall name; names the table lacks (strace's
 * "syscall_0x1c1", newer calls) get numbers from XT_NR_EXTRA up. */
int xt_trace_nr(struct xt_trace *t, const char *name, size_t len)
{
	char buf[64], **xn;
	int nr;

	if (len == 0 || len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, name, len);
	buf[len] = '\0';
	nr = xt_sys_nr(buf);
	if (nr >= 0)
		return nr;
	for (int i = 0; i < t->nxnames; i++)
		if (strcmp(t->xnames[i], buf) == 0)
			return XT_NR_EXTRA + i;
	xn = realloc(t->xnames, (t->nxnames + 1) * sizeof(*xn));
	if (!xn)
		return -ENOMEM;
	t->xnames = xn;
	xn[t->nxnames] = strdup(buf);
	if (!xn[t->nxnames])
		return -ENOMEM;
	return XT_NR_EXTRA + t->nxnames++;
}

void xt_trace_msg(struct xt_trace *t, const char *fmt, ...)
{
	va_list ap;
	char *m, **msgs;

	t->nbad++;
	if (t->nmsgs >= MAX_MSGS)
		return;
	va_start(ap, fmt);
	if (vasprintf(&m, fmt, ap) < 0)
		m = NULL;
	va_end(ap);
	if (!m)
		return;
	msgs = realloc(t->msgs, (t->nmsgs + 1) * sizeof(*msgs));
	if (!msgs) {
		free(m);
		return;
	}
	t->msgs = msgs;
	msgs[t->nmsgs++] = m;
}
