#!/usr/bin/env bash
# compare.sh runs the published benchmark: every workload through the official Go SDK against
# Partita and cosmium (in memory and with badger), point reads and creates under wrk against
# Partita, cosmium and the bare net/http ceiling, and Partita's point-read latency at half its
# peak. Each run records the server's CPU per operation (the SDK's server_cpu_s over its
# operations; wrk's server_cpu_us_per_op).
# Everything runs on this machine, alternately, and lands as JSON lines in $OUT.
#
#	COSMIUM=/path/to/cosmium bench/compare.sh
#
# cosmium is not part of this repository: build it yourself from its public repository
# (github.com/pikami/cosmium, `go build -o /path/to/cosmium ./cmd/server`). Without COSMIUM
# only Partita and the bare server are measured. Needs wrk (Debian: apt-get install wrk).
#
# Settings (environment): OUT (results directory, default ./bench-results), ITEMS (100000),
# DURATION per run (5s), ROUNDS (2), CONC (16 SDK workers), WRK_SECS (10), WRK_ROUNDS (3),
# STAGES (any of "sdk wrk latency"; all by default), INDEX (default, or none: every server's
# container gets an indexing policy that indexes nothing; results then go by default to
# ./bench-results-index-none, so that the charts do not mix the two), COSMIUM_MEM (1; 0 leaves
# cosmium in memory out).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/wrk.sh # wrkjson, cpusecs, portopen, waitport, checkindex
checkindex

OUT=${OUT:-$PWD/bench-results$([ "$INDEX" = default ] || echo "-index-$INDEX")}
ITEMS=${ITEMS:-100000}
DURATION=${DURATION:-5s}
ROUNDS=${ROUNDS:-2}
CONC=${CONC:-16}
WRK_SECS=${WRK_SECS:-10}
WRK_ROUNDS=${WRK_ROUNDS:-3}
COSMIUM=${COSMIUM:-}
COSMIUM_MEM=${COSMIUM_MEM:-1} # 0: only cosmium with badger
STAGES=${STAGES:-"sdk wrk latency"}
stage() { [[ " $STAGES " == *" $1 "* ]]; }
KEY=C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==

command -v wrk >/dev/null || { echo "compare.sh: wrk is not installed" >&2; exit 1; }
mkdir -p "$OUT"
RESULTS=$OUT/results.jsonl
: >>"$RESULTS"
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
	waitport "$port" && return
	echo "compare.sh: $name did not open port $port" >&2
	exit 1
}
pid() { local v="PID_${1//-/_}"; echo "${!v}"; }

# wrkrun SERVER WORKLOAD SCRIPT PATH: wrk against SERVER, with the server's CPU per request.
wrkrun() {
	local s=$1 port c0
	port=$(port "$s")
	c0=$(cpusecs "$(pid "$s")")
	wrk -t2 -c64 -d"${WRK_SECS}s" --latency -s "$3" "http://127.0.0.1:$port$4" >"$WORK/wrk.txt"
	wrkjson "$s" "$WORK/wrk.txt" "$2" "$(awk -v a="$c0" -v b="$(cpusecs "$(pid "$s")")" 'BEGIN {print b - a}')" | tee -a "$RESULTS"
}

