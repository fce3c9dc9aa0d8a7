#!/usr/bin/env bash
# t_vcpus.sh BUILD_DIR - how many vcpus `xsc run` starts by default: one
# per CPU it may use, one fewer on SQPOLL (the process's one poller spins
# on a CPU of its own while there is work, uring_setup.c), never fewer
# than one, and what -t asks for; no fewer where SQPOLL is refused (a
# seccomp filter).  With one usable CPU SQPOLL is not used
# (its poller would spin beside the program): a plain ring, with the
# reason.  Read from `xsc run -v`, on 2 CPUs (taskset -c 0,1), on 1, and
# under a cgroup CPU quota of one CPU (v1 or v2, where this host lets a
# cgroup be made).  Exit 0 pass, 1 fail, 77 skip (fewer than 2 CPUs, no
# preload library, io_uring refused).
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

# check WANT CPUS ARGS...: `xsc run -v ARGS -- prog` on CPUS, started by
# runner[] (none, or into a cgroup), says WANT
runner=() where=""
check() {
	local want=$1 cpus=$2 line
	shift 2
	line=$("${runner[@]}" taskset -c "$cpus" "$xsc" run -v "$@" -- "$prog" 2>&1 >/dev/null |
		sed -n 's/^xsc run: \([0-9]* vcpus[^,]*\),.*/\1/p' | head -n 1)
	if [ "$line" = "$want" ]; then
		echo "PASS: CPUs $cpus$where, $*: $line"
	else
		echo "FAIL: CPUs $cpus$where, $*: '${line:-nothing}', want '$want'"
		fail=1
	fi
}

check "2 vcpus" 0,1 -b uring
check "2 vcpus" 0,1 -b worker
check "1 vcpus (a CPU left to the SQPOLL poller)" 0,1 -b sqpoll
check "2 vcpus" 0,1 -b sqpoll -t 2
check "1 vcpus" 0 -b sqpoll
XSC_BACKEND=sqpoll check "1 vcpus (a CPU left to the SQPOLL poller)" 0,1

# SQPOLL asked for and refused (a seccomp filter: syscall threads): the
# CPU left to a poller goes back to a vcpu
if [ -x "$build/tests/nouring" ]; then
	runner=("$build/tests/nouring") where=" under a seccomp filter"
	check "2 vcpus" 0,1 -b sqpoll
	runner=() where=""
fi

# no SQPOLL where only one CPU is usable: a plain ring, and the reason
# sqpoll_refused CPUS
sqpoll_refused() {
	local cpus=$1 err
	err=$("${runner[@]}" taskset -c "$cpus" "$xsc" run -b sqpoll -- "$prog" 2>&1 >/dev/null)
	if grep -q "SQPOLL unavailable (one usable CPU, by affinity or cgroup quota" <<<"$err"; then
		echo "PASS: CPUs $cpus$where: SQPOLL refused with the reason"
	else
		echo "FAIL: CPUs $cpus$where: no reason for a plain ring: ${err:-nothing}"
		fail=1
	fi
}
sqpoll_refused 0

# A cgroup with a quota of one CPU (100 ms a 100 ms period): cgroup v2's
# cpu.max or v1's cpu controller at /sys/fs/cgroup/cpu.
cg=""
for root in /sys/fs/cgroup /sys/fs/cgroup/cpu,cpuacct /sys/fs/cgroup/cpu; do
	d=$root/xsc-t_vcpus.$$
	[ -f "$root/cgroup.procs" ] && mkdir "$d" 2>/dev/null || continue
	if [ -f "$d/cgroup.procs" ] && { echo "100000 100000" >"$d/cpu.max" ||
	   { echo 100000 >"$d/cpu.cfs_period_us" && echo 100000 >"$d/cpu.cfs_quota_us"; }; } 2>/dev/null; then
		cg=$d
		break
	fi
	rmdir "$d"
done
if [ -n "$cg" ]; then
	trap 'rmdir "$cg" 2>/dev/null' EXIT
	runner=(sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$cg")
	where=" in a cgroup with a quota of one CPU"
	check "1 vcpus" 0,1 -b uring
	check "1 vcpus" 0,1 -b worker
	sqpoll_refused 0,1
else
	echo "note: no cgroup with a CPU quota could be made here; the quota cases are not run"
fi
exit $fail
