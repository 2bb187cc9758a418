# wrk.sh is sourced by the benchmark scripts (compare.sh, ab.sh) that run servers under wrk:
# the same port probe and the same JSON line from wrk's report in each of them.

# portopen PORT: whether something listens on PORT on loopback.
portopen() { (exec 3<>/dev/tcp/127.0.0.1/"$1") 2>/dev/null; }

# waitport PORT: waits up to 10 s for a server to open PORT; fails if none does.
waitport() {
	for _ in $(seq 100); do
		portopen "$1" && return 0
		sleep 0.1
	done
	return 1
}

# wrkjson SERVER FILE [WORKLOAD]: the `wrk --latency` report in FILE as a JSON line.
wrkjson() {
	awk -v s="$1" -v w="${3:-wrk-read}" '
		/^Requests\/sec/ {rps=$2}
		/^ +50%/ {p50=$2} /^ +99%/ {p99=$2}
		/Non-2xx/ {bad=$NF}
		function ms(v) { if (v ~ /us$/) return v/1000; if (v ~ /ms$/) return v+0; if (v ~ /s$/) return v*1000; return v }
		END {printf "{\"workload\":\"%s\",\"server\":\"%s\",\"mode\":\"wrk\",\"ops_per_s\":%s,\"p50_ms\":%.3f,\"p99_ms\":%.3f,\"non_2xx\":%d}\n", w, s, rps, ms(p50), ms(p99), bad+0}' "$2"
}
