#!/usr/bin/env bash
# t_stats.sh BUILD_DIR - `xsc run --stats=FILE` (src/preload/stats.c).
#
# tests/tp/tp_statsfork (threads, then a fork; parent and child each read
# a pipe 200 times) runs under `xsc run -b uring`:
#  1. with -v and --stats=FILE: two files FILE.PID, one per process, no
#     FILE.PID.tmp left; each valid JSON (python3's json), with the
#     runtime on, at least the 200 reads among its calls posted, and each
#     counter that -v printed for that process equal to the file's;
#  2. with --stats=FILE alone: stderr as without it (empty, but for what
#     xsc says anyway, e.g. a fallback under make test's seccomp pass),
#     and the two files again;
#  3. with XSC_STATS=FILE in the environment instead: the two files.
# Exit 0 pass, 1 fail, 77 skip.
set -u
unset XSC_BACKEND XSC_THREADS XSC_VERBOSE XSC_TRANSPARENT XSC_STATS
build=$(cd "${1:?usage: t_stats.sh BUILD_DIR}" && pwd)
xsc=$build/xsc prog=$build/tests/tp/tp_statsfork
command -v python3 >/dev/null || { echo "skip: no python3 to read the JSON"; exit 77; }
[ -f "$build/libxsc-preload.so" ] || { echo "skip: no preload library (sanitizer build)"; exit 77; }
[ -x "$prog" ] || { echo "FAIL: $prog not built"; exit 1; }
tmp=$(mktemp -d /tmp/t_stats.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# check_files DIR: two FILE.PID, valid, 200 reads each; prints the pids
check_files() {
	local d=$1 n
	n=$(ls "$d" | grep -c '^st\.[0-9]*$')
	[ "$n" = 2 ] || bad "$d: $n stats files, want 2 (parent, child): $(ls "$d" | tr '\n' ' ')"
	ls "$d" | grep -q '\.tmp$' && bad "$d: a temporary file was left: $(ls "$d" | tr '\n' ' ')"
	for f in "$d"/st.*; do
		[ -e "$f" ] || continue
		if ! python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
pid = int(sys.argv[1].rsplit(".", 1)[1])
assert d["pid"] == pid, "pid %s in %s" % (d["pid"], sys.argv[1])
assert d["runtime"] is True, "runtime off"
assert d["calls_posted"] >= 200, "calls_posted %d < 200" % d["calls_posted"]
assert d["calls_completed"] == d["calls_posted"], "completed %d != posted %d" % (
    d["calls_completed"], d["calls_posted"])
' "$f" 2>"$tmp/py.err"; then
			bad "$f: $(tail -n 1 "$tmp/py.err"): $(cat "$f")"
		else
			echo "ok: $(basename "$f"): valid JSON, $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["calls_posted"])' "$f") calls posted"
		fi
	done
}

# 1. -v and --stats in one run: the same counters, in words and in JSON
mkdir "$tmp/v"
(cd "$tmp/v" && "$xsc" run -b uring -v --stats=st -- "$prog" >"$tmp/v.out" 2>"$tmp/v.err")
[ $? -eq 0 ] || { cat "$tmp/v.err"; bad "$prog under xsc run -v --stats: exit status"; }
check_files "$tmp/v"
for f in "$tmp"/v/st.*; do
	[ -e "$f" ] || continue
	pid=${f##*.}
	line=$(grep "^xsc run: process $pid: [0-9]* calls posted" "$tmp/v.err")
	if [ -z "$line" ]; then
		bad "-v printed no counts for process $pid"; continue
	fi
	python3 - "$f" "$line" <<'EOF' || bad "process $pid: -v and the JSON differ: $line"
import json, re, sys
d = json.load(open(sys.argv[1]))
m = re.search(r"(\d+) calls posted, (\d+) completed \(uring (\d+), sqpoll (\d+), "
              r"syscall threads (\d+), inline (\d+)\) in (\d+) flushes, (\d+) crossings",
              sys.argv[2])
keys = ["calls_posted", "calls_completed", "completed_uring", "completed_sqpoll",
        "completed_worker", "completed_inline", "flushes", "crossings"]
got = dict(zip(keys, map(int, m.groups())))
diff = {k: (got[k], d[k]) for k in keys if got[k] != d[k]}
if diff:
    print("differ (-v, json):", diff, file=sys.stderr)
    sys.exit(1)
EOF
	echo "ok: process $pid: -v's counts equal the file's"
done
nv=$(grep -c '^xsc run: [0-9]* threads as fibers' "$tmp/v.err")
[ "$nv" = 2 ] || bad "-v printed the thread counts of $nv processes, want 2"

# 2. --stats alone says nothing more than a run without it
mkdir "$tmp/q"
"$xsc" run -b uring -- "$prog" >"$tmp/plain.out" 2>"$tmp/plain.err"
(cd "$tmp/q" && "$xsc" run -b uring --stats=st -- "$prog" >"$tmp/q.out" 2>"$tmp/q.err")
[ $? -eq 0 ] || bad "$prog under xsc run --stats: exit status"
if ! cmp -s "$tmp/plain.err" "$tmp/q.err"; then
	bad "--stats without -v changed stderr:"; diff "$tmp/plain.err" "$tmp/q.err"
else
	echo "ok: --stats adds nothing to stderr without -v ($(wc -l <"$tmp/q.err") lines either way)"
fi
check_files "$tmp/q"

# 3. the environment variable
mkdir "$tmp/e"
XSC_STATS="$tmp/e/st" "$xsc" run -b uring -- "$prog" >"$tmp/e.out" 2>"$tmp/e.err" ||
	bad "$prog under XSC_STATS=...: exit status"
check_files "$tmp/e"

[ $fail -eq 0 ] && echo "PASS" || echo "FAIL"
exit $fail
