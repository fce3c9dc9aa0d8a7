#!/usr/bin/env bash
# t_trace_cli: the xsc trace command line around a live program: exit
# status and stdout preserved, command not found -> 127, a crashing
# program's signal reported with the trace so far analysed, Ctrl-C
# detaches and the program runs on, the progress line, JSON and pictures.
# xsc-test: timeout=60
set -u
x=$(cd "$1" && pwd)/tools/trace/xsc-trace
command -v python3 >/dev/null || { echo "SKIP: python3 not installed (scripts/deps.sh test)"; exit 77; }
[ -x "$x" ] || { echo "FAIL: $x not built"; exit 1; }
d=$(mktemp -d /tmp/xsc-trace-cli.XXXXXX)
trap 'rm -rf "$d"' EXIT
cd "$d"
fail() { echo "FAIL: $*"; exit 1; }

# Exit status and the program's stdout are the program's.
"$x" -q -- sh -c 'exit 42'; [ $? -eq 42 ] || fail "exit status not preserved"
out=$("$x" -q -- echo hello) || fail "echo"
[ "$out" = hello ] || fail "stdout changed: '$out'"

# Command not found.
"$x" -- /no/such/command 2>err; rc=$?
[ $rc -eq 127 ] || fail "not found: exit $rc"
grep -q 'No such file or directory' err || fail "not found: message"

# A crash: signal reported, the trace so far analysed.
"$x" -o crash.txt -- sh -c 'echo before; kill -SEGV $$' >/dev/null 2>err; rc=$?
[ $rc -eq 139 ] || fail "crash: exit $rc"
grep -q 'SIGSEGV' err || fail "crash: no signal message"
grep -q 'killed by signal 11' crash.txt || fail "crash: report"
grep -q 'kill' crash.txt || fail "crash: calls before the crash not analysed"

# Ctrl-C: the tracer detaches and exits 130, the program runs on.
"$x" -o int.txt --json -- sh -c 'for i in 1 2 3 4 5 6 7 8 9 10; do sleep 0.1; done; echo done >marker' &
tracer=$!
sleep 0.4
kill -INT $tracer
wait $tracer; rc=$?
[ $rc -eq 130 ] || fail "Ctrl-C: exit $rc"
python3 -c "import json; j=json.load(open('int.json' if False else 'int.txt')); assert j['exit']['detached'] and j['calls'] > 0" ||
	fail "Ctrl-C: report"
for i in $(seq 50); do [ -e marker ] && break; sleep 0.1; done
[ -e marker ] || fail "Ctrl-C: the program did not run on after the detach"

# Progress line on long recordings (forced: stderr is not a terminal).
"$x" --progress -q -- dd if=/dev/zero of=/dev/null bs=1 count=30000 status=none 2>prog.err ||
	fail "progress run"
grep -q 'recording: [0-9]* calls' prog.err || fail "no progress line"

# JSON of a live trace; the mechanisms (and --pin) agree on what dd did.
for m in "" --seccomp --pin; do
	"$x" $m --json -o dd$m.json -- dd if=/dev/zero of=/dev/null bs=512 count=1000 status=none ||
		fail "dd $m"
done
python3 - <<'PY' || fail "dd json"
import json
a, b = json.load(open('dd.json')), json.load(open('dd--seccomp.json'))
p = json.load(open('dd--pin.json'))
def n(j, name):
    return sum(s['count'] for s in j['syscalls'] if s['name'] == name)
for j in (a, b):
    assert n(j, 'read') >= 1000 and n(j, 'write') >= 1000, j['syscalls'][:3]
assert (n(a, 'read'), n(a, 'write')) == (n(b, 'read'), n(b, 'write'))
assert (n(a, 'read'), n(a, 'write')) == (n(p, 'read'), n(p, 'write'))
c = a['candidates'][0]
assert c['loop'] and c['iterations'] >= 999, c
assert any(d['call'] == 1 and d['arg'] == 2 and d['from'] == 0 for d in c['deps']), c
PY
"$x" -q --png dd.png -- true || fail "--png"
[ -s dd.png ] || fail "no png"
echo "t_trace_cli: ok"
