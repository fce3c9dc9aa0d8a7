#!/usr/bin/env bash
# Do no harm (sched/syscalls.c made_here): under `xsc run` a thread with
# nothing to batch with makes its calls as natively, and each rule that
# decides direct or posted does what it says.  tests/tp/tp_direct checks
# the results (each case against the kernel's); here the counts `xsc run
# -v` prints of which way the calls went, on each executor with a ring:
#   - two vcpus: the reads and writes on non-blocking descriptors (by
#     flags, fcntl, ioctl) and MSG_DONTWAIT are made alone (20,000 of
#     them: the writes to the blocking end of the fcntl and ioctl pairs
#     are posted), the epoll waits by the only thread of a vcpu (2,000),
#     the reads that must wait (flag cleared, number reused) are posted;
#   - one vcpu (taskset), where a thread keeps yielding through the last
#     case: its 4000 calls are posted with others to batch;
#   - a host where a system call costs more than a call posted alone
#     (XSC_HOST_PROFILE): none made alone, and -v says the rule is off;
#   - `tp_direct disk`, calls that wait for nothing but the disk (a
#     pread, fstat, open, read and close of a regular file, 6,000 in
#     all): none posted, here (made alone, or by this host's route), and
#     on a host where a system call costs 1,100 ns and one posted alone
#     1,250 ns all of them made alone; the thread is the only one of its
#     vcpu, so its 1,000 opens are made without a look at the path (by
#     the only thread; tp_sigfifo checks that a signal still ends such
#     an open's wait);
#   - `tp_direct sleeper`, on one vcpu: the main thread's 2,000 epoll
#     waits made by itself while another thread sleeps (nanosleep, a
#     timed condition wait: a sleep in flight whose end is known), in
#     slices that end before the sleep's end; the sleeper still wakes on
#     time (tp_direct checks that, on uring: on sqpoll the poller times
#     the completions, which load delays);
#   - `tp_direct transfer`, two threads passing a byte back and forth
#     through blocking pipes and a socket pair, on two vcpus under AUTO:
#     each thread is the only one of its vcpu, and its 4,000 reads and
#     writes, each of which may wait for the other, are made by itself
#     (tp_sigread checks that a signal ends such a wait as natively);
#     none where a system call costs more than one posted alone;
#   - `tp_direct parked`, on two vcpus under AUTO: a server's epoll_wait
#     and then its read of a pipe, on a vcpu where another thread waits
#     on a condition variable, are made whole all the same, and each of
#     20 signals of the condition during each is answered within 2 s
#     (tp_direct): the readied thread stops the server's call
#     (ops->stop_held), which is posted, or its rest; with every signal
#     blocked in every thread (`parkedmask`), where the stop's signal
#     could not land, every wake is answered all the same;
#   - `tp_direct inflight`, on one vcpu under AUTO: a thread's read of a
#     blocking pipe is in flight on the ring while the main thread's
#     epoll_wait is made whole (or the other way round), and each of 20
#     bytes a child writes ends the wait within 2 s: the read's
#     completion stops the wait (ringwatch.c; before, such a wait was a
#     look and a post); -v must count 20 or more such whole calls and a
#     stop (none before kernel 6.1: no DEFER_TASKRUN ring);
#   - `tp_direct live`: a thread's 3,000 non-blocking reads, made alone,
#     appear in -v's line for that thread, which is still alive when
#     the process exits (a server that SIGTERM ends never joins its
#     threads, and -v named only the exiting thread and the ended ones).
# Exit 0 pass, 1 fail, 77 skip.
# xsc-test: timeout=300
set -u
build=$(cd "${1:?usage: t_direct.sh BUILD_DIR}" && pwd)
xsc=$build/xsc prog=$build/tests/tp/tp_direct
here=$(cd "$(dirname "$0")" && pwd)
[ -f "$build/libxsc-preload.so" ] || { echo "skip: no preload library (sanitizer build)"; exit 77; }
[ -x "$prog" ] || { echo "skip: $prog not built"; exit 77; }
[ "$(nproc)" -ge 2 ] || { echo "skip: one CPU allowed (the two-vcpu case needs two)"; exit 77; }
. "$here/ringrun_lib.sh"
need_ring_run "$xsc"
tmp=$(mktemp -d /tmp/t_direct.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

# way LOG FIELD: the process's count of one way ("made alone", ...)
way() {
	local line
	line=$(grep "xsc run: the threads' calls:" "$1") || { echo -1; return; }
	case $2 in
	posted) sed 's/.*calls: \([0-9]*\) posted (may wait).*/\1/' <<<"$line" ;;
	alone) sed 's/.*cannot wait for a peer: \([0-9]*\) made alone.*/\1/' <<<"$line" ;;
	batched) sed 's/.* \([0-9]*\) posted with others to batch.*/\1/' <<<"$line" ;;
	sole) sed 's/.*waits: \([0-9]*\) made by the only thread.*/\1/' <<<"$line" ;;
	route) sed 's/.* \([0-9]*\) made by the caller by route.*/\1/' <<<"$line" ;;
	esac
}

