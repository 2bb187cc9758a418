#!/usr/bin/env bash
# cluster.sh measures a three-node cluster (docs/cluster.md) beside one node, on this machine,
# in one run with bench's alternating comparison (-compare-endpoint): creates, point reads and a
# cross-partition count, first one node against the cluster's leader (the node the container
# was created through, which leads its partitions), then the leader against a node that
# forwards writes to it and reads through its own replica. All four processes share the
# machine's cores, so the cluster's figures are what three nodes on one machine give.
#
#	bench/cluster.sh
#
# Settings (environment): BIN (a partita binary; default: built from this tree), OUT (results
# directory, default ./bench-results), SECS (5), ROUNDS (2), CONC (16), ITEMS (5000).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/bench-results}
SECS=${SECS:-5}
ROUNDS=${ROUNDS:-2}
CONC=${CONC:-16}
ITEMS=${ITEMS:-5000}
WORK=$(mktemp -d)
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$WORK"
}
trap cleanup EXIT
mkdir -p "$OUT"
if [ -z "${BIN:-}" ]; then
	BIN=$WORK/partita
	go build -o "$BIN" ./cmd/partita
fi
go build -o "$WORK/bench" ./bench

common=(--cql-addr= --tls=false --rate-limit=false --log-level warn)
"$BIN" serve --data "$WORK/one" --addr 127.0.0.1:18181 "${common[@]}" &
PIDS+=($!)
export PARTITA_CLUSTER_SECRET=bench-cluster-secret-of-enough-bytes
join=127.0.0.1:17201,127.0.0.1:17204,127.0.0.1:17207
for i in 1 2 3; do
	"$BIN" serve --data "$WORK/n$i" --addr 127.0.0.1:1819$i --cluster-addr 127.0.0.1:$((17198 + 3 * i)) --join $join "${common[@]}" &
	PIDS+=($!)
done
for port in 18181 18191 18192 18193; do
	for _ in $(seq 200); do
		(exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && break
		sleep 0.1
	done
done
run() { "$WORK/bench" -mode raw -partitions 2 -items "$ITEMS" -concurrency "$CONC" -duration "${SECS}s" -rounds "$ROUNDS" -json "$OUT/cluster.jsonl" "$@"; }
echo "== one node (A) against the cluster's leader node (B)"
run -endpoint http://127.0.0.1:18181/ -label one-node -compare-endpoint http://127.0.0.1:18191/ -compare-label cluster-leader -workload create,read,count
echo "== the cluster's leader node (A) against a node that forwards its writes (B)"
run -endpoint http://127.0.0.1:18191/ -label cluster-leader -compare-endpoint http://127.0.0.1:18192/ -compare-label cluster-follower -workload create,read,count
