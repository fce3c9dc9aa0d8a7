/*
 * xsc.c - the command-line tool.
 *
 *   xsc info [--all]          kernel, cores, io_uring state, host profile,
 *                             route table
 *   xsc info SYSCALL          one table row: what happens to it on each path
 *                             and why on this host
 *   xsc bench <name> [opts]   experiments (null, switch, trace, ...)
 *   xsc trace [opts] -- cmd   syscall profiler (tools/trace)
 *
 * Subcommands that live in other parts of the tree are linked weakly, so
 * the tool builds and says "not built" while a part is missing.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "harness.h"
#include "hostprof.h"
#include "xsc.h"

int xsc_bench_all(int argc, char **argv);
#ifdef XSC_HAVE_TRACE	/* a weak reference would not pull it from the archive */
int xsc_trace_main(int argc, char **argv);
#else
int xsc_trace_main(int argc, char **argv) __attribute__((weak));
#endif

int xsc_run_main(int argc, char **argv);
int xsc_info_row(struct xsc *x, const char *arg);	/* sysrow.c */

static const char usage[] =
	"usage: xsc <command> [args]\n"
	"  info [--all]            kernel, io_uring probe, host profile and the route of\n"
	"                          every syscall\n"
	"  info SYSCALL            what happens to one call (name or number) on each path\n"
	"  bench <name> [--quick]  run an experiment; `xsc bench --help` lists them\n"
	"  trace [opts] -- cmd     record a program's syscalls and find multi-calls\n"
	"  run [opts] -- cmd       run an unmodified pthread program on xsc threads\n"
	"  help                    this text\n"
	"Environment: XSC_BACKEND=auto|uring|sqpoll|worker|inline,\n"
	"  XSC_HOST_PROFILE=FILE (force the host profile), XSC_CACHE_DIR=DIR (its cache)\n";

/* The host profile: where it came from, then its `key value` lines. */
static void print_profile(const struct xsc_hostprof *hp)
{
	char src[512], text[2048];

	xsc__hostprof_source(hp, src, sizeof(src));
	xsc__hostprof_format(hp, text, sizeof(text));
	printf("profile:    %s\n", src);
	for (char *s = text, *nl; *s; s = nl + 1) {
		nl = strchr(s, '\n');
		*nl = '\0';
		char *v = strchr(s, ' ');
		if (*s != '#' && v && strncmp(s, "format ", 7))
			printf("  %-24.*s %s\n", (int)(v - s), s, v + 1);
	}
}

/* A sysctl's value as text, or why it could not be read. */
static void read_sysctl(const char *path, char *out, size_t len)
{
	FILE *f = fopen(path, "r");
	int v;

	if (!f) {
		snprintf(out, len, "unreadable: %s", strerror(errno));
		return;
	}
	if (fscanf(f, "%d", &v) == 1)
		snprintf(out, len, "%d", v);
	else
		snprintf(out, len, "unreadable");
	fclose(f);
}

