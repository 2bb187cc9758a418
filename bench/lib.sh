# lib.sh holds what the benchmark scripts that start servers share; they source it.

# listening waits until something listens on each of the ports given (20 s at most each).
listening() {
	for port in "$@"; do
		for _ in $(seq 200); do
			(exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && break
			sleep 0.1
		done
	done
}

# stop_all stops the servers whose pids PIDS holds, and empties it.
stop_all() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	PIDS=()
}
