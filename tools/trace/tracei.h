/*
 * tracei.h - internals of xsc trace, shared by its files and its tests.
 *
 * Data flow:
 *
 *   record.c (ptrace)  --\
 *                         >-- struct xt_trace: events in completion order
 *   strace.c (log)     --/        |
 *                                 v
 *   graph.c   fd kinds, node labels, per-thread sequences, weighted edges
 *                                 |
 *                                 v
 *   cluster.c candidates (Figure 6 + loop rule), deps, value profiles
 *                                 |
 *          report.c (text, JSON)  dot.c (Graphviz)  emit.c (C chain)
 *
 * sysinfo.c reads the library's syscall table (src/table.h): each call's
 * name, the kind of each argument and the descriptor it makes.  Every function returns a
 * negative errno on failure.
 */
#ifndef XSC_TRACEI_H
#define XSC_TRACEI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define XT_NARGS 6
#define XT_NR_EXTRA 1000	/* names missing from the table get nr >= this */
#define XT_MAXREGION 16		/* longest candidate */

/* ---- syscall table (sysinfo.c) ------------------------------------ */

/* Argument kinds, one letter each in a signature string. */
enum xt_akind {
	XT_A_IGN = '-',		/* not looked at */
	XT_A_FD = 'f',		/* file descriptor (dirfd too) */
	XT_A_PTR = 'p',		/* user pointer: buffer, struct */
	XT_A_STR = 's',		/* path string */
	XT_A_LEN = 'n',		/* length or count: profiled, may depend */
	XT_A_CONST = 'c',	/* flags, commands: part of the node */
	XT_A_INT = 'i',		/* other integer (offset, mode): profiled */
};

/* What kind of descriptor a call returns (or creates through a pointer). */
enum xt_fdkind {
	XT_FD_INH, XT_FD_FILE, XT_FD_DIR, XT_FD_DEV, XT_FD_PROC, XT_FD_SOCK,
	XT_FD_PIPE, XT_FD_EPOLL, XT_FD_EVENT, XT_FD_TIMER, XT_FD_SIGNAL,
	XT_FD_MEMFD, XT_FD_URING, XT_FD_INOTIFY, XT_FD_PIDFD, XT_FD_NONE,
	XT_FD_CWD, XT_FD_DUP, XT_FD_PATH, XT_FD_NKINDS
};

struct xt_sysinfo {
	const char *name;
	const char *sig;	/* XT_NARGS letters of enum xt_akind */
	unsigned char newfd;	/* enum xt_fdkind of the result, or 0 */
	unsigned char pair;	/* creates two fds through a pointer (pipe):
				   its argument's position + 1, else 0 */
};

const char *xt_sys_name(int nr);		/* NULL when unknown */
int xt_sys_nr(const char *name);		/* -ENOENT when unknown */
const struct xt_sysinfo *xt_sys_info(int nr);	/* never NULL */
const char *xt_fdkind_name(int kind);
char xt_sys_akind(int nr, int arg);

/* ---- a recorded trace (events.c) ----------------------------------- */

#define XT_EV_NORET 1u		/* no return value (exit, killed, detached) */

struct xt_event {
	int tid, nr;
	long args[XT_NARGS];
	long ret;
	long aux[2];		/* pipe fds, clone3 flags */
	uint64_t ts_ns;		/* entry time */
	uint64_t dur_ns;
	uint32_t text[XT_NARGS]; /* pool offsets of argument texts, 0 = none */
	unsigned flags;
};

struct xt_trace {
	struct xt_event *ev;
	size_t n, cap;
	char *pool;		/* offset 0 is "" */
	size_t pool_len, pool_cap;
	char **xnames;		/* names of nr XT_NR_EXTRA + i */
	int nxnames;
	char **msgs;		/* first problems (malformed lines), kept */
	size_t nmsgs, nbad;	/* kept, and counted */
	/* How the program ended. */
	int exited, status, signal, detached;
	double wall_s;
};