static int cmd_info(int argc, char **argv)
{
	struct xsc *x;
	struct xsc_probe p;
	struct utsname u;
	bool all = false;
	const char *row = NULL;
	int ret;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--all")) {
			all = true;
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			printf("usage: xsc info [--all | SYSCALL]\n  Prints the kernel, cores, "
			       "io_uring state, the host profile (the costs the\n  routes are "
			       "chosen by) and the route (executor and reason) of every\n  "
			       "syscall xsc knows; --all adds every number the kernel headers "
			       "name.\n  With a syscall's name or number: its table row and "
			       "what happens to it\n  on each path, and why on this host.\n");
			return 0;
		} else if (argv[i][0] != '-' && !row) {
			row = argv[i];
		} else {
			fprintf(stderr, "xsc info: unknown argument %s\n", argv[i]);
			return 2;
		}
	}
	/* before the ring takes its fds: under a low RLIMIT_NOFILE the file
	 * could not be opened after (and said -1) */
	char disabled[64];
	read_sysctl("/proc/sys/kernel/io_uring_disabled", disabled, sizeof(disabled));
	const char *err;
	const struct xsc_hostprof *hp = xsc__hostprof(&err);
	if (!hp) {
		fprintf(stderr, "xsc info: %s\n", err);
		return 1;
	}
	ret = xsc_open(&x, NULL);
	if (ret < 0) {
		fprintf(stderr, "xsc info: xsc_open: %s\n", strerror(-ret));
		return 1;
	}
	if (row) {
		ret = xsc_info_row(x, row);
		xsc_close(x);
		return ret;
	}
	xsc_probe_get(x, &p);
	uname(&u);
	printf("kernel:     %s %s %s\n", u.sysname, u.release, u.machine);
	printf("cores:      %ld online\n", sysconf(_SC_NPROCESSORS_ONLN));
	printf("io_uring:   %s%s%s (kernel.io_uring_disabled=%s)\n",
	       p.uring ? "available" : "unavailable", *p.reason ? ": " : "", p.reason,
	       disabled);
	if (p.uring)
		printf("opcodes:    %d probed\n", p.nops);
	printf("sqpoll:     %s%s%s\n", p.sqpoll ? "in use" : "not in use",
	       *p.sqpoll_reason ? ": " : "", p.sqpoll_reason);
	printf("seccomp:    %s\n", p.seccomp ? "filter active (io_uring would "
	       "bypass it)" : "none");
	printf("backend:    %s\n", getenv("XSC_BACKEND") ? getenv("XSC_BACKEND") : "auto");
	print_profile(hp);
	printf("\n%-4s %-20s %-7s %s\n", "nr", "syscall", "route", "reason");
	for (long nr = 0; nr < 1024; nr++) {
		const char *why, *name = xsc_syscall_name(nr);
		int r = xsc_route(x, nr, &why);
		if (!strcmp(name, "?") || (!all && !strcmp(why, "no io_uring form") &&
					   r != XSC_BACKEND_URING))
			continue;
		if (!all && !strncmp(why, "depends on the calling thread", 29))
			continue;
		printf("%-4ld %-20s %-7s %s\n", nr, name, xsc_backend_name(r), why);
	}
	if (!all)
		printf("(calls without an io_uring form and thread-bound calls are "
		       "omitted; --all lists them)\n");
	xsc_close(x);
	return 0;
}

/* The experiments are bench/experiments.c's list, plus "all". */
static int cmd_bench(int argc, char **argv)
{
	const struct bench_exp *e = NULL;

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		printf("usage: xsc bench <name> [--quick] [--rounds N] [--out DIR]\n");
		for (int i = 0; i < bench_nexps; i++)
			printf("  %-12s %s%s\n", bench_exps[i].name, bench_exps[i].what,
			       bench_exps[i].fn ? "" : " (not built)");
		printf("  %-12s %s\n", "all", "every experiment, results/REPORT.md");
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "all"))
		return xsc_bench_all(argc - 1, argv + 1);
	for (int i = 0; i < bench_nexps; i++)
		if (!strcmp(argv[1], bench_exps[i].name))
			e = &bench_exps[i];
	if (!e) {
		fprintf(stderr, "xsc bench: unknown experiment '%s'; valid ones:", argv[1]);
		for (int i = 0; i < bench_nexps; i++)
			fprintf(stderr, " %s", bench_exps[i].name);
		fprintf(stderr, " all\n");
		return 2;
	}
	if (!e->fn) {
		fprintf(stderr, "xsc bench: %s is not built into this binary\n", e->name);
		return 2;
	}
	return e->fn(argc - 1, argv + 1);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "%s", usage);
		return 2;
	}
	if (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "-h")) {
		printf("%s", usage);
		return 0;
	}
	if (!strcmp(argv[1], "info"))
		return cmd_info(argc - 1, argv + 1);
	if (!strcmp(argv[1], "bench"))
		return cmd_bench(argc - 1, argv + 1);
	if (!strcmp(argv[1], "run"))
		return xsc_run_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "trace")) {
		int (*volatile trace)(int, char **) = xsc_trace_main;
		if (!trace) {
			fprintf(stderr, "xsc trace: not built into this binary\n");
			return 2;
		}
		return trace(argc - 1, argv + 1);
	}
	fprintf(stderr, "xsc: unknown command '%s'\n%s", argv[1], usage);
	return 2;
}
