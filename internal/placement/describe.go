package placement

import (
	"fmt"
	"slices"
	"strings"

	"github.com/partita-db/partita/internal/replication"
)

// Describe says what a decision does, for logs: nodes by their ids in hex, as the cluster's
// status shows them; members place the group's replicas.
func Describe(d Decision, members []replication.Member) string {
	if d.TransferTo != 0 {
		return "hand the leadership to replica " + replica(d.TransferTo, members)
	}
	var out []string
	for _, c := range d.Changes {
		switch c.Kind {
		case replication.AddLearner:
			out = append(out, fmt.Sprintf("add a learner on node %x", uint64(c.Node)))
		case replication.AddVoter:
			out = append(out, "promote replica "+replica(c.Replica, members))
		default:
			out = append(out, "remove replica "+replica(c.Replica, members))
		}
	}
	if len(out) == 0 {
		return "no change"
	}
	return strings.Join(out, ", and ")
}

// replica names replica r, with its node when members place it.
func replica(r replication.ReplicaID, members []replication.Member) string {
	if i := slices.IndexFunc(members, func(m replication.Member) bool { return m.Replica == r }); i >= 0 {
		return fmt.Sprintf("%d on node %x", r, uint64(members[i].Node))
	}
	return fmt.Sprint(r)
}
