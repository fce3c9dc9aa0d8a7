#!/bin/bash
# The tree's size and layout limits (scripts/layout-check.py): fails on a
# violation that scripts/layout-allow.txt does not list, or one that grew
# past its listed size; prints the listed ones as "still over".
# First the check itself, on a made-up tree: a long function fails it,
# listing it lets it pass, and growing it past the listed size fails again;
# then a long README.md, a long opening comment and text naming how the
# code was made each fail it, pass when listed, and pass when put right.
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

want() { # want PATTERN: the check's output has a line matching it
	grep -q "$1" "$tmp/out" || { echo "FAIL self-test: no line $1"; cat "$tmp/out"; exit 1; }
}
body 80 >"$tmp/bench/a.c"; : >"$tmp/allow"
lines() { for ((i = 0; i < $1; i++)); do echo "line $i"; done; }
lines 251 >"$tmp/README.md"
self 1 "a 251-line README.md"
want '^README.md: 251 lines'
cp "$tmp/out" "$tmp/allow"
self 0 "the 251-line README.md allowed"
lines 250 >"$tmp/README.md"; : >"$tmp/allow"
self 0 "a 250-line README.md"

mkdir -p "$tmp/src"
header() { # header N: a C file that opens with a comment of N lines
	printf '\n/*\n'
	for ((i = 0; i < $1 - 2; i++)); do printf ' * what the file is for\n'; done
	printf ' */\nint g;\n'
}
header 21 >"$tmp/src/b.c"
self 1 "a 21-line opening comment"
want '^src/b.c header: 21 lines'
cp "$tmp/out" "$tmp/allow"
self 0 "the 21-line opening comment allowed"
header 20 >"$tmp/src/b.c"; : >"$tmp/allow"
self 0 "a 20-line opening comment"

# the texts are put together here, so that this file does not hold them
mkdir -p "$tmp/docs"
printf 'Fixed for Is%s #12.\n' sue >"$tmp/docs/x.md"
self 1 "an issue number in docs/"
want '^docs/x.md ".*": names how the code was made'
cp "$tmp/out" "$tmp/allow"
self 0 "the issue number allowed"
: >"$tmp/allow"
printf 'Fixed (%s12).\n' '#' >"$tmp/docs/x.md"
self 1 "a pull request number in docs/"
want '^docs/x.md "(.12)": names how the code was made'
printf 'Fixed so that it stays fixed.\n' >"$tmp/docs/x.md"
printf 'Is%s #12 (%s12)\0' sue '#' >"$tmp/docs/x.png"
self 0 "no number in text, one in a binary file"

python3 "$check" "$src"
