package placement

import (
	"cmp"
	"errors"
	"slices"

	"github.com/partita-db/partita/internal/replication"
)

// Initial's errors: the node that creates a container must be live and not being drained,
// since it starts the new groups and campaigns in them at once.
var (
	ErrNotLive  = errors.New("placement: this node is not live in the cluster")
	ErrDraining = errors.New("placement: this node is being drained")
)

// Initial is where a new container's groups start, created through node self: on every live
// node with a store that is not being drained or, with replicas set, on self and the least
// loaded others (by load; at equal load, the lower id). Replica ids run from 1 in the order
// of the nodes' ids.
func Initial(v View, self replication.NodeID, replicas int, load map[replication.NodeID]float64) ([]replication.Member, error) {
	me, ok := v.Live[self]
	switch {
	case !ok:
		return nil, ErrNotLive
	case me.Draining:
		return nil, ErrDraining
	}
	var ms []replication.Member
	for id, n := range v.Live {
		if id != 0 && n.Store != 0 && !n.Draining {
			ms = append(ms, replication.Member{Node: id, Store: n.Store})
		}
	}
	if replicas > 0 && len(ms) > replicas {
		slices.SortFunc(ms, func(a, b replication.Member) int {
			if (a.Node == self) != (b.Node == self) {
				if a.Node == self {
					return -1
				}
				return 1
			}
			return cmp.Or(cmp.Compare(load[a.Node], load[b.Node]), cmp.Compare(a.Node, b.Node))
		})
		ms = ms[:replicas]
	}
	slices.SortFunc(ms, func(a, b replication.Member) int { return cmp.Compare(a.Node, b.Node) })
	for i := range ms {
		ms[i].Replica = replication.ReplicaID(i + 1)
	}
	return ms, nil
}
