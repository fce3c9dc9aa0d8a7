#!/usr/bin/env bash
# t_stressng.sh BUILD_DIR - Debian's stress-ng under `xsc run`.
# xsc-test: timeout=300
#
# stress-ng's stressors make the calls a thread library and its users
# make, many times a second and in the odd ways real programs do:
#  - the pthread stressor: rounds of up to 1,024 threads created, then
#    joined as they exit, each reading its clear-child-tid word with
#    PR_GET_TID_ADDRESS and setting it again (tests/tp/tp_tidaddr.c);
#  - the synchronization and event families: futex, sem, mutex, pipe,
#    sock, switch, poll, epoll, eventfd, yield (2 instances each, all at
#    once).
# Each runs under `xsc run -b B` for each backend in $XSC_TP_BACKENDS
# (default: uring sqpoll worker), bounded by stress-ng's own --timeout
# and by timeout(1) around it: a pass is exit status 0 and stress-ng's
# "successful run completed" line, within the bound.
# Exit 0 pass, 1 fail, 77 skip (stress-ng missing: scripts/deps.sh test
# installs it; or it fails natively here).
set -u
build=$(cd "${1:?usage: t_stressng.sh BUILD_DIR}" && pwd)
xsc=$build/xsc
backends=${XSC_TP_BACKENDS:-uring sqpoll worker}
bound=60	# seconds for one run of a few seconds: a hang, not a slow host

command -v stress-ng >/dev/null || { echo "skip: stress-ng not installed (scripts/deps.sh test)"; exit 77; }
[ -f "$build/libxsc-preload.so" ] || { echo "skip: no $build/libxsc-preload.so (not built under the sanitizers)"; exit 77; }
[ -x "$xsc" ] || { echo "FAIL: no $xsc"; exit 1; }
unset XSC_BACKEND XSC_THREADS XSC_VERBOSE XSC_TRANSPARENT XSC_FORK

tmp=$(mktemp -d /tmp/t_stressng.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
npass=0 nfail=0

families="--futex 2 --sem 2 --mutex 2 --pipe 2 --sock 2 --switch 2 --poll 2
	  --epoll 2 --eventfd 2 --yield 2 --timeout 3s"

# The sock stressor listens on loopback ports P and P+1, 5000 unless told.
# make test runs this test in two passes at once, and a second stress-ng
# on the same ports fails natively too ("bind failed on port 5000, errno=98
# (Address already in use)"), so each run takes two ports below the
# ephemeral range that nothing listens on: a random pick, checked against
# /proc/net/tcp{,6}.
listening() {	# listening PORT: true if a TCP socket listens on PORT
	local hex
	hex=$(printf ':%04X ' "$1")
	awk '$4 == "0A" { print $2 " " }' /proc/net/tcp /proc/net/tcp6 2>/dev/null |
		grep -q -- "$hex"
}
sock_port() {
	local p _
	for _ in $(seq 50); do
		p=$((10000 + (RANDOM * 32768 + RANDOM) % 20000))
		listening "$p" || listening $((p + 1)) || { echo "$p"; return; }
	done
	echo 5000
}

# run LABEL LOG COMMAND...: one bounded run, PASS or FAIL with the log's tail.
run() {
	local label=$1 log=$2 rc
	shift 2
	timeout -k 5 "$bound" "$@" --temp-path "$tmp" >"$log" 2>&1
	rc=$?
	if [ "$rc" = 0 ] && grep -q "successful run completed" "$log"; then
		npass=$((npass + 1)); echo "PASS $label"
	else
		nfail=$((nfail + 1)); echo "FAIL $label (exit $rc$([ "$rc" = 124 ] && echo ": timed out after ${bound}s"))"
		tail -n 15 "$log" | sed 's/^/     | /'
	fi
}

# stress-ng itself must work here (a container may deny what it needs).
if ! timeout -k 5 "$bound" stress-ng --pthread 1 --timeout 1s --temp-path "$tmp" >"$tmp/native.log" 2>&1; then
	echo "skip: stress-ng --pthread fails natively here:"
	tail -n 5 "$tmp/native.log"
	exit 77
fi

for b in $backends; do
	run "pthread/$b" "$tmp/pthread-$b.log" \
		"$xsc" run -b "$b" -- stress-ng --pthread 2 --timeout 5s
	# shellcheck disable=SC2086	# the stressor list is word-split on purpose
	run "families/$b" "$tmp/families-$b.log" \
		"$xsc" run -b "$b" -- stress-ng $families --sock-port "$(sock_port)"
done

echo "t_stressng: $npass passed, $nfail failed"
[ "$nfail" = 0 ]
