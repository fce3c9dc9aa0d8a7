/*
 * cli.c - `xsc trace` command line: record or read a trace, analyse it,
 * write the report, JSON, pictures or an emitted chain.
 *
 * Output goes to -o FILE when given, else to stdout for --from and to
 * stderr when tracing a live command (like strace, so the program's own
 * stdout stays clean in a pipeline).  The exit status is the traced
 * program's: its exit code, 128+signal when it was killed, 127 when the
 * command was not found, 130 after Ctrl-C; 2 for usage errors and 1 when
 * the analysis itself failed.
 */
#include "trace.h"
#include "tracei.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

struct opts {
	const char *from, *out, *dot, *svg, *png;
	int json, emit, top, dot_edges, quiet;
	uint64_t min_weight;
	struct xt_recopt rec;
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: xsc trace [options] -- cmd args...   record and analyse a command\n"
"       xsc trace [options] --from FILE       analyse an `strace -f -tt -T` log\n"
"options:\n"
"  -o FILE          write the report (or JSON, or chain) to FILE\n"
"  --json           JSON instead of the text report\n"
"  --dot FILE       write the syscall graph in Graphviz dot\n"
"  --svg FILE       draw it as SVG with dot (Debian package graphviz)\n"
"  --png FILE       draw it as PNG\n"
"  --emit N         print the xsc_mcall array of candidate N (C)\n"
"  --top N          rows per table (default 10)\n"
"  --min-weight N   ignore edges seen fewer than N times (default 2)\n"
"  --dot-edges N    edges drawn (default 40)\n"
"  --progress       progress line even when stderr is not a terminal\n"
"  --no-progress    never a progress line\n"
"  --seccomp        seccomp-assisted ptrace (see record.c; not faster)\n"
"  --pin            tracer and program on one CPU: much cheaper tracing,\n"
"                   but the program sees a single CPU\n"
"  -q, --quiet      no report, only the files asked for\n");
}

static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "from", 1, 0, 'f' }, { "json", 0, 0, 'j' },
		{ "dot", 1, 0, 'd' }, { "svg", 1, 0, 's' }, { "png", 1, 0, 'p' },
		{ "emit", 1, 0, 'e' }, { "top", 1, 0, 't' },
		{ "min-weight", 1, 0, 'w' }, { "dot-edges", 1, 0, 'E' },
		{ "progress", 0, 0, 'P' }, { "no-progress", 0, 0, 'N' },
		{ "seccomp", 0, 0, 'S' }, { "quiet", 0, 0, 'q' },
		{ "pin", 0, 0, 'C' },
		{ "help", 0, 0, 'h' }, { 0, 0, 0, 0 },
	};
	int c;

	optind = 0;	/* glibc: full reset, we may not be the first parser */
	while ((c = getopt_long(argc, argv, "+o:qh", lo, NULL)) != -1) {
		switch (c) {
		case 'f': o->from = optarg; break;
		case 'o': o->out = optarg; break;
		case 'j': o->json = 1; break;
		case 'd': o->dot = optarg; break;
		case 's': o->svg = optarg; break;
		case 'p': o->png = optarg; break;
		case 'e': o->emit = atoi(optarg); break;
		case 't': o->top = atoi(optarg); break;
		case 'w': o->min_weight = strtoull(optarg, NULL, 0); break;
		case 'E': o->dot_edges = atoi(optarg); break;
		case 'P': o->rec.progress = 1; break;
		case 'N': o->rec.progress = -1; break;
		case 'S': o->rec.seccomp = 1; break;
		case 'C': o->rec.pin = 1; break;
		case 'q': o->quiet = 1; break;
		case 'h': usage(stdout); exit(0);
		default: return -EINVAL;
		}
	}
	if (o->top <= 0 || o->dot_edges <= 0 || (o->from && optind < argc) ||
	    (!o->from && optind >= argc))
		return -EINVAL;
	return optind;
}

static int read_log(struct xt_trace *t, const char *path)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	int err;

	if (!f) {
		fprintf(stderr, "xsc trace: %s: %s\n", path, strerror(errno));
		return -errno;
	}
	err = xt_strace_read(t, f);
	if (f != stdin)
		fclose(f);
	for (size_t i = 0; i < t->nmsgs; i++)
		fprintf(stderr, "xsc trace: %s: %s\n", path, t->msgs[i]);
	if (t->nbad > t->nmsgs)
		fprintf(stderr, "xsc trace: %s: %zu more malformed lines\n",
			path, t->nbad - t->nmsgs);
	return err;
}

