package engine

import (
	"fmt"
	"sort"
	"time"

	"github.com/partita-db/partita/internal/catalog"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/partition"
	"github.com/partita-db/partita/internal/replica"
	"github.com/partita-db/partita/internal/storage"
)

// DefaultMaxPartitionBytes is the stored size past which a physical partition splits, as in
// Cosmos DB (50 GB).
const DefaultMaxPartitionBytes = 50 << 30

// split turns the partition parentID of c into two children at the EPK at. Items do not move.
// The partition's Split copies the children's index from a snapshot while the parent keeps
// serving; then, with the container's requests held for a moment, it commits the switch in one
// batch with the catalog's new record, and the routing table swaps. Held requests do not
// fail: they go on to the child that owns their key.
//
// In a cluster the split runs on the node whose replica leads the parent (splitInCluster), with child ids reserved in the cluster's catalog first, so that two nodes
// splitting partitions of one container never give two children one id. Every replica
// applies the split, and every node's routing takes the children as its replica does
// (replicaSet.adopt); the catalog's ranges are written after the commit (syncRanges), and
// again by whichever leader of a child finds them behind (place), should the first writer
// stop before it did.
func (e *Engine) split(c *Container, parentID uint32, at epk.EPK) error {
	if e.cluster != nil {
		return e.splitInCluster(c, parentID, at)
	}
	return e.splitHere(c, parentID, at)
}

func (e *Engine) splitHere(c *Container, parentID uint32, at epk.EPK) error {
	c.splitOne.Lock() // one split of a container at a time
	defer c.splitOne.Unlock()
	rt := c.routes.Load()
	idx := indexOf(rt.parts, parentID)
	if idx < 0 {
		return nil // already split
	}
	parent := rt.parts[idx]
	// Once the split committed, the parent refuses every write (its requests go on to the
	// children) and its writer stops; closing it waits for that, so it runs after the locks
	// below are released, as requests refused there may be waiting for them.
	committed := false
	defer func() {
		if committed {
			parent.Close()
		}
	}()
	e.mu.RLock()
	left, right, closed := c.rec.NextRangeID, c.rec.NextRangeID+1, e.closed
	e.mu.RUnlock()
	if closed {
		return errSplitStopped
	}
	if e.cluster != nil {
		var err error
		if left, right, err = e.reserveRangeIDs(c); err != nil {
			return err
		}
	}

	// Online: the parent serves while the children's index is copied.
	s, err := parent.StartSplit(at, left, right)
	if err != nil {
		return err
	}
	defer s.Abort() // whatever did not commit is undone
	if err := s.Backfill(); err != nil {
		return err
	}

	// The switch, with the container's requests held.
	c.splitMu.Lock()
	defer c.splitMu.Unlock()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed || c.db.containers[c.rec.ID] != c {
		return errSplitStopped // closing, or the container was deleted meanwhile
	}
	rec := c.rec
	rec.NextRangeID = max(rec.NextRangeID, right+1)
	if e.local != nil {
		rec.Version = e.nextVersion()
	}
	var ranges []rangeRecord
	for _, r := range rec.Ranges {
		if r.ID != parentID {
			ranges = append(ranges, r)
			continue
		}
		ranges = append(ranges,
			rangeRecord{ID: left, Min: r.Min, Max: at.Hex(), Parents: append(append([]uint32(nil), r.Parents...), parentID), Share: r.Share / 2},
			rangeRecord{ID: right, Min: at.Hex(), Max: r.Max, Parents: append(append([]uint32(nil), r.Parents...), parentID), Share: r.Share / 2})
	}
	rec.Ranges = ranges
	err = s.Commit(func(b *storage.Batch) error {
		if e.local == nil {
			return nil // a cluster's catalog is written after the commit (syncRanges)
		}
		ch, err := e.changeRecord(catalog.Containers, rec.Num, rec)
		if err != nil {
			return err
		}
		return e.local.Stage(b, ch)
	})
	if err != nil {
		return e.reopen(c, err) // the parent is closed: serve again from the catalog as it was
	}
	if e.local != nil {
		c.rec = rec
	}
	if err := e.hold.splitCommitted(c, rt, rec, parentID, left, right); err != nil {
		return err
	}
	committed = true
	e.refreshBudgets()
	e.startReindexLocked(c) // the children build their vector indexes' graphs anew
	e.log.Info("partition split", "database", c.db.rec.ID, "container", rec.ID, "parent", parentID,
		"children", fmt.Sprint(left, ",", right), "at", at.Hex())
	return nil
}

