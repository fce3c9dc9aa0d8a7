#!/bin/bash
# The tree's size and layout limits (scripts/layout-check.py): fails on a
# violation that scripts/layout-allow.txt does not list, or one that grew
# past its listed size; prints the listed ones as "still over".
# First the check itself, on a made-up tree: a long function fails it,
# listing it lets it pass, and growing it past the listed size fails again.
# The build directory ($1) is not used: the check reads sources only.
src=$(cd "$(dirname "$0")/.." && pwd)
check=$src/scripts/layout-check.py
command -v python3 >/dev/null || { echo "no python3: layout not checked"; exit 77; }

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bench"
body() { # body N: a C function of N lines, name line to closing brace
	printf 'int f(void)\n{\n\tint x = 0;\n'
	for ((i = 0; i < $1 - 5; i++)); do printf '\tx++;\n'; done
	printf '\treturn x;\n}\n'
}
self() { # self WANT_EXIT WHAT
	python3 "$check" --no-duplicates --allow "$tmp/allow" "$tmp" >"$tmp/out" 2>&1
	local rc=$?
	if [ "$rc" -ne "$1" ]; then
		echo "FAIL self-test, $2: exit $rc, want $1"; cat "$tmp/out"; exit 1
	fi
	echo "ok self-test, $2 (exit $rc)"
}
body 80 >"$tmp/bench/a.c"; : >"$tmp/allow"
self 0 "an 80-line function"
body 81 >"$tmp/bench/a.c"
self 1 "an 81-line function"
grep -q '^bench/a.c:f(): 81 lines' "$tmp/out" || { echo "FAIL self-test: no line for f()"; cat "$tmp/out"; exit 1; }
cp "$tmp/out" "$tmp/allow"
self 0 "the 81-line function allowed"
body 82 >"$tmp/bench/a.c"
self 1 "the allowed function grown to 82 lines"

python3 "$check" "$src"
