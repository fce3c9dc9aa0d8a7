#!/usr/bin/env bash
# Test runner: one program per feature.  Exit 0 pass, 1 fail, 77 skip.
#   tests/run.sh BUILD_DIR [NAME-FILTER]
# A test's source may carry these markers:
#   xsc-test: per-backend   run once per executor (uring sqpoll worker inline)
#   xsc-test: per-backend+auto  the same, and once more with AUTO's routes
#                           (for what only AUTO chooses, e.g. a row's .cheap_if)
#   xsc-test: timeout=N     per-run timeout in seconds (default 120)
#   xsc-test: dear-host     the per-backend runs once more with the host
#                           profile of an expensive host forced (a system
#                           call 1,100 ns, a posted one 100 ns): the
#                           choices such a host makes, tested on this one
# Shell tests (tests/t_*.sh) get the build directory as $1.
# XSC_TEST_BACKENDS (default "uring sqpoll worker inline") names the
# executors of the per-backend runs; the shell tests that run programs
# under `xsc run` take XSC_TP_BACKENDS, which defaults to the same list
# without inline (see tests/t_transparent.sh for why not inline).
# make test's no-io_uring pass sets XSC_TEST_BACKENDS=uring: there uring
# and sqpoll both become AUTO without a ring (the fallback), and worker
# and inline run exactly as in the normal pass.
# XSC_TEST_FULL=1 (make demo) runs the long forms of the tests that have
# a bounded one for the suite (t_transparent, t_rewrite, t_bench).
# XSC_TEST_LOGS: where the logs go (default BUILD_DIR/test-logs; make
# test's no-io_uring pass runs in the normal build beside its normal pass).
# XSC_TEST_ONLY / XSC_TEST_EXCLUDE: test names (t_cpython) to run alone,
# or to leave out (make test runs a few long ones in its other lane).
# Ends with the line "N passed, N failed, N skipped".
set -u
build=$(cd "${1:?usage: tests/run.sh BUILD_DIR [FILTER]}" && pwd)
filter=${2:-}
src=$(cd "$(dirname "$0")" && pwd)
backends=${XSC_TEST_BACKENDS:-"uring sqpoll worker inline"}
export XSC_TEST_BACKENDS=$backends
if [ -z "${XSC_TP_BACKENDS:-}" ]; then
	XSC_TP_BACKENDS=$(printf '%s\n' $backends | grep -vx inline | tr '\n' ' ')
	export XSC_TP_BACKENDS=${XSC_TP_BACKENDS% }
fi
pass=0 fail=0 skip=0 failed=()
logdir=${XSC_TEST_LOGS:-$build/test-logs}
mkdir -p "$logdir"
dear=$logdir/dear-host-profile
export XSC_TEST_DEAR_PROFILE=$dear	# for the shell tests (t_httpd)
printf '%s\n' "null_syscall_ns 1100" "posted_batch1_ns 1250" "posted_batch32_ns 100" \
	"posted_async_batch32_ns 400" "tls_switch_ns 1100" "thread_switch_ns 4000" \
	"cross_core_wake_ns 30000" "xsave_bytes 2696" "xsavec 1" >"$dear"

# show_log LOG: a failed test's log as CI keeps it, a part only: the
# first lines that say FAIL (a long log's failure may lie far above its
# end: t_httpd runs eleven servers), then the last 20 lines.
show_log() {
	local first
	first=$(grep -n -m 1 -E '(^|[^A-Za-z])(FAIL|fail:|not ok)' "$1" | cut -d: -f1)
	if [ -n "$first" ] && [ "$first" -lt $(($(wc -l <"$1") - 20)) ]; then
		sed -n "$((first > 3 ? first - 3 : 1)),$((first + 12))p" "$1" | sed 's/^/     | /'
		echo "     | [...]"
	fi
	tail -n 20 "$1" | sed 's/^/     | /'
}

run_one() { # run_one LABEL TIMEOUT CMD...
	local label=$1 tmo=$2; shift 2
	local log=$logdir/${label//[\/ =]/_}.log t0=$SECONDS rc
	timeout -k 5 "$tmo" "$@" >"$log" 2>&1
	rc=$?
	case $rc in
	0) pass=$((pass + 1)); printf 'PASS %-40s %3ss\n' "$label" $((SECONDS - t0)) ;;
	77) skip=$((skip + 1)); printf 'SKIP %-40s %s\n' "$label" "$(tail -n 1 "$log")" ;;
	124|137) fail=$((fail + 1)); failed+=("$label"); printf 'FAIL %-40s timeout after %ss\n' "$label" "$tmo"; show_log "$log" ;;
	*) fail=$((fail + 1)); failed+=("$label"); printf 'FAIL %-40s exit %s\n' "$label" "$rc"; show_log "$log" ;;
	esac
}

for f in "$src"/t_*.c "$src"/t_*.sh; do
	[ -e "$f" ] || continue
	name=$(basename "${f%.*}")
	[ -n "$filter" ] && [[ $name != *$filter* ]] && continue
	[ -n "${XSC_TEST_ONLY:-}" ] && [[ " $XSC_TEST_ONLY " != *" $name "* ]] && continue
	[[ " ${XSC_TEST_EXCLUDE:-} " == *" $name "* ]] && continue
	tmo=$(sed -n 's/.*xsc-test: timeout=\([0-9]*\).*/\1/p' "$f" | head -n 1)
	tmo=${tmo:-120}
	if [[ $f == *.sh ]]; then
		run_one "$name" "$tmo" bash "$f" "$build"
		continue
	fi
	bin=$build/tests/$name
	if [ ! -x "$bin" ]; then
		fail=$((fail + 1)); failed+=("$name"); echo "FAIL $name (not built)"; continue
	fi
	if grep -q 'xsc-test: per-backend' "$f"; then
		bl=$backends
		grep -q 'xsc-test: per-backend+auto' "$f" && bl="auto $backends"
		for b in $bl; do
			XSC_BACKEND=$b run_one "$name[$b]" "$tmo" env XSC_BACKEND=$b "$bin"
		done
		if grep -q 'xsc-test: dear-host' "$f"; then
			for b in $bl; do
				run_one "$name[$b,dear]" "$tmo" env XSC_BACKEND=$b \
					XSC_HOST_PROFILE="$dear" "$bin"
			done
		fi
	else
		run_one "$name" "$tmo" "$bin"
	fi
done
[ ${#failed[@]} -gt 0 ] && echo "failed: ${failed[*]}"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
