#!/usr/bin/env bash
# t_dear_host.sh BUILD_DIR - scripts/dear-host.sh makes system calls dear
# on one CPU (a BPF program on raw_syscalls:sys_enter spins 1 us at each
# entry there), and xsc, measuring its host profile afresh under it,
# decides as on such a quiet host, even while four programs keep that
# CPU busy (as when the suite's other passes run beside it): the profile's
# null system call is at least 700 ns, and the stat family and opens are
# posted (`xsc info`), where a cheap host runs them in the caller.  The
# command's exit status is passed through and no bpftrace is left
# behind.  Exit 0 pass, 1 fail, 77 skip (not root, no bpftrace, io_uring
# refused, fewer than 2 CPUs).
set -u
build=$(cd "${1:?usage: t_dear_host.sh BUILD_DIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
dear=$here/../scripts/dear-host.sh
[ "$(id -u)" = 0 ] || { echo "skip: not root (a BPF program)"; exit 77; }
command -v bpftrace >/dev/null || { echo "skip: no bpftrace (scripts/deps.sh test installs it)"; exit 77; }
taskset -c 0,1 true 2>/dev/null || { echo "skip: fewer than 2 CPUs"; exit 77; }
. "$here/ringrun_lib.sh"
need_ring_run "$build/xsc"
tmp=$(mktemp -d /tmp/t_dear_host.XXXXXX)
hogs=""
trap 'kill $hogs 2>/dev/null; rm -rf "$tmp"' EXIT
# CPU 0 busy, as when the suite's other passes run beside this test: the
# profile must still be the one of a quiet host with dear system calls.
# Two programs spin, two make system calls (each paying the tax); each
# ends after 60 s even if this script is killed.
trap 'exit 1' INT TERM
for i in 1 2; do
	timeout 60 taskset -c 0 sh -c 'while :; do :; done' &
	hogs="$hogs $!"
	timeout 60 taskset -c 0 dd if=/dev/zero of=/dev/null bs=1 count=1000000000 2>/dev/null &
	hogs="$hogs $!"
done
fail=0
bad() { echo "FAIL: $*"; fail=1; }

XSC=$build/xsc "$dear" --ns 1000 --cpu 0 -- sh -c \
	'taskset -c 0 "$XSC" info >"$0/info" 2>&1; exit 7' "$tmp" 2>"$tmp/err"
rc=$?
[ $rc -eq 77 ] && { echo "skip: $(tail -n 1 "$tmp/err")"; exit 77; }
[ $rc -eq 7 ] || bad "exit status $rc, want the command's 7: $(tail -n 2 "$tmp/err")"
null=$(sed -n 's/^ *null_syscall_ns *\([0-9]*\)$/\1/p' "$tmp/info")
if [ -n "$null" ] && [ "$null" -ge 700 ]; then
	echo "PASS: the profile measured under the tax: a system call costs $null ns"
else
	bad "profile's null_syscall_ns '${null:-none}', want >= 700"; head -n 30 "$tmp/info"
fi
for call in newfstatat fstat openat; do
	line=$(grep -E "^[0-9]+ +$call " "$tmp/info")
	route=$(awk '{print $3}' <<<"$line")
	if [ "$route" = uring ] && { [ $call != openat ] || grep -q "with other flags it is posted" <<<"$line"; }; then
		echo "PASS: $call posted: ${line:0:100}"
	else
		bad "$call not posted under the tax: $line"
	fi
done
sleep 0.5
pgrep -x bpftrace >/dev/null && pgrep -af bpftrace | grep -q 'raw_syscalls:sys_enter /cpu == 0' &&
	bad "a bpftrace of dear-host.sh is still running"
[ $fail -eq 0 ] && echo "PASS" && exit 0
exit 1
