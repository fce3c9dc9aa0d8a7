/*
 * strace.c - read an `strace -f -tt -T` log into a trace.
 *
 * Accepted line shapes (pid column and timestamp optional):
 *
 *   1234  12:00:01.000100 read(3, "..."..., 4096) = 4096 <0.000012>
 *   [pid  1234] 12:00:01.000100 openat(AT_FDCWD, "/x", O_RDONLY) = -1 ENOENT (...) <...>
 *   1234  12:00:01.000100 read(0,  <unfinished ...>
 *   1234  12:00:01.000200 <... read resumed>"abc", 4096) = 3 <0.000090>
 *   1234  12:00:01.000300 --- SIGCHLD {...} ---          (ignored)
 *   1234  12:00:01.000400 +++ exited with 0 +++          (program outcome)
 *
 * An unfinished call is kept per pid and completed by its "resumed" line.
 * Arguments are split at top-level commas (strings, [], {} and () nest);
 * numbers become values, AT_FDCWD becomes -100, "-y" decorations such as
 * 3</etc/passwd> become 3, and path strings and symbolic constants are
 * kept as text for node labels and value profiles.  Lines that do not
 * parse are reported with their number and skipped.
 */
#include "tracei.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#define MAXLINE 65536

struct pending {
	int pid;
	uint64_t ts;
	char *head;		/* "name(args so far" */
};

static struct pending *pend;
static int npend, root_pid;

/* errno names, from glibc's strerrorname_np, built on first use. */
static long errno_of(const char *s, size_t len)
{
	for (int e = 1; e < 4096; e++) {
		const char *n = strerrorname_np(e);
		if (n && strlen(n) == len && memcmp(n, s, len) == 0)
			return e;
	}
	if (len >= 8 && memcmp(s, "ERESTART", 8) == 0)
		return 512;	/* kernel-internal restart codes */
	return 1;
}

static const char *skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* "1234 " or "[pid 1234] " */
static const char *parse_pid(const char *p, int *pid)
{
	const char *q;

	*pid = 0;
	if (strncmp(p, "[pid", 4) == 0) {
		*pid = (int)strtol(p + 4, (char **)&q, 10);
		return *q == ']' ? skip_ws(q + 1) : NULL;
	}
	if (isdigit((unsigned char)*p)) {
		long v = strtol(p, (char **)&q, 10);
		if (*q == ' ' || *q == '\t') {
			*pid = (int)v;
			return skip_ws(q);
		}
	}
	return p;
}

/* "12:00:01.000100 " (-tt) or "1700000000.000100 " (-ttt) */
static const char *parse_ts(const char *p, uint64_t *ts)
{
	int h, m;
	double s;
	int n = 0;

	*ts = 0;
	if (sscanf(p, "%d:%d:%lf%n", &h, &m, &s, &n) == 3 && n > 0 &&
	    (p[n] == ' ' || p[n] == '\t')) {
		*ts = (uint64_t)(((double)h * 3600 + m * 60 + s) * 1e9);
		return skip_ws(p + n);
	}
	if (isdigit((unsigned char)*p)) {
		char *q;
		double v = strtod(p, &q);
		if (q > p && *q == ' ' && memchr(p, '.', q - p)) {
			*ts = (uint64_t)(v * 1e9);
			return skip_ws(q);
		}
	}
	return p;
}

/* End of the argument list: the ')' closing the call, or NULL. */
static const char *args_end(const char *p)
{
	int depth = 0;

	for (; *p; p++) {
		if (*p == '"') {
			for (p++; *p && *p != '"'; p++)
				if (*p == '\\' && p[1])
					p++;
			if (!*p)
				return NULL;
		} else if (*p == '(' || *p == '[' || *p == '{') {
			depth++;
		} else if (*p == ']' || *p == '}') {
			depth--;
		} else if (*p == ')') {
			if (depth-- == 0)
				return p;
		}
	}
	return NULL;
}

static void parse_pair(const char *s, size_t len, struct xt_event *e)
{
	if (len > 1 && s[0] == '[')
		sscanf(s + 1, "%ld, %ld", &e->aux[0], &e->aux[1]);
}

