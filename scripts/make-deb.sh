#!/usr/bin/env bash
# Builds xsc's Debian packages from this tree, with dpkg-dev's tools and no
# debhelper or network (`make deb`):
#   libxsc0     libxsc.so.0 and libxsc-preload.so (the shim `xsc run` loads),
#               their gdb scripts (tools/gdb, auto-loaded)
#   libxsc-dev  <xsc.h>, libxsc.a, libxsc.so, xsc.pc, the CMake package, man3
#   xsc         the command and its man1 page
#   libxsc0-dbgsym  the libraries' debug information (gdb's fiber commands)
# A build configured for /usr (GNUInstallDirs then picks the multiarch
# libdir, where `xsc run` looks for the shim: ../<libdir> from the binary)
# is installed with DESTDIR into a staging tree, and every staged file goes
# to exactly one package: a file that no rule below claims stops the build,
# so a new install() rule cannot be left out of the packages unnoticed.
# Depends come from dpkg-shlibdeps, libxsc0's symbols file from
# dpkg-gensymbols -c4 against packaging/libxsc0.symbols (a symbol added to
# or removed from src/xsc.map without it stops the build).
#   scripts/make-deb.sh OUT_DIR     writes OUT_DIR/{libxsc0,libxsc-dev,xsc}_*.deb
# DEB_REVISION (default 1) is the Debian revision.
set -euo pipefail
umask 022
out=$(mkdir -p "${1:?usage: scripts/make-deb.sh OUT_DIR}" && cd "$1" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
for t in dpkg-deb dpkg-shlibdeps dpkg-gensymbols; do
	command -v $t >/dev/null || { echo "make-deb: $t missing (apt-get install dpkg-dev)" >&2; exit 1; }
done

version=$(sed -n 's/^project(xsc VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
[ -n "$version" ] || { echo "make-deb: no project(xsc VERSION ...) in CMakeLists.txt" >&2; exit 1; }
debver=$version-${DEB_REVISION:-1}
arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
# the maintainer as dch finds one: DEBFULLNAME/DEBEMAIL, else git's user,
# else the tree's last author
maint_name=${DEBFULLNAME:-$(git -C "$src" config user.name 2>/dev/null || git -C "$src" log -1 --format=%an 2>/dev/null || echo xsc)}
maint_mail=${DEBEMAIL:-$(git -C "$src" config user.email 2>/dev/null || git -C "$src" log -1 --format=%ae 2>/dev/null || echo "$USER@$(hostname -f)")}
maint="$maint_name <$maint_mail>"
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$src" log -1 --format=%ct 2>/dev/null || date +%s)}

# ---- build and stage ------------------------------------------------------
# The project's own release flags (RelWithDebInfo: -O2 -g, what the tests
# run), not dpkg-buildflags' CFLAGS: -fstack-protector reads the canary
# from %fs, which the shim's code can run without (raw clone, signal
# entry).  RELRO from the linker as Debian does.  Only the installed
# targets are built (update when an install() rule names a new target;
# `cmake --install` says which file is missing).
work=$out/deb
bdir=$work/build
stage=$work/stage
cmake -S "$src" -B "$bdir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=/usr \
	-DCMAKE_SHARED_LINKER_FLAGS="-Wl,-z,relro" -DCMAKE_EXE_LINKER_FLAGS="-Wl,-z,relro" >/dev/null
cmake --build "$bdir" -j "$(nproc)" --target xsc xsc_static xsc_preload xsc_cli xsc_table_checked >/dev/null
rm -rf "$stage" "$work/debian"
DESTDIR=$stage cmake --install "$bdir" >/dev/null
[ -d "$stage/usr/lib/$multiarch" ] || { echo "make-deb: nothing installed in /usr/lib/$multiarch" >&2; exit 1; }

# Debian's shapes: man pages gzipped (-n: no name or time, reproducible),
# binaries stripped as dh_strip does, shared objects not executable.
if [ -d "$stage/usr/share/man" ]; then
	find "$stage/usr/share/man" -type f ! -name '*.gz' -exec gzip -9n {} +
	find "$stage/usr/share/man" -type l ! -name '*.gz' | while read -r l; do
		ln -s "$(readlink "$l").gz" "$l.gz" && rm "$l"
	done
fi
# The libraries' debug information goes to libxsc0-dbgsym first, under
# /usr/lib/debug/.build-id where gdb looks it up by build id: the gdb
# script (tools/gdb) reads the runtime's fibers through it.
dbg=$work/dbgsym
rm -rf "$dbg"
for f in "$stage/usr/lib/$multiarch/libxsc.so.$version" "$stage/usr/lib/$multiarch/libxsc-preload.so"; do
	id=$(readelf -n "$f" | sed -n 's/^ *Build ID: //p')
	[ -n "$id" ] || { echo "make-deb: $f has no build id" >&2; exit 1; }
	mkdir -p "$dbg/usr/lib/debug/.build-id/${id:0:2}"
	objcopy --only-keep-debug --compress-debug-sections "$f" \
		"$dbg/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug"
	chmod 0644 "$dbg/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug"
done
find "$stage" -type f \( -name '*.so*' -o -path '*/bin/*' \) ! -name '*.py' -print0 |
	xargs -0 strip --remove-section=.comment --remove-section=.note --strip-unneeded
find "$stage" -type f -name '*.a' -print0 | xargs -0 strip --strip-debug \
	--remove-section=.comment --remove-section=.note --enable-deterministic-archives
find "$stage" -type f -name '*.so*' ! -name '*.py' -exec chmod 0644 {} +

# ---- split: each staged path to one package -------------------------------
# Patterns are relative to the staging root; update with the install rules.
ml=usr/lib/$multiarch
declare -A claim=(
	[libxsc0]="$ml/libxsc.so.0* $ml/libxsc-preload.so usr/share/gdb/auto-load/*"
	[libxsc-dev]="usr/include/* $ml/libxsc.so $ml/libxsc.a $ml/pkgconfig/* $ml/cmake/* usr/share/man/man3/*"
	[xsc]="usr/bin/* usr/share/man/man1/*"
)
pkgs="libxsc0 libxsc-dev xsc libxsc0-dbgsym"
deb=$work/debian	# dpkg-shlibdeps and dpkg-gensymbols want debian/ trees
mkdir -p "$deb"
mkdir -p "$deb/libxsc0-dbgsym"
cp -a "$dbg/usr" "$deb/libxsc0-dbgsym/"
unclaimed=()
while IFS= read -r -d '' f; do
	rel=${f#"$stage"/} owner=
	for p in $pkgs; do
		for pat in ${claim[$p]}; do
			# shellcheck disable=SC2053  # $pat is a glob on purpose
			if [[ $rel == $pat ]]; then owner=$p; break 2; fi
		done
	done
	if [ -z "$owner" ]; then unclaimed+=("/$rel"); continue; fi
	mkdir -p "$deb/$owner/$(dirname "$rel")"
	mv "$f" "$deb/$owner/$rel"
done < <(find "$stage" \( -type f -o -type l \) -print0 | sort -z)
if [ ${#unclaimed[@]} -gt 0 ]; then
	echo "make-deb: installed but in no package (scripts/make-deb.sh, claim):" >&2
	printf '  %s\n' "${unclaimed[@]}" >&2
	exit 1
fi

# ---- control files ----------------------------------------------------------
printf 'Source: xsc\n' >"$deb/control"
for p in $pkgs; do printf '\nPackage: %s\nArchitecture: any\n' "$p" >>"$deb/control"; done
shlibdeps() { # shlibdeps PKG: the shlibs:Depends line of PKG's ELF files
	local files
	mapfile -t files < <(find "debian/$1" -type f \( -name '*.so*' -o -path '*/bin/*' \))
	dpkg-shlibdeps -O -xlibxsc0 "${files[@]}" </dev/null 2>/dev/null | sed -n 's/^shlibs:Depends=//p'
}
date_r=$(date -u -R -d "@$SOURCE_DATE_EPOCH") built=
cd "$work"
for p in $pkgs; do
	d=debian/$p
	mkdir -p "$d/DEBIAN" "$d/usr/share/doc/$p"
	cp "$src/packaging/copyright" "$d/usr/share/doc/$p/copyright"
	printf 'xsc (%s) unstable; urgency=medium\n\n  * Built from the xsc source tree (scripts/make-deb.sh).\n\n -- %s  %s\n' \
		"$debver" "$maint" "$date_r" | gzip -9n >"$d/usr/share/doc/$p/changelog.Debian.gz"
	case $p in
	libxsc0)
		section=libs multi="Multi-Arch: same" depends=$(shlibdeps "$p") suggests=
		summary="exception-less system calls for Linux on io_uring"
		body=" libxsc posts system calls as entries that kernel-side executors (io_uring,
 SQPOLL, worker threads) complete, and runs pthread-style code as fibers
 (M:N) whose blocking calls become such entries.
 .
 This package holds the shared library and libxsc-preload.so, the shim
 that \`xsc run\` loads into unmodified programs." ;;
	libxsc-dev)
		section=libdevel multi="Multi-Arch: same" depends="libxsc0 (= $debver), liburing-dev" suggests=
		summary="exception-less system calls for Linux on io_uring - development files"
		body=" libxsc posts system calls as entries that kernel-side executors complete.
 .
 This package holds the header, the static library, the pkg-config file
 (xsc) and the CMake package (find_package(xsc CONFIG): xsc::xsc,
 xsc::static)." ;;
	libxsc0-dbgsym)
		section=debug multi="Multi-Arch: same" depends="libxsc0 (= $debver)" suggests=
		summary="debug symbols for libxsc0"
		body=" The debug information of libxsc.so.0 and libxsc-preload.so, found by
 build id: gdb's \`info xsc-fibers\` and \`xsc-fiber N bt\` (the script
 libxsc0 installs) read the runtime's fibers through it." ;;
	xsc)
		# = the version: \`xsc run\` loads the shim built with it
		section=utils multi='' depends="libxsc0 (= $debver), $(shlibdeps "$p")"
		suggests="graphviz, strace"	# xsc trace: graphs (dot), strace logs
		summary="run programs on exception-less system calls"
		body=" xsc runs unmodified dynamically linked pthread programs on xsc's
 threads and exception-less system calls (xsc run), and measures and
 profiles system calls (xsc bench, xsc trace, xsc info)." ;;
	esac
	if [ "$p" = libxsc0 ]; then
		# libxsc.so.0 only: the shim is loaded by path, nothing links to it
		dpkg-gensymbols -c4 -p"$p" -v"$debver" -P"$d" -e"$d/$ml/libxsc.so.$version" \
			-I"$src/packaging/libxsc0.symbols" -O"$d/DEBIAN/symbols" </dev/null >&2
		printf 'libxsc 0 libxsc0 (>= %s)\n' "$version" >"$d/DEBIAN/shlibs"
		printf 'activate-noawait ldconfig\n' >"$d/DEBIAN/triggers"
	fi
	{
		printf 'Package: %s\nSource: xsc\nVersion: %s\nArchitecture: %s\n' "$p" "$debver" "$arch"
		printf 'Maintainer: %s\nInstalled-Size: %s\n' "$maint" "$(du -sk --exclude=DEBIAN "$d" | cut -f1)"
		printf 'Depends: %s\nSection: %s\nPriority: optional\n' "$depends" "$section"
		[ -z "$suggests" ] || printf 'Suggests: %s\n' "$suggests"
		[ -z "$multi" ] || printf '%s\n' "$multi"
		printf 'Description: %s\n%s\n' "$summary" "$body"
	} >"$d/DEBIAN/control"
	(cd "$d" && find . -type f ! -path './DEBIAN/*' -printf '%P\0' | sort -z | xargs -0 md5sum) >"$d/DEBIAN/md5sums"
	find "$d" -type d -exec chmod 0755 {} +
	chmod 0644 "$d"/DEBIAN/*
	rm -f "$out/${p}_"*.deb
	dpkg-deb -Zxz --root-owner-group --build "$d" "$out/${p}_${debver}_${arch}.deb" >/dev/null
	built+=" ${p}_${debver}_${arch}.deb"
done
echo "make-deb: in $out:$built"
