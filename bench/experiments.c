/*
 * experiments.c - the list of experiments: `xsc bench NAME` (tools/xsc.c)
 * runs one, `xsc bench all` (all.c) every one in this order, with each
 * table and plot beside the paper figure it reproduces and the paper's
 * own numbers.
 *
 * Experiments are linked weakly: one that is not built into this binary
 * is said to be (xsc bench) or skipped with a note (all).  The paper
 * quotes are copied from the seed papers (shared/seeds): FlexSC (OSDI'10),
 * System Call Clustering, Rubini's "Kernel System Calls" (Linux Magazine),
 * WSC/CEFOS.  Update them together with the experiment they sit beside.
 */
#include "harness.h"

#define WEAK_BENCH(name) int xsc_bench_##name(int argc, char **argv) __attribute__((weak))
WEAK_BENCH(null);
WEAK_BENCH(switch);
WEAK_BENCH(pollution);
WEAK_BENCH(readcost);
WEAK_BENCH(modeswitch);
WEAK_BENCH(wscmodel);
WEAK_BENCH(copy);
WEAK_BENCH(http);
WEAK_BENCH(sensitivity);
WEAK_BENCH(transparent);
WEAK_BENCH(apache);
WEAK_BENCH(oltp);
WEAK_BENCH(events);
WEAK_BENCH(calls);
WEAK_BENCH(fibers);
WEAK_BENCH(sandbox);
#ifdef XSC_HAVE_TRACE	/* a weak reference would not pull it from the archive */
int xsc_bench_trace(int argc, char **argv);
#else
WEAK_BENCH(trace);
#endif