/* One argument: value and, for paths and constants, text. */
static void parse_arg(struct xt_trace *t, struct xt_event *e, int i,
		      const char *s, size_t len)
{
	char kind = xt_sys_akind(e->nr, i), *q;
	long v;

	while (len && (s[len - 1] == ' '))
		len--;
	if (len && s[0] == '"') {
		size_t l = len > 1 ? len - 1 : len;
		while (l > 1 && s[l] != '"')
			l--;
		if (kind == XT_A_STR)
			e->text[i] = xt_trace_str(t, s + 1, l - 1);
		else
			e->args[i] = 1;	/* some buffer; its address is not logged */
		return;
	}
	if (len && (s[0] == '{' || s[0] == '[') && kind == XT_A_PTR)
		e->args[i] = 1;
	if (len >= 8 && memcmp(s, "AT_FDCWD", 8) == 0) {
		e->args[i] = -100;
		return;
	}
	if (len && s[0] == '[' && xt_sys_info(e->nr)->pair)
		parse_pair(s, len, e);
	errno = 0;
	v = strtol(s, &q, 0);
	if (q > s && (q == s + len || *q == '<')) {
		e->args[i] = v;	/* 3</path> from -y counts as 3 */
		return;
	}
	if (len == 4 && memcmp(s, "NULL", 4) == 0)
		return;
	if (kind == XT_A_CONST || kind == XT_A_INT || kind == XT_A_LEN)
		e->text[i] = xt_trace_str(t, s, len);
}

static void parse_args(struct xt_trace *t, struct xt_event *e,
		       const char *p, const char *end)
{
	int i = 0, depth = 0;
	const char *a = p;

	for (; p <= end && i < XT_NARGS; p++) {
		if (*p == '"') {
			for (p++; p < end && *p != '"'; p++)
				if (*p == '\\')
					p++;
		} else if (*p == '(' || *p == '[' || *p == '{') {
			depth++;
		} else if ((*p == ')' || *p == ']' || *p == '}') && p < end) {
			depth--;
		} else if ((*p == ',' && depth == 0) || p == end) {
			a = skip_ws(a);
			if (p > a)
				parse_arg(t, e, i, a, p - a);
			i++;
			a = p + 1;
		}
	}
}

/* clone/clone3/fork lines: whether the child shares the fd table. */
static void clone_flags(struct xt_event *e, const char *p, const char *end)
{
	const char *f = memmem(p, end - p, "CLONE_FILES", 11);

	if (e->nr == SYS_clone)
		e->args[0] = f ? CLONE_FILES : 0;	/* clone */
	else
		e->aux[0] = f ? CLONE_FILES : 0;	/* clone3 */
}

