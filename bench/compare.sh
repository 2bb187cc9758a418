#!/usr/bin/env bash
# compare.sh runs the published benchmark: every workload through the official Go SDK against
# Partita and cosmium (in memory and with badger), point reads under wrk against Partita,
# cosmium and the bare net/http ceiling, and Partita's point-read latency at half its peak.
# Everything runs on this machine, alternately, and lands as JSON lines in $OUT.
#
#	COSMIUM=/path/to/cosmium bench/compare.sh
#
# cosmium is not part of this repository: build it yourself from its public repository
# (github.com/pikami/cosmium, `go build -o /path/to/cosmium ./cmd/server`). Without COSMIUM
# only Partita and the bare server are measured. Needs wrk (Debian: apt-get install wrk).
#
# Settings (environment): OUT (results directory, default ./bench-results), ITEMS (100000),
# DURATION per run (5s), ROUNDS (2), CONC (16 SDK workers), WRK_SECS (10), WRK_ROUNDS (3).
set -euo pipefail
cd "$(dirname "$0")/.."

OUT=${OUT:-$PWD/bench-results}
ITEMS=${ITEMS:-100000}
DURATION=${DURATION:-5s}
ROUNDS=${ROUNDS:-2}
CONC=${CONC:-16}
WRK_SECS=${WRK_SECS:-10}
WRK_ROUNDS=${WRK_ROUNDS:-3}
COSMIUM=${COSMIUM:-}
KEY=C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==

command -v wrk >/dev/null || { echo "compare.sh: wrk is not installed" >&2; exit 1; }
mkdir -p "$OUT"
RESULTS=$OUT/results.jsonl
: >"$RESULTS"
WORK=$(mktemp -d)
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$WORK"
}
trap cleanup EXIT

go build -o "$WORK/partita" ./cmd/partita
go build -o "$WORK/bare" ./bench/bare
go build -o "$WORK/bench" ./bench

# start NAME PORT CMD...: runs a server in the background and waits for its port.
start() {
	local name=$1 port=$2
	shift 2
	"$@" >"$OUT/$name.log" 2>&1 &
	PIDS+=($!)
	eval "PID_${name//-/_}=$!"
	for _ in $(seq 100); do
		if (exec 3<>/dev/tcp/127.0.0.1/"$port") 2>/dev/null; then return; fi
		sleep 0.1
	done
	echo "compare.sh: $name did not open port $port" >&2
	exit 1
}
pid() { local v="PID_${1//-/_}"; echo "${!v}"; }

