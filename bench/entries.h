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
/* Writes s into a CSV field: commas become semicolons. */
void bench_csv_text(FILE *f, const char *s);
#endif
