#!/usr/bin/env bash
# Thread pointer loads under `xsc run` where FSGSBASE is not used (forced
# with XSC_HW, so that a host that has it tests the others' paths), counted
# by the kernel (strace -c): tests/tp/tp_tlsswitch's thread pairs make
# switches between fibers of different threads at every round trip.
#   - LDT selectors (XSC_HW=nofsgsbase): no arch_prctl per round trip:
#     the count does not grow with the rounds (within 1 per 100 either
#     way: the constant part, thread starts and exits, moves a little);
#   - arch_prctl only (XSC_HW=nofsgsbase,noldt): at most one load per
#     switch to a fiber (-v counts the switches), none back to the
#     scheduler's own pointer (that would make two per switch), and more
#     than 0.5 per round trip (the path was taken, and the count sees it).
# Exit 0 pass, 1 fail, 77 skip.
# xsc-test: timeout=300
set -u
build=$(cd "${1:?usage: t_tlsload.sh BUILD_DIR}" && pwd)
xsc=$build/xsc prog=$build/tests/tp/tp_tlsswitch
[ -f "$build/libxsc-preload.so" ] || { echo "skip: no preload library (sanitizer build)"; exit 77; }
command -v strace >/dev/null || { echo "skip: no strace"; exit 77; }
[ -x "$prog" ] || { echo "FAIL: no $prog"; exit 1; }
unset XSC_BACKEND XSC_THREADS XSC_VERBOSE XSC_TRANSPARENT
tmp=$(mktemp -d /tmp/t_tlsload.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
pairs=8 r1=100 r2=600 bad=0

# count HW ROUNDS WANT-V: "ARCH_PRCTL SWITCHES" of one run: arch_prctl
# calls by the kernel, switches to fibers as -v counts them
count() {
	local out=$tmp/out err=$tmp/err st=$tmp/st n sw
	XSC_HW=$1 strace -f -qq -c -e trace=arch_prctl -o "$st" \
		"$xsc" run -v -- "$prog" "$pairs" "$2" >"$out" 2>"$err"
	if [ $? -ne 0 ] || ! grep -q ': ok$' "$out"; then
		echo "FAIL: XSC_HW=$1, $2 rounds: the program failed" >&2
		sed 's/^/  | /' "$err" | tail -n 20 >&2
		return 1
	fi
	if ! grep -q "^xsc run: thread pointer by $3" "$err"; then
		echo "FAIL: XSC_HW=$1: -v does not say the thread pointer is loaded by $3" >&2
		grep '^xsc run' "$err" | sed 's/^/  | /' >&2
		return 1
	fi
	# "% time, seconds, usecs/call, calls, [errors,] syscall"
	n=$(awk '$NF == "arch_prctl" { print $4 }' "$st" | head -n 1)
	sw=$(sed -n 's/^xsc run: thread pointer loads: [0-9]* at \([0-9]*\) switches.*/\1/p' "$err")
	echo "${n:-0} ${sw:-0}"
}

# check HW WANT-V MIN MAX: arch_prctl per round trip in [MIN, MAX], and
# per switch at most MAXSW
check() {
	local a b per persw
	a=$(count "$1" $r1 "$2") || return 1
	b=$(count "$1" $r2 "$2") || return 1
	set -- "$@" ${a% *} ${b% *} ${a#* } ${b#* }	# $6 $7: calls, $8 $9: switches
	per=$(awk -v a="$6" -v b="$7" -v n=$((pairs * (r2 - r1))) 'BEGIN { printf "%.3f", (b - a) / n }')
	persw=$(awk -v a="$6" -v b="$7" -v c="$8" -v d="$9" 'BEGIN { printf "%.3f", (d > c ? (b - a) / (d - c) : 99) }')
	if awk -v p="$per" -v lo="$3" -v hi="$4" -v q="$persw" -v qm="$5" \
		'BEGIN { exit !(p >= lo && p <= hi && q <= qm) }'; then
		echo "PASS XSC_HW=$1: $per arch_prctl per round trip, $persw per switch ($6 at $r1 rounds, $7 at $r2; want $3..$4, at most $5 per switch)"
	else
		echo "FAIL XSC_HW=$1: $per arch_prctl per round trip, $persw per switch ($6 at $r1 rounds, $7 at $r2; want $3..$4, at most $5 per switch)"
		return 1
	fi
}

check nofsgsbase "LDT selector" -0.01 0.01 0.01 || bad=1
check nofsgsbase,noldt "arch_prctl" 0.5 99 1.05 || bad=1
[ $bad -eq 0 ]
