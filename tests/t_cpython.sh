#!/usr/bin/env bash
# t_cpython.sh BUILD_DIR - CPython's own thread, signal and process tests
# (Debian's python3.11 and libpython3.11-testsuite), natively and under
# `xsc run`: each module must end as it does natively (passed, failed or
# skipped).  Its worker processes run under xsc too (they inherit the
# preload).  test_threading's ThreadJoinOnShutdown forks from a thread and
# joins in the child: it hung under xsc run while the runtime's own
# threads kept a process alive.
# xsc-test: timeout=900
# Exit 0 pass, 1 fail, 77 skip (python3.11 or the test suite missing:
# scripts/deps.sh test installs them).
set -u
build=$(cd "${1:?usage: t_cpython.sh BUILD_DIR}" && pwd)
xsc=$build/xsc
py=/usr/bin/python3.11
modules="test_threading test_thread test_queue test_selectors test_signal test_os test_subprocess"

[ -x "$py" ] || { echo "skip: $py not installed (scripts/deps.sh test)"; exit 77; }
[ -f /usr/lib/python3.11/test/test_threading.py ] ||
	{ echo "skip: libpython3.11-testsuite not installed (scripts/deps.sh test)"; exit 77; }
[ -f "$build/libxsc-preload.so" ] || { echo "skip: no $build/libxsc-preload.so (not built under the sanitizers)"; exit 77; }
# Under a seccomp filter (make test's tests/nouring pass) the process
# `xsc run` starts says on stderr that it falls back to syscall threads;
# the interpreters it starts say nothing (CPython's tests read their
# children's stderr and regrtest its workers' output expecting nothing).
unset XSC_BACKEND XSC_THREADS XSC_VERBOSE XSC_TRANSPARENT XSC_FORK

tmp=$(mktemp -d /tmp/t_cpython.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# outcomes LOG: the modules' outcomes in a regrtest log, "module outcome" a line
outcomes() {
	sed -n 's/^.*\] \(test_[a-z_]*\) \([a-z]*\).*$/\1 \2/p' "$1" | sort
}

# run LABEL CMD...: the modules' outcomes, one "module outcome" a line,
# into $tmp/LABEL.res, and regrtest's exit status into $tmp/LABEL.rc.
# Each run works in a directory of its own: regrtest writes into the
# current one.
run() {
	local label=$1 t0=$SECONDS w=$tmp/$1.d; shift
	mkdir -p "$w"
	(cd "$w" && timeout -k 10 400 "$@" -m test -j7 $modules) >"$tmp/$label.log" 2>&1
	echo $? >"$tmp/$label.rc"
	outcomes "$tmp/$label.log" >"$tmp/$label.res"
	echo "$label: exit $(cat "$tmp/$label.rc") in $((SECONDS - t0)) s"
}

# again LABEL CMD...: each module that failed in LABEL's run runs once
# more alone, natively as under xsc run: a few of CPython's tests time a
# wait against the clock (test_selectors' test_timeout wants 1 s to take
# at most 2) and fail on a loaded machine either way.  -j1: a worker
# process as in the first run, and a "[1/1] test_x passed" line;
# regrtest without -j prints no outcome on a module's line, and the
# module's line in LABEL.res became an empty one.
again() {
	local label=$1 m a; shift
	for m in $(sed -n 's/ failed$//p' "$tmp/$label.res"); do
		(cd "$tmp/$label.d" && timeout -k 10 300 "$@" -m test -j1 "$m") \
			>"$tmp/$label.$m.log" 2>&1
		a=$(outcomes "$tmp/$label.$m.log")
		echo "$label: $m failed, alone once more: ${a#* }"
		[ -n "$a" ] || { a="$m no-outcome"; tail -n 20 "$tmp/$label.$m.log" | sed 's/^/    | /'; }
		sed -i "s/^$m failed\$/$a/" "$tmp/$label.res"
		grep -A6 "^test $m failed" "$tmp/$label.log" | head -8 | sed 's/^/    | /'
	done
	# regrtest's 2 was for the failures that passed alone
	[ "$(cat "$tmp/$label.rc")" = 2 ] && ! grep -q ' failed$' "$tmp/$label.res" &&
		echo 0 >"$tmp/$label.rc"
	echo "$label: exit $(cat "$tmp/$label.rc"): $(tr '\n' ' ' <"$tmp/$label.res")"
}

# The two runs at once, each module in a worker of its own (-j7): the
# modules mostly wait (one after the other, this test took 117 s and 20 s
# of CPU on 2 cores, 2026-11-27; with -j2 61 s, with -j7 50 s, the
# length of test_subprocess).  The
# failures run again once both have ended, one at a time.
run native "$py" >"$tmp/native.say" &
run xsc "$xsc" run -- "$py" >"$tmp/xsc.say" &
wait
cat "$tmp/native.say" "$tmp/xsc.say"
again native "$py"
again xsc "$xsc" run -- "$py"
if [ "$(wc -l <"$tmp/native.res")" -ne 7 ]; then
	echo "FAIL: natively not every module ended:"; tail -20 "$tmp/native.log"; exit 1
fi
if ! cmp -s "$tmp/native.res" "$tmp/xsc.res" || ! cmp -s "$tmp/native.rc" "$tmp/xsc.rc"; then
	echo "FAIL: under xsc run the modules end otherwise:"
	diff "$tmp/native.res" "$tmp/xsc.res"
	tail -40 "$tmp/xsc.log"
	exit 1
fi
echo "ok: 7 modules end as natively"
