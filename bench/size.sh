#!/usr/bin/env bash
# size.sh measures each operation's cost on containers of growing size (the engine's
# BenchmarkCostAgainstSize: writes, reads, a logical partition's query page and change feed, a
# retention pass, a reaper round), so that a cost that grows with the container rather than with
# the work shows. Results land as JSON lines in $OUT/size.jsonl (workload: the operation,
# server: the size, us_per_op) and as a chart, $OUT/size.svg.
#
#	bench/size.sh                      # 10,000, 100,000 and 1,000,000 items (about 15 minutes)
#	SIZES=10000,100000 bench/size.sh
#
# Settings (environment): OUT (default ./bench-results), SIZES, BENCHTIME (per operation, 3s).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/bench-results}
SIZES=${SIZES:-10000,100000,1000000}
mkdir -p "$OUT"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
go test -c -o "$WORK/engine.test" ./internal/engine
(cd "$WORK" && PARTITA_BENCH_SIZES=$SIZES ./engine.test -test.run XXX -test.bench CostAgainstSize -test.benchtime "${BENCHTIME:-3s}") | tee "$OUT/size.txt"
# BenchmarkCostAgainstSize/items=10000/create-2   1000   51625 ns/op
awk '/^BenchmarkCostAgainstSize\// {
	split($1, f, "/"); size = substr(f[2], 7); op = f[3]; sub(/-[0-9]+$/, "", op)
	printf "{\"workload\":\"%s\",\"server\":\"%s items\",\"us_per_op\":%.3f}\n", op, size, $3 / 1000
}' "$OUT/size.txt" >"$OUT/size.jsonl"
go run ./bench/chart -in "$OUT/size.jsonl" -out "$OUT/size.svg" -metric us_per_op -log \
	-title "Time per operation against the container's size (µs, log scale; flat is the goal)"
echo "results: $OUT/size.jsonl, chart: $OUT/size.svg"