# run LABEL [PREFIX...]: tp_direct (its arguments in $targs) under xsc
# run -v; its output must be the native run's
targs=""
run() {
	local label=$1
	shift
	timeout -k 5 40 "$@" "$xsc" run -v -- "$prog" $targs >"$tmp/$label.out" 2>"$tmp/$label.err"
	local rc=$?
	if [ $rc -ne 0 ] || ! cmp -s "$tmp/native$targs.out" "$tmp/$label.out"; then
		bad "$label: exit $rc, output differs from native:"
		diff "$tmp/native$targs.out" "$tmp/$label.out" | head -5
		return 1
	fi
}

# a host where a system call costs more than a call posted alone
printf '%s\n' "null_syscall_ns 2000" "posted_batch1_ns 1250" "posted_batch32_ns 100" \
	"posted_async_batch32_ns 400" "tls_switch_ns 1100" "thread_switch_ns 4000" \
	"cross_core_wake_ns 30000" "xsave_bytes 2696" "xsavec 1" >"$tmp/dear"
"$prog" >"$tmp/native.out" || { echo "FAIL: natively: exit $?"; cat "$tmp/native.out"; exit 1; }
"$prog" disk >"$tmp/nativedisk.out" || { echo "FAIL: natively, disk: exit $?"; cat "$tmp/nativedisk.out"; exit 1; }
"$prog" sleeper >"$tmp/nativesleeper.out" || { echo "FAIL: natively, sleeper: exit $?"; cat "$tmp/nativesleeper.out"; exit 1; }
"$prog" transfer >"$tmp/nativetransfer.out" || { echo "FAIL: natively, transfer: exit $?"; cat "$tmp/nativetransfer.out"; exit 1; }
printf '%s\n' "null_syscall_ns 1100" "posted_batch1_ns 1250" "posted_batch32_ns 100" \
	"posted_async_batch32_ns 400" "tls_switch_ns 1100" "thread_switch_ns 4000" \
	"cross_core_wake_ns 30000" "xsave_bytes 2696" "xsavec 1" >"$tmp/dear-alone"
