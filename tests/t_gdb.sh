#!/usr/bin/env bash
# xsc-test: timeout=300
# tools/gdb/xsc-gdb.py against 100 threads blocked in known calls
# (tests/gdb_blocked.c: 25 each in read, sleep, a mutex and poll), as xsc
# threads linked to libxsc and as a plain pthread program under
# `xsc run`, attached live with gdb -p: `info xsc-fibers` lists them all
# with their call and arguments (each read's own fd, poll's timeout, the
# mutex's futex word) and make_blockers as where each was made, and
# `xsc-fiber N bt` shows the program's function that blocked (block_read,
# block_lock, main's body), leaving the selected thread's frames as they
# were.  Then the same on a core file of the xsc threads program, the
# script loaded by gdb itself from an installed tree, and the clear
# message where libxsc has no debug info.  Exit 0 pass, 1 fail, 77
# skip (no gdb, ptrace not permitted).
set -u
build=$(cd "${1:?usage: t_gdb.sh BUILD_DIR}" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
script=$src/tools/gdb/xsc-gdb.py
api=$build/tests/gdb_blocked_api tpprog=$build/tests/gdb_blocked
unset XSC_BACKEND XSC_THREADS XSC_VERBOSE XSC_TRANSPARENT XSC_RUN_PID
command -v gdb >/dev/null || { echo "skip: gdb is not installed (apt-get install gdb)"; exit 77; }
[ -x "$api" ] && [ -x "$tpprog" ] || { echo "FAIL: $api or $tpprog not built"; exit 1; }

tmp=$(mktemp -d /tmp/t_gdb.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]}"; do
		kill -KILL "$p" 2>/dev/null
	done
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

gdbrun() { # gdbrun OUT ARGS...: gdb in batch mode, bounded
	local out=$1; shift
	timeout -k 5 90 gdb -nx -q -batch "$@" >"$out" 2>&1
}

# May this process attach to another?  Yama's ptrace_scope 1 and 2 need
# CAP_SYS_PTRACE for a process that is not a descendant, 3 forbids it;
# a container may deny ptrace whatever it says: so try.
yama=/proc/sys/kernel/yama/ptrace_scope
sleep 60 &
probe=$!
pids+=($probe)
gdbrun "$tmp/probe" -p $probe -ex 'info inferiors'
if grep -qi 'ptrace: Operation not permitted\|could not attach' "$tmp/probe"; then
	echo "skip: ptrace is not permitted here ($( [ -r $yama ] &&
		echo "$yama is $(cat $yama)" || echo "no Yama; a seccomp or capability limit"))"
	exit 77
fi
kill -KILL $probe 2>/dev/null; wait $probe 2>/dev/null

fail=0
bad() { echo "FAIL: $*"; fail=1; }
stop() { kill -KILL "$1" 2>/dev/null; wait "$1" 2>/dev/null; }

# start NAME CMD...: runs CMD in the background until it prints "ready";
# its pid in $prog_pid
start() {
	local name=$1; shift
	"$@" >"$tmp/$name.out" 2>"$tmp/$name.err" &
	prog_pid=$!
	pids+=($prog_pid)
	for _ in $(seq 300); do
		grep -q '^ready$' "$tmp/$name.out" && return 0
		kill -0 $prog_pid 2>/dev/null || break
		sleep 0.1
	done
	echo "FAIL: $name did not get ready"; cat "$tmp/$name.err"
	return 1
}

# The id of the first fiber whose line matches PATTERN in a listing.
fiber_id() {
	awk -v pat="$2" '$0 ~ pat && $1 ~ /^[0-9]+$/ { print $1; exit }' "$1"
}

