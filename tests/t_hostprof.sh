#!/bin/bash
# The host profile's cache and forced files (src/hostprof.c), through
# `xsc info`: the first process measures and writes the cache, the next
# reads it (source "cached", file untouched); a cache of another boot is
# measured again, one taken on a busy machine once the machine is not; an unwritable cache directory still gives a measured
# profile; XSC_CACHE_DIR, XDG_CACHE_HOME and HOME name the directory in
# that order; under a seccomp filter io_uring is not measured and nothing
# is cached; programs under `xsc run` read the cache the launcher wrote;
# a forced file with a missing or malformed cost is an error naming it
# (`xsc info` exits 1, `xsc run` 2), never a default, and the cache file
# itself is a valid forced file.  Run under a seccomp filter itself (make
# test's nouring pass), where nothing is cached, it checks that and the
# forced files.
build=${1:?usage: t_hostprof.sh BUILD_DIR}
xsc=$build/xsc
d=$(mktemp -d /tmp/xsc-hostprof.XXXXXX)
trap 'rm -rf "$d"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
profile() { sed -n 's/^profile: *//p'; }	# the source line of `xsc info`
keys="null_syscall_ns posted_batch1_ns posted_batch32_ns posted_async_batch32_ns
tls_switch_ns thread_switch_ns cross_core_wake_ns xsave_bytes xsavec"

unset XSC_HOST_PROFILE
filtered=
c=$d/cache
if [ "$(awk '/^Seccomp:/ { print $2 }' /proc/self/status)" != 0 ]; then
	src=$(XSC_CACHE_DIR=$c "$xsc" info 2>/dev/null | profile)
	[[ $src == *"not cached: a seccomp filter is active"* ]] || bad "under a filter: '$src'"
	[ ! -e "$c/host-profile" ] || bad "under a filter: cached"
	echo "ok under a seccomp filter: $src"
	filtered=1
fi

cache_checks() {
	# measured, written, then read back
	src=$(XSC_CACHE_DIR=$c "$xsc" info | profile)
	[[ $src == "measured in "*" us; written to $c/host-profile"* ]] || bad "first run: '$src'"
	[ -s "$c/host-profile" ] || bad "no cache file"
	for k in $keys boot_id cpu kernel; do
		grep -q "^$k [^ ]" "$c/host-profile" || bad "cache lacks $k"
	done
	cp -p "$c/host-profile" "$d/first"
	src2=$(XSC_CACHE_DIR=$c "$xsc" info | profile)
	if [[ $src == *"on a busy machine"* && $src2 == "measured in "* ]]; then
		echo "note: measured on a busy machine, which was no longer busy: measured again"
	else
		[ "$src2" = "cached in $c/host-profile" ] || bad "second run: '$src2'"
		cmp -s "$c/host-profile" "$d/first" || bad "the second run rewrote the cache"
	fi
	src=$src2
	XSC_CACHE_DIR=$c "$xsc" info fstat | grep -q "^  host: .*cached in $c/host-profile" ||
		bad "xsc info fstat: no host line from the cache"
	echo "ok cache written, then read: $src"

	# one taken on a busy machine is kept while the machine is busy, and
	# measured again once it is not (asserted away from the threshold)
	load=$(awk -v n="$(nproc)" '{ printf "%d", $1 * 100 / n }' /proc/loadavg)
	sed -i '/^load_pct /d' "$c/host-profile"
	echo "load_pct 5000" >>"$c/host-profile"
	src=$(XSC_CACHE_DIR=$c "$xsc" info | profile)
	if [ "$load" -gt 200 ]; then
		[ "$src" = "cached in $c/host-profile" ] || bad "busy cache, busy machine: '$src'"
	elif [ "$load" -lt 50 ]; then
		[[ $src == "measured in "* ]] || bad "busy cache, quiet machine: '$src'"
	fi
	echo "ok a busy machine's cache, load now $load% of the cores: $src"

	# another boot's cache is measured again and replaced
	sed -i 's/^boot_id .*/boot_id 00000000-0000-0000-0000-000000000000/' "$c/host-profile"
	src=$(XSC_CACHE_DIR=$c "$xsc" info | profile)
	[[ $src == "measured in "* ]] || bad "stale boot_id: '$src'"
	grep -q "^boot_id $(cat /proc/sys/kernel/random/boot_id)\$" "$c/host-profile" ||
		bad "stale cache not replaced"
	echo "ok another boot's cache measured again"

	# no cache to write: measured all the same
	touch "$d/file"
	src=$(XSC_CACHE_DIR=$d/file "$xsc" info | profile)
	[[ $src == "measured in "*"; not cached: $d/file/host-profile: "* ]] || bad "unwritable: '$src'"
	echo "ok unwritable: $src"

	# where the cache lives
	env -u XSC_CACHE_DIR XDG_CACHE_HOME="$d/xdg" "$xsc" info >/dev/null
	[ -s "$d/xdg/xsc/host-profile" ] || bad "XDG_CACHE_HOME not used"
	env -u XSC_CACHE_DIR -u XDG_CACHE_HOME HOME="$d/home" "$xsc" info >/dev/null
	[ -s "$d/home/.cache/xsc/host-profile" ] || bad "HOME/.cache not used"
	echo "ok XDG_CACHE_HOME, HOME"

	# a seccomp filter: no io_uring measured, nothing cached; a cache is read
	if [ -x "$build/tests/nouring" ]; then
		out=$(XSC_CACHE_DIR=$d/sc "$build/tests/nouring" "$xsc" info 2>/dev/null)
		src=$(profile <<<"$out")
		[[ $src == *"not cached: a seccomp filter is active"* ]] || bad "seccomp: '$src'"
		grep -q '^  posted_batch1_ns *unavailable$' <<<"$out" || bad "seccomp: posted cost measured"
		[ ! -e "$d/sc/host-profile" ] || bad "seccomp: cached"
		src=$(XSC_CACHE_DIR=$c "$build/tests/nouring" "$xsc" info 2>/dev/null | profile)
		[ "$src" = "cached in $c/host-profile" ] || bad "seccomp with a cache: '$src'"
		echo "ok seccomp filter"
	fi

	# programs under xsc run read what the launcher cached, each exec
	pp=$build/tests/tp/tp_pingpong
	if [ -e "$build/libxsc-preload.so" ] && [ -x "$pp" ]; then
		err=$(XSC_CACHE_DIR=$d/run "$xsc" run -v -- sh -c "'$pp' && '$pp'" 2>&1 >/dev/null)
		n=$(grep -c "^xsc run: host profile cached in $d/run/host-profile\$" <<<"$err")
		[ "$n" = 2 ] || { bad "xsc run: $n programs read the cache, want 2"; grep 'host profile' <<<"$err"; }
		echo "ok xsc run: both programs read the launcher's cache"
	fi
}
[ -n "$filtered" ] || cache_checks

