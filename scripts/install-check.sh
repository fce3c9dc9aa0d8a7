#!/usr/bin/env bash
# Installs the build into a scratch prefix, compiles a consumer against the
# installed header with the pkg-config file and with the CMake package
# (find_package(xsc CONFIG): xsc::xsc, xsc::static), runs them, and checks
# that the shared library exports exactly the symbols of src/xsc.map.
set -euo pipefail
build=${1:?usage: scripts/install-check.sh BUILD_DIR}
prefix=$(mktemp -d /tmp/xsc-install.XXXXXX)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
libdir=$(dirname "$(find "$prefix" -name xsc.pc | head -n 1)")/..
export PKG_CONFIG_PATH=$libdir/pkgconfig
src=$(cd "$(dirname "$0")/.." && pwd)
consumer=$src/tests/install
cc -o "$prefix/consumer" "$consumer/consumer.c" $(pkg-config --cflags --libs xsc) \
	-Wl,-rpath,"$(pkg-config --variable=libdir xsc)"
"$prefix/consumer"
cc -o "$prefix/consumer-static" "$consumer/consumer.c" $(pkg-config --cflags xsc) \
	"$(pkg-config --variable=libdir xsc)/libxsc.a" $(pkg-config --libs-only-other --static xsc) -luring -lpthread
"$prefix/consumer-static"
# the CMake package: find_package(xsc CONFIG) from the prefix, both targets
cmake -S "$consumer" -B "$prefix/cmake-consumer" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$prefix/cmake-consumer" >/dev/null
"$prefix/cmake-consumer/consumer-shared"
"$prefix/cmake-consumer/consumer-static"
if readelf -d "$prefix/cmake-consumer/consumer-static" | grep 'NEEDED.*libxsc' >/dev/null; then
	echo "install-check: xsc::static linked libxsc.so"; exit 1
fi
if ! readelf -d "$prefix/cmake-consumer/consumer-shared" | grep 'NEEDED.*\[libxsc\.so\.0\]' >/dev/null; then
	echo "install-check: xsc::xsc did not link libxsc.so.0"; exit 1
fi
want=$(sed -n 's/^ *\(xsc_[a-z0-9_; ]*\)$/\1/p' src/xsc.map | tr ';' '\n' | tr -d ' ' | grep . | sort)
have=$(nm -D --defined-only "$(pkg-config --variable=libdir xsc)/libxsc.so" | awk '$2=="T"{print $3}' | sed 's/@.*//' | sort)
if [ "$want" != "$have" ]; then
	echo "install-check: exported symbols differ from src/xsc.map:"
	diff <(echo "$want") <(echo "$have") || true
	exit 1
fi
# transparent mode from the installed tree: `xsc run` finds the preload
# library in ../<libdir> (not built under the sanitizers)
tp=skipped
if [ -f "$(pkg-config --variable=libdir xsc)/libxsc-preload.so" ]; then
	printf '#include <pthread.h>\n#include <stdio.h>\nstatic void *f(void *a) { puts("run-ok"); return a; }\nint main(void) { pthread_t t; pthread_create(&t, 0, f, 0); return pthread_join(t, 0); }\n' >"$prefix/thr.c"
	cc -pthread -o "$prefix/thr" "$prefix/thr.c"
	out=$("$prefix/bin/xsc" run -v -- "$prefix/thr" 2>&1)
	if ! echo "$out" | grep -q '^run-ok$' || ! echo "$out" | grep -q 'threads as fibers'; then
		echo "install-check: installed xsc run did not engage the shim:"; echo "$out"
		exit 1
	fi
	tp=ok
fi
echo "install-check: ok ($(echo "$have" | wc -l) exported symbols, pkg-config and CMake consumers run, installed xsc run: $tp)"