# check_listing NAME LISTING SLEEP LOCK: the 100 threads, their calls
# and arguments; SLEEP and LOCK are what the sleeps and the mutex waits
# show (a call name, or "parked")
check_listing() {
	local name=$1 l=$2 sleep=$3 lock=$4 n fds
	n=$(sed -n 's/^\([0-9]*\) fibers$/\1/p' "$l")
	[ "${n:-0}" -ge 101 ] || bad "$name: ${n:-no} fibers listed, want 101"
	n=$(grep -Ec '<make_blockers( \+ [0-9]+)?> at gdb_blocked\.c:11[1-4]$' "$l")
	[ "$n" -eq 100 ] || bad "$name: $n fibers made at make_blockers, want 100"
	# "running in": a thread alone on its vcpu makes its call itself
	# (docs/design.md, "Do no harm"), and may be the first reader
	fds=$(grep -Eo '(blocked|running) in read\(fd=[0-9]*,' "$l" | grep -o '[0-9]*' | sort -n | tr '\n' ' ')
	[ "$fds" = "$(seq -s ' ' 500 524) " ] || bad "$name: the reads' fds are '$fds', want 500..524"
	n=$(grep -Ec '(blocked|running) in poll\(pollfd_io=0x[0-9a-f]*, n=1, ms=-1\)' "$l")
	[ "$n" -eq 25 ] || bad "$name: $n fibers in poll(..., n=1, ms=-1), want 25"
	n=$(grep -c "blocked in $sleep(ts_in=0x" "$l")
	[ "$n" -ge 25 ] || bad "$name: $n fibers blocked in $sleep, want 25 (and main)"
	n=$(grep "gdb_blocked.c:113" "$l" | grep -c "$lock")
	[ "$n" -eq 25 ] || bad "$name: $n mutex waiters show '$lock', want 25"
	grep -Eq "the process's first thread|<xsc_main( \+ [0-9]+)?>" "$l" ||
		bad "$name: no first fiber (main) listed"
}

# check_bt NAME FILE FUNCTION: a fiber's backtrace reaches FUNCTION and
# starts in the runtime's switch
check_bt() {
	grep -q "^#0 .*xsc__ctx_switch\|^#0 .*xsc__suspend" "$2" ||
		bad "$1: the backtrace does not start where the fiber switched out: $(head -n 1 "$2")"
	grep -q " $3 (" "$2" || { bad "$1: the backtrace does not show $3:"; sed 's/^/  | /' "$2"; }
}

# live NAME SLEEP LOCK CMD...: everything on a live process
live() {
	local name=$1 sleep=$2 lock=$3 id; shift 3
	start "$name" "$@" || { fail=1; return; }
	gdbrun "$tmp/$name.list" -p $prog_pid -x "$script" -ex 'info xsc-fibers'
	check_listing "$name" "$tmp/$name.list" "$sleep" "$lock"
	local rd lk mn
	rd=$(fiber_id "$tmp/$name.list" 'blocked in read')
	lk=$(fiber_id "$tmp/$name.list" 'gdb_blocked.c:113')
	mn=$(fiber_id "$tmp/$name.list" "first thread|xsc_main")
	if [ -z "$rd" ] || [ -z "$lk" ] || [ -z "$mn" ]; then
		bad "$name: no read, mutex or main fiber in the listing"; sed 's/^/  | /' "$tmp/$name.list"
		return
	fi
	gdbrun "$tmp/$name.bt" -p $prog_pid -x "$script" \
		-ex 'bt 1' -ex 'echo ==read\n' -ex "xsc-fiber $rd bt" \
		-ex 'echo ==lock\n' -ex "xsc-fiber $lk bt" \
		-ex 'echo ==main\n' -ex "xsc-fiber $mn bt" \
		-ex 'echo ==after\n' -ex 'bt 1'
	sed -n '/^==read$/,/^==lock$/p' "$tmp/$name.bt" | grep -v '^==' >"$tmp/$name.rd"
	sed -n '/^==lock$/,/^==main$/p' "$tmp/$name.bt" | grep -v '^==' >"$tmp/$name.lk"
	sed -n '/^==main$/,/^==after$/p' "$tmp/$name.bt" | grep -v '^==' >"$tmp/$name.mn"
	check_bt "$name fiber $rd (read)" "$tmp/$name.rd" block_read
	check_bt "$name fiber $lk (mutex)" "$tmp/$name.lk" block_lock
	check_bt "$name fiber $mn (main)" "$tmp/$name.mn" body
	# the thread gdb had selected shows its own frames again
	local before after
	before=$(grep -m1 '^#0 ' "$tmp/$name.bt")
	after=$(sed -n '/^==after$/,$p' "$tmp/$name.bt" | grep -m1 '^#0 ')
	[ -n "$before" ] && [ "$before" = "$after" ] ||
		bad "$name: the selected thread's frame 0 was '$before', after the fiber commands '$after'"
	grep -q 'Traceback\|Python Exception' "$tmp/$name.list" "$tmp/$name.bt" &&
		bad "$name: a Python error: $(grep -h 'Python Exception' "$tmp/$name.list" "$tmp/$name.bt" | head -n 1)"
	kill -0 $prog_pid 2>/dev/null || bad "$name: the program died while gdb looked at it"
	stop $prog_pid
	[ $fail -eq 0 ] && echo "PASS: $name: $(grep -m1 ' fibers$' "$tmp/$name.list"), backtraces of $rd, $lk, $mn"
}

