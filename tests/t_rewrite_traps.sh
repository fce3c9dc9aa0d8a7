#!/usr/bin/env bash
# t_rewrite_traps: no libc site left trapping on a program's hot path
# (src/preload/rewrite.c).  tests/tp/tp_hotsites loops over syscall(),
# fopen/fread/fclose, open/read/lseek/close and write, in a process with
# a second thread.  Under `xsc run -v` it runs with 100 and with 2,000
# iterations; the calls trapped (SIGSYS) must be the same give or take a
# few (a site traps once, then is rewritten): every call the 1,900 more
# iterations make goes through a rewritten site or an interposed
# function.  (2,000, not more: under SQPOLL on a loaded machine each
# posted call can wait milliseconds for the poller thread to run.)  Its output must be the native one (its calls of syscall()
# with numbers a stub must hand back to the trap among them), and -v must
# name the site left trapping for those.  On every executor, and with
# XSC_HW=nofsgsbase,noxsavec (the other way to load a thread pointer; the
# stub saves state with xsave).
# xsc-test: timeout=600
set -u
build=$(cd "${1:?usage: t_rewrite_traps.sh BUILD_DIR}" && pwd)
xsc=$build/xsc prog=$build/tests/tp/tp_hotsites
slack=20	# traps the longer run may add: none per iteration
fail=0
[ -x "$prog" ] || { echo "FAIL: $prog not built"; exit 1; }
if [ ! -e "$build/libxsc-preload.so" ]; then
	echo "SKIP: no preload library in this build (sanitizers)"; exit 77
fi
if "$xsc" run -- /bin/true 2>&1 | grep -q 'running the program natively'; then
	echo "SKIP: xsc run cannot engage here: $("$xsc" run -- /bin/true 2>&1 | head -n 1)"; exit 77
fi
unset XSC_BACKEND XSC_VERBOSE XSC_REWRITE XSC_HW
tmp=$(mktemp -d /tmp/t_rewrite_traps.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

traps() {	# the "N calls trapped (SIGSYS)" count of a stderr file
	sed -n 's/.* \([0-9]*\) calls trapped (SIGSYS).*/\1/p' "$1" | tail -n 1
}

for n in 100 2000; do
	"$prog" "$n" >"$tmp/native.$n" 2>&1 || { echo "FAIL: tp_hotsites $n fails natively"; cat "$tmp/native.$n"; exit 1; }
done
for hw in "" nofsgsbase,noxsavec; do
	for b in uring sqpoll worker; do
		label="$b${hw:+, XSC_HW=$hw}"
		for n in 100 2000; do
			XSC_HW=$hw timeout -k 5 120 "$xsc" run -v -b "$b" -- "$prog" "$n" \
				>"$tmp/out.$n" 2>"$tmp/err.$n"
			rc=$?
			if [ "$rc" -ne 0 ] || ! cmp -s "$tmp/native.$n" "$tmp/out.$n"; then
				echo "FAIL [$label, $n iterations]: exit $rc, output differs from native"
				diff "$tmp/native.$n" "$tmp/out.$n"; cat "$tmp/err.$n"; fail=1
				continue 2
			fi
		done
		short=$(traps "$tmp/err.100") long=$(traps "$tmp/err.2000")
		if [ -z "$short" ] || [ -z "$long" ]; then
			echo "FAIL [$label]: no trap count in -v's output"; cat "$tmp/err.2000"; fail=1
		elif [ "$long" -gt $((short + slack)) ]; then
			echo "FAIL [$label]: $short calls trapped in 100 iterations, $long in 2,000:"
			grep -E 'still trapping|left trapping|rewritten' "$tmp/err.2000"; fail=1
		elif ! grep -q '^xsc run: site .* left trapping ([0-9]* traps): rt_sigprocmask: ' "$tmp/err.2000"; then
			# syscall(SYS_rt_sigprocmask) goes back to its trap: -v names the site
			echo "FAIL [$label]: -v does not name the site left trapping for rt_sigprocmask:"
			grep 'xsc run' "$tmp/err.2000"; fail=1
		else
			echo "PASS [$label]: $short calls trapped in 100 iterations, $long in 2,000"
		fi
	done
done
[ "$fail" -eq 0 ] && echo ok
exit "$fail"
