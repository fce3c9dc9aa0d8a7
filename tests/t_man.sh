#!/bin/bash
# The manual pages (man/): mandoc's lint finds no warning or error in any
# page, and the pages cover what the code offers, read from the code so a
# new function, variable or option without its documentation fails here:
#  (a) every symbol src/xsc.map exports is named by an .Nm in the NAME
#      section of a section 3 page (stricter than a .Fn in the SYNOPSIS:
#      the install makes its link from the .Nm lines, CMakeLists.txt);
#  (b) every XSC_* variable the code reads (getenv or secure_getenv in
#      src/, tools/, bench/, include/) is an .It Ev entry of the
#      ENVIRONMENT section of xsc.1 or xsc.3;
#  (c) every option in the command's option tables (strcmp against
#      "-x"/"--xyz", struct option tables, getopt strings in tools/ and
#      bench/) is an .Fl in xsc.1, and every experiment of
#      bench/experiments.c a .Cm there;
#  (d) installed from the build directory ($1, `cmake --install` into a
#      scratch prefix), every page is in man1 or man3 and every exported
#      symbol's name opens a page (its own or a .so link to its group's).
# Skips (77) only when mandoc is missing.
# xsc-test: timeout=180
build=${1:?usage: t_man.sh BUILD_DIR}
if ! command -v mandoc >/dev/null; then
	echo "mandoc not installed (Debian package mandoc; scripts/deps.sh test installs it)"
	exit 77
fi
src=$(cd "$(dirname "$0")/.." && pwd)
man=$src/man
fail=0
bad() { echo "FAIL: $*"; fail=1; }
shopt -s nullglob
pages=("$man"/*.1 "$man"/*.3)
shopt -u nullglob
for p in xsc.1 xsc.3; do
	[ -f "$man/$p" ] || { echo "FAIL: no $man/$p"; exit 1; }
done

# -W warning: warnings and errors fail, style hints do not (one of them
# is "referenced manual not found", which depends on what the host has
# installed, not on the page).
lint=$(mandoc -T lint -W warning "${pages[@]}" 2>&1)
rc=$?
if [ "$rc" -ne 0 ] || [ -n "$lint" ]; then
	bad "mandoc -T lint -W warning (exit $rc):"; echo "$lint"
else
	echo "ok lint: ${#pages[@]} pages"
fi

# section SECTION FILE...: the lines of that .Sh section of each file
section() {
	local s=$1; shift
	awk -v s="$s" '/^\.Sh /{ on = ($2 == s) } on' "$@"
}

# (a) exported symbols against the NAME sections
exported=$(grep -v '^[[:space:]]*/\?\*' "$src/src/xsc.map" |
	   grep -oE '\bxsc_[a-z0-9_]+\b' | sort -u)
[ -n "$exported" ] || bad "no symbols read from src/xsc.map"
named=$(section NAME "$man"/*.3 | awk '$1 == ".Nm" { print $2 }' | sort -u)
n=0
for s in $exported; do
	n=$((n + 1))
	grep -qx "$s" <<<"$named" || bad "$s (src/xsc.map) is named (.Nm) in no section 3 page's NAME"
done
echo "checked (a): $n exported symbols"

# (b) variables read by the code against the ENVIRONMENT sections
vars=$(cd "$src" && grep -rhoE '(secure_)?getenv\("XSC_[A-Z0-9_]+"' src tools bench include |
       grep -oE 'XSC_[A-Z0-9_]+' | sort -u)
[ -n "$vars" ] || bad "no XSC_ variables found in the sources"
documented=$(section ENVIRONMENT "$man/xsc.1" "$man/xsc.3" |
	     awk '$1 == ".It" && $2 == "Ev" { print $3 }' | sort -u)
n=0
for v in $vars; do
	n=$((n + 1))
	grep -qx "$v" <<<"$documented" ||
		bad "$v is read by the code ($(cd "$src" && grep -rlE "getenv\(\"$v\"" src tools bench include | paste -sd ' ')) but is no .It Ev in the ENVIRONMENT of xsc.1 or xsc.3"
done
echo "checked (b): $n variables"

# (c) the command's options and experiments against xsc.1
cli=$(cd "$src" && ls tools/*.c tools/*/*.c bench/*.c 2>/dev/null)
opts=$(cd "$src" && {
	grep -ohE 'strcmp\([a-zA-Z_]+(\[[^]]*\])?, "-{1,2}[a-zA-Z][a-zA-Z0-9-]*"\)' $cli |
		grep -oE '"-[^"]*"' | tr -d '"'
	# struct option tables: { "name", has_arg, flag, val }
	for f in $(grep -l 'struct option' $cli); do
		grep -ohE '\{ *"[a-z][a-z0-9-]*", *[0-2] *,' "$f" |
			grep -oE '"[^"]*"' | tr -d '"' | sed 's/^/--/'
	done
	# getopt strings: each letter a short option
	grep -ohE 'getopt(_long)? *\([^"]*"[^"]*"' $cli | sed 's/.*"\([^"]*\)"$/\1/' |
		tr -d '+:-' | grep -o . | sed 's/^/-/'
} | sort -u)
n=0
for o in $opts; do
	n=$((n + 1))
	grep -qE "(^\.|[ ])Fl ${o#-}( |$)" "$man/xsc.1" || bad "option $o (the CLI's option tables) is not an .Fl in xsc.1"
done
exps=$(grep -oE '^[[:space:]]*\{ "[a-z0-9-]+", xsc_bench_' "$src/bench/experiments.c" |
       grep -oE '"[^"]*"' | tr -d '"')
for e in $exps all; do
	n=$((n + 1))
	grep -qE "(^\.|[ ])Cm ([a-z0-9-]+ , )*$e( |$)" "$man/xsc.1" || bad "experiment '$e' (bench/experiments.c) is not a .Cm in xsc.1"
done
echo "checked (c): $n options and experiments"

# (d) what `cmake --install` puts where man finds it
if [ -f "$build/cmake_install.cmake" ]; then
	tmp=$(mktemp -d) || exit 1
	trap 'rm -rf "$tmp"' EXIT
	if ! cmake --install "$build" --prefix "$tmp/p" >"$tmp/log" 2>&1; then
		bad "cmake --install failed"; tail -n 20 "$tmp/log"
	else
		mandir=$(dirname "$(find "$tmp/p" -type d -name man3 | head -n 1)")
		[ "$mandir" != . ] || bad "no man3 directory installed"
		for p in "${pages[@]}"; do
			b=$(basename "$p")
			[ -f "$mandir/man${b##*.}/$b" ] || bad "$b not installed in man${b##*.}"
		done
		n=0
		for s in $exported; do
			n=$((n + 1))
			out=$(cd "$mandir" && mandoc -T ascii "man3/$s.3" 2>&1 | sed 's/.\x08//g')
			grep -q "^NAME" <<<"$out" && grep -qw "$s" <<<"$out" ||
				bad "man3/$s.3 does not open a page naming $s: $(head -c 200 <<<"$out")"
		done
		echo "checked (d): ${#pages[@]} pages and $n names installed under ${mandir#"$tmp/p/"}"
	fi
else
	echo "not checked (d): $build has no cmake_install.cmake"
fi
[ "$fail" -eq 0 ] && echo "PASS"
exit "$fail"
