#!/usr/bin/env bash
# split.sh measures a split of one large physical partition under concurrent writes, through
# the server (the target: a 1 GB split with no write slower than 100 ms, done in 30 s or less;
# internal/engine's BenchmarkSplit measures the same in process, with one writer).
#
#  1. Partita starts with the default --partition-max-bytes (50 GiB), so nothing splits while
#     the bench tool loads about $SIZE_MB MiB of 1 KB items (upserts, $LOAD_CONC workers,
#     $KEYS partition key values) into a container of 6,000 RU/s: one physical partition, as
#     Partita gives a container one partition per 10,000 RU/s. The size counts stored bytes,
#     as the partition's limit does: each item's body as sent plus its system properties,
#     about 300 bytes (OVERHEAD).
#  2. A baseline: $BASELINE_SECS s of the writer load below, with no split.
#  3. Partita restarts with --partition-max-bytes at 3/4 of the partition's bytes (as
#     `partita partitions` reports them), so that the first write after the restart starts a
#     split into two children under the limit. A split only starts after a write, and the
#     limit is read at start-up: there is no command that splits.
#     Then $WARMUP_SECS s of random point reads warm its caches (reads start no split).
#  4. The writer load starts: wrk creating new 1 KB items (`bench/bare sign -verb
#     POST`), $CONNS connections each pausing $DELAY_MS ms between requests (a moderate,
#     closed-loop load). `partita partitions` is polled every $POLL s; when the container has
#     two partitions, wrk is stopped (SIGINT, which makes it report), so its latencies are
#     those of the writes during the split.
#
# Reported (and appended as a JSON line to $OUT/split.jsonl): the split's duration from the
# writer's start to the server's "partition split" log line (and to the poll that saw it), the
# writes' p50, p99, p99.9 and worst latency during the split and in the baseline, non-2xx
# answers, and the write stalls the server logged meanwhile.
#
#	bench/split.sh                      # 1 GiB: 5 to 10 minutes of loading on 2 cores
#	SIZE_MB=50 bench/split.sh           # a quick check
#
# Settings (environment): BIN (a Partita binary; default: built from ./cmd/partita), OUT
# (./bench-results), SIZE_MB (1024), ITEM_SIZE (1024), OVERHEAD (300), KEYS (10000), LOAD_CONC (32), SETTLE
# (10 s after loading), BASELINE_SECS (10), WARMUP_SECS (5; 0: none), CONNS (8), THREADS (2), DELAY_MS (5), POLL (0.2),
# MAX_WAIT (600 s for the split), PORT (18331), INDEX (default, or none), PARTITA_ARGS (more
# `partita serve` flags). Needs wrk (Debian: apt-get install wrk).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/wrk.sh # wrkjson, wrkdone, wrkstat, stallsum, portopen, waitport, checkindex
checkindex

BIN=${BIN:-}
OUT=${OUT:-$PWD/bench-results}
SIZE_MB=${SIZE_MB:-1024}
ITEM_SIZE=${ITEM_SIZE:-1024}
OVERHEAD=${OVERHEAD:-300}
KEYS=${KEYS:-10000}
LOAD_CONC=${LOAD_CONC:-32}
SETTLE=${SETTLE:-10}
BASELINE_SECS=${BASELINE_SECS:-10}
WARMUP_SECS=${WARMUP_SECS:-5}
CONNS=${CONNS:-8}
THREADS=${THREADS:-2}
DELAY_MS=${DELAY_MS:-5}
POLL=${POLL:-0.2}
MAX_WAIT=${MAX_WAIT:-600}
PORT=${PORT:-18331}
PARTITA_ARGS=${PARTITA_ARGS:-}
URL=http://127.0.0.1:$PORT

