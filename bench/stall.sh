#!/usr/bin/env bash
# stall.sh measures sustained creates and the write stalls they cause: a fresh server is loaded
# with $ITEMS items of 1 KB (as compare.sh and ab.sh load them), left $SETTLE s for its
# compactions, and then takes `wrk -t2 -c64 -d60s` of creates of new 1 KB items (the presigned
# create script of `bench/bare sign -verb POST`). It prints the throughput, p50, p99, p99.9 and
# worst latency, and the storage write stalls Partita logged during the run (the
# "storage write stalls" warning of internal/storage/stall.go: at most one line every 10 s,
# each counting the stalls since the previous one and the time writes waited in them; stalls
# after the last line of a run go unlogged until the next stall). With COSMIUM, cosmium runs
# the same afterwards, alone, for reference. Results land as JSON lines in $OUT/stall.jsonl.
#
#	bench/stall.sh                                   # Partita built from this tree
#	BIN=/tmp/partita-after bench/stall.sh            # another Partita binary
#	COSMIUM=/work/bin/cosmium bench/stall.sh         # then cosmium with badger, for reference
#	SERVERS="cosmium-badger cosmium-mem" COSMIUM=/work/bin/cosmium bench/stall.sh
#
# Settings (environment): BIN (a Partita binary; default: built from ./cmd/partita), SERVERS
# (any of partita, cosmium-badger, cosmium-mem; default partita, and cosmium-badger when
# COSMIUM is set), OUT (./bench-results), ITEMS (100000), PARTITIONS (4 physical partitions),
# SETTLE (20 s), WRK_SECS (60), CONNS (64), THREADS (2), WRK_TIMEOUT (30s: wrk counts a request
# slower than this as a timeout, not as a latency), PORT (18321), INDEX (default, or none:
# a container that indexes nothing), PARTITA_ARGS (more `partita serve` flags, e.g.
# "--cache-size 536870912"). Needs wrk (Debian: apt-get install wrk).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/wrk.sh # wrkjson, wrkdone, wrkstat, stallsum, portopen, waitport, checkindex
checkindex

BIN=${BIN:-}
COSMIUM=${COSMIUM:-}
SERVERS=${SERVERS:-partita${COSMIUM:+ cosmium-badger}}
OUT=${OUT:-$PWD/bench-results}
ITEMS=${ITEMS:-100000}
PARTITIONS=${PARTITIONS:-4}
SETTLE=${SETTLE:-20}
WRK_SECS=${WRK_SECS:-60}
CONNS=${CONNS:-64}
THREADS=${THREADS:-2}
WRK_TIMEOUT=${WRK_TIMEOUT:-30s}
PORT=${PORT:-18321}
PARTITA_ARGS=${PARTITA_ARGS:-}