// errSplitStopped is what split returns when it gave up because the engine is closing or the
// container was deleted. It must not be nil: the loops that split until partitions are small
// enough or many enough would otherwise try the same split again forever, and Close, which
// waits for them, would never return.
var errSplitStopped = fault.New(fault.Unavailable, "The split stopped: the server is shutting down or the container was deleted")

// awaitAdoption waits until partition id is no longer in c's routing table: its children
// have taken its place (replicaSet.adopt).
func (c *Container) awaitAdoption(id uint32) error {
	for deadline := time.Now().Add(openTimeout); c.routes.Load().byID(id) != nil; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			return fault.New(fault.Unavailable, "The children of partition %d did not open in time", id)
		}
	}
	return nil
}

// awaitLeaders waits until the partitions ids, a split's children, have a leader: on a node
// alone, its replica, which campaigns at once (requests held for the split would otherwise
// meet children without a lease); in a cluster, any (requests there wait for a leader).
func (c *Container) awaitLeaders(ids ...uint32) error {
	rs := c.e.replicas
	for _, id := range ids {
		g := replica.Group(c.num, id)
		p := c.routes.Load().byID(id)
		if p == nil {
			continue // split again already
		}
		if c.e.cluster == nil {
			if err := rs.host.Campaign(g); err != nil {
				return err
			}
		}
		for deadline := time.Now().Add(openTimeout); !p.Leading() && (c.e.cluster == nil || rs.leaderOf(g) == 0); time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				return fault.New(fault.Unavailable, "Partition %d was not elected in time", id)
			}
		}
	}
	return nil
}

// byID is the partition id of the table; nil when it has none.
func (r *routing) byID(id uint32) *partition.Partition {
	if i := indexOf(r.parts, id); i >= 0 {
		return r.parts[i]
	}
	return nil
}

func indexOf(parts []*partition.Partition, id uint32) int {
	for i, p := range parts {
		if p.ID() == id {
			return i
		}
	}
	return -1
}

// reopen serves c again from its catalog record after a change of its partitions failed
// (holding.reopen), and returns cause.
func (e *Engine) reopen(c *Container, cause error) error {
	e.hold.reopen(c)
	return cause
}

// maybeSplit starts splitting c's oversized partitions in the background, one container at a
// time, until every partition is under the size limit or cannot split further.
func (e *Engine) maybeSplit(c *Container, p *partition.Partition) {
	limit := c.splitBytes()
	if limit <= 0 || p.Stats().Bytes <= limit || !c.splitting.CompareAndSwap(false, true) {
		return
	}
	e.mu.RLock()
	closed := e.closed
	if !closed {
		e.background.Add(1)
	}
	e.mu.RUnlock()
	if closed {
		c.splitting.Store(false)
		return
	}
	go func() {
		defer e.background.Done()
		defer c.splitting.Store(false)
		for {
			var big *partition.Partition
			for _, q := range c.routes.Load().parts {
				if q.Stats().Bytes > limit && (big == nil || q.Stats().Bytes > big.Stats().Bytes) {
					big = q
				}
			}
			if big == nil {
				return
			}
			at, ok, err := big.SplitPoint()
			if err != nil || !ok {
				return // one logical partition: it cannot split (its own cap applies)
			}
			if err := e.split(c, big.ID(), at); err != nil {
				if err != errSplitStopped {
					e.log.Error("split failed", "err", err)
				}
				return
			}
		}
	}()
}

// splitForThroughput splits partitions until there are enough to serve the container's
// throughput at 10,000 RU/s each, splitting the widest ranges at their middle, so only as
// many parents split as needed.
func (e *Engine) splitForThroughput(c *Container) error {
	e.mu.RLock()
	t := c.rec.Throughput
	e.mu.RUnlock()
	if t == nil {
		return nil
	}
	need := int((t.rate() + MaxRUPerPartition - 1) / MaxRUPerPartition)
	for {
		parts, _ := c.queryParts([]epk.Range{epk.All}) // those held on other nodes too
		if len(parts) >= need {
			return nil
		}
		sort.SliceStable(parts, func(i, j int) bool { return c.width(parts[i].Range()) > c.width(parts[j].Range()) })
		at, ok := c.midpoint(parts[0].Range())
		if !ok {
			return nil
		}
		if err := e.split(c, parts[0].ID(), at); err != nil {
			return err
		}
	}
}

