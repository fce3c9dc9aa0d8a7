#!/usr/bin/env bash
# A program's sched_yield under `xsc run` with no other thread ready on
# its vcpu (sched/loop.c xsc__rt_yield_cpu), on each executor:
#   - beside two CPU-bound processes, one per CPU, tests/yield_wake's two
#     threads pass a turn through semaphores 600 times while two others
#     yield in a loop, each of those on a vcpu with one of the two: the
#     median round takes under 1 ms, and -v says the yields kept the CPU
#     and none went to the kernel.  When each yield went to the kernel,
#     the vcpu waited behind the other process's time slice at each
#     round: a median of 3.5-4 ms, against 25 us natively beside the same
#     processes and 0-1 us under xsc run (2026-11-29, 2 CPUs);
#   - two vcpus on one CPU (`taskset -c 0`, -t 2), two threads passing a
#     turn 2,000 times through a shared word, each waiting with
#     sched_yield: the yields go to the kernel (the other vcpu needs the
#     CPU), and the 2,000 turns take under 5 s.  Kept on the vcpu, each
#     turn waited for a time slice: 13.5 s, against 6 ms natively.
# Exit 0 pass, 1 fail, 77 skip.
# xsc-test: timeout=180
set -u
build=$(cd "${1:?usage: t_yield.sh BUILD_DIR}" && pwd)
xsc=$build/xsc prog=$build/tests/yield_wake
here=$(cd "$(dirname "$0")" && pwd)
[ -f "$build/libxsc-preload.so" ] || { echo "skip: no preload library (sanitizer build)"; exit 77; }
[ -x "$prog" ] || { echo "skip: $prog not built"; exit 77; }
. "$here/ringrun_lib.sh"
need_ring_run "$xsc"
tmp=$(mktemp -d /tmp/t_yield.XXXXXX)
hogs=()
cleanup() {
	[ ${#hogs[@]} -gt 0 ] && kill "${hogs[@]}" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

# yields LOG: "kept kernel" from -v's sched_yield line (0 0 if none was
# printed: no yield found its vcpu without another thread ready)
yields() {
	sed -n 's/.*sched_yield with no other thread ready on its vcpu: \([0-9]*\) kept.*, \([0-9]*\) yielded.*/\1 \2/p' "$1" |
		tail -n 1 | grep . || echo "0 0"
}

mapfile -t cpus < <(taskset -pc $$ | sed 's/.*: //' | tr ',' '\n' |
	awk -F- '{ for (c = $1; c <= ($2 == "" ? $1 : $2); c++) print c }')

if [ ${#cpus[@]} -ge 2 ]; then
	for c in "${cpus[0]}" "${cpus[1]}"; do
		taskset -c "$c" sh -c 'while :; do :; done' &
		hogs+=($!)
	done
	sleep 0.2
	native=$("$prog" 600) || bad "natively: yield_wake exited $?"
	echo "beside two CPU-bound processes, natively: $native"
	for b in uring sqpoll worker; do
		out=$(timeout 60 "$xsc" run -v -t 2 -b "$b" -- "$prog" 600 2> "$tmp/$b.err")
		rc=$?
		read -r kept kernel <<< "$(yields "$tmp/$b.err")"
		echo "[$b] $out; yields: $kept kept, $kernel to the kernel"
		if [ $rc -ne 0 ]; then
			bad "[$b] xsc run exited $rc"
			tail -n 5 "$tmp/$b.err"
			continue
		fi
		med=$(echo "$out" | sed -n 's/.*median_us \([0-9]*\).*/\1/p')
		[ -n "$med" ] && [ "$med" -lt 1000 ] ||
			bad "[$b] the median round took ${med:-?} us: a fiber readied beside a yielding one waited (at most 1000)"
		[ "$kept" -gt 0 ] || bad "[$b] no yield kept its CPU (or the yielders shared no vcpu with the hand-off)"
		[ "$kernel" -eq 0 ] || bad "[$b] $kernel yields went to the kernel with each vcpu on a CPU of its own"
	done
	kill "${hogs[@]}" 2>/dev/null
	wait "${hogs[@]}" 2>/dev/null
	hogs=()
else
	echo "one CPU allowed: the case beside two CPU-bound processes needs two (skipped)"
fi

for b in uring sqpoll worker; do
	start=$(date +%s%N)
	out=$(timeout 60 taskset -c "${cpus[0]}" "$xsc" run -v -t 2 -b "$b" -- "$prog" turns 2000 2> "$tmp/$b-one.err")
	rc=$?
	ms=$((($(date +%s%N) - start) / 1000000))
	read -r kept kernel <<< "$(yields "$tmp/$b-one.err")"
	echo "[$b, two vcpus on one CPU] $out (${ms} ms in all); yields: $kept kept, $kernel to the kernel"
	if [ $rc -ne 0 ]; then
		bad "[$b, one CPU] xsc run exited $rc"
		tail -n 5 "$tmp/$b-one.err"
		continue
	fi
	[ "$kernel" -gt 0 ] || bad "[$b, one CPU] no yield went to the kernel, where the other vcpu needs the CPU"
	[ "$ms" -lt 5000 ] || bad "[$b, one CPU] 2,000 turns took $ms ms (at most 5000)"
done

[ $fails -eq 0 ] && { echo "PASS"; exit 0; }
echo "$fails failed"
exit 1
