#!/usr/bin/env bash
# t_apache.sh BUILD_DIR - Debian's apache2 (mpm_worker), natively and under `xsc run`.
# xsc-test: timeout=300
#
# A private configuration (127.0.0.1, a free port, 32 threads, User
# www-data) in a temporary directory; never systemd.  Each run starts the
# server, fetches a 64 KiB file 40 times over 8 connections and compares
# every byte, expects 404 for a missing file, then stops it:
#  - natively, as Debian runs it (`apache2 -k start`: it daemonizes, the
#    control process forks the child that owns the threads, which drops
#    to www-data), stopped with `apache2 -k graceful-stop`;
#  - the same under `xsc run -v -b B` for each backend in
#    $XSC_TP_BACKENDS (default: uring sqpoll worker): also the worker
#    child must be an xsc process running as www-data (the shim's line
#    for the child's runtime in the error log, and at its exit its count of
#    threads run as fibers: Apache's 32 or more), its main thread's
#    /proc uids www-data's;
#  - under `xsc run -b B` as one process (`apache2 -X`), stopped with
#    SIGTERM: exit status 0, as natively.
# Every run: all processes gone within 15 s of the stop, and no crash in
# the error log ("exit signal", "Segmentation fault").
# Exit 0 pass, 1 fail, 77 skip (not root, or apache2/python3 missing:
# scripts/deps.sh test installs them).
set -u
build=$(cd "${1:?usage: t_apache.sh BUILD_DIR}" && pwd)
xsc=$build/xsc
backends=${XSC_TP_BACKENDS:-uring sqpoll worker}
threads=32

[ "$(id -u)" = 0 ] || { echo "skip: not root (Apache's child drops to www-data)"; exit 77; }
[ -x /usr/sbin/apache2 ] || { echo "skip: apache2 not installed (scripts/deps.sh test)"; exit 77; }
command -v python3 >/dev/null || { echo "skip: python3 not installed"; exit 77; }
id www-data >/dev/null 2>&1 || { echo "skip: no www-data user"; exit 77; }
[ -f "$build/libxsc-preload.so" ] || { echo "skip: no $build/libxsc-preload.so (not built under the sanitizers)"; exit 77; }
unset XSC_BACKEND XSC_THREADS XSC_VERBOSE XSC_TRANSPARENT XSC_FORK

