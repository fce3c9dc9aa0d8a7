/*
 * trace.h - entry points of `xsc trace`, the system call profiler.
 *
 * `xsc trace [options] -- cmd args...` records every system call of a
 * command (its threads and children), builds the syscall graph of the
 * System Call Clustering paper (section 3.1, Figure 4), finds cluster
 * candidates (Figure 6, at trace level, with the loop rule and value
 * profiles of section 3.4) and reports them.  `xsc trace --from FILE`
 * analyses an `strace -f -tt -T` log instead.  See docs/trace.md.
 *
 * Both functions take argv as a command-line tool would (argv[0] is the
 * subcommand name) and return a process exit status.
 */
#ifndef XSC_TRACE_H
#define XSC_TRACE_H

/* `xsc trace ...`: the profiler.  Returns the traced program's exit
 * status (128+signal when it was killed), 127 when the command was not
 * found, 2 on a usage error. */
int xsc_trace_main(int argc, char **argv);

/* `xsc bench trace [calls] [reps]`: wall time of a syscall-heavy program
 * untraced, under `xsc trace` and under `strace -f -o /dev/null`, in one
 * run.  Prints a table and writes results/trace.csv. */
int xsc_bench_trace(int argc, char **argv);

#endif
