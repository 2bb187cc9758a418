#!/usr/bin/env bash
# ab.sh compares two Partita binaries, A (before) and B (after), on point reads and creates
# under wrk: both servers run at once on this machine, loaded with the same items, and are
# measured alternately in one run, so that they share the machine's noise. Results land as
# JSON lines in $OUT/ab.jsonl; the end prints the medians per workload and binary.
#
#	A=/tmp/partita-before B=/tmp/partita-after bench/ab.sh
#
# Settings (environment): A_LABEL and B_LABEL (before, after), OUT (results directory,
# default ./bench-results), ITEMS (100000), ROUNDS (5), WRK_SECS (10), A_PORT and B_PORT
# (18311, 18312), INDEX (default, or none: both containers get an indexing policy that
# indexes nothing). Needs wrk (Debian: apt-get install wrk).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/wrk.sh # wrkjson, cpusecs, portopen, waitport, checkindex
checkindex

: "${A:?A must name the first Partita binary}" "${B:?B must name the second Partita binary}"
A_LABEL=${A_LABEL:-before}
B_LABEL=${B_LABEL:-after}
OUT=${OUT:-$PWD/bench-results}
ITEMS=${ITEMS:-100000}
ROUNDS=${ROUNDS:-5}
WRK_SECS=${WRK_SECS:-10}
declare -A BIN=([A]=$A [B]=$B) LABEL=([A]=$A_LABEL [B]=$B_LABEL) PORT=([A]=${A_PORT:-18311} [B]=${B_PORT:-18312}) PID=()

command -v wrk >/dev/null || { echo "ab.sh: wrk is not installed" >&2; exit 1; }
mkdir -p "$OUT"
WORK=$(mktemp -d)
cleanup() {
	for p in "${PID[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$WORK"
}
trap cleanup EXIT

# The load tools come from this tree for both binaries: only the server differs.
go build -o "$WORK/bare" ./bench/bare
go build -o "$WORK/bench" ./bench

for x in A B; do
	port=${PORT[$x]}
	# A server already on the port would be measured in place of ours.
	if portopen "$port"; then echo "ab.sh: port $port is taken" >&2; exit 1; fi
	"${BIN[$x]}" serve --data "$WORK/data-$x" --addr "127.0.0.1:$port" --cql-addr "" --tls=false --rate-limit=false --log-level warn \
		>"$OUT/ab-${LABEL[$x]}.log" 2>&1 &
	PID[$x]=$!
	waitport "$port" || { echo "ab.sh: ${LABEL[$x]} did not open port $port" >&2; exit 1; }
	"$WORK/bench" -index-policy "$INDEX" -endpoint "http://127.0.0.1:$port" -mode raw -workload read -items "$ITEMS" -partitions 4 -duration 1s >/dev/null
done
sleep 20 # for the compactions of what was just loaded

# run X WORKLOAD: one wrk run against binary X, as a JSON line. Signed just before, as a
# signature is valid for 15 minutes, and each create script has its own ids.
run() {
	local x=$1 w=$2 url=http://127.0.0.1:${PORT[$1]}/dbs/bench/colls/items/docs
	if [ "$w" = wrk-read ]; then
		"$WORK/bare" sign -link dbs/bench/colls/items/docs/item-1 -pk '["pk-1"]' >"$WORK/script.lua"
		url=$url/item-1
	else
		"$WORK/bare" sign -verb POST -link dbs/bench/colls/items >"$WORK/script.lua"
	fi
	local c0 c1
	c0=$(cpusecs "${PID[$x]}")
	wrk -t2 -c64 -d"${WRK_SECS}s" --latency -s "$WORK/script.lua" "$url" >"$WORK/wrk.txt"
	kill -0 "${PID[$x]}" 2>/dev/null || { echo "ab.sh: ${LABEL[$x]} exited, see $OUT/ab-${LABEL[$x]}.log" >&2; exit 1; }
	c1=$(cpusecs "${PID[$x]}")
	wrkjson "${LABEL[$x]}" "$WORK/wrk.txt" "$w" "$(awk -v a="$c0" -v b="$c1" 'BEGIN {print b - a}')" | tee -a "$OUT/ab.jsonl" "$WORK/run.jsonl"
}

# All read rounds first, then the creates: reads then see settled data, not the compactions
# of the items just created. Even rounds run B before A, so that neither always goes first.
for w in wrk-read wrk-create; do
	for r in $(seq "$ROUNDS"); do
		order=(A B)
		[ $((r % 2)) = 0 ] && order=(B A)
		for x in "${order[@]}"; do run "$x" "$w"; done
	done
done

# Medians of this run's rounds; spread is (max - min) / median of ops/s, to judge the noise.
awk -v a="$A_LABEL" -v b="$B_LABEL" '
	function f(k,   m) { match($0, "\"" k "\":\"?[^,\"}]*"); m = substr($0, RSTART, RLENGTH); sub(/^[^:]*:"?/, "", m); return m }
	function med(s,   v, n, i, j, t) {
		n = split(s, v, " ")
		for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j-1] + 0 > v[j] + 0; j--) { t = v[j]; v[j] = v[j-1]; v[j-1] = t }
		lo = v[1]; hi = v[n]
		return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
	}
	{ k = f("workload") SUBSEP f("server"); if (!(f("workload") in seen)) { seen[f("workload")]; ws[++nw] = f("workload") }
	  ops[k] = ops[k] " " f("ops_per_s"); p50[k] = p50[k] " " f("p50_ms"); p99[k] = p99[k] " " f("p99_ms"); bad[k] += f("non_2xx")
	  cpu[k] = cpu[k] " " f("server_cpu_us_per_op") }
	END {
		print "| workload | binary | ops/s | spread | p50 ms | p99 ms | CPU µs/op | non-2xx | B/A ops/s | B/A p50 | B/A p99 | B/A CPU/op |"
		print "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
		for (i = 1; i <= nw; i++) {
			ka = ws[i] SUBSEP a; kb = ws[i] SUBSEP b
			oa = med(ops[ka]); sa = (hi - lo) / oa; la = med(p50[ka]); ta = med(p99[ka]); ca = med(cpu[ka])
			ob = med(ops[kb]); sb = (hi - lo) / ob; lb = med(p50[kb]); tb = med(p99[kb]); cb = med(cpu[kb])
			printf "| %s | %s | %.0f | %.0f%% | %.2f | %.2f | %.1f | %d | | | | |\n", ws[i], a, oa, 100 * sa, la, ta, ca, bad[ka]
			printf "| %s | %s | %.0f | %.0f%% | %.2f | %.2f | %.1f | %d | %.3f | %.3f | %.3f | %.3f |\n", ws[i], b, ob, 100 * sb, lb, tb, cb, bad[kb], ob / oa, lb / la, tb / ta, cb / ca
		}
	}' "$WORK/run.jsonl"