for b in ${XSC_TP_BACKENDS:-uring sqpoll}; do
	[ "$b" = worker ] && continue	# no ring: posting costs a thread switch, it always is
	export XSC_BACKEND=$b
	run "$b" env XSC_THREADS=2 taskset -c 0,1 || continue
	a=$(way "$tmp/$b.err" alone) s=$(way "$tmp/$b.err" sole) p=$(way "$tmp/$b.err" posted)
	[ "$a" -ge 20000 ] || bad "$b, two vcpus: $a calls made alone (want >= 20000)"
	[ "$s" -ge 2000 ] || bad "$b, two vcpus: $s waits by the only thread of a vcpu (want >= 2000)"
	[ "$p" -ge 3 ] || bad "$b, two vcpus: $p posted (want >= 3: the reads that wait)"
	run "$b-one" taskset -c 0 || continue
	n=$(way "$tmp/$b-one.err" batched)
	[ "$n" -ge 2000 ] || bad "$b, one vcpu and a yielding thread: $n batched (want >= 2000)"
	run "$b-dear" env XSC_HOST_PROFILE="$tmp/dear" XSC_THREADS=2 taskset -c 0,1 || continue
	n=$(way "$tmp/$b-dear.err" alone)
	[ "$n" -eq 0 ] || bad "$b, a system call dearer than a lone posted call: $n made alone (want 0)"
	grep -q "nothing is posted (off): a system call costs 2000 ns here" "$tmp/$b-dear.err" ||
		bad "$b, dear: -v does not say the rule is off"
	# on SQPOLL the poller's rounds time the sleeps' completions, and
	# the suite's other lane delays them, with or without this rule
	# (6 of 20 sleeps 5 ms late in one make test): counts only there
	untimed=""; [ "$b" = sqpoll ] && untimed=TP_SLEEPER_UNTIMED=1
	targs=sleeper
	if run "$b-sleeper" env XSC_THREADS=1 $untimed taskset -c 0,1; then
		n=$(way "$tmp/$b-sleeper.err" sole)
		[ "$n" -ge 1000 ] || bad "$b, one vcpu, a thread asleep: $n waits by the only thread (want >= 1000 of 2,000; none before)"
		echo "$b: one vcpu, a thread asleep: $n waits by the only thread"
	fi
	targs=""
	echo "$b: two vcpus: $a made alone, $s waits by the only thread, $p posted;" \
		"one vcpu: $(way "$tmp/$b-one.err" batched) batched"
	targs=disk
	run "$b-disk" taskset -c 0 && n=$(way "$tmp/$b-disk.err" alone) &&
		{ [ "$n" -eq 0 ] || bad "$b forced, disk calls: $n made alone (want 0: the io_uring form)"; }
	targs=""
done

# Calls that wait for nothing but the disk, under AUTO (a forced backend
# posts them in io_uring's form, above)
unset XSC_BACKEND
targs=disk
if run auto-disk taskset -c 0; then
	a=$(way "$tmp/auto-disk.err" alone) r=$(way "$tmp/auto-disk.err" route) p=$(way "$tmp/auto-disk.err" posted)
	s=$(way "$tmp/auto-disk.err" sole)
	[ "$p" -le 10 ] || bad "auto, disk calls: $p posted (want <= 10: they wait for no peer)"
	[ $((a + r + s)) -ge 6000 ] || bad "auto, disk calls: $a made alone, $r by route, $s by the only thread (want >= 6000)"
	[ "$s" -ge 1000 ] || bad "auto, disk calls: $s opens by the only thread of the vcpu (want >= 1000: no look at the path)"
	echo "auto: disk: $a made alone, $r by route, $s by the only thread, $p posted"
fi
if run auto-disk-dear env XSC_HOST_PROFILE="$tmp/dear-alone" taskset -c 0; then
	n=$(way "$tmp/auto-disk-dear.err" alone) s=$(way "$tmp/auto-disk-dear.err" sole)
	[ $((n + s)) -ge 6000 ] && [ "$s" -ge 1000 ] || bad "auto, disk calls, a system call dearer than a posted one but cheaper than one posted alone: $n made alone, $s by the only thread (want >= 6000, the opens >= 1000)"
	echo "auto, system calls dear: disk: $n made alone, $s by the only thread"
fi
if run auto-disk-dearer env XSC_HOST_PROFILE="$tmp/dear" taskset -c 0; then
	n=$(way "$tmp/auto-disk-dearer.err" alone) s=$(way "$tmp/auto-disk-dearer.err" sole)
	[ "$n" -eq 0 ] && [ "$s" -eq 0 ] || bad "auto, disk calls, a system call dearer than one posted alone: $n made alone, $s by the only thread (want 0)"
fi
targs=transfer
if run auto-transfer env XSC_THREADS=2 taskset -c 0,1; then
	s=$(way "$tmp/auto-transfer.err" sole) p=$(way "$tmp/auto-transfer.err" posted)
	[ "$s" -ge 8000 ] || bad "auto, transfers: $s made by the only thread of a vcpu (want >= 8000)"
	echo "auto: transfers: $s by the only thread of a vcpu, $p posted"
fi
if run auto-transfer-dear env XSC_HOST_PROFILE="$tmp/dear" XSC_THREADS=2 taskset -c 0,1; then
	s=$(way "$tmp/auto-transfer-dear.err" sole)
	[ "$s" -eq 0 ] || bad "auto, transfers, a system call dearer than one posted alone: $s by the only thread (want 0)"
