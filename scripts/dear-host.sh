#!/usr/bin/env bash
# dear-host.sh [--ns N] [--cpu C] -- CMD [ARGS...]
#
# Runs CMD on this machine with system call entries made expensive, as on
# a host with page-table isolation in a VM (a null system call about
# 1.1 us where it costs 45-120 ns here): a BPF program on the
# raw_syscalls:sys_enter tracepoint spins N ns (default 1000) at every
# entry made on CPU C (default 0).  Requests io_uring runs inside the
# kernel make no entry and pay nothing, as there.  What it does not
# reproduce: the TLB and cache flushes of such a host, which also slow
# the code after each entry; the figures are an emulation.
#
# Pin the program under test to CPU C and its load generator elsewhere
# (xsc bench does: server on CPU 0, client on CPU 1).  xsc's host
# profile is measured afresh on CPU C under the tax (a cache directory of
# its own, XSC_CACHE_DIR), so xsc decides as it would on such a host.
# Needs root and bpftrace (Debian package bpftrace).  Exits with CMD's
# status; 77 when the tax cannot be applied (with the reason).
set -u
ns=1000 cpu=0
while [ $# -gt 0 ]; do
	case $1 in
	--ns) ns=${2:?}; shift 2 ;;
	--cpu) cpu=${2:?}; shift 2 ;;
	--) shift; break ;;
	*) echo "usage: dear-host.sh [--ns N] [--cpu C] -- CMD [ARGS...]" >&2; exit 2 ;;
	esac
done
[ $# -gt 0 ] || { echo "usage: dear-host.sh [--ns N] [--cpu C] -- CMD [ARGS...]" >&2; exit 2; }
case $ns$cpu in *[!0-9]*) echo "dear-host: --ns and --cpu take numbers" >&2; exit 2 ;; esac
[ "$(id -u)" = 0 ] || { echo "dear-host: needs root (a BPF program)" >&2; exit 77; }
command -v bpftrace >/dev/null || { echo "dear-host: no bpftrace (apt-get install bpftrace)" >&2; exit 77; }
taskset -c "$cpu" true 2>/dev/null || { echo "dear-host: CPU $cpu is not usable here" >&2; exit 77; }

tmp=$(mktemp -d /tmp/dear-host.XXXXXX)
bt=""
. "$(dirname "$0")/signal-until-gone.sh"
cleanup() {
	[ -n "$bt" ] && signal_until_gone TERM "$bt" 10
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
# The loop is bounded for the verifier (4,000 turns: about 100 us); nsecs
# ends it.  bpftrace itself
# is left alone wherever it runs.
ulimit -l unlimited 2>/dev/null
bpftrace -e "tracepoint:raw_syscalls:sys_enter /cpu == $cpu && comm != \"bpftrace\"/ {
	\$end = nsecs + $ns; \$i = 0;
	while (\$i < 4000 && nsecs < \$end) { \$i++; }
}" >"$tmp/bt.log" 2>&1 &
bt=$!
waited=0	# tenths of a second, at most 30 s
until grep -q '^Attaching' "$tmp/bt.log" || [ $waited -ge 300 ]; do
	kill -0 "$bt" 2>/dev/null || break
	waited=$((waited + 1)) && sleep 0.1
done
sleep 1	# a program the kernel refused is reported after "Attaching"
if ! grep -q '^Attaching' "$tmp/bt.log" || grep -q 'Error loading' "$tmp/bt.log" ||
   ! kill -0 "$bt" 2>/dev/null; then
	echo "dear-host: bpftrace did not attach: $(grep -v RLIMIT_MEMLOCK "$tmp/bt.log" | tail -n 2)" >&2
	exit 77
fi
export XSC_CACHE_DIR=$tmp/cache
mkdir -p "$XSC_CACHE_DIR"
if command -v xsc >/dev/null || [ -n "${XSC:-}" ]; then
	# the profile, measured once here on the taxed CPU, at a real-time
	# priority where the kernel allows it: the emulated host is a quiet
	# one, and programs busy on that CPU would otherwise make each
	# hand-over to io_uring's workers wait for them (a posted call 12-125
	# us instead of 1 us here, four to six busy programs on the CPU)
	rt=""
	chrt -f 1 true 2>/dev/null && rt="chrt -f 1"
	taskset -c "$cpu" $rt "${XSC:-xsc}" info >/dev/null 2>&1
fi
echo "dear-host: system call entries on CPU $cpu cost $ns ns more" \
	"(raw_syscalls:sys_enter); xsc's host profile in $XSC_CACHE_DIR" >&2
"$@"
