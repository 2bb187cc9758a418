package engine

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"time"

	"github.com/partita-db/partita/internal/catalog"
	"github.com/partita-db/partita/internal/distribution"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/nodecall"
	"github.com/partita-db/partita/internal/partition"
	"github.com/partita-db/partita/internal/replica"
	"github.com/partita-db/partita/internal/replication"
)

// Splits in a cluster (see split). The split runs on the node whose replica leads the parent;
// the catalog's ranges follow from what the replicas did, not the other way round: every
// node's routing adopts the children when its replica applies the split, and the catalog is
// brought to the routing afterwards (syncRanges), by the node that split and, should it stop
// first, by a leader of a child (place).

// splitCallTimeout bounds a split forwarded to the parent's leader: its build copies the
// parent's index, which takes longer than a write.
const splitCallTimeout = 2 * time.Minute

// splitInCluster splits partition parentID of c here when this node's replica leads it, or has
// the leader's node split it (a partition held on other nodes: its holders in turn), and
// returns once this node's routing has the children and its catalog their ranges.
func (e *Engine) splitInCluster(c *Container, parentID uint32, at epk.EPK) error {
	deadline := time.Now().Add(splitCallTimeout)
	g := replica.Group(c.num, parentID)
	for attempt := 0; ; attempt++ {
		rt := c.routes.Load()
		p := rt.byID(parentID)
		i := slices.IndexFunc(rt.remote, func(rr remoteRange) bool { return rr.id == parentID })
		if p == nil && i < 0 {
			break // split: by the call below, or by another
		}
		var (
			node  replication.NodeID
			retry = true
			err   error
		)
		switch {
		case p != nil && p.Leading():
			if err = e.splitHere(c, parentID, at); err == nil {
				return e.syncRanges(c)
			}
			retry = splitRetriable(err)
		case p != nil:
			node = e.replicas.leaderOf(g)
		default:
			if hs := slices.DeleteFunc(c.holders(rt.remote[i]), func(n replication.NodeID) bool { return n == e.cluster.Node }); len(hs) > 0 {
				node = hs[attempt%len(hs)]
				if (attempt+1)%len(hs) == 0 {
					c.forgetHolders()
				}
			}
		}
		if node != 0 {
			ctx, cancel := context.WithDeadline(context.Background(), deadline)
			var ans nodecall.Answer
			ans, err = e.asker.Send(ctx, node, &nodecall.Request{Container: c.num, Split: &nodecall.Split{Parent: parentID, At: []byte(at)}})
			cancel()
			switch {
			case errors.Is(err, distribution.ErrNotSent): // that node is down: until a leader elsewhere
			case err != nil:
				retry = false
			case ans.Err != nil:
				retry, err = ans.Retry, ans.Err
			case ans.Moved:
				err = partition.ErrNotLeaseholder
			}
			if err == nil {
				if p == nil {
					return e.awaitRemoteSplit(c, parentID)
				}
				if err := c.awaitAdoption(parentID); err != nil {
					return err
				}
				break
			}
		}
		if !retry || time.Now().After(deadline) {
			if err == nil {
				err = partition.ErrNotLeaseholder
			}
			return err
		}
		time.Sleep(distribution.DefaultBackoff)
	}
	return e.fresh() // the catalog as of now: the leader wrote the children's ranges
}

// awaitRemoteSplit waits until this node's routing shows the children of parentID, a
// partition held on other nodes that split there: its catalog has their ranges.
func (e *Engine) awaitRemoteSplit(c *Container, parentID uint32) error {
	if err := e.fresh(); err != nil {
		return err
	}
	for deadline := time.Now().Add(catalogWait); slices.ContainsFunc(c.routes.Load().remote, func(rr remoteRange) bool { return rr.id == parentID }); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			return fault.New(fault.Unavailable, "The children of partition %d did not show in time", parentID)
		}
	}
	return nil
}

// serveSplit runs a split another node forwarded, when this node's replica leads the parent.
func (e *Engine) serveSplit(c *Container, req *nodecall.Split) nodecall.Answer {
	rt := c.routes.Load()
	p := rt.byID(req.Parent)
	if p == nil && slices.ContainsFunc(rt.remote, func(rr remoteRange) bool { return rr.id == req.Parent }) {
		return nodecall.Answer{Index: -1, Moved: true}
	}
	if p != nil && !p.Leading() {
		return nodecall.Answer{Index: -1, Retry: true, Err: fault.From(partition.ErrNotLeaseholder)}
	}
	if err := e.splitHere(c, req.Parent, epk.EPK(req.At)); err != nil {
		return nodecall.Answer{Index: -1, Retry: splitRetriable(err), Err: fault.From(err)}
	}
	if err := e.syncRanges(c); err != nil {
		return nodecall.Answer{Index: -1, Err: fault.From(err)}
	}
	return nodecall.Answer{Index: -1}
}