// midpoint is where a split for throughput, or on demand, divides range r: the middle of the
// keys' hashes it holds, so that the halves get as many keys each. Version 1 EPKs begin with
// the hash as a number (epk.MidpointV1); version 2 and MultiHash EPKs start below 0x40 (their
// top two bits are clear), and splitting the empty rest would give a child no keys.
func (c *Container) midpoint(r epk.Range) (epk.EPK, bool) {
	if c.scheme == epk.SchemeV1 {
		return epk.MidpointV1(r)
	}
	return epk.Midpoint(usedV2(r))
}

// width orders ranges by how many keys' hashes they hold.
func (c *Container) width(r epk.Range) float64 {
	if c.scheme == epk.SchemeV1 {
		lo, hi := epk.HashNumberV1(r.Min), epk.HashNumberV1(r.Max)
		return (hi - lo) / (1 << 32)
	}
	return byteWidth(usedV2(r))
}

// usedV2 clips a range to the version 2 EPKs' part of the space (below 0x40).
func usedV2(r epk.Range) epk.Range {
	r.Max = min(r.Max, "\x40")
	if r.Min > r.Max {
		r.Min = r.Max
	}
	return r
}

// byteWidth is the leading bytes of Max - Min read as a fraction.
func byteWidth(r epk.Range) float64 {
	f := func(e epk.EPK) float64 {
		v, scale := 0.0, 1.0
		for i := 0; i < len(e) && i < 8; i++ {
			scale /= 256
			v += float64(e[i]) * scale
		}
		return v
	}
	return f(r.Max) - f(r.Min)
}

// SplitPartition splits the physical partition id of container collID in database dbID now,
// whatever its size, and returns its two children. at is the boundary, which must lie strictly
// inside the partition's range; nil splits at the middle of the part of the range that keys
// hash into, as a split for throughput does. It is how tests provoke a split on demand (the
// management API's POST .../partitions/{id}/split).
func (e *Engine) SplitPartition(dbID, collID string, id uint32, at *epk.EPK) ([]PartitionInfo, error) {
	e.mu.RLock()
	c, err := e.container(dbID, collID)
	e.mu.RUnlock()
	if err != nil {
		return nil, err
	}
	r, err := c.PartitionRange(id)
	if err != nil {
		return nil, fault.New(fault.NotFound, "Container %q has no partition key range %d (the current ranges are %s)", collID, id, c.rangeIDs())
	}
	var boundary epk.EPK
	switch {
	case at != nil:
		if *at <= r.Min || *at >= r.Max {
			return nil, fault.New(fault.BadRequest, "The split point %q is not strictly inside the range [%q, %q) of partition %d", at.Hex(), r.Min.Hex(), r.Max.Hex(), id)
		}
		boundary = *at
	default:
		var ok bool
		if boundary, ok = c.midpoint(r); !ok {
			if boundary, ok = epk.Midpoint(r); !ok {
				return nil, fault.New(fault.BadRequest, "Partition %d's range [%q, %q) is too narrow to split", id, r.Min.Hex(), r.Max.Hex())
			}
		}
	}
	if err := e.split(c, id, boundary); err != nil {
		return nil, err
	}
	info, err := e.ContainerInfo(dbID, collID)
	if err != nil {
		return nil, err
	}
	var children []PartitionInfo
	for _, p := range info.Partitions {
		if n := len(p.Parents); n > 0 && p.Parents[n-1] == id {
			children = append(children, p)
		}
	}
	if len(children) != 2 {
		// Another split of the same partition got there first (split does nothing then): its
		// children are not this request's to report.
		return nil, fault.New(fault.Conflict, "Partition %d of container %q was split by another request meanwhile", id, collID)
	}
	return children, nil
}

// rangeIDs lists the ids of the container's partitions, for messages.
func (c *Container) rangeIDs() string {
	var b []byte
	for i, p := range c.routes.Load().parts {
		if i > 0 {
			b = append(b, ',')
		}
		b = fmt.Append(b, p.ID())
	}
	return string(b)
}
