#!/usr/bin/env bash
# memory.sh measures Partita's resident memory: after loading N items of 1 KB, and after
# reading them at random long enough to fill the block cache, for several --cache-size
# settings and data sizes. Each case starts a fresh server; results land as JSON lines
# (server_rss_mb at the end of each run, server_rss_peak_mb sampled during it).
#
#	bench/memory.sh                      # OUT=./bench-results, cases below
#	CASES="100000:128 100000:32" bench/memory.sh
set -euo pipefail
cd "$(dirname "$0")/.."

OUT=${OUT:-$PWD/bench-results}
CASES=${CASES:-"100000:128 100000:32 300000:32"} # items:cache MiB
mkdir -p "$OUT"
WORK=$(mktemp -d)
SERVER=
cleanup() {
	[ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$WORK"
}
trap cleanup EXIT

go build -o "$WORK/partita" ./cmd/partita
go build -o "$WORK/bench" ./bench

for c in $CASES; do
	items=${c%%:*} cache=${c##*:}
	rm -rf "$WORK/data"
	"$WORK/partita" serve --data "$WORK/data" --addr 127.0.0.1:18501 --tls=false --rate-limit=false \
		--log-level warn --cache-size $((cache << 20)) >"$OUT/memory-partita.log" 2>&1 &
	SERVER=$!
	sleep 1
	label="partita-${items}items-cache${cache}MiB"
	"$WORK/bench" -endpoint http://127.0.0.1:18501 -mode raw -label "$label" -server-pid "$SERVER" \
		-workload load,read -items "$items" -concurrency 32 -duration 30s -json "$OUT/memory.jsonl" | tee -a "$OUT/memory.txt"
	echo "$label: data directory $(du -sm "$WORK/data" | cut -f1) MiB" | tee -a "$OUT/memory.txt"
	kill "$SERVER"
	wait "$SERVER" || true
	SERVER=
done