start partita 18301 "$WORK/partita" serve --data "$WORK/partita-data" --addr 127.0.0.1:18301 --tls=false --rate-limit=false --log-level warn
start bare 18300 "$WORK/bare" serve -addr 127.0.0.1:18300
servers=(partita)
urls=(http://127.0.0.1:18301)
if [ -n "$COSMIUM" ]; then
	if [ "$COSMIUM_MEM" = 1 ]; then
		start cosmium-mem 18400 "$COSMIUM" -Host 127.0.0.1 -Port 18400 -RntbdPort 10400 -DisableTls -LogLevel silent
		servers+=(cosmium-mem)
		urls+=(http://127.0.0.1:18400)
	fi
	mkdir -p "$WORK/badger"
	start cosmium-badger 18401 "$COSMIUM" -Host 127.0.0.1 -Port 18401 -RntbdPort 10401 -DisableTls -LogLevel silent -DataStore badger -Persist "$WORK/badger"
	servers+=(cosmium-badger)
	urls+=(http://127.0.0.1:18401)
fi

# The SDK workloads, Partita against each other server in turn, A B A B. The read-only
# workloads run first, on exactly $ITEMS items, so that COUNT and the queries see that many.
common=(-items "$ITEMS" -duration "$DURATION" -concurrency "$CONC" -rounds "$ROUNDS" -partitions 4 -json "$RESULTS")
stage sdk && for i in "${!servers[@]}"; do
	[ "$i" = 0 ] && [ ${#servers[@]} -gt 1 ] && continue
	cmp=()
	if [ "$i" != 0 ]; then
		cmp=(-compare-endpoint "${urls[$i]}" -compare-label "${servers[$i]}" -compare-server-pid "$(pid "${servers[$i]}")")
	fi
	# -reset: each comparison starts from empty containers.
	"$WORK/bench" -index-policy "$INDEX" -endpoint http://127.0.0.1:18301 -label partita -server-pid "$(pid partita)" "${cmp[@]}" \
		"${common[@]}" -reset -workload load,read,query-pk,query-range,query-top,count,ycsb-c | tee -a "$OUT/sdk.txt"
	"$WORK/bench" -index-policy "$INDEX" -endpoint http://127.0.0.1:18301 -label partita -server-pid "$(pid partita)" "${cmp[@]}" \
		"${common[@]}" -workload create,upsert,replace,patch,ycsb-a,ycsb-b,ycsb-f | tee -a "$OUT/sdk.txt"
done

# Point reads and creates under wrk: presigned requests, 64 connections, the servers alternately.
wrk_servers=(partita bare "${servers[@]:1}")
port() { case $1 in partita) echo 18301 ;; bare) echo 18300 ;; cosmium-mem) echo 18400 ;; cosmium-badger) echo 18401 ;; esac; }
if stage wrk; then # the item wrk reads must exist, also when this stage runs alone
	for i in "${!servers[@]}"; do
		"$WORK/bench" -index-policy "$INDEX" -endpoint "${urls[$i]}" -mode raw -workload read -items "$ITEMS" -partitions 4 -duration 1s >/dev/null
	done
	sleep 20 # for the compactions of what was just loaded or written
fi
stage wrk && for r in $(seq "$WRK_ROUNDS"); do
	"$WORK/bare" sign -link dbs/bench/colls/items/docs/item-1 -pk '["pk-1"]' >"$WORK/read.lua"
	for s in "${wrk_servers[@]}"; do
		wrkrun "$s" wrk-read "$WORK/read.lua" /dbs/bench/colls/items/docs/item-1
	done
	# Creates of new 1 KB items, the same way: the server's cost of a write, not the SDK's.
	for s in "${wrk_servers[@]}"; do
		"$WORK/bare" sign -verb POST -link dbs/bench/colls/items >"$WORK/create.lua" # new ids each run
		wrkrun "$s" wrk-create "$WORK/create.lua" /dbs/bench/colls/items/docs
	done
done

# Latency under a steady load below the peak, with the other servers stopped first (cosmium
# with badger keeps compacting gigabytes for minutes) and a pause for Partita's own
# compactions, so that the figures are Partita's and not the machine's:
#   - wrk paced by delay() (each connection waits 1 ms between requests), at 8 to 48
#     connections, against Partita and the bare server: one item, a light load generator;
#     $WRK_ROUNDS rounds, because one 10 s p99 on a shared machine is mostly noise;
#   - the bench tool's raw client reading random items of the $ITEMS, flat out and then paced
#     at half of that peak (open loop), against Partita and the bare server.
if stage latency; then
	for s in "${servers[@]:1}"; do kill "$(pid "$s")" 2>/dev/null || true; done
	"$WORK/bench" -index-policy "$INDEX" -endpoint http://127.0.0.1:18301 -mode raw -workload read -items "$ITEMS" -partitions 4 -duration 1s >/dev/null # loads the items if this stage runs alone
	sleep 20
	"$WORK/bare" sign -link dbs/bench/colls/items/docs/item-1 -pk '["pk-1"]' >"$WORK/paced.lua"
	echo 'function delay() return 1 end' >>"$WORK/paced.lua"
	for r in $(seq "$WRK_ROUNDS"); do
		for c in 8 16 24 32 40 48; do
			for s in partita bare; do
				port=$(port "$s")
				wrk -t2 -c"$c" -d"${WRK_SECS}s" --latency -s "$WORK/paced.lua" "http://127.0.0.1:$port/dbs/bench/colls/items/docs/item-1" >"$WORK/wrk.txt"
				wrkjson "$s" "$WORK/wrk.txt" "wrk-paced-c$c" | tee -a "$RESULTS"
			done
		done
	done
	for s in partita bare; do
		url=http://127.0.0.1:$(port "$s")
		"$WORK/bench" -index-policy "$INDEX" -endpoint "$url" -label "$s-raw" -server-pid "$(pid "$s")" -mode raw -workload read -items "$ITEMS" \
			-partitions 4 -duration 10s -concurrency 64 -json "$WORK/peak.jsonl" | tee -a "$OUT/sdk.txt"
	done
	cat "$WORK/peak.jsonl" >>"$RESULTS"
	peak=$(grep '"server":"partita-raw"' "$WORK/peak.jsonl" | sed -n 's/.*"ops_per_s":\([0-9.]*\).*/\1/p')
	half=$(awk -v p="$peak" 'BEGIN {printf "%d", p/2}')
	for s in partita bare; do
		url=http://127.0.0.1:$(port "$s")
		"$WORK/bench" -index-policy "$INDEX" -endpoint "$url" -label "$s-raw-paced" -server-pid "$(pid "$s")" -mode raw -workload read -items "$ITEMS" \
			-partitions 4 -duration 20s -concurrency 64 -rate "$half" -json "$RESULTS" | tee -a "$OUT/sdk.txt"
	done
fi

# Charts, as in docs/benchmarks.md.
sdk=load,read,query-pk,query-range,query-top,count,ycsb-c,create,upsert,replace,patch,ycsb-a,ycsb-b,ycsb-f
chart() { go run ./bench/chart -in "$RESULTS" "$@" || echo "compare.sh: no chart for $*" >&2; } # a stage run alone lacks some data
chart -out "$OUT/throughput.svg" -metric ops_per_s -log -workloads "$sdk,wrk-read,wrk-create" -servers partita,cosmium-mem,cosmium-badger,bare \
	-title "Throughput (operations/s, log scale, higher is better)"
chart -out "$OUT/p99.svg" -metric p99_ms -log -workloads "$sdk,wrk-read,wrk-create" -servers partita,cosmium-mem,cosmium-badger,bare \
	-title "p99 latency (ms, log scale, lower is better)"
chart -out "$OUT/rss.svg" -metric server_rss_peak_mb -log -workloads "$sdk" -servers partita,cosmium-mem,cosmium-badger \
	-title "Server peak resident memory per workload (MiB, log scale, lower is better)"
chart -out "$OUT/cpu.svg" -metric server_cpu_us_per_op -workloads wrk-read,wrk-create -servers partita,cosmium-mem,cosmium-badger,bare \
	-title "Server CPU per request under wrk (µs, lower is better)"
chart -out "$OUT/paced.svg" -metric p99_ms -workloads wrk-paced-c8,wrk-paced-c16,wrk-paced-c24,wrk-paced-c32,wrk-paced-c40,wrk-paced-c48 -servers partita,bare \
	-title "p99 of paced point reads under wrk (ms; cN: N connections, 1 ms pause each)"
echo "results: $RESULTS, charts: $OUT/*.svg"
