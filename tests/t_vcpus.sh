#!/usr/bin/env bash
# t_vcpus.sh BUILD_DIR - how many vcpus `xsc run` starts by default: one
# per CPU it may use, one fewer on SQPOLL (the process's one poller spins
# on a CPU of its own while there is work, uring_setup.c), never fewer
# than one, and what -t asks for.  Read from `xsc run -v`, on 2 CPUs
# (taskset -c 0,1) and on 1.  Exit 0 pass, 1 fail, 77 skip (fewer than 2
# CPUs, no preload library, io_uring refused).
set -u
build=$(cd "${1:?usage: t_vcpus.sh BUILD_DIR}" && pwd)
xsc=$build/xsc prog=$build/tests/tp/tp_pingpong
[ -f "$build/libxsc-preload.so" ] || { echo "skip: no preload library (sanitizer build)"; exit 77; }
[ -x "$prog" ] || { echo "FAIL: $prog not built"; exit 1; }
taskset -c 0,1 true 2>/dev/null || { echo "skip: fewer than 2 CPUs"; exit 77; }
. "$(dirname "$0")/ringrun_lib.sh"
need_ring_run "$xsc"
unset XSC_BACKEND XSC_THREADS XSC_VERBOSE XSC_TRANSPARENT XSC_RUN_PID
fail=0

# check WANT CPUS ARGS...: `xsc run -v ARGS -- prog` on CPUS says WANT
check() {
	local want=$1 cpus=$2 line
	shift 2
	line=$(taskset -c "$cpus" "$xsc" run -v "$@" -- "$prog" 2>&1 >/dev/null |
		sed -n 's/^xsc run: \([0-9]* vcpus[^,]*\),.*/\1/p' | head -n 1)
	if [ "$line" = "$want" ]; then
		echo "PASS: CPUs $cpus, $*: $line"
	else
		echo "FAIL: CPUs $cpus, $*: '${line:-nothing}', want '$want'"
		fail=1
	fi
}

check "2 vcpus" 0,1 -b uring
check "2 vcpus" 0,1 -b worker
check "1 vcpus (a CPU left to the SQPOLL poller)" 0,1 -b sqpoll
check "2 vcpus" 0,1 -b sqpoll -t 2
check "1 vcpus" 0 -b sqpoll
XSC_BACKEND=sqpoll check "1 vcpus (a CPU left to the SQPOLL poller)" 0,1
exit $fail
