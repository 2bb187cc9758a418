package replicationtest

import (
	"fmt"

	"github.com/cockroachdb/datadriven"

	"github.com/partita-db/partita/internal/replication"
)

// fault handles cut, heal, crash, restart and wipe.
func (in *Interaction) fault(d *datadriven.TestData) string {
	t := in.t
	switch d.Cmd {
	case "cut":
		a, b := in.nodeList(d, "nodes"), in.nodeList(d, "from")
		if b == nil {
			for _, n := range in.h.Nodes() {
				if !containsNode(a, n.ID) {
					b = append(b, n.ID)
				}
			}
		}
		// A cut comes at a settled moment: the messages of what was written before it (a
		// commit index a follower has yet to learn) arrive first, however busy the machine.
		in.h.Stabilize()
		in.h.Net.Cut(a, b)
		return fmt.Sprintf("cut %v from %v", a, b)
	case "heal":
		in.h.Net.Heal()
		return "healed"
	case "crash":
		n := in.node(d, "node")
		keep, seed := 100, uint64(1)
		d.MaybeScanArgs(t, "keep", &keep)
		d.MaybeScanArgs(t, "seed", &seed)
		n.Crash(keep, seed)
		if keep >= 100 {
			return fmt.Sprintf("n%d killed", n.ID)
		}
		return fmt.Sprintf("n%d lost its power, keeping %d%% of what was not synced", n.ID, keep)
	case "restart":
		n := in.node(d, "node")
		if err := n.Restart(); err != nil {
			t.Fatal(err)
		}
		in.h.Stabilize()
		return fmt.Sprintf("n%d restarted", n.ID)
	case "wipe":
		n := in.node(d, "node")
		if err := n.Wipe(); err != nil {
			t.Fatal(err)
		}
		in.h.Stabilize()
		return fmt.Sprintf("n%d wiped: an empty store", n.ID)
	}
	return ""
}

func containsNode(ns []replication.NodeID, n replication.NodeID) bool {
	for _, x := range ns {
		if x == n {
			return true
		}
	}
	return false
}
