/*
 * entries.h - counting the system call entries of a process tree, by the
 * kernel (entries.c): FlexSC's measure of a server, kernel entries per
 * request, which does not depend on how fast the host's entries are.
 *
 *	struct bench_counter *c;
 *	struct bench_entries e;
 *	bench_counter_start(&c, server_pid, &e);	(e.why says why not)
 *	... the load ...
 *	bench_counter_stop(c, &e);
 *	if (e.ok) bench_entries_top(&e, requests, 5, buf, sizeof(buf));
 */
#ifndef XSC_BENCH_ENTRIES_H
#define XSC_BENCH_ENTRIES_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define BENCH_NSYS 512	/* x86-64 numbers counted one by one */

/* A finished count (or the reason there is none). */
struct bench_entries {
	bool ok;		/* false: no count; why says why */
	const char *method;	/* how it was counted, for the output */
	char why[200];
	uint64_t total;		/* every entry below, traps included */
	uint64_t traps;		/* calls stopped on entry with SIGSYS (syscall
				   user dispatch, a seccomp trap): kernel
				   entries that the sys_enter tracepoint does
				   not see (their rt_sigreturn it does) */
	uint64_t nr[BENCH_NSYS];	/* system call entries by number */
	uint64_t other;		/* numbers outside 0..BENCH_NSYS-1 */
};

struct bench_counter;		/* a count in progress */

/* Starts counting the entries made by pid, its threads and every
 * process below it, and by whatever they fork or clone from now on.
 * The way is chosen by XSC_BENCH_ENTRIES: "tracefs" (the
 * raw_syscalls:sys_enter tracepoint in a private tracefs instance),
 * "strace" (`strace -f -c -p`, slow: it stops every call), "off", or
 * unset: tracefs, else strace when it is installed.  Returns 0, or a
 * negative errno with *cp NULL, e->ok false and e->why the reason. */
int bench_counter_start(struct bench_counter **cp, pid_t pid, struct bench_entries *e);
/* Stops the count and frees c: e gets the counts, or ok false and why
 * (for example events the kernel dropped).  0 or a negative errno. */
int bench_counter_stop(struct bench_counter *c, struct bench_entries *e);

/* "read 2.00, writev 1.00, trapped 0.10" into buf: the n calls with the
 * most entries per operation (ops operations), most first. */
void bench_entries_top(const struct bench_entries *e, double ops, int n, char *buf,
		       size_t len);

/* What a benchmark keeps of a count of ops operations (requests,
 * transactions): entries per operation and the calls that make them. */
struct bench_per_op {
	bool ok;		/* false: text says why there is no figure */
	double entries;		/* kernel entries per operation */
	char text[200];		/* the top calls per operation, or "n/a (why)" */
};
void bench_per_op(const struct bench_entries *e, double ops, struct bench_per_op *p);
/* A count that did not happen (a benchmark that could not start one). */
void bench_per_op_na(const char *why, struct bench_per_op *p);
/* p->entries as "%*.2f", or "n/a" in the same width, into buf. */
const char *bench_per_op_num(const struct bench_per_op *p, int width, char *buf,
			     size_t len);
/* CSV fields, each after a comma: the number (empty when there is none);
 * the text, its commas made semicolons. */
void bench_per_op_csv_num(FILE *f, const struct bench_per_op *p);
void bench_per_op_csv_text(FILE *f, const struct bench_per_op *p);
#endif
