#!/usr/bin/env bash
# cluster.sh measures a three-node cluster (docs/cluster.md) beside one node, on this machine,
# in one run with bench's alternating comparison (-compare-endpoint): creates, point reads and a
# cross-partition count, first one node against the cluster's leader (the node the container
# was created through, which leads its partitions), then the leader against a node that
# forwards writes to it and reads through its own replica. All four processes share the
# machine's cores, so the cluster's figures are what three nodes on one machine give. Then
# etcd's three-member puts beside the cluster's creates (bench/etcd). Then, on
# a fresh cluster of four nodes with three replicas of each partition, a node that holds the
# one partition of a container against the node that holds none, which asks the others for
# everything. Last, reads spread over three nodes at Strong against the weaker levels.
#
#	bench/cluster.sh
#
# Settings (environment): BIN (a partita binary; default: built from this tree), OUT (results
# directory, default ./bench-results), SECS (5), ROUNDS (2), CONC (16), ITEMS (5000).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
OUT=${OUT:-$PWD/bench-results}
SECS=${SECS:-5}
ROUNDS=${ROUNDS:-2}
CONC=${CONC:-16}
ITEMS=${ITEMS:-5000}
WORK=$(mktemp -d)
PIDS=()
cleanup() {
	stop_all
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
listening 18181 18191 18192 18193
run() { "$WORK/bench" -mode raw -partitions 2 -items "$ITEMS" -concurrency "$CONC" -duration "${SECS}s" -rounds "$ROUNDS" -json "$OUT/cluster.jsonl" "$@"; }
echo "== one node (A) against the cluster's leader node (B)"
run -endpoint http://127.0.0.1:18181/ -label one-node -compare-endpoint http://127.0.0.1:18191/ -compare-label cluster-leader -workload create,read,count
echo "== the cluster's leader node (A) against a node that forwards its writes (B)"
run -endpoint http://127.0.0.1:18191/ -label cluster-leader -compare-endpoint http://127.0.0.1:18192/ -compare-label cluster-follower -workload create,read,count

# etcd of the release Partita's control plane embeds (bench/etcd), three members of one process
# each on loopback beside the cluster: its puts of the same items (bench -mode etcd) against
# the cluster's creates through the leader's node and through a node that forwards them.
go build -o "$WORK/etcd" ./bench/etcd
members=m1=http://127.0.0.1:17511,m2=http://127.0.0.1:17512,m3=http://127.0.0.1:17513
for i in 1 2 3; do
	"$WORK/etcd" -name "m$i" -data "$WORK/etcd$i" -client "127.0.0.1:1750$i" -peer "127.0.0.1:1751$i" -cluster "$members" &
	PIDS+=($!)
done
listening 17501 17502 17503
etcd=http://127.0.0.1:17501,http://127.0.0.1:17502,http://127.0.0.1:17503
for node in 18191:cluster-leader 18192:cluster-follower; do
	echo "== etcd, three members (A) against the cluster's ${node#*:} node (B)"
	run -mode etcd -endpoint "$etcd" -label etcd-3 -compare-mode raw -compare-endpoint "http://127.0.0.1:${node%%:*}/" -compare-label "${node#*:}" -workload create
done

# Four nodes, three replicas: the container's one partition is on three of them.
stop_all
join=127.0.0.1:17301,127.0.0.1:17304,127.0.0.1:17307
for i in 1 2 3 4; do
	"$BIN" serve --data "$WORK/m$i" --addr 127.0.0.1:1828$i --cluster-addr 127.0.0.1:$((17298 + 3 * i)) --join $join --replicas 3 "${common[@]}" &
	PIDS+=($!)
done
listening 18281 18282 18283 18284
# Create and load the container through the first node, then find the node without a replica.
"$WORK/bench" -mode raw -partitions 1 -items "$ITEMS" -concurrency "$CONC" -duration 1s -rounds 1 -endpoint http://127.0.0.1:18281/ -workload read >/dev/null
elsewhere=
for port in 18282 18283 18284; do
	if curl -s "http://127.0.0.1:$port/metrics" | grep -q '^partita_node_replicas 0$'; then
		elsewhere=$port
	fi
done
echo "== a node holding the partition (A) against a node holding none (B, 127.0.0.1:$elsewhere)"
"$WORK/bench" -mode raw -partitions 1 -items "$ITEMS" -concurrency "$CONC" -duration "${SECS}s" -rounds "$ROUNDS" -json "$OUT/cluster.jsonl" \
	-endpoint http://127.0.0.1:18281/ -label cluster-holder -compare-endpoint "http://127.0.0.1:$elsewhere/" -compare-label cluster-elsewhere -workload create,read,count

# Consistency levels: three nodes whose account level is Strong, the container created and
# loaded through the first (which leads its partitions); reads spread over all three nodes in
# turn, at Strong (each read a ReadIndex from the leader first) against Bounded Staleness (a
# ReadIndex per replica every 2.5 s), Session and Eventual (each node's own replica at once).
stop_all
join=127.0.0.1:17401,127.0.0.1:17404,127.0.0.1:17407
for i in 1 2 3; do
	"$BIN" serve --data "$WORK/s$i" --addr 127.0.0.1:1838$i --cluster-addr 127.0.0.1:$((17398 + 3 * i)) --join $join --consistency Strong "${common[@]}" &
	PIDS+=($!)
done
listening 18381 18382 18383
"$WORK/bench" -mode raw -partitions 2 -items "$ITEMS" -concurrency "$CONC" -duration 1s -rounds 1 -endpoint http://127.0.0.1:18381/ -workload read >/dev/null
all=http://127.0.0.1:18381/,http://127.0.0.1:18382/,http://127.0.0.1:18383/
for level in BoundedStaleness Session Eventual; do
	echo "== reads through all three nodes: Strong (A) against $level (B)"
	"$WORK/bench" -mode raw -partitions 2 -items "$ITEMS" -concurrency "$CONC" -duration "${SECS}s" -rounds "$ROUNDS" -json "$OUT/cluster.jsonl" \
		-endpoint "$all" -label cluster-strong -consistency Strong \
		-compare-endpoint "$all" -compare-label "cluster-$level" -compare-consistency "$level" -workload read,count
done
for port in 18381 18382 18383; do
	echo "node $port: $(curl -s http://127.0.0.1:$port/metrics | grep '^partita_replica_reads_total' | tr '\n' ' ')"
done
