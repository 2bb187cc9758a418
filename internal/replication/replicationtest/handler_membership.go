package replicationtest

import (
	"fmt"
	"strings"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/partita-db/partita/internal/replication"
)

// membership handles compact, snapshots, add-learner, promote, remove, replace-replica and
// transfer-leader.
func (in *Interaction) membership(d *datadriven.TestData) string {
	t := in.t
	switch d.Cmd {
	case "compact":
		g, n := in.group(d), in.node(d, "node")
		if err := n.Host.CompactLog(g); err != nil {
			return "error: " + err.Error()
		}
		return "ok"
	case "snapshots":
		var out []string
		for _, n := range in.h.Nodes() {
			if !n.Up() {
				continue
			}
			sent, installed := n.Host.Snapshots()
			out = append(out, fmt.Sprintf("n%d: sent %d, installed %d", n.ID, sent, installed))
		}
		return strings.Join(out, "\n")
	case "add-learner":
		g, n := in.group(d), in.node(d, "node")
		added, err := in.change(g, replication.Change{Kind: replication.AddLearner, Node: n.ID, Store: n.Member().Store})
		if err != nil {
			return "error: " + err.Error()
		}
		in.h.Tick(3)
		return fmt.Sprintf("r%d added on n%d as a learner\n%s", added[0].Replica, n.ID, in.status(g))
	case "promote", "remove":
		g := in.group(d)
		var r uint64
		d.ScanArgs(t, "replica", &r)
		kind := replication.AddVoter
		if d.Cmd == "remove" {
			kind = replication.Remove
		}
		if _, err := in.change(g, replication.Change{Kind: kind, Replica: replication.ReplicaID(r)}); err != nil {
			return "error: " + err.Error()
		}
		in.h.Tick(3)
		return in.status(g)
	case "replace-replica":
		g, n := in.group(d), in.node(d, "node")
		var r uint64
		d.ScanArgs(t, "replica", &r)
		added, err := in.change(g, replication.Change{Kind: replication.AddLearner, Node: n.ID, Store: n.Member().Store})
		if err != nil {
			return "error: " + err.Error()
		}
		in.h.Tick(3)
		if _, err := in.change(g, replication.Change{Kind: replication.AddVoter, Replica: added[0].Replica},
			replication.Change{Kind: replication.Remove, Replica: replication.ReplicaID(r)}); err != nil {
			return "error: " + err.Error()
		}
		in.h.Tick(3)
		return fmt.Sprintf("r%d on n%d replaces r%d\n%s", added[0].Replica, n.ID, r, in.status(g))
	case "transfer-leader":
		g := in.group(d)
		var to uint64
		d.ScanArgs(t, "to", &to)
		if err := in.leaderOf(g).Host.TransferLeader(g, replication.ReplicaID(to)); err != nil {
			return "error: " + err.Error()
		}
		for range 50 {
			in.h.Tick(1)
			if l := in.h.Leader(g); l != nil {
				if st, ok := l.Host.Status(g); ok && st.Replica == replication.ReplicaID(to) {
					break
				}
			}
		}
		in.noIndex = true
		defer func() { in.noIndex = false }()
		return in.status(g)
	}
	return ""
}

// change runs a membership change on g's leader, looking for it again while none takes it.
func (in *Interaction) change(g replication.GroupID, cs ...replication.Change) ([]replication.Member, error) {
	deadline := time.Now().Add(opTimeout)
	for {
		added, err := in.leaderOf(g).Host.ChangeMembers(g, cs)
		if err != replication.ErrNotLeader || time.Now().After(deadline) {
			return added, err
		}
		in.h.Tick(1)
	}
}