command -v wrk >/dev/null || { echo "stall.sh: wrk is not installed" >&2; exit 1; }
mkdir -p "$OUT"
RESULTS=$OUT/stall.jsonl
WORK=$(mktemp -d)
SERVER=
cleanup() {
	[ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$WORK"
}
trap cleanup EXIT

if [ -z "$BIN" ] && [[ " $SERVERS " == *" partita "* ]]; then
	go build -o "$WORK/partita" ./cmd/partita
	BIN=$WORK/partita
fi
go build -o "$WORK/bare" ./bench/bare
go build -o "$WORK/bench" ./bench

for s in $SERVERS; do
	log=$OUT/stall-$s.log
	data=$WORK/data-$s
	if portopen "$PORT"; then echo "stall.sh: port $PORT is taken" >&2; exit 1; fi
	case $s in
	partita)
		# shellcheck disable=SC2086 # PARTITA_ARGS is a list of flags
		"$BIN" serve --data "$data" --addr "127.0.0.1:$PORT" --tls=false --rate-limit=false --log-level warn $PARTITA_ARGS >"$log" 2>&1 &
		;;
	cosmium-badger | cosmium-mem)
		[ -n "$COSMIUM" ] || { echo "stall.sh: $s needs COSMIUM=/path/to/cosmium" >&2; exit 1; }
		store=()
		[ "$s" = cosmium-badger ] && mkdir -p "$data" && store=(-DataStore badger -Persist "$data")
		"$COSMIUM" -Host 127.0.0.1 -Port "$PORT" -RntbdPort $((PORT - 8000)) -DisableTls -LogLevel silent "${store[@]}" >"$log" 2>&1 &
		;;
	*) echo "stall.sh: unknown server $s (partita, cosmium-badger or cosmium-mem)" >&2; exit 1 ;;
	esac
	SERVER=$!
	waitport "$PORT" || { echo "stall.sh: $s did not open port $PORT, see $log" >&2; exit 1; }

	"$WORK/bench" -index-policy "$INDEX" -endpoint "http://127.0.0.1:$PORT" -mode raw -workload read -items "$ITEMS" \
		-partitions "$PARTITIONS" -duration 1s >/dev/null
	sleep "$SETTLE" # for the compactions of what was just loaded
	read -r load_lines load_stalls _ < <(stallsum "$log")
	before=$(wc -l <"$log")

	"$WORK/bare" sign -verb POST -link dbs/bench/colls/items >"$WORK/create.lua"
	wrkdone "$WORK/create.lua"
	wrk -t"$THREADS" -c"$CONNS" -d"${WRK_SECS}s" --timeout "$WRK_TIMEOUT" --latency -s "$WORK/create.lua" \
		"http://127.0.0.1:$PORT/dbs/bench/colls/items/docs" >"$WORK/wrk.txt"
	kill -0 "$SERVER" 2>/dev/null || { echo "stall.sh: $s exited, see $log" >&2; exit 1; }
	cp "$WORK/wrk.txt" "$OUT/stall-$s-wrk.txt"
	tail -n +"$((before + 1))" "$log" >"$WORK/run.log"
	read -r lines stalls waited < <(stallsum "$WORK/run.log")

	line=$(wrkjson "$s" "$WORK/wrk.txt" stall-create)
	ms() { awk -v u="$(wrkstat "$WORK/wrk.txt" "$1")" 'BEGIN {printf "%.3f", u / 1000}'; }
	extra=$(printf '"p90_ms":%s,"p999_ms":%s,"max_ms":%s,"items":%d,"partitions":%d,"secs":%d,"connections":%d,"stall_lines":%d,"stalls":%d,"stall_waited_ms":%d,"load_stall_lines":%d,"load_stalls":%d' \
		"$(ms p90_us)" "$(ms p999_us)" "$(ms max_us)" "$ITEMS" "$PARTITIONS" "$WRK_SECS" "$CONNS" "$lines" "$stalls" "$waited" "$load_lines" "$load_stalls")
	line=$(sed 's/,"max_ms":[0-9.]*//' <<<"$line") # the exact maximum from wrkdone instead of wrk's rounded one
	echo "${line%\}},$extra}" >>"$RESULTS"
	awk -v s="$s" -v l="${line%\}},$extra}" 'BEGIN {
		n = split("ops_per_s p50_ms p99_ms p999_ms max_ms non_2xx timeouts stall_lines stalls stall_waited_ms", k, " ")
		for (i = 1; i <= n; i++) { match(l, "\"" k[i] "\":[0-9.]+"); v[k[i]] = substr(l, RSTART + length(k[i]) + 3, RLENGTH - length(k[i]) - 3) }
		printf "%s: %.0f creates/s, p50 %s ms, p99 %s ms, p99.9 %s ms, max %s ms, non-2xx %s, timeouts %s; write-stall lines %s (%s stalls, %s ms waited)\n",
			s, v["ops_per_s"], v["p50_ms"], v["p99_ms"], v["p999_ms"], v["max_ms"], v["non_2xx"], v["timeouts"], v["stall_lines"], v["stalls"], v["stall_waited_ms"] }'

	kill "$SERVER"
	wait "$SERVER" 2>/dev/null || true
	SERVER=
done
echo "results: $RESULTS, server logs and wrk reports: $OUT/stall-*"
