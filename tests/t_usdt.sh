#!/usr/bin/env bash
# t_usdt.sh BUILD_DIR - the USDT probes (src/usdt.h, docs/observability.md).
# xsc-test: timeout=180
#
# 1. readelf -n: every probe is in the notes of libxsc.so and of
#    libxsc-preload.so (the latter also fork_rearm and signal_handoff,
#    which only transparent mode has), each under provider xsc.
# 2. Where bpftrace is installed and may attach (root, a kernel that lets
#    it): a bpftrace attached to post and flush of libxsc-preload.so counts
#    the hits per process while tests/tp/tp_pingpong runs under `xsc run
#    -t 1 --stats`; its readers and writers park in posted calls, so post
#    fires at least once per pair and round (300), as often as the
#    process's stats file counts calls posted (or once more: the file is
#    written in a destructor, before exit() flushes stdout, a posted
#    write), and flush hands over every entry posted.  Skipped, with the
#    reason, otherwise.
# A build configured without sys/sdt.h has no probes: skip (77).
# Exit 0 pass, 1 fail, 77 skip.
set -u
build=$(cd "${1:?usage: t_usdt.sh BUILD_DIR}" && pwd)
lib=$build/libxsc.so pre=$build/libxsc-preload.so
# update with src/usdt.h XSC_PROBES
common="post flush complete park resume fallback"
preload_only="fork_rearm signal_handoff"

if ! grep -q '^XSC_HAVE_SDT:INTERNAL=1$' "$build/CMakeCache.txt" 2>/dev/null ||
   grep -q '^XSC_USDT:BOOL=OFF$' "$build/CMakeCache.txt"; then
	echo "skip: $build was configured without USDT probes (no sys/sdt.h, or XSC_USDT=OFF)"
	exit 77
fi
command -v readelf >/dev/null || { echo "skip: no readelf (binutils)"; exit 77; }
fail=0

# The probes a library's notes list, one "provider:name" a line.
notes() {
	readelf -n "$1" | awk '/^ *Provider:/ { p = $2 } /^ *Name:/ { print p ":" $2 }' | sort -u
}

check_lib() { # check_lib FILE PROBES...
	local f=$1 have; shift
	have=$(notes "$f")
	for p in "$@"; do
		if grep -qx "xsc:$p" <<<"$have"; then
			echo "PASS: $(basename "$f") has probe xsc:$p"
		else
			echo "FAIL: $(basename "$f") has no probe xsc:$p (notes: $(echo $have))"
			fail=1
		fi
	done
	if grep -v '^xsc:' <<<"$have" | grep -q .; then
		echo "FAIL: $(basename "$f") has probes of another provider: $(grep -v '^xsc:' <<<"$have" | tr '\n' ' ')"
		fail=1
	fi
}

[ -f "$lib" ] || { echo "FAIL: no $lib"; exit 1; }
check_lib "$lib" $common
if [ -f "$pre" ]; then
	check_lib "$pre" $common $preload_only
else
	echo "note: no $pre (a sanitizer build): its probes and the bpftrace part are not checked"
	exit $fail
fi

# ---- 2. a tracer attached to a short run -----------------------------------
prog=$build/tests/tp/tp_pingpong
bpf_skip() { echo "skip (bpftrace part): $*"; exit $fail; }
command -v bpftrace >/dev/null || bpf_skip "bpftrace is not installed (Debian: apt-get install bpftrace)"
[ "$(id -u)" = 0 ] || bpf_skip "not root: bpftrace may not attach uprobes"
[ -x "$prog" ] || { echo "FAIL: $prog not built"; exit 1; }
unset XSC_BACKEND XSC_THREADS XSC_VERBOSE XSC_TRANSPARENT XSC_STATS
. "$(dirname "$0")/../scripts/signal-until-gone.sh"
tmp=$(mktemp -d /tmp/t_usdt.XXXXXX)
bpid=
cleanup() { [ -n "$bpid" ] && kill "$bpid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT

# Attached by the library's path: every process that maps it (bpftrace -c
# looks for the probes before the program has loaded the library).  BEGIN
# runs once every probe is attached.
bpftrace -e "
BEGIN { printf(\"ready\\n\"); }
usdt:$pre:xsc:post { @posts[pid] = count(); }
usdt:$pre:xsc:flush { @flushed[pid] = sum(arg0); @crossings[pid] = sum(arg1); }" >"$tmp/bt" 2>&1 &
bpid=$!
for _ in $(seq 600); do
	grep -q '^ready' "$tmp/bt" && break
	kill -0 "$bpid" 2>/dev/null || break
	sleep 0.1
done
if ! grep -q '^ready' "$tmp/bt"; then
	bpf_skip "bpftrace did not attach: $(grep -v RLIMIT_MEMLOCK "$tmp/bt" | tail -n 2 | tr '\n' ' ')"
fi
"$build/xsc" run -t 1 --stats="$tmp/st" -- "$prog" >"$tmp/out" 2>"$tmp/err"
rc=$?
# SIGINT (bpftrace then prints what it counted), again until it ends
signal_until_gone INT "$bpid" 100
bpid=
if [ $rc -ne 0 ]; then
	echo "FAIL: $prog under xsc run: exit $rc"; cat "$tmp/err"; exit 1
fi
# the program's process (others may map the library meanwhile)
st=$(ls "$tmp"/st.* 2>/dev/null | head -n 1)
pid=${st##*.}
posted=$(sed -n 's/.*"calls_posted": \([0-9]*\).*/\1/p' "$st" 2>/dev/null)
posts=$(sed -n "s/^@posts\[$pid\]: \([0-9]*\)$/\1/p" "$tmp/bt")
flushed=$(sed -n "s/^@flushed\[$pid\]: \([0-9]*\)$/\1/p" "$tmp/bt")
crossings=$(sed -n "s/^@crossings\[$pid\]: \([0-9]*\)$/\1/p" "$tmp/bt")
echo "bpftrace, process ${pid:-?}: post fired ${posts:-0} times (its stats file: ${posted:-?} calls posted); flush handed over ${flushed:-0} entries in ${crossings:-0} crossings"
if [ "${posts:-0}" -ge 300 ] && [ -n "${posted:-}" ] &&
   [ "$posts" -ge "$posted" ] && [ "$posts" -le $((posted + 1)) ] &&
   [ "${flushed:-0}" -eq "$posts" ]; then
	echo "PASS: bpftrace counted every post of a short run, and flush handed each over"
else
	echo "FAIL: want post >= 300 hits (100 pairs x 3 rounds), calls_posted or one more, and flush entries == posts"
	cat "$tmp/bt"
	fail=1
fi
exit $fail