tmp=$(mktemp -d /tmp/t_apache.XXXXXX)
chmod 755 "$tmp"
mods=/usr/lib/apache2/modules
conf=$tmp/httpd.conf
cleanup() {
	pkill -KILL -f -- "-f $conf" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p "$tmp/htdocs" "$tmp/logs"
head -c 65536 /dev/urandom >"$tmp/htdocs/f64k"
chmod -R a+rX "$tmp/htdocs"
cat >"$conf" <<EOF
ServerRoot $tmp
PidFile $tmp/logs/httpd.pid
Listen 127.0.0.1:$port
LoadModule mpm_worker_module $mods/mod_mpm_worker.so
LoadModule authz_core_module $mods/mod_authz_core.so
ServerName localhost
User www-data
Group www-data
DocumentRoot $tmp/htdocs
ErrorLog $tmp/logs/error.log
LogLevel notice
StartServers 1
ServerLimit 1
MinSpareThreads 1
MaxSpareThreads $threads
ThreadLimit $threads
ThreadsPerChild $threads
MaxRequestWorkers $threads
KeepAlive On
GracefulShutdownTimeout 10
<Directory $tmp/htdocs>
  Require all granted
</Directory>
EOF

npass=0 nfail=0
pass() { npass=$((npass + 1)); echo "PASS $*"; }
fail() { nfail=$((nfail + 1)); echo "FAIL $*"; }

# requests: 40 byte-exact GETs over 8 connections, one 404
check_http() {
	python3 - "$port" "$tmp/htdocs/f64k" <<'EOF'
import http.client, sys, threading
port, path = int(sys.argv[1]), sys.argv[2]
want = open(path, "rb").read()
bad = []
def client(k):
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        for _ in range(5):
            c.request("GET", "/f64k")
            r = c.getresponse()
            body = r.read()
            if r.status != 200 or body != want:
                bad.append("status %d, %d bytes" % (r.status, len(body)))
        c.close()
    except Exception as e:
        bad.append(repr(e))
ts = [threading.Thread(target=client, args=(k,)) for k in range(8)]
for t in ts: t.start()
for t in ts: t.join()
c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
c.request("GET", "/nope")
r = c.getresponse(); r.read()
if r.status != 404:
    bad.append("missing file: status %d" % r.status)
if bad:
    print("; ".join(bad[:3]))
    sys.exit(1)
EOF
}

wait_up() {	# up to 10 s for the port to answer
	for _ in $(seq 100); do
		python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 1)" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

wait_gone() {	# up to 15 s for every process of this configuration to end
	for _ in $(seq 150); do
		pgrep -f -- "-f $conf" >/dev/null || return 0
		sleep 0.1
	done
	return 1
}

crashes() {
	grep -E "exit signal|Segmentation fault|core dumped" "$tmp/logs/error.log" 2>/dev/null | head -n 3
}

# verdict LABEL: a pass, or a fail with the reasons in the caller's why
# and the error log's last lines; a crash in the error log is one more.
verdict() {
	local out
	out=$(crashes)
	[ -z "$out" ] || why+=("crash in the error log: $out")
	if [ ${#why[@]} -eq 0 ]; then
		pass "$1"
	else
		fail "$1: ${why[*]}"
		tail -n 5 "$tmp/logs/error.log" 2>/dev/null | sed 's/^/    | /'
	fi
}

# forking LABEL [xsc-args...]: as Debian runs it
forking() {
	local label=$1 why=() out child nf user
	shift
	rm -f "$tmp"/logs/*
	if [ $# -eq 0 ]; then
		/usr/sbin/apache2 -f "$conf" -k start
	else
		"$xsc" run "$@" -- /usr/sbin/apache2 -f "$conf" -k start
	fi
	if ! wait_up; then
		fail "$label: no answer within 10 s"
		tail -n 5 "$tmp/logs/error.log" 2>/dev/null | sed 's/^/    | /'
		pkill -KILL -f -- "-f $conf"
		return
	fi
	out=$(check_http) || why+=("responses: $out")
	child=$(pgrep -f -- "-f $conf" | while read -r p; do
		[ "$(ps -o user= -p "$p" | tr -d ' ')" = www-data ] && echo "$p"; done | head -n 1)
	if [ -z "$child" ]; then
		why+=("no child running as www-data")
	elif [ $# -gt 0 ]; then
		# the control process has one thread: the child starts a
		# runtime at its own first pthread_create (a live parent's
		# child gets one at the fork: "forked child")
		grep -qE "xsc run: (forked child $child|process $child: its second thread)" \
			"$tmp/logs/error.log" ||
			why+=("no 'forked child $child' or 'process $child: its second thread' line from the shim")
		user=$(awk '/^Uid:/ {print $2 $3 $4 $5}' "/proc/$child/status")
		[ "$user" = "$(id -u www-data)$(id -u www-data)$(id -u www-data)$(id -u www-data)" ] ||
			why+=("the child's main thread has uids $user")
	fi
	/usr/sbin/apache2 -f "$conf" -k graceful-stop
	wait_gone || { why+=("still running 15 s after graceful-stop"); pkill -KILL -f -- "-f $conf"; }
	if [ $# -gt 0 ]; then	# the child's exit report: its threads were fibers
		nf=$(sed -n 's/^xsc run: \([0-9]*\) threads as fibers.*/\1/p' "$tmp/logs/error.log" |
		     sort -n | tail -n 1)
		[ "${nf:-0}" -ge "$threads" ] ||
			why+=("the shim ran ${nf:-0} threads as fibers, Apache has $threads: its child was not an xsc process")
	fi
	verdict "$label"
}

# single LABEL xsc-args...: one process (-X), SIGTERM
single() {
	local label=$1 why=() out pid rc
	shift
	rm -f "$tmp"/logs/*
	"$xsc" run "$@" -- /usr/sbin/apache2 -f "$conf" -X &
	pid=$!
	if ! wait_up; then
		fail "$label: no answer within 10 s"
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		return
	fi
	out=$(check_http) || why+=("responses: $out")
	kill -TERM "$pid"
	for _ in $(seq 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	if kill -0 "$pid" 2>/dev/null; then
		why+=("still running 15 s after SIGTERM")
		kill -KILL "$pid"
	fi
	wait "$pid"
	rc=$?
	[ "$rc" = 0 ] || why+=("exit status $rc, natively 0")
	wait_gone || pkill -KILL -f -- "-f $conf"
	verdict "$label"
}

forking "apache2 -k start [native]"
for b in $backends; do
	forking "apache2 -k start [xsc run -b $b]" -v -b "$b"
	single "apache2 -X [xsc run -b $b]" -b "$b"
done
echo "$npass passed, $nfail failed"
[ "$nfail" -eq 0 ]
