#!/usr/bin/env bash
# xcp copies empty, 1-byte, block-sized, odd-sized, multi-megabyte and
# sparse files with every strategy, on every executor ($XSC_TEST_BACKENDS,
# as tests/run.sh's per-backend runs) and multi-call path, one file at a
# time and many into a directory; cmp checks every copy (besides xcp's
# own verification).
# xsc-test: timeout=300
set -eu
build=$1
xcp=$build/examples/xcp/xcp
[ -x "$xcp" ] || { echo "xcp not built"; exit 1; }
d=$(mktemp -d /tmp/t_mc_xcp.XXXXXX)
trap 'rm -rf "$d"' EXIT
: > "$d/empty"
printf x > "$d/one"
head -c 4096 /dev/urandom > "$d/block"
head -c 12345 /dev/urandom > "$d/odd"
head -c $((3 * 1024 * 1024 + 17)) /dev/urandom > "$d/big"
truncate -s 5M "$d/sparse"
printf 'middle' | dd of="$d/sparse" bs=1 seek=2000000 conv=notrunc status=none
files="empty one block odd big sparse"
strategies="plain mc mcloop normal normal-collect wsc-collect normal-rw wsc-rw cfr"
n=0
for be in ${XSC_TEST_BACKENDS:-uring sqpoll worker inline}; do
	for s in $strategies; do
		for p in auto uring worker inline; do
			case $s in mc|mcloop) ;; *) [ $p = auto ] || continue ;; esac
			for f in $files; do
				for bs in 4096 777; do
					rm -f "$d/copy"
					XSC_BACKEND=$be "$xcp" -s $s -p $p -b $bs "$d/$f" "$d/copy" ||
						{ echo "FAIL: $be $s $p $f bs=$bs"; exit 1; }
					cmp -s "$d/$f" "$d/copy" || { echo "DIFF: $be $s $p $f"; exit 1; }
					n=$((n + 1))
				done
			done
		done
		rm -rf "$d/dir" && mkdir "$d/dir"
		(cd "$d" && XSC_BACKEND=$be "$xcp" -s $s $files dir) ||
			{ echo "FAIL: $be $s into a directory"; exit 1; }
		for f in $files; do cmp -s "$d/$f" "$d/dir/$f" || { echo "DIFF: dir $s $f"; exit 1; }; done
	done
done
# a missing source fails cleanly
if "$xcp" "$d/nope" "$d/copy" 2>/dev/null; then echo "FAIL: missing source"; exit 1; fi
echo "ok: $n copies verified"
