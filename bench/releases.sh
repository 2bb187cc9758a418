#!/usr/bin/env bash
# releases.sh measures this tree against a previous release (PREV, a commit; default e902683)
# on this machine, in one run with bench's alternating comparison (-compare-endpoint): one node
# of each (creates and point reads), then two clusters of three nodes, one of each release,
# through a node that forwards its writes to the partitions' leader (the node the container
# was created through) and through the leader's node, and two clusters of four nodes with three replicas of each partition,
# through the node that holds no replica of the container's one partition. The cluster
# processes share the machine's cores; the alternation runs one cluster's round while the
# other's idles.
#
#	bench/releases.sh
#
# Settings (environment): PREV, OUT (results directory, default ./bench-results), SECS (5),
# ROUNDS (3), CONC (16), ITEMS (5000).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
PREV=${PREV:-e902683}
OUT=${OUT:-$PWD/bench-results}
SECS=${SECS:-5}
ROUNDS=${ROUNDS:-3}
CONC=${CONC:-16}
ITEMS=${ITEMS:-5000}
WORK=$(mktemp -d)
PIDS=()
cleanup() {
	stop_all
	git worktree remove --force "$WORK/prev" 2>/dev/null || true
	rm -rf "$WORK"
}
trap cleanup EXIT
mkdir -p "$OUT"
git worktree add --detach "$WORK/prev" "$PREV" >/dev/null
(cd "$WORK/prev" && go build -o "$WORK/partita-prev" ./cmd/partita)
go build -o "$WORK/partita" ./cmd/partita
go build -o "$WORK/bench" ./bench

common=(--cql-addr= --tls=false --rate-limit=false --log-level warn)
run() { "$WORK/bench" -mode raw -partitions 2 -items "$ITEMS" -concurrency "$CONC" -duration "${SECS}s" -rounds "$ROUNDS" -json "$OUT/releases.jsonl" "$@"; }

"$WORK/partita-prev" serve --data "$WORK/one-prev" --addr 127.0.0.1:18481 "${common[@]}" &
PIDS+=($!)
"$WORK/partita" serve --data "$WORK/one" --addr 127.0.0.1:18482 "${common[@]}" &
PIDS+=($!)
listening 18481 18482
echo "== one node: $PREV (A) against this tree (B)"
run -endpoint http://127.0.0.1:18481/ -label "one-node-$PREV" -compare-endpoint http://127.0.0.1:18482/ -compare-label one-node-this -workload create,read
stop_all

export PARTITA_CLUSTER_SECRET=bench-cluster-secret-of-enough-bytes
# cluster starts N nodes of release R (prev or this) as one cluster, the first three founding
# it: cluster addresses from BASE+1 (three ports each), API ports APIi, data under NAME; the
# arguments after N are the nodes' own.
cluster() {
	local name=$1 r=$2 base=$3 api=$4 n=$5
	shift 5
	local bin=$WORK/partita
	[ "$r" = prev ] && bin=$WORK/partita-prev
	local join=127.0.0.1:$((base + 1)),127.0.0.1:$((base + 4)),127.0.0.1:$((base + 7))
	for i in $(seq "$n"); do
		"$bin" serve --data "$WORK/$name$i" --addr 127.0.0.1:$api$i --cluster-addr 127.0.0.1:$((base - 2 + 3 * i)) --join "$join" "${common[@]}" "$@" &
		PIDS+=($!)
	done
}
cluster this this 17500 1859 3
cluster prev prev 17600 1869 3
listening 18591 18592 18593 18691 18692 18693
# The containers are created and loaded through each cluster's first node, which leads their
# partitions; the writes measured go through the second.
for port in 18591 18691; do
	"$WORK/bench" -mode raw -partitions 2 -items "$ITEMS" -concurrency "$CONC" -duration 1s -rounds 1 -endpoint "http://127.0.0.1:$port/" -workload read >/dev/null
done
echo "== through a node that forwards its writes: $PREV (A) against this tree (B)"
run -endpoint http://127.0.0.1:18692/ -label "cluster-follower-$PREV" -compare-endpoint http://127.0.0.1:18592/ -compare-label cluster-follower-this -workload create,read
echo "== through the leader's node: $PREV (A) against this tree (B)"
run -endpoint http://127.0.0.1:18691/ -label "cluster-leader-$PREV" -compare-endpoint http://127.0.0.1:18591/ -compare-label cluster-leader-this -workload create
stop_all

# Four nodes each, three replicas: the container's one partition is on three of them.
cluster qthis this 17700 1879 4 --replicas 3
cluster qprev prev 17800 1889 4 --replicas 3
listening 18791 18792 18793 18794 18891 18892 18893 18894
# elsewhere is the port of the node of a cluster (ports api1-api4) that holds no replica.
elsewhere() {
	for i in 2 3 4; do
		if curl -s "http://127.0.0.1:$1$i/metrics" | grep -q '^partita_node_replicas 0$'; then
			echo "$1$i"
		fi
	done
}
for api in 1879 1889; do
	"$WORK/bench" -mode raw -partitions 1 -items "$ITEMS" -concurrency "$CONC" -duration 1s -rounds 1 -endpoint "http://127.0.0.1:${api}1/" -workload read >/dev/null
done
this=$(elsewhere 1879)
prev=$(elsewhere 1889)
echo "== through a node that holds no replica: $PREV (A, :$prev) against this tree (B, :$this)"
"$WORK/bench" -mode raw -partitions 1 -items "$ITEMS" -concurrency "$CONC" -duration "${SECS}s" -rounds "$ROUNDS" -json "$OUT/releases.jsonl" \
	-endpoint "http://127.0.0.1:$prev/" -label "cluster-elsewhere-$PREV" -compare-endpoint "http://127.0.0.1:$this/" -compare-label cluster-elsewhere-this -workload read,create