// splitRetriable reports whether a split that failed with err may be asked for again, of the
// partition's leader as it is then: this node's replica lost the leadership before the split
// committed, or a split its former leader left in flight refused it (that leader's successor
// aborts it; partition.ErrSplitting). Even a split whose outcome is unknown may: if it was
// applied, the parent is gone from the routing when it is tried again, and if not, the
// parent's replicas refuse every entry that follows its split.
func splitRetriable(err error) bool {
	return partition.Refused(err) || partition.Ambiguous(err) || errors.Is(err, partition.ErrSplitting)
}

// reserveRangeIDs takes two range ids for a split's children in the cluster's catalog.
func (e *Engine) reserveRangeIDs(c *Container) (left, right uint32, err error) {
	err = e.commitFresh(func() (catalog.Change, func(), error) {
		rec := c.rec
		left, right = rec.NextRangeID, rec.NextRangeID+1
		rec.NextRangeID += 2
		ch, err := e.changeRecord(catalog.Containers, rec.Num, rec)
		return ch, func() { c.rec = rec }, err
	})
	return left, right, err
}

// syncRanges writes to the cluster's catalog the ranges of the splits this node's routing has
// adopted and the catalog does not show yet; nothing when it shows them all.
func (e *Engine) syncRanges(c *Container) error {
	if skipRangeSync.Load() {
		return nil
	}
	return e.commitFresh(func() (catalog.Change, func(), error) {
		ranges, changed := refineRanges(c.rec.Ranges, c.routes.Load().parts)
		if !changed {
			return catalog.Change{}, nil, nil
		}
		rec := c.rec
		rec.Ranges = ranges
		for _, r := range ranges {
			rec.NextRangeID = max(rec.NextRangeID, r.ID+1)
		}
		rec.Version = e.nextVersion()
		ch, err := e.changeRecord(catalog.Containers, rec.Num, rec)
		return ch, func() { c.rec = rec }, err
	})
}

// skipRangeSync, set by tests only, has syncRanges write nothing: the catalog stays behind a
// split, as when the node that split stopped before it wrote the catalog.
var skipRangeSync atomic.Bool

// refineRanges is the catalog's ranges with each one that the routing table divides (a split
// this node's replica applied) replaced by the partitions that divide it, their parents its
// own and it; and whether any was.
func refineRanges(ranges []rangeRecord, parts []*partition.Partition) ([]rangeRecord, bool) {
	var out []rangeRecord
	changed := false
	for _, r := range ranges {
		er, err := r.epkRange()
		var kids []*partition.Partition
		if err == nil {
			for _, p := range parts {
				if pr := p.Range(); pr.Min >= er.Min && pr.Max <= er.Max && p.ID() != r.ID {
					kids = append(kids, p)
				}
			}
		}
		if len(kids) < 2 {
			out = append(out, r)
			continue
		}
		changed = true
		parents := append(append([]uint32(nil), r.Parents...), r.ID)
		for _, p := range kids {
			out = append(out, rangeRecord{ID: p.ID(), Min: p.Range().Min.Hex(), Max: p.Range().Max.Hex(), Parents: parents,
				Share: r.Share / float64(len(kids))})
		}
	}
	return out, changed
}

// commitFresh commits the catalog change that decide makes, under e.mu, against the catalog
// as of now (freshWrite). A decision with no apply function is nothing to do; apply runs,
// under e.mu, once the change is committed.
func (e *Engine) commitFresh(decide func() (ch catalog.Change, apply func(), err error)) error {
	return e.freshWrite(func() error {
		e.mu.Lock()
		defer e.mu.Unlock()
		seq := e.seq
		ch, apply, err := decide()
		if err == nil && apply == nil {
			return nil
		}
		if err == nil {
			if err = e.commitCatalog(ch, nil); err == nil {
				apply()
				return nil
			}
		}
		e.seq = seq
		return err
	})
}

// maxCatalogAttempts bounds how many times freshWrite decides a change again.
const maxCatalogAttempts = 20