static char *join(int argc, char **argv)
{
	size_t len = 1;
	char *s;

	for (int i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	s = calloc(1, len);
	for (int i = 0; s && i < argc; i++) {
		strcat(s, argv[i]);
		if (i + 1 < argc)
			strcat(s, " ");
	}
	return s;
}

static int pictures(const struct opts *o, const struct xt_graph *g,
		    const struct xt_cand *c, int nc, const struct xt_outopt *oo)
{
	const char *fmt[3] = { NULL, "svg", "png" };
	const char *path[3] = { o->dot, o->svg, o->png };
	int err = 0;

	for (int i = 0; i < 3; i++) {
		FILE *f;
		if (!path[i])
			continue;
		if (fmt[i]) {
			if (xt_dot_render(path[i], fmt[i], g, c, nc, oo) < 0) {
				fprintf(stderr, "xsc trace: %s: dot failed\n", path[i]);
				err = -EIO;
			}
			continue;
		}
		f = fopen(path[i], "w");
		if (!f) {
			fprintf(stderr, "xsc trace: %s: %s\n", path[i], strerror(errno));
			err = -errno;
			continue;
		}
		xt_dot(f, g, c, nc, oo);
		fclose(f);
	}
	return err;
}

static int output(const struct opts *o, const struct xt_graph *g,
		  const struct xt_cand *c, int nc, const struct xt_outopt *oo)
{
	FILE *f = o->from ? stdout : stderr;
	int err = pictures(o, g, c, nc, oo);

	if (o->out && !(f = fopen(o->out, "w"))) {
		fprintf(stderr, "xsc trace: %s: %s\n", o->out, strerror(errno));
		return -errno;
	}
	if (o->emit) {
		if (o->emit > nc || xt_emit(f, g, &c[o->emit - 1], o->emit) < 0) {
			fprintf(stderr, "xsc trace: no candidate %d (there are %d)\n",
				o->emit, nc);
			err = -EINVAL;
		}
	} else if (o->json) {
		xt_report_json(f, g, c, nc, oo);
	} else if (!o->quiet) {
		xt_report_text(f, g, c, nc, oo);
	}
	if (o->out)
		fclose(f);
	else
		fflush(f);
	return err;
}

static int analyse(const struct opts *o, const struct xt_trace *t,
		   const char *cmd)
{
	struct xt_graph g;
	struct xt_cand *c = NULL;
	struct xt_clopt co = { .min_weight = o->min_weight, .max_cands = 50 };
	struct xt_outopt oo = { .top = o->top, .max_edges = o->dot_edges,
				.cmd = cmd };
	int nc, err = xt_graph_build(&g, t);

	if (err < 0)
		return err;
	nc = xt_cluster(&g, &co, &c);
	if (nc < 0) {
		xt_graph_free(&g);
		return nc;
	}
	err = output(o, &g, c, nc, &oo);
	free(c);
	xt_graph_free(&g);
	return err;
}

static int status_of(const struct xt_trace *t)
{
	if (t->detached)
		return 130;
	if (t->exited && t->signal) {
		fprintf(stderr, "xsc trace: program killed by signal %d (SIG%s); "
			"analysing the trace so far\n", t->signal,
			sigabbrev_np(t->signal) ? sigabbrev_np(t->signal) : "?");
		return 128 + t->signal;
	}
	return t->exited ? t->status : 1;
}

int xsc_trace_main(int argc, char **argv)
{
	struct opts o = { .top = 10, .dot_edges = 40 };
	struct xt_trace t;
	char *cmd;
	int first = parse(argc, argv, &o), err, st = 0;

	if (first < 0) {
		usage(stderr);
		return 2;
	}
	xt_trace_init(&t);
	if (o.from) {
		cmd = strdup(o.from);
		err = read_log(&t, o.from);
	} else {
		cmd = join(argc - first, argv + first);
		err = xt_record(&t, argv + first, &o.rec);
		if (err == -ENOENT || err == -EACCES) {
			st = err == -ENOENT ? 127 : 126;
			goto out;
		}
		st = status_of(&t);
	}
	if (err == 0)
		err = analyse(&o, &t, cmd);
	if (err < 0) {
		fprintf(stderr, "xsc trace: %s\n", strerror(-err));
		if (st == 0)
			st = 1;
	}
out:
	free(cmd);
	xt_trace_free(&t);
	return st;
}
