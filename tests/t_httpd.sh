#!/usr/bin/env bash
# t_httpd.sh BUILD_DIR - examples/httpd over loopback, every built flavour.
# xsc-test: timeout=240
#
# For each of BUILD/examples/httpd/httpd-nptl, httpd-xsc and httpd-uring
# (the hand-written io_uring loop) that exists:
# start it on a free 127.0.0.1 port (--port 0; the port is read from its
# first stdout line) with a generated root, run tests/t_httpd_client.py
# against it (byte-for-byte responses, concurrency, pipelining, malformed
# and traversal requests, vanishing clients, fd leak check), check the
# server is still alive, stop it.  httpd-xsc is run once per executor
# that can carry blocking calls (not inline), and so is the unmodified
# httpd-nptl under `xsc run` (transparent mode).  Exit 0 pass, 1 fail, 77 skip (nothing built, no python3).
set -u
build=$(cd "${1:?usage: t_httpd.sh BUILD_DIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
client=$here/t_httpd_client.py
bindir=$build/examples/httpd

command -v python3 >/dev/null || { echo "skip: python3 not installed (scripts/deps.sh test)"; exit 77; }
bins=()
for b in httpd-nptl httpd-xsc httpd-uring; do
	[ -x "$bindir/$b" ] && bins+=("$b")
done
[ ${#bins[@]} -gt 0 ] || { echo "skip: no httpd binary under $bindir"; exit 77; }
[ -x "$bindir/httpd-xsc" ] || echo "note: httpd-xsc not built (no xsc threads runtime yet); testing httpd-nptl only"

. "$here/httpd_lib.sh"
httpd_tmp t_httpd || { echo "cannot build the root"; exit 1; }

# run_server LABEL BINARY [ENV...]: one full client run against one server.
run_server() {
	local label=$1 bin=$2
	shift 2
	# Fresh files per run: the shell truncates a reused one only once the
	# child has started, and the old port line would be read meanwhile.
	nrun=$((nrun + 1))
	local out=$tmp/out.$nrun err=$tmp/err.$nrun
	if ! httpd_start "$out" "$err" env "$@" "$bin"; then
		echo "FAIL $label: server did not start"; cat "$err"; return 1
	fi
	echo "== $label on port $port (pid $pid)"
	if ! timeout 180 python3 "$client" "$port" "$tmp/root" "$pid"; then
		echo "FAIL $label"; sed 's/^/  server: /' "$err" | tail -20; return 1
	fi
	if ! kill -0 "$pid" 2>/dev/null; then
		echo "FAIL $label: server died"; cat "$err"; return 1
	fi
	kill "$pid"; wait "$pid" 2>/dev/null; pid=
	# sanitizer reports, crashes; not the one-line fallback reasons xsc
	# gives when io_uring is forbidden (tests/nouring)
	grep -v -E '^xsc: (warning: a seccomp filter is active|io_uring unavailable)' \
		"$err" >"$err.rest"
	if [ -s "$err.rest" ]; then
		echo "FAIL $label: server wrote to stderr:"; head -40 "$err.rest"; return 1
	fi
	echo "PASS $label"
}

rc=0 nrun=0
for b in "${bins[@]}"; do
	if [ "$b" = httpd-xsc ]; then
		for be in ${XSC_TEST_BACKENDS:-uring sqpoll worker inline}; do
			# The inline executor runs each call synchronously in the
			# vcpu thread: a blocking accept or read stalls every fiber
			# on that vcpu, so a thread-per-connection server cannot
			# work there by construction.
			if [ "$be" = inline ]; then
				echo "note: httpd-xsc[inline] not run (blocking calls stall the vcpu)"
				continue
			fi
			run_server "$b[$be]" "$bindir/$b" XSC_BACKEND="$be" || rc=1
		done
	elif [ "$b" = httpd-uring ] && "$build/xsc" info 2>/dev/null | grep -q '^io_uring: *unavailable'; then
		# the hand-written loop is io_uring itself: no fallback
		echo "note: httpd-uring not run (io_uring unavailable here)"
	else
		run_server "$b" "$bindir/$b" || rc=1
	fi
done
# Transparent mode: the unmodified httpd-nptl binary under `xsc run`.
if [ -x "$bindir/httpd-nptl" ] && [ -f "$build/libxsc-preload.so" ]; then
	printf '#!/bin/sh\nexec "%s" run -- "%s" "$@"\n' "$build/xsc" "$bindir/httpd-nptl" >"$tmp/xsc-run-httpd"
	chmod +x "$tmp/xsc-run-httpd"
	for be in uring sqpoll worker; do
		run_server "httpd-nptl+xsc-run[$be]" "$tmp/xsc-run-httpd" XSC_BACKEND="$be" || rc=1
	done
else
	echo "note: no libxsc-preload.so (sanitizer build): httpd-nptl under xsc run not tested"
fi
# The choices of an expensive host (tests/run.sh's dear-host profile: the
# stat family and opens posted, a short read's type asked in the ring,
# stat buffers on a fiber's stack written plainly), on the first executor.
dear=${XSC_TEST_DEAR_PROFILE:-$build/test-logs/dear-host-profile}
if [ -f "$dear" ] && [ -x "$bindir/httpd-xsc" ]; then
	run_server "httpd-xsc[uring,dear]" "$bindir/httpd-xsc" XSC_BACKEND=uring \
		XSC_HOST_PROFILE="$dear" || rc=1
	[ -x "$tmp/xsc-run-httpd" ] &&
		{ run_server "httpd-nptl+xsc-run[uring,dear]" "$tmp/xsc-run-httpd" \
			XSC_BACKEND=uring XSC_HOST_PROFILE="$dear" || rc=1; }
fi
exit $rc