void xt_trace_init(struct xt_trace *t);
void xt_trace_free(struct xt_trace *t);
struct xt_event *xt_trace_push(struct xt_trace *t); /* NULL on ENOMEM */
uint32_t xt_trace_str(struct xt_trace *t, const char *s, size_t len);
const char *xt_trace_text(const struct xt_trace *t, uint32_t off);
const char *xt_trace_name(const struct xt_trace *t, int nr);
int xt_trace_nr(struct xt_trace *t, const char *name, size_t len);
void xt_trace_msg(struct xt_trace *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* ---- recording (record.c) and parsing (strace.c) ------------------- */

struct xt_recopt {
	int seccomp;		/* seccomp-assisted ptrace instead of SYSGOOD */
	int progress;		/* 1 force, 0 when stderr is a tty, -1 never */
	int pin;		/* tracer and program on one CPU (faster) */
};

/* Runs argv[0] (PATH search) under ptrace.  Returns 0, -ENOENT/-EACCES
 * when the command cannot be executed (message printed), or another
 * negative errno when tracing itself failed. */
int xt_record(struct xt_trace *t, char **argv, const struct xt_recopt *o);
/* Reads an `strace -f -tt -T` log; malformed lines go to t->msgs. */
int xt_strace_read(struct xt_trace *t, FILE *f);
int xt_strace_line(struct xt_trace *t, const char *line, size_t lineno);

/* ---- the syscall graph (graph.c) ------------------------------------ */

struct xt_node {
	char *label;
	int nr;
	unsigned char fdk[XT_NARGS];	/* enum xt_fdkind of FD arguments */
	uint64_t count, time_ns;
	uint64_t in, out;		/* summed edge weights */
};

struct xt_edge {
	int from, to;
	uint64_t weight;
	uint32_t order;			/* creation order: ties break on it */
};

struct xt_thread {
	int tid;
	int *ev;			/* event indices in order */
	size_t n, cap;
};

struct xt_sysstat {
	int nr;
	uint64_t count, time_ns, errors;
};

struct xt_graph {
	const struct xt_trace *t;
	struct xt_node *nodes;
	int nnodes, capn;
	struct xt_edge *edges;
	int nedges, cape;
	int *evnode;			/* node of each event */
	struct xt_thread *thr;
	int nthr, capt;
	struct xt_sysstat *sys;
	int nsys;
	int nproc;			/* fd-table groups: processes */
	uint64_t total_ns;
	int *nhash, nhcap;		/* label -> node */
};

int xt_graph_build(struct xt_graph *g, const struct xt_trace *t);
void xt_graph_free(struct xt_graph *g);
int xt_graph_node(const struct xt_graph *g, const char *label); /* -ENOENT */
/* Weight of the edge from -> to, 0 when absent. */
uint64_t xt_graph_weight(const struct xt_graph *g, int from, int to);
uint64_t xt_graph_weight_l(const struct xt_graph *g, const char *from,
			   const char *to);

/* ---- cluster candidates (cluster.c) --------------------------------- */

struct xt_dep {
	int call, arg, from;	/* call's arg is the result of call `from` */
	double share;		/* of the occurrences where it held */
};

#define XT_NVAL 3
struct xt_vprof {
	int call, arg;
	long val[XT_NVAL];
	uint32_t text[XT_NVAL];	/* pool text of the value, 0 = none */
	uint64_t cnt[XT_NVAL], total;
};

struct xt_cand {
	int node[XT_MAXREGION];
	int len, loop;
	uint64_t occ;		/* chains: occurrences; loops: runs */
	uint64_t iters;		/* loops: iterations in all runs */
	uint64_t calls, saved;
	double share;
	int first;		/* event index where the first instance starts */
	int firsttid;		/* thread index of that instance */
	struct xt_dep dep[XT_MAXREGION * XT_NARGS];
	int ndep;
	struct xt_vprof val[XT_MAXREGION * 2];
	int nval;
	char rec[320];		/* recommendation */
	const char *kind;	/* "looped multi-call", "multi-call chain", ... */
};

struct xt_clopt {
	uint64_t min_weight;	/* ignore rarer edges (default 2) */
	int max_cands;
};

/* Fills *out (malloc'd, caller frees) and returns the number of
 * candidates, best first, or a negative errno. */
int xt_cluster(const struct xt_graph *g, const struct xt_clopt *o,
	       struct xt_cand **out);

/* ---- output (report.c, dot.c, emit.c) ------------------------------- */

struct xt_outopt {
	int top;		/* rows per table */
	int max_edges;		/* edges drawn */
	const char *cmd;	/* what was traced, for titles */
};

void xt_report_text(FILE *f, const struct xt_graph *g,
		    const struct xt_cand *c, int nc, const struct xt_outopt *o);
void xt_report_json(FILE *f, const struct xt_graph *g,
		    const struct xt_cand *c, int nc, const struct xt_outopt *o);
void xt_dot(FILE *f, const struct xt_graph *g, const struct xt_cand *c,
	    int nc, const struct xt_outopt *o);
/* A pipe (pipe2 flags) and a fork, stdio flushed first so the child
 * does not write it again (record.c): 0 in the child, its pid in the
 * parent, or -errno with the pipe closed again. */
pid_t xt_fork_piped(int p[2], int flags);
/* Runs `dot -T<fmt> -o path` on the graph; -errno or -ECHILD when dot failed. */
int xt_dot_render(const char *path, const char *fmt, const struct xt_graph *g,
		  const struct xt_cand *c, int nc, const struct xt_outopt *o);
int xt_emit(FILE *f, const struct xt_graph *g, const struct xt_cand *c,
	    int idx);

/* JSON/C string escaping helper (report.c). */
void xt_put_str(FILE *f, const char *s);

#endif
