#!/usr/bin/env bash
# Installs what xsc needs on a Debian 12 machine, only when it is missing.
#   scripts/deps.sh build   compiler, cmake, liburing-dev, pkg-config,
#                           systemtap-sdt-dev (sys/sdt.h: the USDT probes)
#   scripts/deps.sh deb     build + dpkg-dev (make deb: dpkg-shlibdeps,
#                           dpkg-gensymbols)
#   scripts/deps.sh test    deb + strace, graphviz (trace tests), clang
#                           (make test also builds with it), apache2
#                           (tests/t_apache.sh: a real forking server),
#                           python3.11 and its test suite (tests/t_cpython.sh),
#                           stress-ng (tests/t_stressng.sh), redis-server,
#                           redis-tools, memcached, libmemcached-tools
#                           (tests/t_bench_events.sh: event-driven servers),
#                           mandoc (tests/t_man.sh: the manual pages' lint),
#                           gdb (tests/t_gdb.sh: tools/gdb/xsc-gdb.py),
#                           bpftrace (tests/t_dear_host.sh: system calls
#                           made dear, scripts/dear-host.sh)
#   scripts/deps.sh demo    test + gnuplot, wrk, nginx, mariadb-server,
#                           sysbench, golang-go (benchmarks; Go is the
#                           goroutine anchor of xsc bench fibers)
set -eu
level=${1:-build}
need=()
has_sdt() { # sys/sdt.h, wherever the multiarch layout puts it
	echo '#include <sys/sdt.h>' | gcc -E -x c - >/dev/null 2>&1
}
want() { # want PACKAGE CHECK-COMMAND...
	local pkg=$1; shift
	"$@" >/dev/null 2>&1 || need+=("$pkg")
}
want build-essential command -v gcc
want cmake command -v cmake
want pkg-config command -v pkg-config
want liburing-dev test -e /usr/include/liburing.h
want systemtap-sdt-dev has_sdt
if [ "$level" != build ]; then
	want dpkg-dev command -v dpkg-shlibdeps
fi
if [ "$level" = test ] || [ "$level" = demo ]; then
	want strace command -v strace
	want graphviz command -v dot
	want python3 command -v python3
	want clang command -v clang
	want apache2 test -x /usr/sbin/apache2
	want python3.11 test -x /usr/bin/python3.11
	want libpython3.11-testsuite test -f /usr/lib/python3.11/test/test_threading.py
	want stress-ng command -v stress-ng
	want wrk command -v wrk
	want redis-server command -v redis-server
	want redis-tools command -v redis-benchmark
	want memcached command -v memcached
	want libmemcached-tools command -v memcslap
	want mandoc command -v mandoc
	want gdb command -v gdb
	want bpftrace command -v bpftrace
fi
if [ "$level" = demo ]; then
	want gnuplot-nox command -v gnuplot
	want nginx-light test -x /usr/sbin/nginx
	want coreutils command -v cp
	want mariadb-server test -x /usr/sbin/mariadbd
	want sysbench command -v sysbench
	want golang-go command -v go
fi
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "xsc: missing packages: ${need[*]}; run as root or: apt-get install ${need[*]}" >&2
	exit 1
fi
echo "xsc: installing ${need[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
# Debian starts nginx and apache2 on install; the tests and benchmarks
# start their own instances.
if printf '%s\n' "${need[@]}" | grep -q nginx; then
	(nginx -s stop || pkill -x nginx) >/dev/null 2>&1 || true
fi
if printf '%s\n' "${need[@]}" | grep -qx apache2; then
	(apache2ctl stop || pkill -x apache2) >/dev/null 2>&1 || true
fi
if printf '%s\n' "${need[@]}" | grep -qx redis-server; then
	(service redis-server stop || pkill -x redis-server) >/dev/null 2>&1 || true
fi
if printf '%s\n' "${need[@]}" | grep -qx memcached; then
	(service memcached stop || pkill -x memcached) >/dev/null 2>&1 || true
fi
if printf '%s\n' "${need[@]}" | grep -qx mariadb-server; then
	(service mariadb stop || pkill -x mariadbd) >/dev/null 2>&1 || true
fi
