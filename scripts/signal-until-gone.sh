# signal-until-gone.sh - sourced: signal_until_gone SIG PID TRIES sends
# SIG to PID, a child of the caller's shell, again every second until it
# has exited, TRIES times at most, then SIGKILL; then reaps it.  bpftrace
# can miss a signal that comes just before it waits for events (seen
# under load: left in epoll_wait with the signal handled, 1 run in 8 to
# 22), and a bpftrace left running keeps its probes, and dear-host.sh's
# tax, after the command.
signal_until_gone() {
	local sig=$1 pid=$2 tries=$3 i
	for ((i = 0; i < tries; i++)); do
		kill -"$sig" "$pid" 2>/dev/null || break
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			kill -0 "$pid" 2>/dev/null || break 2
			sleep 0.1
		done
	done
	kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
}
