#!/bin/bash
# `xsc info`: the header lines say what the machine has, also when the
# process may open almost no files (the sysctl is read before the ring
# takes its fds, or `ulimit -n 4` would print io_uring_disabled=-1), and
# the host profile; the routes AUTO chooses by cost follow a forced
# profile and say its figures.
build=${1:?usage: t_info.sh BUILD_DIR}
xsc=$build/xsc
fail=0

out=$("$xsc" info 2>&1) || { echo "FAIL: xsc info exited $?"; echo "$out"; exit 1; }
for key in kernel: cores: io_uring: backend: profile: '  null_syscall_ns'; do
	grep -q "^$key" <<<"$out" || { echo "FAIL: no '$key' line"; fail=1; }
done
want=$(cat /proc/sys/kernel/io_uring_disabled 2>/dev/null)
if [ -n "$want" ]; then
	for n in 64 4; do
		line=$(bash -c "ulimit -n $n; exec '$xsc' info" 2>&1 | grep '^io_uring:')
		if grep -q "io_uring_disabled=$want)" <<<"$line"; then
			echo "PASS ulimit -n $n: $line"
		else
			echo "FAIL ulimit -n $n: $line (want io_uring_disabled=$want)"
			fail=1
		fi
	done
fi
# `xsc info SYSCALL`: one table row, by name or number, on each path
row() {	# row CALL PATTERN: the row of CALL has a line matching PATTERN
	local out
	out=$("$xsc" info "$1" 2>&1) || { echo "FAIL: xsc info $1 exited $?"; fail=1; return; }
	grep -Eq "$2" <<<"$out" || { echo "FAIL: xsc info $1: no line like '$2'"; echo "$out"; fail=1; }
}
row write '^write \(1\): fd,in,len$'
row 1 '^write \(1\)'
row write '^  multi-call:  linkable'
row write '^  xsc run:     posted'
row setuid '^  thread:      depends on the calling thread: its credentials'
row setuid '^  route:       inline'
row vfork '^  refused:     refused \(-EINVAL\)'
row mmap '^  xsc run:     answered by the shim .*for some arguments the other way'
row munmap '^  xsc run:     made directly'
row gettid '^  xsc run:     answered by the shim'
row futex '^  thread:      any, except for some arguments'
row mount 'not described by the table'
row write '^  arguments:   fd pointer length$'
row pipe2 '^  returns:     two descriptors, written to fds_out \(pipe\)'
row accept4 '^  returns:     a descriptor \(socket\)'
# docs/design.md's sample ("Executors and routes"): fstat's row
row fstat '^fstat \(5\): fd,out$'
row fstat '^  io_uring:    translated; statx \+ exact conversion'
row fstat '^  multi-call:  not linkable'
# the route list (numbers with an io_uring form, and refused ones): the
# route this machine and XSC_BACKEND give each
d=$(mktemp -d /tmp/xsc-info.XXXXXX)
trap 'rm -rf "$d"' EXIT
printf '%s\n' "null_syscall_ns 45" "posted_batch1_ns 160" "posted_batch32_ns 110" \
	"posted_async_batch32_ns 1500" "tls_switch_ns 5" "thread_switch_ns 1500" \
	"cross_core_wake_ns 5000" "xsave_bytes 2696" "xsavec 1" >"$d/cheap"
sed 's/^null_syscall_ns .*/null_syscall_ns 1100/; s/^posted_batch32_ns .*/posted_batch32_ns 100/;
     s/^posted_async_batch32_ns .*/posted_async_batch32_ns 400/' "$d/cheap" >"$d/dear"
routes() {	# routes ENV-ASSIGNMENT NR NAME ROUTE
	local out
	out=$(env XSC_HOST_PROFILE="${profile:-$d/cheap}" "$1" "$xsc" info 2>/dev/null)
	if grep -Eq "^$2 +$3 +$4 " <<<"$out"; then
		echo "PASS $1: $3 -> $4"
	else
		echo "FAIL $1: no route line '$2 $3 $4'"
		grep -E "^(nr|$2) " <<<"$out"
		fail=1
	fi
}
if grep -q '^io_uring: *available' <<<"$out"; then
	routes XSC_BACKEND=auto 0 read uring
	routes XSC_BACKEND=sqpoll 0 read sqpoll
	routes XSC_BACKEND=auto 5 fstat inline
	profile=$d/dear routes XSC_BACKEND=auto 5 fstat uring
	profile=$d/dear routes XSC_BACKEND=auto 4 stat 'uring +io_uring: a posted call costs 400 ns here .*, a system call 1100 ns'
	routes XSC_BACKEND=auto 4 stat 'inline +runs in the caller: a system call costs 45 ns here, a posted call 1500 ns'
	XSC_HOST_PROFILE=$d/dear row fstat '^  host:        a system call costs 1100 ns; a posted call 160 ns alone, 100 ns in a batch of 32, 400 ns in io_uring.s workers \(host profile, forced by XSC_HOST_PROFILE='
	XSC_HOST_PROFILE=$d/dear row fstat '^  route:       uring: io_uring: a posted call costs 400 ns'
	XSC_HOST_PROFILE=$d/cheap row openat '^  route:       uring: .*O_DIRECTORY it does \(a system call 45 ns here, a posted call 110 ns\), with other flags it does'
else
	routes XSC_BACKEND=auto 0 read worker
fi
routes XSC_BACKEND=worker 0 read worker
routes XSC_BACKEND=inline 0 read inline
routes XSC_BACKEND=worker 15 rt_sigreturn inline
for bad in bogus 999; do
	if "$xsc" info "$bad" >/dev/null 2>&1; then
		echo "FAIL: xsc info $bad succeeded"; fail=1
	fi
done
[ "$fail" -eq 0 ] && echo ok
exit "$fail"
