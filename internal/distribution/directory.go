package distribution

import (
	"context"
	"sync"

	"github.com/partita-db/partita/internal/replication"
)

// GroupRecord is where a group's replicas are: the nodes of its voters and of its learners
// (replicas being added), and its leader's.
type GroupRecord struct {
	Voters   []replication.NodeID
	Learners []replication.NodeID
	Leader   replication.NodeID
}

// Holders are the nodes to ask for the record's group: its leader first (when one is
// recorded), then its other voters. Learners are left out: they may not have the data yet.
func (r GroupRecord) Holders() []replication.NodeID {
	out := make([]replication.NodeID, 0, len(r.Voters)+1)
	if r.Leader != 0 {
		out = append(out, r.Leader)
	}
	for _, n := range r.Voters {
		if n != r.Leader {
			out = append(out, n)
		}
	}
	return out
}

// GroupMap records where each partition's replicas are: its leader writes it, nodes holding
// no replica of the partition read it to find one that does, and placement counts the
// replicas each node holds with it.
type GroupMap interface {
	Put(ctx context.Context, g replication.GroupID, r GroupRecord) error
	Get(ctx context.Context, g replication.GroupID) (GroupRecord, bool, error)
	All(ctx context.Context) (map[replication.GroupID]GroupRecord, error)
}

// Directory is a node's cache of the group records it read. A record stays until Forget
// drops it: the caller forgets a container's records when a node one named did not hold its
// partition (a move or a split), since the others may be as old.
type Directory struct {
	groups GroupMap

	mu   sync.Mutex
	recs map[replication.GroupID]GroupRecord // guarded by mu
}

// NewDirectory is a Directory reading the records of groups.
func NewDirectory(groups GroupMap) *Directory {
	return &Directory{groups: groups, recs: map[replication.GroupID]GroupRecord{}}
}

// Holders are the nodes to ask for the first of gs that has a record, leader first. The
// caller lists a range's group, then where its keys were or went (a split's parents, when
// the child's leader has not recorded it yet; the child that took the keys of a range the
// catalog no longer names). With no record of any of them, it is fallback: the replicas the
// range was created with.
func (d *Directory) Holders(ctx context.Context, gs []replication.GroupID, fallback []replication.NodeID) []replication.NodeID {
	for _, g := range gs {
		if rec, ok := d.record(ctx, g); ok {
			return rec.Holders()
		}
	}
	return fallback
}

// record is g's record, read from the map when it is not cached; false when there is none
// (or the map could not be read: the next holder or the next round asks again).
func (d *Directory) record(ctx context.Context, g replication.GroupID) (GroupRecord, bool) {
	d.mu.Lock()
	rec, ok := d.recs[g]
	d.mu.Unlock()
	if ok || d.groups == nil {
		return rec, ok
	}
	rec, ok, err := d.groups.Get(ctx, g)
	if err != nil || !ok {
		return GroupRecord{}, false
	}
	d.mu.Lock()
	d.recs[g] = rec
	d.mu.Unlock()
	return rec, true
}

// Forget drops the cached records of the groups which says.
func (d *Directory) Forget(which func(replication.GroupID) bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for g := range d.recs {
		if which(g) {
			delete(d.recs, g)
		}
	}
}