start partita 18301 "$WORK/partita" serve --data "$WORK/partita-data" --addr 127.0.0.1:18301 --tls=false --rate-limit=false --log-level warn
start bare 18300 "$WORK/bare" serve -addr 127.0.0.1:18300
servers=(partita)
urls=(http://127.0.0.1:18301)
if [ -n "$COSMIUM" ]; then
	start cosmium-mem 18400 "$COSMIUM" -Host 127.0.0.1 -Port 18400 -RntbdPort 10400 -DisableTls -LogLevel silent
	mkdir -p "$WORK/badger"
	start cosmium-badger 18401 "$COSMIUM" -Host 127.0.0.1 -Port 18401 -RntbdPort 10401 -DisableTls -LogLevel silent -DataStore badger -Persist "$WORK/badger"
	servers+=(cosmium-mem cosmium-badger)
	urls+=(http://127.0.0.1:18400 http://127.0.0.1:18401)
fi

# The SDK workloads, Partita against each other server in turn, A B A B. The read-only
# workloads run first, on exactly $ITEMS items, so that COUNT and the queries see that many.
common=(-items "$ITEMS" -duration "$DURATION" -concurrency "$CONC" -rounds "$ROUNDS" -partitions 4 -json "$RESULTS")
for i in "${!servers[@]}"; do
	[ "$i" = 0 ] && [ ${#servers[@]} -gt 1 ] && continue
	cmp=()
	if [ "$i" != 0 ]; then
		cmp=(-compare-endpoint "${urls[$i]}" -compare-label "${servers[$i]}" -compare-server-pid "$(pid "${servers[$i]}")")
	fi
	# -reset: each comparison starts from empty containers.
	"$WORK/bench" -endpoint http://127.0.0.1:18301 -label partita -server-pid "$(pid partita)" "${cmp[@]}" \
		"${common[@]}" -reset -workload load,read,query-pk,query-range,query-top,count,ycsb-c | tee -a "$OUT/sdk.txt"
	"$WORK/bench" -endpoint http://127.0.0.1:18301 -label partita -server-pid "$(pid partita)" "${cmp[@]}" \
		"${common[@]}" -workload create,upsert,replace,ycsb-a,ycsb-b,ycsb-f | tee -a "$OUT/sdk.txt"
done

# Point reads under wrk: one presigned request, 64 connections, the servers alternately.
wrkjson() { # server file: the wrk report as a JSON line
	awk -v s="$1" '
		/^Requests\/sec/ {rps=$2}
		/^ +50%/ {p50=$2} /^ +99%/ {p99=$2}
		/Non-2xx/ {bad=$NF}
		function ms(v) { if (v ~ /us$/) return v/1000; if (v ~ /ms$/) return v+0; if (v ~ /s$/) return v*1000; return v }
		END {printf "{\"workload\":\"wrk-read\",\"server\":\"%s\",\"mode\":\"wrk\",\"concurrency\":64,\"ops_per_s\":%s,\"p50_ms\":%.3f,\"p99_ms\":%.3f,\"non_2xx\":%d}\n", s, rps, ms(p50), ms(p99), bad+0}' "$2"
}
wrk_servers=(partita bare "${servers[@]:1}")
for r in $(seq "$WRK_ROUNDS"); do
	"$WORK/bare" sign -link dbs/bench/colls/items/docs/item-1 -pk '["pk-1"]' >"$WORK/read.lua"
	for s in "${wrk_servers[@]}"; do
		case $s in
		partita) port=18301 ;; bare) port=18300 ;; cosmium-mem) port=18400 ;; cosmium-badger) port=18401 ;;
		esac
		wrk -t2 -c64 -d"${WRK_SECS}s" --latency -s "$WORK/read.lua" "http://127.0.0.1:$port/dbs/bench/colls/items/docs/item-1" >"$WORK/wrk.txt"
		wrkjson "$s" "$WORK/wrk.txt" | tee -a "$RESULTS"
	done
done

# Latency at half load: Partita's peak for hand-signed point reads with this load generator,
# then the same reads paced at half of it.
"$WORK/bench" -endpoint http://127.0.0.1:18301 -label partita -server-pid "$(pid partita)" -mode raw \
	-workload read -items "$ITEMS" -duration 10s -concurrency 64 -json "$WORK/peak.jsonl" | tee -a "$OUT/sdk.txt"
peak=$(sed -n 's/.*"ops_per_s":\([0-9.]*\).*/\1/p' "$WORK/peak.jsonl")
half=$(awk -v p="$peak" 'BEGIN {printf "%d", p/2}')
cat "$WORK/peak.jsonl" >>"$RESULTS"
"$WORK/bench" -endpoint http://127.0.0.1:18301 -label partita-half-load -server-pid "$(pid partita)" -mode raw \
	-workload read -items "$ITEMS" -duration 20s -concurrency 64 -rate "$half" -json "$RESULTS" | tee -a "$OUT/sdk.txt"

go run ./bench/chart -in "$RESULTS" -out "$OUT/throughput.svg" -metric ops_per_s -title "Throughput (operations/s, higher is better)"
go run ./bench/chart -in "$RESULTS" -out "$OUT/p99.svg" -metric p99_ms -log -title "p99 latency (ms, lower is better)"
echo "results: $RESULTS, charts: $OUT/throughput.svg $OUT/p99.svg"
