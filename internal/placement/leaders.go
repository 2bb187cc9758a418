package placement

import (
	"slices"

	"github.com/partita-db/partita/internal/replication"
)

// Led is a group that node self leads, and its status.
type Led struct {
	Group  replication.GroupID
	Status replication.Status
}

// Transfer hands the leadership of Group to replica To.
type Transfer struct {
	Group replication.GroupID
	To    replication.ReplicaID
}

// LeaderTransfers are the leaderships node self may hand away, best first, of which its
// leader carries out the first that succeeds: when self leads more than its share of the
// groups (leads counts the leaderships of each node, of the groups self holds), one of the
// groups it leads (settled: as it should be) goes to the voter whose node leads fewest, and
// only to a node that would still lead fewer than self then. None when self leads its share
// or less.
func LeaderTransfers(v View, self replication.NodeID, settled []Led, leads map[replication.NodeID]int) []Transfer {
	total, eligible := 0, 0
	for _, n := range leads {
		total += n
	}
	for _, n := range v.Live {
		if !n.Draining {
			eligible++
		}
	}
	if eligible == 0 || len(settled) == 0 {
		return nil
	}
	share := (total + eligible - 1) / eligible
	if leads[self] <= share {
		return nil
	}
	var out []Transfer
	for _, l := range settled {
		st := l.Status
		var best replication.ReplicaID
		bestLeads := leads[self] - 1
		for _, m := range st.Descriptor.Members {
			n, ok := v.Live[m.Node]
			if m.Replica == st.Replica || !ok || n.Draining || !slices.Contains(st.Descriptor.Voters, m.Replica) {
				continue
			}
			if led := leads[m.Node]; led < bestLeads {
				best, bestLeads = m.Replica, led
			}
		}
		if best != 0 {
			out = append(out, Transfer{Group: l.Group, To: best})
		}
	}
	return out
}
