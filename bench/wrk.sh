# wrk.sh is sourced by the benchmark scripts (compare.sh, ab.sh, stall.sh, split.sh) that run
# servers under wrk: the same port probe and the same JSON line from wrk's report in each.

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

# wrkjson SERVER FILE [WORKLOAD] [CPU_SECONDS]: the `wrk --latency` report in FILE as a JSON
# line; max_ms is wrk's slowest request, timeouts the requests it gave up on (after its
# --timeout, 2 s unless set), index_policy the $INDEX of the run (default or none). With
# CPU_SECONDS (the server's CPU during the run, from cpusecs), it adds server_cpu_s and
# server_cpu_us_per_op, that CPU divided by the requests wrk completed.
wrkjson() {
	awk -v s="$1" -v w="${3:-wrk-read}" -v ix="${INDEX:-default}" -v cpu="${4:-}" '
		/^Requests\/sec/ {rps=$2}
		/requests in/ {n=$1}
		/^ +Latency +[0-9]/ {max=$4}
		/^ +50%/ {p50=$2} /^ +99%/ {p99=$2}
		/Non-2xx/ {bad=$NF}
		/Socket errors/ {to=$NF}
		function ms(v) { if (v ~ /us$/) return v/1000; if (v ~ /ms$/) return v+0; if (v ~ /m$/) return v*60000; if (v ~ /s$/) return v*1000; return v }
		END {
			extra = ""
			if (cpu != "" && n > 0) extra = sprintf(",\"server_cpu_s\":%.2f,\"server_cpu_us_per_op\":%.1f", cpu, cpu * 1e6 / n)
			printf "{\"workload\":\"%s\",\"server\":\"%s\",\"mode\":\"wrk\",\"ops_per_s\":%s,\"p50_ms\":%.3f,\"p99_ms\":%.3f,\"max_ms\":%.3f,\"non_2xx\":%d,\"timeouts\":%d,\"index_policy\":\"%s\"%s}\n", w, s, rps, ms(p50), ms(p99), ms(max), bad+0, to+0, ix, extra
		}' "$2"
}

# cpusecs PID: the user and system CPU seconds process PID has used so far.
cpusecs() { awk '{sub(/.*\) /, ""); printf "%.2f\n", ($12 + $13) / 100}' "/proc/$1/stat"; }

# checkindex: fails unless $INDEX is default or none (the bench tool's -index-policy).
checkindex() {
	case ${INDEX:=default} in
	default | none) ;;
	*) echo "INDEX must be default or none, not $INDEX" >&2; return 1 ;;
	esac
	export INDEX
}

# wrkdone SCRIPT: appends to a wrk script a done() that prints one line of exact figures
# (latencies in µs, p99.9 and the maximum included), read back with wrkstat.
wrkdone() {
	cat >>"$1" <<'LUA'
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("WRKSTATS requests=%d duration_us=%d p50_us=%d p90_us=%d p99_us=%d p999_us=%d max_us=%d non_2xx=%d timeouts=%d socket_errors=%d\n",
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(90), latency:percentile(99),
    latency:percentile(99.9), latency.max, e.status, e.timeout, e.connect + e.read + e.write))
end
LUA
}

# wrkstat FILE NAME: one figure of the WRKSTATS line in a wrk report (see wrkdone).
wrkstat() { sed -n "s/^WRKSTATS.* $2=\([0-9]*\).*/\1/p" "$1"; }

# stallsum LOG: the storage write-stall lines in a Partita log (see internal/storage/stall.go),
# as "LINES STALLS WAITED_MS": a line is written at most every 10 s and counts the stalls since
# the one before, so STALLS and WAITED_MS (their sum) say more than LINES.
stallsum() {
	awk '
		function ms(d,   t, n, u) { # a Go duration: 1m2.5s, 950ms, 12µs, 0s
			t = 0
			while (match(d, /^[0-9.]+(h|ms|m|s|µs|us|ns)/)) {
				n = substr(d, 1, RLENGTH); d = substr(d, RLENGTH + 1)
				match(n, /[a-zµ]+$/); u = substr(n, RSTART); n = substr(n, 1, RSTART - 1) + 0
				t += u == "h" ? n * 3600000 : u == "m" ? n * 60000 : u == "s" ? n * 1000 : u == "ms" ? n : u == "ns" ? n / 1e6 : n / 1000
			}
			return t
		}
		/msg="storage write stalls/ {
			lines++
			for (i = 1; i <= NF; i++) {
				if ($i ~ /^stalls=/) stalls += substr($i, 8)
				if ($i ~ /^waited=/) waited += ms(substr($i, 8))
			}
		}
		END { printf "%d %d %.0f\n", lines, stalls, waited }' "$1"
}