const struct bench_exp bench_exps[] = {
	{ "mode-switch", xsc_bench_modeswitch,
	  "null syscall entry+exit vs procedure call (clustering Table 1)",
	  "System Call Clustering, Table 1 (CPU cycles for entry and exit); FlexSC section 2.1",
	  "Clustering (Pentium 2, 266 MHz, Linux 2.4.2; rdtscl overhead of 33 cycles "
	  "subtracted): system call entry 140, exit 189 cycles; procedure call entry 3, "
	  "exit 4 cycles.  \"more than 20 times the cost of regular procedure calls\".\n"
	  "FlexSC (Core i7): \"79 cycles and 71 cycles\" to enter and leave; \"the total "
	  "round-trip time for the gettsc system call is modest at 150 cycles\"." },
	{ "null", xsc_bench_null,
	  "null-call cost vs batch size, cost model (FlexSC Fig. 9/10, WSC Fig. 3)",
	  "FlexSC Figures 9 and 10 (getppid, batched); WSC Figure 3 (getpid vs threshold)",
	  "FlexSC: \"Executing a single exception-less system call on a single core is "
	  "43% slower than a synchronous call.  However, when batching 2 or more calls "
	  "there is no overhead, and when batching 32 or more calls, the execution of each "
	  "call is up to 130% faster than a synchronous call.\"  Remote core: \"can be "
	  "more than 10 times slower than a synchronous system call\" for a single call.\n"
	  "WSC: \"we observe the effect of WSC when the threshold becomes 2 for Pentium4 "
	  "2.53GHz and Intel Core Duo 1.66GHz and 4 for Celeron 500 MHz\"." },
	{ "wsc-model", xsc_bench_wscmodel,
	  "WSC cost model: Tgen, Tsched, Tsync, Treq, Tsys, predicted vs measured M",
	  "WSC Table 2 and eq. (5) (section 3.1)",
	  "WSC Table 2, clocks (Tsys = lmbench null call of Table 1):\n"
	  "| processor | Tgen | Tsched | Tsync | Treq | Tsys | M |\n"
	  "|---|---|---|---|---|---|---|\n"
	  "| Celeron 500M | 63 | 31 | 21 | 31 | 315 | 3.4 |\n"
	  "| Pentium4 2.53G | 110 | 43 | 27 | 31 | 1090 | 1.24 |\n"
	  "| Intel Core Duo 1.62G | 61 | 30 | 19 | 29 | 464 | 1.42 |\n" },
	{ "read-cost", xsc_bench_readcost,
	  "empty read() per file type, sync vs in-kernel (kernel-space syscalls, Table One)",
	  "Rubini, \"Kernel System Calls\", Table One (clock ticks for an empty read())",
	  "500 MHz Pentium, read(fd, buf, 0), user space / kernel space ticks: "
	  "/proc 570/519, net-pty 507/460, local-pty 474/424, /dev/hda 411/361, "
	  "/proc/sys 402/351, nfs 353/303, ext2fs 329/278, socket 320/270, "
	  "/dev/zero 324/273, /dev/null 313/262.  \"my CPU has an overhead of 50 "
	  "ticks (0.1usec) in crossing the user/kernel threshold twice\"." },
	{ "pollution", xsc_bench_pollution,
	  "slowdown of user work interleaved with syscalls (FlexSC Fig. 1-3)",
	  "FlexSC Figures 1-3 (user-mode IPC around and between pwrite calls)",
	  "\"Xalan has a baseline user-mode IPC of 1.46, but the IPC degrades by up to 65% "
	  "when executing a pwrite every 1,000-2,000 instructions\"; \"SPEC-JBB ... still "
	  "observes a 45% degradation\"; \"it takes up to 14,000 cycles of execution before "
	  "the IPC of this application returns to its previous level\" (Figure 1); direct "
	  "cost dominates below 2,000 instructions between calls, indirect (pollution) "
	  "from 2,000 to 100,000; \"degradation between 20% and 60%\" at server-workload "
	  "rates." },
	{ "switch", xsc_bench_switch,
	  "fiber context-switch cost vs ucontext",
	  "no paper figure: the user-level switch under FlexSC's M-on-N threads",
	  "FlexSC switches user threads in user space (section 4); no number is given." },
	{ "fibers", xsc_bench_fibers,
	  "xsc threads vs NPTL: creation, switches, memory per thread, N ping-pong pairs",
	  "FlexSC section 4 (FlexSC-Threads, M-on-N); no paper figure",
	  "FlexSC-Threads multiplexes many user threads on one kernel thread per core; "
	  "the paper gives no creation, memory or scaling figure for them." },
	{ "trace", xsc_bench_trace,
	  "tracing overhead: untraced vs xsc trace vs strace",
	  "System Call Clustering, section 3 (strace-based profiling)",
	  "The paper profiles with strace; it gives no tracing-overhead figure." },
	{ "copy", xsc_bench_copy,
	  "copy experiments: multi-calls, looped multi-calls, cp variants",
	  "System Call Clustering, Table 3 and Figure 8 (copy with multi-calls)",
	  "Table 3, block size 4096, cycles x10^6 (original / multi-call / looped): "
	  "80K 0.3400 / 0.3264 (4%) / 0.3185 (6.3%); 925K 4.371 / 4.235 (3.1%) / 4.028 "
	  "(7.8%); 2.28M 10.93 / 10.65 (2.6%) / 10.37 (5.2%)." },
	{ "http", xsc_bench_http,
	  "httpd on NPTL vs xsc threads vs nginx under wrk (FlexSC Fig. 11/13)",
	  "FlexSC Figures 11 and 13 (Apache throughput and latency)",
	  "\"FlexSC achieves up to 116% throughput improvement\" (Apache, 2 and 4 cores)." },
	{ "sensitivity", xsc_bench_sensitivity,
	  "httpd-xsc throughput vs syscall entries (FlexSC Fig. 16)",
	  "FlexSC Figure 16 (throughput vs syscall entries)",
	  "\"Uni-core performance approaches its best with 200 to 250 syscall entries "
	  "(3 to 4 syscall pages), while quad-core execution starts to plateau with 300 "
	  "to 400 syscall entries\"." },
	{ "transparent", xsc_bench_transparent,
	  "unmodified httpd-nptl natively vs under xsc run",
	  "FlexSC section 4 (unmodified binaries)",
	  "FlexSC runs unmodified Apache, MySQL and BIND; no separate overhead figure." },
	{ "apache", xsc_bench_apache,
	  "Debian's apache2 (forking, as Debian runs it) natively vs under xsc run",
	  "FlexSC Figures 11 and 13 (unmodified Apache mpm_worker, uni-core)",
	  "Apache 2.2, 1 core: \"With system call batching alone (1 core case), we "
	  "observe a throughput improvement of up to 86%\"; \"except for a very low "
	  "number of concurrent requests, FlexSC outperforms Linux/NPTL by a wide "
	  "margin\"." },
	{ "calls", xsc_bench_calls,
	  "ns per libc call natively, under xsc run with traps only, and with libc's sites rewritten",
	  "FlexSC section 4 (the cost of intercepting unmodified binaries); no paper figure",
	  "FlexSC intercepts calls in its M-on-N library, compiled into the program; it "
	  "gives no per-call interception figure." },
	{ "sandbox", xsc_bench_sandbox,
	  "the cost of following a seccomp filter installed mid-run, library and xsc threads",
	  "no paper figure: FlexSC predates io_uring's seccomp bypass (docs/security.md)",
	  "FlexSC's syscall threads are kernel threads of the process and inherit its "
	  "seccomp state; the papers do not discuss sandboxes." },
	{ "oltp", xsc_bench_oltp,
	  "MariaDB with sysbench OLTP natively vs under xsc run",
	  "FlexSC Figures 14 and 15 (MySQL, sysbench OLTP)",
	  "MySQL 5.5 with InnoDB, sysbench OLTP: \"MySQL by up to 40%\"." },
	{ "events", xsc_bench_events,
	  "event-driven servers (redis, memcached, nginx) natively vs under xsc run",
	  "FlexSC section 4.1 (event-driven servers, left as future work)",
	  "FlexSC: \"For event-driven systems, we advocate a hybrid approach where both "
	  "synchronous and exception-less system calls coexist.\"  \"we have not yet "
	  "attempted to evaluate the use of exception-less system calls in an "
	  "event-driven program, and leave this as future work.\"" },
};
const int bench_nexps = (int)(sizeof(bench_exps) / sizeof(bench_exps[0]));
