#!/usr/bin/env bash
# t_rewrite: xsc run rewrites libc's system call sites after their first
# trap (src/preload/rewrite.c), on every executor:
#  - tests/tp/tp_rewrite (registers, red zone, flags, vector state across
#    rewritten sites; threads racing the rewrite; fork; the program's own
#    code left alone) gives the native output, and -v says sites were
#    rewritten and calls went through them, and that its forked child
#    (a runtime of its own) did not trap each of its 10,000 umask calls;
#  - XSC_REWRITE=0 turns it off (-v says so) and the output is the same;
#  - python3 runs the same with rewriting on and off;
#  - the whole of t_transparent passes with rewriting off too, on the
#    uring executor (with it on, it is t_transparent itself); in the
#    suite only the arch_prctl row of its XSC_HW ones (see below).
# xsc-test: timeout=300
set -u
build=$(cd "${1:?usage: t_rewrite.sh BUILD_DIR}" && pwd)
xsc=$build/xsc prog=$build/tests/tp/tp_rewrite
fail=0
[ -x "$prog" ] || { echo "FAIL: $prog not built"; exit 1; }
if [ ! -e "$build/libxsc-preload.so" ]; then
	echo "SKIP: no preload library in this build (sanitizers)"; exit 77
fi
tmp=$(mktemp -d /tmp/t_rewrite.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
"$prog" >"$tmp/native" 2>&1 || { echo "FAIL: tp_rewrite fails natively"; cat "$tmp/native"; exit 1; }
if "$xsc" run -- /bin/true 2>&1 | grep -q 'running the program natively'; then
	echo "SKIP: xsc run cannot engage here: $("$xsc" run -- /bin/true 2>&1 | head -n 1)"; exit 77
fi

for b in ${XSC_TP_BACKENDS:-uring sqpoll worker}; do
	XSC_VERBOSE=1 timeout -k 5 60 "$xsc" run -b "$b" -- "$prog" >"$tmp/$b" 2>"$tmp/$b.err"
	rc=$?
	# one line from the program and one from its forked child (a runtime
	# of its own): the program's, which has the most calls
	line=$(grep 'libc syscall sites rewritten' "$tmp/$b.err" |
		sort -t, -k2 -n | tail -n 1)
	sites=$(sed -n 's/.*: \([0-9]*\) libc syscall sites rewritten.*/\1/p' <<<"$line")
	calls=$(sed -n 's/.*rewritten, \([0-9]*\) calls through them.*/\1/p' <<<"$line")
	if [ "$rc" -ne 0 ] || ! cmp -s "$tmp/native" "$tmp/$b"; then
		echo "FAIL [$b]: exit $rc, output differs from native"; diff "$tmp/native" "$tmp/$b"; fail=1
	elif [ "${sites:-0}" -lt 2 ] || [ "${calls:-0}" -lt 100000 ]; then
		echo "FAIL [$b]: too little went through rewritten sites: '$line'"; cat "$tmp/$b.err"; fail=1
	elif ! grep -q 'forked child' "$tmp/$b.err"; then
		echo "FAIL [$b]: the forked child got no runtime of its own"; cat "$tmp/$b.err"; fail=1
	elif grep 'still trapping' "$tmp/$b.err" | grep -Eq ' umask [0-9]{3,}'; then
		# the forked child's 10,000 umask calls: a site it must rewrite
		echo "FAIL [$b]: the forked child traps every umask (its own sites are not rewritten):"
		grep 'still trapping' "$tmp/$b.err"; fail=1
	else
		echo "PASS [$b]: same as native; $line"
	fi
	XSC_REWRITE=0 XSC_VERBOSE=1 timeout -k 5 60 "$xsc" run -b "$b" -- "$prog" >"$tmp/$b.off" 2>"$tmp/$b.off.err"
	rc=$?
	if [ "$rc" -ne 0 ] || ! cmp -s "$tmp/native" "$tmp/$b.off"; then
		echo "FAIL [$b, XSC_REWRITE=0]: exit $rc, output differs"; diff "$tmp/native" "$tmp/$b.off"; fail=1
	elif ! grep -q 'syscall sites not rewritten: XSC_REWRITE=0' "$tmp/$b.off.err"; then
		echo "FAIL [$b, XSC_REWRITE=0]: -v does not say rewriting is off"; cat "$tmp/$b.off.err"; fail=1
	else
		echo "PASS [$b, XSC_REWRITE=0]: same as native, nothing rewritten"
	fi
done

if command -v python3 >/dev/null; then
	py='import json, hashlib, threading
r = []
def w(i): r.append(hashlib.sha256(json.dumps({"k": list(range(i * 1000))}).encode()).hexdigest())
t = [threading.Thread(target=w, args=(i,)) for i in range(8)]
[x.start() for x in t]; [x.join() for x in t]
print(sorted(r)[0], len(r))'
	want=$(python3 -c "$py")
	for rwv in 1 0; do
		got=$(XSC_REWRITE=$rwv timeout -k 5 60 "$xsc" run -- python3 -c "$py" 2>"$tmp/py.err")
		if [ "$got" = "$want" ]; then
			echo "PASS python3 [XSC_REWRITE=$rwv]"
		else
			echo "FAIL python3 [XSC_REWRITE=$rwv]: '$got', natively '$want'"; cat "$tmp/py.err"; fail=1
		fi
	done
fi

# With rewriting off every call of libc traps: the shim's path, the same
# on every executor, which t_transparent itself already runs each of with
# rewriting on; so on the first executor only.  Of its XSC_HW rows, in
# the suite, the arch_prctl one ("/hw2"): a thread pointer load that is a
# kernel entry, at whose return the kernel delivers pending signals, now
# inside the SIGSYS trap every call takes.  Not the LDT and xsave one
# ("/hw"): with rewriting off no rewritten site saves state (xsave), and
# an LDT load (a mov to %fs) enters no kernel, so it does the same inside
# a trap as outside one, which t_transparent's own "/hw" rows test.
# XSC_TEST_FULL=1 (make demo): both rows.
# Where io_uring is refused (make test's no-io_uring pass) the first
# executor is the fallback, and by the same token this run would repeat
# the one of the normal pass.
hwrows=hw2
[ "${XSC_TEST_FULL:-0}" = 1 ] && hwrows="hw hw2"
if "$xsc" info 2>/dev/null | grep -q '^io_uring: *unavailable'; then
	echo "note: io_uring unavailable here: t_transparent with XSC_REWRITE=0 not run (it runs where io_uring is)"
elif XSC_TP_BACKENDS=uring XSC_TP_HW=$hwrows XSC_REWRITE=0 \
	bash "$(dirname "$0")/t_transparent.sh" "$build" >"$tmp/tt" 2>&1; then
	echo "PASS t_transparent with XSC_REWRITE=0: $(tail -n 1 "$tmp/tt")"
else
	# each failing check with what it printed, then the summary
	echo "FAIL t_transparent with XSC_REWRITE=0:"
	awk '/^FAIL /{p=40} p>0{print; p--} /^(PASS|SKIP) /{p=0}' "$tmp/tt" | head -n 120
	tail -n 30 "$tmp/tt"; fail=1
fi
[ "$fail" -eq 0 ] && echo ok
exit "$fail"
