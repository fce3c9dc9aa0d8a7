/*
 * main.c - stand-alone `xsc-trace` until the xsc CLI dispatches to it:
 *   xsc-trace [options] -- cmd args...      same as `xsc trace ...`
 *   xsc-trace bench [calls] [reps]          same as `xsc bench trace ...`
 */
#include "trace.h"

#include <string.h>

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "bench") == 0) {
		argv[1] = "trace";
		return xsc_bench_trace(argc - 1, argv + 1);
	}
	argv[0] = "trace";
	return xsc_trace_main(argc, argv);
}
