#!/usr/bin/env bash
# t_trace_strace: `xsc trace --from` on real `strace -f -tt -T` logs of cp,
# tar and gzip recorded here.  Every call line must be parsed (counted
# independently below), nothing reported malformed, the graph's node
# counts must add up to the calls and its edge weights to the successions
# within threads; a log with an injected bad line reports it by number and
# analyses the rest; --dot and --svg draw the graph.
# xsc-test: timeout=60
set -u
x=$(cd "$1" && pwd)/tools/trace/xsc-trace
for c in strace python3 cp tar gzip; do
	command -v $c >/dev/null || { echo "SKIP: $c not installed (scripts/deps.sh test)"; exit 77; }
done
[ -x "$x" ] || { echo "FAIL: $x not built"; exit 1; }
d=$(mktemp -d /tmp/xsc-trace-st.XXXXXX)
trap 'rm -rf "$d"' EXIT
cd "$d"
seq 1 100000 >data
mkdir tree && cp data tree/a && seq 1 500 >tree/b
strace -f -tt -T -o cp.log cp data copy || exit 1
strace -f -tt -T -o tar.log tar czf t.tgz tree || exit 1
strace -f -tt -T -o gzip.log gzip -k -f data || exit 1

check() { # check LOG: parse it and compare with an independent count
	"$x" --from "$1" --json -o "$1.json" || { echo "FAIL: xsc trace --from $1"; exit 1; }
	python3 - "$1" "$1.json" <<'PY' || exit 1
import json, re, sys
log, js = sys.argv[1], json.load(open(sys.argv[2]))
calls = 0
pids = set()
for line in open(log):
    m = re.match(r'\s*(\d+)\s+\d\d:\d\d:\d\d\.\d+\s+(.*)$', line)
    assert m, line
    rest = m.group(2)
    if rest.startswith(('---', '+++')) or rest.endswith('<unfinished ...>'):
        continue
    calls += 1
    pids.add(m.group(1))
def eq(what, a, b):
    if a != b:
        print(f"FAIL: {log}: {what}: {a} != {b}")
        sys.exit(1)
eq("calls", js["calls"], calls)
eq("threads", js["threads"], len(pids))
eq("malformed", js["malformed"], 0)
eq("node counts", sum(n["count"] for n in js["nodes"]), calls)
eq("edge weights", sum(e["weight"] for e in js["edges"]), calls - len(pids))
eq("exit", (js["exit"]["recorded"], js["exit"]["status"]), (True, 0))
assert js["candidates"], "no candidates"
for c in js["candidates"]:
    assert c["saved"] > 0 and 0 < c["share"] <= 1, c
print(f"{log}: {calls} calls, {len(pids)} threads, {len(js['nodes'])} nodes, "
      f"top candidate {' -> '.join(c for c in js['candidates'][0]['labels'])}")
PY
}
check cp.log
check tar.log
check gzip.log

# gzip reads its input in a run of reads on one file: readv
python3 -c "
import json, sys
js = json.load(open('gzip.log.json'))
ok = any('read(' in l for c in js['candidates'] for l in c['labels'])
sys.exit(0 if ok else 1)" || { echo "FAIL: gzip: no candidate with read"; exit 1; }

# A malformed line: reported with its line number, the rest analysed.
sed '5i this line is garbage(' cp.log >bad.log
"$x" --from bad.log --json -o bad.json 2>bad.err || { echo "FAIL: bad.log"; exit 1; }
grep -q 'line 5: malformed' bad.err || { echo "FAIL: no line-5 message"; cat bad.err; exit 1; }
python3 -c "
import json; a = json.load(open('bad.json')); b = json.load(open('cp.log.json'))
assert a['malformed'] == 1 and a['calls'] == b['calls'], (a['malformed'], a['calls'])" || exit 1

# Pictures.
"$x" --from tar.log -q --dot tar.dot --svg tar.svg || { echo "FAIL: --svg"; exit 1; }
grep -q '^digraph' tar.dot && grep -q '<svg' tar.svg || { echo "FAIL: dot/svg output"; exit 1; }
grep -q 'color=red' tar.dot || { echo "FAIL: candidate edges not highlighted"; exit 1; }
echo "t_trace_strace: ok"
