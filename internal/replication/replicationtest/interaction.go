package replicationtest

import (
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/partition"
	"github.com/partita-db/partita/internal/partition/partitiontest"
	"github.com/partita-db/partita/internal/replication"
)

// Interaction runs datadriven scenarios over a Harness, in the style of etcd raft's
// interaction tests: each command acts on the cluster and prints what a reader checks. The
// commands:
//
//	nodes n=N [seed=S]
//	    a cluster of N empty nodes, numbered from 1 (the first command)
//	add-node id=N
//	    one more empty node
//	bootstrap group=G nodes=(1,2,3)
//	    partition G over the whole EPK space, with a replica on each node (replica i on the
//	    i-th node named)
//	campaign group=G node=N
//	    node N's replica stands for election
//	tick [n=K]
//	    K ticks of every node's Raft clock, the cluster settling after each
//	stabilize
//	    waits until nothing is in flight
//	status [group=G] [noindex]
//	    each node's replica of G (or of every group): its id, whether it leads, what it applied
//	    (noindex: not what it applied, for stories where a random election may add entries)
//	leader group=G
//	    the node whose replica leads G ("none")
//	create|replace|upsert|delete|read|mutate pk=P id=I [group=G] [...]
//	batch [group=G]
//	get pk=P id=I [group=G]
//	    item operations on G's leaseholder (G: the group whose range holds P, by default), as
//	    the partition scenarios write them (partitiontest.Items); get is a point read after a
//	    read index
//	items group=G
//	    the items G's leaseholder holds, in creation order
//	cut nodes=(1) [from=(2,3)]
//	    cuts every link between the nodes named and the others (or those of from)
//	heal
//	    restores every link
//	crash node=N [keep=P] [seed=S]
//	    the node stops at once: killed (keep=100, the default), or its power cut, keeping what
//	    was synced and of the rest each block with a chance of P percent
//	restart node=N
//	    starts a stopped node again on its disk
//	wipe node=N
//	    the node loses its disk and starts again empty, as another store
//	compact group=G node=N
//	    truncates node N's log of G up to what it applied: a follower that needs more gets a
//	    snapshot
//	snapshots
//	    how many snapshots each node has sent and installed
//	add-learner group=G node=N | promote group=G replica=R | remove group=G replica=R
//	replace-replica group=G replica=R node=N
//	    membership changes on G's leader; replace-replica adds a learner on node N, and once it
//	    has the state, promotes it and removes replica R in one joint change
//	transfer-leader group=G to=R
//	    G's leader hands its leadership to replica R; prints the roles only, since the
//	    entries of the elections before it depend on their random timeouts
//	split group=G at-pk=P left=L right=R
//	    G's leaseholder splits its partition at P's EPK into L and R: the start, the build,
//	    the commit, each an entry of G's log
//	check [group=G] [noindex]
//	    waits until nothing is in flight, then checks that every replica of G (of every group)
//	    holds the same bytes at the same applied index (noindex: without printing it)
type Interaction struct {
	t     testing.TB
	h     *Harness
	items *partitiontest.Items
	// groups are every group created, with their ranges.
	groups map[replication.GroupID]epk.Range
	// noIndex leaves applied indexes out of what status and check print.
	noIndex bool
}

// NewInteraction returns an interaction with no cluster yet.
func NewInteraction(t testing.TB) *Interaction {
	return &Interaction{t: t, items: partitiontest.NewItems(nil), groups: map[replication.GroupID]epk.Range{}}
}

// Close stops the cluster.
func (in *Interaction) Close() {
	if in.h != nil {
		in.h.Close()
	}
}

// Run runs one command.
func (in *Interaction) Run(t *testing.T, d *datadriven.TestData) string {
	in.t = t
	if d.Cmd != "nodes" && in.h == nil {
		t.Fatal("start with: nodes n=N")
	}
	switch d.Cmd {
	case "nodes", "add-node", "bootstrap", "campaign", "tick", "stabilize", "status", "leader":
		return in.cluster(d)
	case "create", "replace", "upsert", "delete", "read", "mutate", "batch", "get", "items":
		return in.itemCmd(d)
	case "cut", "heal", "crash", "restart", "wipe":
		return in.fault(d)
	case "compact", "snapshots", "add-learner", "promote", "remove", "replace-replica", "transfer-leader":
		return in.membership(d)
	case "split":
		return in.split(d)
	case "check":
		return in.check(d)
	}
	t.Fatalf("unknown command %s", d.Cmd)
	return ""
}

// Arguments.

func (in *Interaction) group(d *datadriven.TestData) replication.GroupID {
	var g uint32
	d.ScanArgs(in.t, "group", &g)
	return Group(g)
}

func (in *Interaction) node(d *datadriven.TestData, key string) *Node {
	var id int
	d.ScanArgs(in.t, key, &id)
	n := in.h.Node(replication.NodeID(id))
	if n == nil {
		in.t.Fatalf("no node %d", id)
	}
	return n
}

func (in *Interaction) nodeList(d *datadriven.TestData, key string) []replication.NodeID {
	a, ok := d.Arg(key)
	if !ok {
		return nil
	}
	var out []replication.NodeID
	for _, v := range a.Vals {
		n, err := strconv.Atoi(v)
		if err != nil {
			in.t.Fatalf("%s: %v", key, err)
		}
		out = append(out, replication.NodeID(n))
	}
	return out
}

// sortedGroups lists the groups created, in order.
func (in *Interaction) sortedGroups() []replication.GroupID {
	var gs []replication.GroupID
	for g := range in.groups {
		gs = append(gs, g)
	}
	slices.Sort(gs)
	return gs
}

// owner is the live group whose range holds e: the one with the narrowest range that holds it,
// since a split leaves its parent's range on record.
func (in *Interaction) owner(e epk.EPK) replication.GroupID {
	var best replication.GroupID
	for _, g := range in.sortedGroups() {
		r := in.groups[g]
		if r.Contains(e) && (best == 0 || r.Max <= in.groups[best].Max && r.Min >= in.groups[best].Min) {
			best = g
		}
	}
	return best
}

const opTimeout = 5 * time.Second

// leaderOf is the node that leads g, waiting for one (up to 100 ticks).
func (in *Interaction) leaderOf(g replication.GroupID) *Node {
	n := in.h.WaitLeader(g, 100)
	if n == nil {
		in.t.Fatalf("group %d has no leader", PartitionOf(g))
	}
	return n
}

// awaitLease waits until g's leader has applied its lease entry.
func (in *Interaction) awaitLease(g replication.GroupID) {
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		taken := false
		in.leaderOf(g).call(g, func(p *partition.Partition) error {
			taken = p.LeaseTaken()
			return nil
		})
		if taken {
			return
		}
		if time.Now().After(deadline) {
			in.t.Fatalf("group %d's leader took no lease", PartitionOf(g))
		}
		in.h.notify()
	}
}

func nodeName(n *Node) string {
	if n == nil {
		return "none"
	}
	return fmt.Sprintf("n%d", n.ID)
}
