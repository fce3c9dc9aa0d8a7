# tests/httpd_lib.sh - sourced by the tests that run examples/httpd
# (t_httpd, t_entries_httpd): a scratch directory with the document root
# the client checks against, and a server started on a free port.
# Not a test itself (tests/run.sh runs t_*.sh).

# httpd_tmp NAME: tmp, a fresh directory /tmp/NAME.XXXXXX holding root/
# (tests/t_httpd_client.py --make-root), removed at exit with the server
# in pid (if any) stopped.  Fails when the root cannot be made.
httpd_tmp() {
	tmp=$(mktemp -d "/tmp/$1.XXXXXX") || return 1
	pid=
	trap httpd_cleanup EXIT
	python3 "$(dirname "${BASH_SOURCE[0]}")/t_httpd_client.py" --make-root "$tmp/root"
}

httpd_cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$tmp"
}

# httpd_start OUT ERR CMD...: runs CMD --port 0 --root $tmp/root
# --timeout 30 in the background, stdout into OUT and stderr into ERR,
# and sets pid to it and port to the port of its first line ("listening
# on 127.0.0.1:PORT"), waited for up to 5 s.  Fails, port empty, when
# the line does not come or the server exits first.
httpd_start() {
	local out=$1 err=$2
	shift 2
	port=
	"$@" --port 0 --root "$tmp/root" --timeout 30 >"$out" 2>"$err" &
	pid=$!
	for _ in $(seq 100); do
		port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$out")
		[ -n "$port" ] && return 0
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}