command -v wrk >/dev/null || { echo "split.sh: wrk is not installed" >&2; exit 1; }
mkdir -p "$OUT"
RESULTS=$OUT/split.jsonl
LOG=$OUT/split-partita.log
WORK=$(mktemp -d)
SERVER= WRK=
cleanup() {
	[ -n "$WRK" ] && kill "$WRK" 2>/dev/null || true
	[ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$WORK"
}
trap cleanup EXIT

if [ -z "$BIN" ]; then
	go build -o "$WORK/partita" ./cmd/partita
	BIN=$WORK/partita
fi
go build -o "$WORK/bare" ./bench/bare
go build -o "$WORK/bench" ./bench

# serve [FLAGS...]: starts Partita on the data directory, appending to $LOG.
serve() {
	if portopen "$PORT"; then echo "split.sh: port $PORT is taken" >&2; exit 1; fi
	# shellcheck disable=SC2086 # PARTITA_ARGS is a list of flags
	"$BIN" serve --data "$WORK/data" --addr "127.0.0.1:$PORT" --tls=false --rate-limit=false --log-level info $PARTITA_ARGS "$@" >>"$LOG" 2>&1 &
	SERVER=$!
	for _ in 1 2 3 4 5 6; do # up to a minute
		waitport "$PORT" && return
		kill -0 "$SERVER" 2>/dev/null || break
	done
	echo "split.sh: Partita did not open port $PORT, see $LOG" >&2
	exit 1
}
stop() {
	kill "$SERVER"
	wait "$SERVER" 2>/dev/null || true
	SERVER=
}
# partitions: "COUNT ITEMS BYTES" of the container, from `partita partitions`.
partitions() {
	"$BIN" partitions --endpoint "$URL" --db bench --container items |
		awk 'NR == 1 {n = $4} $1 ~ /^[0-9]+$/ && $2 ~ /^\[/ {items += $3; bytes += $4} END {printf "%d %d %d\n", n, items, bytes}'
}
# writer SECS: wrk's paced creates of new items for SECS s, in the background ($WRK), into
# $WORK/wrk.txt; a fresh script each time, so that no id repeats.
writer() {
	"$WORK/bare" sign -verb POST -link dbs/bench/colls/items >"$WORK/create.lua"
	echo "function delay() return $DELAY_MS end" >>"$WORK/create.lua"
	wrkdone "$WORK/create.lua"
	wrk -t"$THREADS" -c"$CONNS" -d"${1}s" --timeout 60s --latency -s "$WORK/create.lua" "$URL/dbs/bench/colls/items/docs" >"$WORK/wrk.txt" &
	WRK=$!
}
ms() { awk -v u="$(wrkstat "$WORK/wrk.txt" "$1")" 'BEGIN {printf "%.3f", u / 1000}'; }
# figures: the writer's figures as JSON fields.
figures() {
	local line
	line=$(wrkjson partita "$WORK/wrk.txt" x)
	line=${line#*\"ops_per_s\":}
	line=$(sed 's/,"max_ms":[0-9.]*//; s/,"index_policy".*//' <<<"$line")
	printf '"ops_per_s":%s,"p90_ms":%s,"p999_ms":%s,"max_ms":%s' "$line" "$(ms p90_us)" "$(ms p999_us)" "$(ms max_us)"
}

: >"$LOG"
serve
items=$((SIZE_MB * 1048576 / (ITEM_SIZE + OVERHEAD)))
"$WORK/bench" -index-policy "$INDEX" -endpoint "$URL" -label partita -mode raw -workload load -items "$items" -item-size "$ITEM_SIZE" \
	-keys "$KEYS" -partitions 1 -concurrency "$LOAD_CONC" -json "$RESULTS"
read -r n count bytes < <(partitions)
[ "$n" = 1 ] || { echo "split.sh: the container has $n partitions after loading, not 1; see $LOG" >&2; exit 1; }
echo "loaded: $count items, $((bytes >> 20)) MiB in 1 partition"
sleep "$SETTLE"

writer "$BASELINE_SECS"
wait "$WRK"
WRK=
baseline=$(figures)
cp "$WORK/wrk.txt" "$OUT/split-baseline-wrk.txt"
read -r _ count bytes < <(partitions)

limit=$((bytes * 3 / 4))
stop
echo "restarting with --partition-max-bytes $limit ($((bytes >> 20)) MiB in the partition)"
before=$(wc -l <"$LOG")
serve --partition-max-bytes "$limit"
if [ "$WARMUP_SECS" != 0 ]; then # the same -items and -keys as the load, so that nothing is written
	"$WORK/bench" -index-policy "$INDEX" -endpoint "$URL" -mode raw -workload read -items "$items" -item-size "$ITEM_SIZE" \
		-keys "$KEYS" -partitions 1 -concurrency 8 -duration "${WARMUP_SECS}s" >/dev/null
fi
read -r n _ _ < <(partitions)
[ "$n" = 1 ] || { echo "split.sh: the partition split before the writer started; see $LOG" >&2; exit 1; }
t0=$(date +%s.%N)
writer "$MAX_WAIT"
n=1
while kill -0 "$WRK" 2>/dev/null; do
	read -r n _ _ < <(partitions) || n=1
	[ "$n" -ge 2 ] && break
	sleep "$POLL"
done
t1=$(date +%s.%N)
kill -INT "$WRK" 2>/dev/null || true
wait "$WRK" || true
WRK=
cp "$WORK/wrk.txt" "$OUT/split-wrk.txt"
[ "$n" -ge 2 ] || { echo "split.sh: no split within $MAX_WAIT s; see $LOG" >&2; exit 1; }
tail -n +"$((before + 1))" "$LOG" >"$WORK/run.log"
split_at=$(sed -n 's/^time=\([^ ]*\) .*msg="partition split".*/\1/p' "$WORK/run.log" | head -1)
split_s=$(awk -v a="$t0" -v b="$(date -d "$split_at" +%s.%N)" 'BEGIN {printf "%.3f", b - a}')
polled_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f", b - a}')
read -r lines stalls waited < <(stallsum "$WORK/run.log")
during=$(figures)
sleep 1
read -r n2 _ _ < <(partitions)
stop

line=$(printf '{"workload":"split","server":"partita","mode":"wrk","index_policy":"%s","partition_bytes":%d,"partition_items":%d,"limit_bytes":%d,"split_s":%s,"split_polled_s":%s,"partitions_after":%d,"connections":%d,"delay_ms":%d,%s,"stall_lines":%d,"stalls":%d,"stall_waited_ms":%d,"baseline":{%s}}' \
	"$INDEX" "$bytes" "$count" "$limit" "$split_s" "$polled_s" "$n2" "$CONNS" "$DELAY_MS" "$during" "$lines" "$stalls" "$waited" "$baseline")
echo "$line" >>"$RESULTS"
echo "$line"
awk -v l="$line" -v mb="$((bytes >> 20))" 'BEGIN {
	split(l, parts, ",\"baseline\":")
	n = split("split_s ops_per_s p50_ms p99_ms p999_ms max_ms non_2xx timeouts", k, " ")
	for (j = 1; j <= 2; j++) for (i = 1; i <= n; i++) {
		match(parts[j], "\"" k[i] "\":[0-9.]+"); v[j, k[i]] = substr(parts[j], RSTART + length(k[i]) + 3, RLENGTH - length(k[i]) - 3)
	}
	printf "split of %d MiB: %.1f s (target <= 30 s: %s); writes during it: %.0f/s, p50 %s ms, p99 %s ms, p99.9 %s ms, worst %s ms (target <= 100 ms: %s), non-2xx %s, timeouts %s\n",
		mb, v[1, "split_s"], v[1, "split_s"] + 0 <= 30 ? "met" : "NOT met", v[1, "ops_per_s"], v[1, "p50_ms"], v[1, "p99_ms"], v[1, "p999_ms"], v[1, "max_ms"],
		v[1, "max_ms"] + 0 <= 100 ? "met" : "NOT met", v[1, "non_2xx"], v[1, "timeouts"]
	printf "baseline without a split: %.0f/s, p50 %s ms, p99 %s ms, p99.9 %s ms, worst %s ms\n",
		v[2, "ops_per_s"], v[2, "p50_ms"], v[2, "p99_ms"], v[2, "p999_ms"], v[2, "max_ms"] }'
echo "results: $RESULTS, server log: $LOG, wrk reports: $OUT/split-*wrk.txt"
