#!/usr/bin/env bash
# size.sh measures each operation's cost on containers of growing size (the engine's
# BenchmarkCostAgainstSize: writes, reads, a logical partition's query page and change feed, a
# page of ORDER BY over the container from its start and its middle, by a unique value and by
# one that n/1,000 items share, a page of a range filter that most items match and of one that
# few do, a retention pass, a reaper round), so that a cost that grows
# with the container rather than with the work shows. Then the same against the size of one
# logical partition (the engine's BenchmarkCostAgainstLogicalSize: writes into it, point reads,
# query, ORDER BY and change-feed pages from its start and its middle). Results land as JSON
# lines in $OUT/size.jsonl and $OUT/size-logical.jsonl (workload: the operation, server: the
# size, us_per_op) and as charts, $OUT/size.svg and $OUT/size-logical.svg.
#
#	bench/size.sh                      # 10,000, 100,000 and 1,000,000 items (about 20 minutes)
#	SIZES=10000,100000 LOGICAL=10,1000 bench/size.sh
#
# Settings (environment; an empty list skips its benchmark): OUT (default ./bench-results),
# SIZES, LOGICAL (logical partition sizes, 10,1000,10000,100000), BENCHTIME (per operation, 3s).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/bench-results}
SIZES=${SIZES-10000,100000,1000000}
LOGICAL=${LOGICAL-10,1000,10000,100000}
mkdir -p "$OUT"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
go test -c -o "$WORK/engine.test" ./internal/engine
# run NAME BENCHMARK SIZES_VARIABLE SIZES WHAT: one benchmark over its sizes, as JSON lines and a
# chart. Its lines read: BenchmarkCostAgainstSize/items=10000/create-2   1000   51625 ns/op
run() {
	(cd "$WORK" && env "$3=$4" ./engine.test -test.run XXX -test.bench "$2" -test.benchtime "${BENCHTIME:-3s}" -test.timeout 2h) | tee "$OUT/$1.txt"
	awk -v b="$2" '$1 ~ "^Benchmark" b "/" {
		split($1, f, "/"); size = substr(f[2], 7); op = f[3]; sub(/-[0-9]+$/, "", op)
		printf "{\"workload\":\"%s\",\"server\":\"%s items\",\"us_per_op\":%.3f}\n", op, size, $3 / 1000
	}' "$OUT/$1.txt" >"$OUT/$1.jsonl"
	go run ./bench/chart -in "$OUT/$1.jsonl" -out "$OUT/$1.svg" -metric us_per_op -log \
		-title "Time per operation against $5 (µs, log scale; flat is the goal)"
	echo "results: $OUT/$1.jsonl, chart: $OUT/$1.svg"
}
[ -z "$SIZES" ] || run size 'CostAgainstSize' PARTITA_BENCH_SIZES "$SIZES" "the container's size"
[ -z "$LOGICAL" ] || run size-logical 'CostAgainstLogicalSize' PARTITA_BENCH_LOGICAL "$LOGICAL" "the size of one logical partition"
