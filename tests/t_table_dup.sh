#!/usr/bin/env bash
# t_table_dup.sh BUILD_DIR - a second row for one syscall number in the
# table (src/table/*.h, designated initializers in src/table.c) stops the
# build, in every build type, -Werror or not (CMakeLists.txt: table.c is
# compiled with -Werror=override-init, clang's initializer-overrides).
# The test compiles a copy of src/ with the build's own command for
# table.c (compile_commands.json): unchanged it must compile, with a
# duplicate getppid row appended to table/plain.h it must not, and the
# compiler must name the override.  A plain -Werror is dropped from the
# command, as in a release build.
# xsc-test: timeout=120
set -u
build=$(cd "${1:?usage: t_table_dup.sh BUILD_DIR}" && pwd)
top=$(cd "$(dirname "$0")/.." && pwd)
db=$build/compile_commands.json
[ -f "$db" ] || { echo "FAIL: no $db (CMAKE_EXPORT_COMPILE_COMMANDS)"; exit 1; }
tmp=$(mktemp -d /tmp/t_table_dup.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cp -r "$top/src" "$tmp/src"

# the build's command for src/table.c, on the copy, into a scratch object
python3 - "$db" "$top/src/table.c" "$tmp/src/table.c" "$tmp/table.o" >"$tmp/cmd" <<'PY' || { echo "FAIL: no command for src/table.c in $db"; exit 1; }
import json, shlex, sys
db, orig, copy, obj = sys.argv[1:]
for e in json.load(open(db)):
    if e["file"] == orig:
        args = e.get("arguments") or shlex.split(e["command"])
        out = []
        skip = False
        for a in args:
            if skip:
                out.append(obj); skip = False; continue
            if a == "-o":
                skip = True
            if a == "-Werror":
                continue        # as a release build: warnings stay warnings
            out.append(copy if a == orig else a)
        print(shlex.quote(e["directory"]))
        print(" ".join(shlex.quote(a) for a in out))
        sys.exit(0)
sys.exit(1)
PY
dir=$(eval echo "$(sed -n 1p "$tmp/cmd")")
cmd=$(sed -n 2p "$tmp/cmd")

if ! (cd "$dir" && eval "$cmd") >"$tmp/ok.log" 2>&1; then
	echo "FAIL: the unchanged copy of table.c does not compile:"
	head -n 20 "$tmp/ok.log"
	exit 1
fi
cat >>"$tmp/src/table/plain.h" <<'ROW'
	[SYS_getppid] = {	/* a second row for getppid */
		.args = "",
		.block = XSC_NEVER_BLOCKS,
		.thread = XSC_ANY_THREAD,
		.shim = XSC_SHIM_POST,
	},
ROW
if (cd "$dir" && eval "$cmd") >"$tmp/dup.log" 2>&1; then
	echo "FAIL: a second row for getppid compiled:"
	head -n 20 "$tmp/dup.log"
	exit 1
fi
if ! grep -Eq 'override-init|initializer-overrides' "$tmp/dup.log"; then
	echo "FAIL: the duplicate row failed to compile, but not for the override:"
	head -n 20 "$tmp/dup.log"
	exit 1
fi
echo "PASS: a second row for one number stops the build: $(grep -Em1 'override-init|initializer-overrides' "$tmp/dup.log" | sed 's|.*/src/||')"
exit 0
