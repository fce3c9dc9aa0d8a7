#!/usr/bin/env bash
# `make demo`: the headline experiments, as tables on the terminal, with
# CSV and PNG plots in results/ (a few minutes); then the long forms of
# the tests that `make test` runs bounded (XSC_TEST_FULL=1, tests/run.sh;
# about 10 minutes more on 2 cores).
set -euo pipefail
build=${1:-build}
xsc=$build/xsc
mkdir -p results
echo "== machine, io_uring and the host profile (xsc info) =="
"$xsc" info | sed -n '1,/^$/p'	# all of it read: sed's early q made info die of SIGPIPE
echo
echo "== null-call cost vs batch size (xsc bench null) =="
"$xsc" bench null --quick
echo
echo "== thread-per-connection httpd: NPTL vs xsc threads vs nginx, with kernel entries per request (xsc bench http --quick) =="
"$xsc" bench http --quick
echo
if [ -e "$build/libxsc-preload.so" ]; then
	echo "== the same unmodified httpd-nptl binary, natively vs under xsc run, with kernel entries per request (xsc bench transparent --quick) =="
	"$xsc" bench transparent --quick
	echo
	echo "== libc calls natively, under xsc run trapped, and with libc's sites rewritten (xsc bench calls --quick) =="
	"$xsc" bench calls --quick
	echo
	echo "== Debian's Apache as Debian runs it, natively vs under xsc run, with kernel entries per request (xsc bench apache --quick) =="
	"$xsc" bench apache --quick
	echo
	echo "== MariaDB with sysbench OLTP, natively vs under xsc run, with kernel entries per transaction (xsc bench oltp --quick) =="
	"$xsc" bench oltp --quick
	echo
	# full length (3 rounds, about 2 minutes): a --quick round is too
	# short for the CPU time per operation to be read to a few percent
	# (/proc counts it in 10 ms ticks)
	echo "== event-driven servers (redis, memcached -t 1 and -t 4, nginx), natively vs under xsc run, with kernel entries per operation (xsc bench events: 3 rounds, the rounds' ratios) =="
	"$xsc" bench events
	echo
fi
echo "== xsc threads vs NPTL threads: creation, switches, memory, ping-pong pairs (xsc bench fibers --quick) =="
"$xsc" bench fibers --quick
echo
echo "== fiber context switch (xsc bench switch) =="
"$xsc" bench switch --quick
echo
echo "== following the program's seccomp filter: calls before and after (xsc bench sandbox --quick) =="
"$xsc" bench sandbox --quick
echo
echo "Results: $(ls results/*.csv results/*.png 2>/dev/null | tr '\n' ' ')"
echo
# What the suite bounds to keep `make test` near 15 minutes, whole:
# t_transparent's XSC_HW rows on every executor (the suite: each program
# on one), t_rewrite's run of t_transparent with rewriting off with both
# XSC_HW rows (the suite: arch_prctl's), t_bench with each experiment's
# own rounds (the suite: one).
echo "== the long forms of the suite's bounded tests (XSC_TEST_FULL=1) =="
for t in t_transparent t_rewrite t_bench; do
	XSC_TEST_FULL=1 tests/run.sh "$build" "$t"
done
