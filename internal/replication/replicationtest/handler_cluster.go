package replicationtest

import (
	"fmt"
	"strings"

	"github.com/cockroachdb/datadriven"

	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/replication"
)

// cluster handles nodes, add-node, bootstrap, campaign, tick, stabilize, status and leader.
func (in *Interaction) cluster(d *datadriven.TestData) string {
	t := in.t
	switch d.Cmd {
	case "nodes":
		if in.h != nil {
			t.Fatal("nodes: the cluster exists already")
		}
		var n int
		seed := uint64(1)
		d.ScanArgs(t, "n", &n)
		d.MaybeScanArgs(t, "seed", &seed)
		h, err := New(n, seed, nil)
		if err != nil {
			t.Fatal(err)
		}
		in.h = h
		return fmt.Sprintf("%d nodes", n)
	case "add-node":
		var id int
		d.ScanArgs(t, "id", &id)
		if _, err := in.h.AddNode(replication.NodeID(id)); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("n%d added", id)
	case "bootstrap":
		g := in.group(d)
		nodes := in.nodeList(d, "nodes")
		if err := in.h.Bootstrap(PartitionOf(g), epk.All, nodes...); err != nil {
			return "error: " + err.Error()
		}
		in.groups[g] = epk.All
		in.h.Stabilize()
		return in.status(g)
	case "campaign":
		g, n := in.group(d), in.node(d, "node")
		if err := n.Host.Campaign(g); err != nil {
			t.Fatal(err)
		}
		in.h.Stabilize()
		return in.status(g)
	case "tick":
		n := 1
		d.MaybeScanArgs(t, "n", &n)
		in.h.Tick(n)
		return "ok"
	case "stabilize":
		in.h.Stabilize()
		return "ok"
	case "status":
		// The cluster runs by itself: a write returns once a quorum has it, and the other
		// replicas apply it when the next messages arrive. A status shows the settled state.
		in.h.Stabilize()
		in.noIndex = d.HasArg("noindex")
		defer func() { in.noIndex = false }()
		if d.HasArg("group") {
			return in.status(in.group(d))
		}
		var out []string
		for _, g := range in.sortedGroups() {
			out = append(out, in.status(g))
		}
		return strings.Join(out, "\n")
	case "leader":
		return nodeName(in.h.Leader(in.group(d)))
	}
	return ""
}

// status describes each node's replica of g.
func (in *Interaction) status(g replication.GroupID) string {
	var b strings.Builder
	fmt.Fprintf(&b, "group %d:", PartitionOf(g))
	for _, n := range in.h.Nodes() {
		if !n.Up() {
			fmt.Fprintf(&b, " n%d down", n.ID)
			continue
		}
		st, ok := n.Host.Status(g)
		if !ok {
			continue
		}
		role := "follower"
		switch {
		case st.Leading:
			role = "leader"
		case isLearner(st.Descriptor, st.Replica):
			role = "learner"
		}
		fmt.Fprintf(&b, " n%d:r%d %s", n.ID, st.Replica, role)
		if !in.noIndex {
			fmt.Fprintf(&b, " applied=%d", st.Applied)
		}
	}
	return b.String()
}

func isLearner(d replication.Descriptor, r replication.ReplicaID) bool {
	for _, l := range d.Learners {
		if l == r {
			return true
		}
	}
	return false
}
