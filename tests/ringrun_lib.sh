# tests/ringrun_lib.sh - sourced by the tests that count what `xsc run`
# batches into io_uring (t_entries_httpd, t_accept_wrk).
# Not a test itself (tests/run.sh runs t_*.sh).

# need_ring_run XSC: exits 77 with the reason unless `xsc run` engages
# here with io_uring (refused by a seccomp filter, make test's nouring
# pass, every call runs on a syscall thread: nothing is batched); then
# clears the XSC_* settings a caller's environment may carry.
need_ring_run() {
	local xsc=$1
	if "$xsc" run -- /bin/true 2>&1 | grep -q 'running the program natively'; then
		echo "skip: xsc run cannot engage here"; exit 77
	fi
	if "$xsc" info 2>/dev/null | grep -q '^io_uring: *unavailable'; then
		echo "skip: io_uring unavailable here: $("$xsc" info 2>/dev/null | sed -n 's/^io_uring: *//p')"
		exit 77
	fi
	unset XSC_BACKEND XSC_THREADS XSC_VERBOSE XSC_TRANSPARENT XSC_HW XSC_HOST_PROFILE
}