fi
targs=parked
"$prog" parked >"$tmp/nativeparked.out" || { echo "FAIL: natively, parked: exit $?"; cat "$tmp/nativeparked.out"; exit 1; }
if run auto-parked env XSC_THREADS=2 taskset -c 0,1; then
	# the server's wait and its read, beside a thread parked on a
	# condition, made whole: a thread other than the main one with two
	# calls made so (its line is "thread TID:", the main thread's TID
	# the process id)
	mainpid=$(sed -n 's/^xsc run: process \([0-9]*\): .* calls posted.*/\1/p' "$tmp/auto-parked.err" | head -n 1)
	n=$(grep "xsc run: thread [0-9]*: " "$tmp/auto-parked.err" | grep -v "thread ${mainpid:-none}:" |
		sed 's/.*waits: \([0-9]*\) made by the only thread.*/\1/' | sort -n | tail -n 1)
	[ "${n:-0}" -ge 2 ] ||
		bad "auto, parked: the server's wait and read beside a parked thread: ${n:-no line} made whole (want 2)"
	echo "auto: parked: the server made ${n:-0} calls whole beside a parked thread; every wake answered"
fi
targs=parkedmask
"$prog" parkedmask >"$tmp/nativeparkedmask.out" || { echo "FAIL: natively, parkedmask: exit $?"; cat "$tmp/nativeparkedmask.out"; exit 1; }
if run auto-parkedmask env XSC_THREADS=2 taskset -c 0,1; then
	echo "auto: parked, every signal blocked: every wake answered"
fi
targs=inflight
"$prog" inflight >"$tmp/nativeinflight.out" || { echo "FAIL: natively, inflight: exit $?"; cat "$tmp/nativeinflight.out"; exit 1; }
if run auto-inflight env XSC_THREADS=1 taskset -c 0; then
	# the waits made whole beside the other thread's call in flight,
	# and stopped by its completion (ringwatch.c): where the vcpu's
	# ring defers its completions to its thread (DEFER_TASKRUN, 6.1)
	line=$(grep "xsc run: calls made whole beside calls in flight on the ring:" "$tmp/auto-inflight.err")
	w=$(sed -n 's/.*on the ring: \([0-9]*\), \([0-9]*\) of them stopped.*/\1/p' <<<"$line")
	st=$(sed -n 's/.*on the ring: \([0-9]*\), \([0-9]*\) of them stopped.*/\2/p' <<<"$line")
	kv=$(uname -r | sed 's/^\([0-9]*\)\.\([0-9]*\).*/\1 \2/')
	if [ -z "$line" ] && [ "$(printf '%d%03d' $kv)" -lt 6001 ]; then
		echo "auto: inflight: every wait ended with its byte (kernel $(uname -r), before DEFER_TASKRUN: none made whole)"
	elif [ "${w:-0}" -lt 20 ] || [ "${st:-0}" -lt 1 ]; then
		bad "auto, inflight: ${w:-0} calls made whole beside a call in flight, ${st:-0} stopped by its completion (want >= 20 and >= 1)"
	else
		echo "auto: inflight: every wait ended with its byte; $w calls made whole beside a call in flight, $st stopped by its completion"
	fi
fi
targs=live
"$prog" live >"$tmp/nativelive.out" || { echo "FAIL: natively, live: exit $?"; cat "$tmp/nativelive.out"; exit 1; }
if run live env XSC_BACKEND=uring XSC_THREADS=1 taskset -c 0; then
	# made alone, or batched (the first, while main was still runnable)
	n=$(grep "xsc run: thread [0-9]*: " "$tmp/live.err" |
		sed 's/.*cannot wait for a peer: \([0-9]*\) made alone, \([0-9]*\) posted with.*/\1 + \2/' |
		while read -r e; do echo $((e)); done | sort -n | tail -1)
	[ "${n:-0}" -ge 3000 ] ||
		bad "live: no thread's line with its 3,000 reads (most: ${n:-none})"
	echo "live: the reader's line: ${n:-none} reads made alone or batched"
fi
targs=""

[ $fails -eq 0 ] && echo "PASS" && exit 0
exit 1