/* " = 3 <0.000010>", " = -1 ENOENT (...) <...>", " = ?" */
static int parse_ret(struct xt_event *e, const char *p)
{
	const char *lt;
	char *q;

	p = skip_ws(p);
	if (*p != '=')
		return -EINVAL;
	p = skip_ws(p + 1);
	if (*p == '?') {
		e->flags |= XT_EV_NORET;
	} else {
		e->ret = strtol(p, &q, 0);
		if (q == p)
			return -EINVAL;
		if (e->ret == -1 && q[0] == ' ' && q[1] == 'E') {
			const char *n = q + 1;
			size_t len = strspn(n, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
			e->ret = -errno_of(n, len);
		}
	}
	lt = strrchr(p, '<');
	if (lt && strchr(lt, '>'))
		e->dur_ns = (uint64_t)(strtod(lt + 1, NULL) * 1e9);
	return 0;
}

static struct pending *pending_of(int pid)
{
	for (int i = 0; i < npend; i++)
		if (pend[i].pid == pid)
			return &pend[i];
	return NULL;
}

static int add_pending(int pid, uint64_t ts, const char *s, size_t len)
{
	struct pending *p = pending_of(pid);

	if (!p) {
		struct pending *np = realloc(pend, (npend + 1) * sizeof(*np));
		if (!np)
			return -ENOMEM;
		pend = np;
		p = &pend[npend++];
		p->pid = pid;
	} else {
		free(p->head);
	}
	p->ts = ts;
	p->head = strndup(s, len);
	return p->head ? 0 : -ENOMEM;
}

static int outcome(struct xt_trace *t, int pid, const char *p)
{
	int v;
	char sig[32];

	if (pid != root_pid)
		return 0;
	if (sscanf(p, "+++ exited with %d", &v) == 1) {
		t->exited = 1;
		t->status = v;
	} else if (sscanf(p, "+++ killed by %31[A-Z0-9]", sig) == 1) {
		t->exited = 1;
		t->signal = 0;
		for (int s = 1; s < 65; s++) {
			const char *n = sigabbrev_np(s);
			if (n && strcmp(sig + 3, n) == 0)
				t->signal = s;
		}
	}
	return 0;
}

/* A complete call "name(args) = ret <dur>". */
static int parse_call(struct xt_trace *t, int pid, uint64_t ts, const char *p)
{
	const char *par = p, *end;
	struct xt_event *e;
	int nr;

	while (isalnum((unsigned char)*par) || *par == '_')
		par++;
	if (par == p || *par != '(')
		return -EINVAL;
	end = args_end(par + 1);
	if (!end) {
		const char *u = strstr(par, "<unfinished ...>");
		return u ? add_pending(pid, ts, p, u - p) : -EINVAL;
	}
	nr = xt_trace_nr(t, p, par - p);
	if (nr < 0)
		return nr;
	e = xt_trace_push(t);
	if (!e)
		return -ENOMEM;
	e->tid = pid;
	e->nr = nr;
	e->ts_ns = ts;
	parse_args(t, e, par + 1, end);
	if (nr == SYS_clone || nr == SYS_clone3)
		clone_flags(e, par + 1, end);
	if (parse_ret(e, end + 1) < 0) {
		t->n--;
		return -EINVAL;
	}
	return 0;
}

/* "<... read resumed>rest": glue to the unfinished head and parse. */
static int resumed(struct xt_trace *t, int pid, const char *p)
{
	struct pending *pd = pending_of(pid);
	const char *rest = strstr(p, "resumed>");
	char *line;
	int err;

	if (!pd || !rest)
		return -EINVAL;
	if (asprintf(&line, "%s%s", pd->head, rest + 8) < 0)
		return -ENOMEM;
	err = parse_call(t, pid, pd->ts, line);
	free(line);
	free(pd->head);
	*pd = pend[--npend];
	return err;
}

int xt_strace_line(struct xt_trace *t, const char *line, size_t lineno)
{
	const char *p = skip_ws(line);
	uint64_t ts;
	int pid, err;

	if (!*p || *p == '\n' || strncmp(p, "strace:", 7) == 0)
		return 0;
	p = parse_pid(p, &pid);
	if (!p)
		goto bad;
	if (!root_pid)
		root_pid = pid ? pid : -1;
	p = parse_ts(p, &ts);
	if (strncmp(p, "---", 3) == 0)
		return 0;
	if (strncmp(p, "+++", 3) == 0)
		return outcome(t, pid ? pid : -1, p);
	err = strncmp(p, "<...", 4) == 0 ? resumed(t, pid, p)
					 : parse_call(t, pid, ts, p);
	if (err == -ENOMEM)
		return err;
	if (err == 0)
		return 0;
bad:
	xt_trace_msg(t, "line %zu: malformed, skipped: %.60s", lineno, line);
	return 0;
}

int xt_strace_read(struct xt_trace *t, FILE *f)
{
	char *line = NULL;
	size_t cap = 0, lineno = 0;
	ssize_t n;
	int err = 0;

	root_pid = 0;
	while ((n = getline(&line, &cap, f)) > 0) {
		lineno++;
		if (line[n - 1] == '\n')
			line[--n] = '\0';
		err = xt_strace_line(t, line, lineno);
		if (err < 0)
			break;
	}
	for (int i = 0; i < npend; i++)
		free(pend[i].head);
	free(pend);
	pend = NULL;
	npend = 0;
	free(line);
	return err;
}
