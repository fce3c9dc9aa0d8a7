#!/usr/bin/env bash
# The packages' check (make test, after the install check): builds the
# .deb files (scripts/make-deb.sh), installs them with apt, and from /usr
#  - libxsc0's symbols file names every symbol of src/xsc.map, in its node,
#  - every file `cmake --install` put in the staging tree is in a package,
#  - a consumer builds with pkg-config (shared, static) and with
#    find_package(xsc CONFIG) (xsc::xsc, xsc::static), and runs,
#  - /usr/bin/xsc run finds the packaged shim and runs programs on it,
# then purges them and checks that no file of theirs is left.  lintian, when
# installed, must report no error.  Needs root and apt; skips (exit 0, one
# line) without them.  Refuses (exit 1) when libxsc0, libxsc-dev or xsc is
# installed already: that install is not this check's to replace.
#   scripts/deb-check.sh BUILD_DIR
set -euo pipefail
build=$(cd "${1:?usage: scripts/deb-check.sh BUILD_DIR}" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
pkgs=(libxsc0 libxsc-dev xsc libxsc0-dbgsym)
fail() { echo "deb-check: $*"; exit 1; }
if [ "$(id -u)" != 0 ]; then echo "deb-check: skipped: not root (apt-get install)"; exit 0; fi
if ! command -v apt-get >/dev/null || ! command -v dpkg-shlibdeps >/dev/null; then
	echo "deb-check: skipped: needs apt-get and dpkg-dev"; exit 0
fi
for p in "${pkgs[@]}"; do
	st=$(dpkg-query -W -f='${db:Status-Status} ${Version}' "$p" 2>/dev/null || true)
	if [ -n "$st" ] && [ "${st%% *}" != not-installed ]; then
		echo "deb-check: $p is installed already ($st); not replacing it (apt-get purge ${pkgs[*]} first)"
		exit 1
	fi
done

timeout 600 "$src/scripts/make-deb.sh" "$build" >/dev/null || fail "make-deb.sh failed"
arch=$(dpkg --print-architecture)
debs=()	# make-deb.sh leaves one version of each
for p in "${pkgs[@]}"; do debs+=("$build/${p}_"*"_$arch.deb"); done
version=$(dpkg-deb -f "${debs[0]}" Version)

# libxsc0's symbols file names every symbol of src/xsc.map in its node
want=$(awk '/^XSC_[0-9.]+ *\{/ { node = $1 }
	/^ *xsc_/ { gsub(/;/, " "); for (i = 1; i <= NF; i++) print $i "@" node }' "$src/src/xsc.map" | sort)
have=$(dpkg-deb -I "${debs[0]}" symbols | awk '$1 ~ /^xsc_/ { print $1 }' | sort)
if [ "$want" != "$have" ]; then
	diff <(echo "$want") <(echo "$have") | sed 's/^/  /' || true
	fail "libxsc0's symbols file differs from src/xsc.map (< map, > symbols)"
fi

tmp=$(mktemp -d /tmp/xsc-deb-check.XXXXXX)
installed=0
cleanup() {
	if [ $installed = 1 ]; then
		apt-get purge -y -qq -o DPkg::Lock::Timeout=120 "${pkgs[@]}" >/dev/null 2>&1 || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

# lintian first: it reads the .deb files, nothing is installed yet
lint=not-installed
if command -v lintian >/dev/null; then
	lintian --fail-on error "${debs[@]}" >"$tmp/lintian" 2>&1 || {
		grep '^E:' "$tmp/lintian"; fail "lintian reports errors"; }
	lint="$(grep -c '^W:' "$tmp/lintian" || true) warnings"
fi

export DEBIAN_FRONTEND=noninteractive
installed=1
timeout 300 apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=120 \
	"${debs[@]}" >"$tmp/apt" 2>&1 || { cat "$tmp/apt"; fail "apt-get install failed"; }
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${db:Status-Status}' "$p" | grep -qx installed || fail "$p not installed"
	dpkg -L "$p" >"$tmp/files.$p"
done

# every file `cmake --install` wrote (its manifest: the paths under /usr,
# without DESTDIR) is in a package; make-deb.sh gzips the man pages
while IFS= read -r f || [ -n "$f" ]; do
	case $f in /usr/share/man/*) [[ $f == *.gz ]] || f=$f.gz ;; esac
	grep -qxF "$f" "$tmp"/files.* || fail "$f is installed by cmake but in no package"
	[ -e "$f" ] || [ -L "$f" ] || fail "$f is listed by dpkg -L but absent"
done <"$build/deb/build/install_manifest.txt"
# (grep >/dev/null, not -q, after a pipe: -q would end the writer early
# with SIGPIPE, which pipefail reports as a failure)
ldconfig -p | grep 'libxsc\.so\.0 ' >/dev/null || fail "ldconfig does not know libxsc.so.0"

# consumers, from the system's paths alone
unset PKG_CONFIG_PATH CMAKE_PREFIX_PATH
c=$src/tests/install/consumer.c
cc -o "$tmp/pc-shared" "$c" $(pkg-config --cflags --libs xsc)
cc -o "$tmp/pc-static" "$c" $(pkg-config --cflags xsc) \
	"$(pkg-config --variable=libdir xsc)/libxsc.a" $(pkg-config --static --libs-only-l xsc | sed 's/-lxsc //')
cmake -S "$src/tests/install" -B "$tmp/cm" >"$tmp/cmake.log" 2>&1 || { cat "$tmp/cmake.log"; fail "find_package(xsc) failed"; }
cmake --build "$tmp/cm" >>"$tmp/cmake.log" 2>&1 || { cat "$tmp/cmake.log"; fail "CMake consumer did not build"; }
for b in pc-shared pc-static cm/consumer-shared cm/consumer-static; do
	"$tmp/$b" || fail "$b failed"
done
readelf -d "$tmp/pc-shared" | grep 'NEEDED.*\[libxsc\.so\.0\]' >/dev/null || fail "pc-shared does not need libxsc.so.0"
readelf -d "$tmp/cm/consumer-static" | grep 'NEEDED.*libxsc' >/dev/null && fail "xsc::static linked libxsc.so"

# xsc run from the package: the shim at /usr/bin/../lib/<multiarch>
[ "$(command -v xsc)" = /usr/bin/xsc ] || fail "xsc is not /usr/bin/xsc"
(cd / && xsc run -- /bin/true) || fail "xsc run -- /bin/true failed"
f=/etc/hostname; [ -s $f ] || f=/etc/os-release
want=$(cat $f)
have=$(cd / && xsc run -- cat $f) || fail "xsc run -- cat $f failed"
[ "$have" = "$want" ] || fail "xsc run -- cat $f gave '$have', want '$want'"
printf '#include <pthread.h>\n#include <stdio.h>\nstatic void *f(void *a) { puts("run-ok"); return a; }\nint main(void) { pthread_t t; pthread_create(&t, 0, f, 0); return pthread_join(t, 0); }\n' >"$tmp/thr.c"
cc -pthread -o "$tmp/thr" "$tmp/thr.c"
out=$(xsc run -v -- "$tmp/thr" 2>&1) || true
if ! echo "$out" | grep -q '^run-ok$' || ! echo "$out" | grep -q 'threads as fibers'; then
	echo "$out"; fail "packaged xsc run did not engage the shim"
fi

# gdb from the packages: the auto-loaded script, the libraries' debug
# information by build id, a program's threads as fibers
if command -v gdb >/dev/null; then
	printf '#include <pthread.h>\n#include <unistd.h>\nstatic int p[2];\nstatic void *f(void *a) { char c; return read(p[0], &c, 1) == 1 ? a : 0; }\nint main(void) { pthread_t t; if (pipe(p)) return 1; pthread_create(&t, 0, f, 0); sleep(30); return 0; }\n' >"$tmp/blk.c"
	cc -pthread -o "$tmp/blk" "$tmp/blk.c"
	(cd / && exec xsc run -- "$tmp/blk") &
	bpid=$!
	sleep 2
	pid=$(pgrep -P $bpid -f "$tmp/blk" || echo $bpid)
	out=$(timeout 120 gdb -q -batch -p "$pid" -ex 'info xsc-fibers' 2>&1) || true
	kill -KILL $bpid $pid 2>/dev/null; wait $bpid 2>/dev/null || true
	if ! echo "$out" | grep -q '^2 fibers' || ! echo "$out" | grep -q 'in read(fd='; then
		echo "$out" | tail -8; fail "gdb did not list the fibers of a program under the packaged xsc run"
	fi
fi

# purge: nothing of the packages' is left
installed=0
timeout 300 apt-get purge -y -qq -o DPkg::Lock::Timeout=120 "${pkgs[@]}" >"$tmp/apt" 2>&1 ||
	{ cat "$tmp/apt"; fail "apt-get purge failed"; }
for p in "${pkgs[@]}"; do
	st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ -z "$st" ] || [ "$st" = not-installed ] || fail "$p is still $st after purge"
	while IFS= read -r f; do
		[ -d "$f" ] && [ ! -L "$f" ] && continue	# shared directories stay
		if [ -e "$f" ] || [ -L "$f" ]; then fail "$f left after purge"; fi
	done <"$tmp/files.$p"
done
for d in /usr/lib/*/cmake/xsc /usr/share/doc/libxsc0 /usr/share/doc/libxsc-dev /usr/share/doc/xsc \
	/usr/share/doc/libxsc0-dbgsym; do
	[ ! -e "$d" ] || fail "$d left after purge"
done
left=$(ls -d /usr/lib/libxsc* /usr/lib/*/libxsc* 2>/dev/null || true)
[ -z "$left" ] || fail "left after purge: $left"
ldconfig -p | grep 'libxsc\.so' >/dev/null && fail "ldconfig still lists libxsc"
echo "deb-check: ok (${pkgs[*]} $version: installed, pkg-config and CMake consumers run, xsc run from /usr/bin, its fibers in gdb, purged clean; lintian: $lint)"