# forced files
forced() {	# forced NAME LINES...: writes $d/NAME from the lines
	local f=$d/$1; shift
	printf '%s\n' "$@" >"$f"
	echo "$f"
}
good=(null_syscall_ns 1100 posted_batch1_ns 1250 posted_batch32_ns 100
      posted_async_batch32_ns unavailable tls_switch_ns 1100 thread_switch_ns 4000
      cross_core_wake_ns 30000 xsave_bytes 2696 xsavec 0)
lines=()
for ((i = 0; i < ${#good[@]}; i += 2)); do lines+=("${good[i]} ${good[i+1]}"); done
f=$(forced good "# a host where a system call costs 1.1 us" "${lines[@]}")
out=$(XSC_HOST_PROFILE=$f "$xsc" info) || bad "a good forced file failed"
[ "$(profile <<<"$out")" = "forced by XSC_HOST_PROFILE=$f" ] || bad "forced: $(profile <<<"$out")"
grep -q '^  null_syscall_ns *1100$' <<<"$out" || bad "forced: value not shown"
grep -q '^  posted_async_batch32_ns *unavailable$' <<<"$out" || bad "forced: unavailable not kept"
# errors name what is wrong
expect_error() {	# expect_error FILE PATTERN
	local err
	err=$(XSC_HOST_PROFILE=$1 "$xsc" info 2>&1 >/dev/null)
	local rc=$?
	if [ $rc -ne 1 ] || ! grep -qE "$2" <<<"$err"; then
		bad "XSC_HOST_PROFILE=$1: exit $rc, '$err' (want 1 and /$2/)"
	else
		echo "ok error: $err"
	fi
}
f=$(forced missing "${lines[@]:0:2}" "${lines[@]:3:4}")	# no posted_batch32_ns, xsave_bytes, xsavec
expect_error "$f" "XSC_HOST_PROFILE=$f: missing posted_batch32_ns xsave_bytes xsavec\$"
f=$(forced nonnum "${lines[@]}" "tls_switch_ns fast")
expect_error "$f" "line 10: tls_switch_ns 'fast' is neither a number nor 'unavailable'"
f=$(forced novalue "${lines[@]}" "xsavec")
expect_error "$f" "line 10: 'xsavec' without a value"
f=$(forced negative "${lines[@]}" "null_syscall_ns -5")
expect_error "$f" "null_syscall_ns '-5' is neither"
expect_error "$d/nonexistent" "XSC_HOST_PROFILE=$d/nonexistent: No such file or directory"
err=$(XSC_HOST_PROFILE=$d/missing "$xsc" run -- true 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q "^xsc run: XSC_HOST_PROFILE=$d/missing: missing" <<<"$err" ||
	bad "xsc run with a bad profile: exit $rc, '$err'"
# the cache's own format forces as well
if [ -z "$filtered" ]; then
	XSC_HOST_PROFILE=$c/host-profile "$xsc" info >/dev/null || bad "the cache file as a forced profile"
fi

[ "$fail" -eq 0 ] && echo ok
exit "$fail"
