#!/usr/bin/env bash
# `xsc run` says a fallback once, in the process it starts, not in every
# program that process starts: their stderr is the program's output
# (CPython's tests read their children's).  Under a seccomp filter
# (tests/nouring: io_uring refused) a threaded program says it falls back
# to syscall threads; the same program started by a shell under xsc run
# says nothing.  Exit 0 pass, 1 fail, 77 skip.
set -u
build=$(cd "${1:?usage: t_run_quiet.sh BUILD_DIR}" && pwd)
xsc=$build/xsc prog=$build/tests/tp/tp_tlsswitch nour=$build/tests/nouring
[ -f "$build/libxsc-preload.so" ] || { echo "skip: no preload library (sanitizer build)"; exit 77; }
[ -x "$prog" ] && [ -x "$nour" ] || { echo "FAIL: $prog or $nour not built"; exit 1; }
unset XSC_BACKEND XSC_THREADS XSC_VERBOSE XSC_TRANSPARENT XSC_RUN_PID
tmp=$(mktemp -d /tmp/t_run_quiet.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0

"$nour" "$xsc" run -- "$prog" 2 5 >"$tmp/out" 2>"$tmp/err"
if [ $? -ne 0 ] || ! grep -q ': ok$' "$tmp/out"; then
	echo "FAIL: $prog under xsc run and a seccomp filter"; cat "$tmp/err"; exit 1
fi
if grep -q 'syscall threads' "$tmp/err"; then
	echo "PASS: the process xsc run starts says it: $(head -n 1 "$tmp/err")"
else
	echo "FAIL: the process xsc run starts does not say it falls back:"; cat "$tmp/err"; fail=1
fi

"$nour" "$xsc" run -- /bin/sh -c "'$prog' 2 5 >'$tmp/out2' 2>'$tmp/child.err'" 2>"$tmp/top.err"
if [ $? -ne 0 ] || ! grep -q ': ok$' "$tmp/out2"; then
	echo "FAIL: $prog started by a shell under xsc run"; cat "$tmp/child.err" "$tmp/top.err"; fail=1
elif [ -s "$tmp/child.err" ]; then
	echo "FAIL: a program the started process started wrote to its stderr:"; cat "$tmp/child.err"; fail=1
else
	echo "PASS: the program the shell started says nothing"
fi
[ $fail -eq 0 ]