live api nanosleep parked "$api"
if [ -f "$build/libxsc-preload.so" ]; then
	live run nanosleep 'blocked in futex(uaddr=0x[0-9a-f]*, op=128, val=2' \
		"$build/xsc" run -- "$tpprog"
else
	echo "note: no preload library (sanitizer build): xsc run not tested"
fi

# A core file of the xsc threads program, by the kernel (gdb's gcore
# loses fiber stacks next to guard regions: docs/debugging.md).
pattern=$(cat /proc/sys/kernel/core_pattern 2>/dev/null)
case $pattern in
core|core.*)
	mkdir -p "$tmp/cwd"
	(cd "$tmp/cwd" && ulimit -c unlimited && exec "$api" >"$tmp/core.out" 2>&1) &
	cpid=$!
	pids+=($cpid)
	for _ in $(seq 300); do
		grep -q '^ready$' "$tmp/core.out" && break
		kill -0 $cpid 2>/dev/null || break
		sleep 0.1
	done
	kill -ABRT $cpid 2>/dev/null
	wait $cpid 2>/dev/null
	core=$(ls "$tmp"/cwd/core* 2>/dev/null | head -n 1)
	if [ -z "$core" ]; then
		echo "note: no core file written (RLIMIT_CORE, core_pattern '$pattern', or ASan's disable_coredump): core not tested"
	else
		gdbrun "$tmp/core.list" "$api" "$core" -x "$script" -ex 'info xsc-fibers'
		check_listing core "$tmp/core.list" nanosleep parked
		rd=$(fiber_id "$tmp/core.list" 'blocked in read')
		gdbrun "$tmp/core.bt" "$api" "$core" -x "$script" -ex "xsc-fiber ${rd:-2} bt"
		check_bt "core fiber ${rd:-2} (read)" "$tmp/core.bt" block_read
		[ $fail -eq 0 ] && echo "PASS: core file: $(grep -m1 ' fibers$' "$tmp/core.list"), backtrace of ${rd:-2}"
	fi ;;
*)
	echo "note: core_pattern is '$pattern', not a file in the working directory: core not tested" ;;
esac

# Installed, gdb loads the script by itself with the library
# (<auto-load dir>/<the library's real path>-gdb.py: CMakeLists.txt)
if command -v cmake >/dev/null && cmake --install "$build" --prefix "$tmp/inst" >"$tmp/install.log" 2>&1; then
	auto=$tmp/inst/share/gdb/auto-load
	if start installed env LD_LIBRARY_PATH="$tmp/inst/lib" "$api"; then
		gdbrun "$tmp/installed.list" -iex "add-auto-load-scripts-directory $auto" \
			-iex "add-auto-load-safe-path $auto" -p $prog_pid -ex 'info xsc-fibers'
		if grep -q '^101 fibers$' "$tmp/installed.list"; then
			echo "PASS: installed: auto-loaded $(cd "$auto" && find . -name '*-gdb.py' | tr '\n' ' ')"
		else
			bad "installed: the script was not loaded with libxsc:"
			sed 's/^/  | /' "$tmp/installed.list"; ls -R "$auto"
		fi
		stop $prog_pid
	else
		fail=1
	fi
else
	echo "note: cmake --install failed or no cmake: auto-load not tested"; tail -n 3 "$tmp/install.log"
fi

# libxsc without debug info (a Release build): a message, not a traceback
if command -v objcopy >/dev/null; then
	mkdir -p "$tmp/lib"
	real=$(readlink -f "$build/libxsc.so")
	for l in "$build"/libxsc.so*; do
		objcopy --strip-debug "$real" "$tmp/lib/$(basename "$l")"
	done
	if start nodebug env LD_LIBRARY_PATH="$tmp/lib" "$api"; then
		gdbrun "$tmp/nodebug.list" -p $prog_pid -x "$script" -ex 'info xsc-fibers'
		if grep -q 'no debug info for libxsc .*install debug symbols' "$tmp/nodebug.list" &&
		   ! grep -q 'Traceback\|Python Exception' "$tmp/nodebug.list"; then
			echo "PASS: without debug info: $(grep -m1 'no debug info' "$tmp/nodebug.list")"
		else
			bad "without debug info:"; sed 's/^/  | /' "$tmp/nodebug.list"
		fi
		stop $prog_pid
	else
		fail=1
	fi
fi
exit $fail
