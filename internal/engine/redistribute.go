package engine

import (
	"maps"
	"slices"

	"github.com/partita-db/partita/internal/catalog"
	"github.com/partita-db/partita/internal/clusterversion"
	"github.com/partita-db/partita/internal/fault"
)

// Per-partition throughput, as the service's throughput redistribution: a container's own
// throughput is divided evenly among its physical partitions until it is redistributed, when
// each range of its record takes a share of it (rangeRecord.Share). Shares, not RU/s, are
// kept, so that a later change of the container's throughput keeps each partition's part of
// it; a split gives each child half its parent's share.

// Limits of a redistribution, as the service's.
const (
	// MaxPartitionThroughput is the most RU/s one physical partition may be given.
	MaxPartitionThroughput = 10000
	// MinPartitionThroughput is the least RU/s a redistribution may leave a partition.
	MinPartitionThroughput = 100
	// maxRedistributed bounds the target partitions, and the source partitions, of one
	// redistribution.
	maxRedistributed = 20
)

// PartitionThroughput is a physical partition's RU/s.
type PartitionThroughput struct {
	ID          uint32
	RUPerSecond float64
}

// Redistribution changes how a container's throughput is divided among its physical
// partitions: evenly (Even), or by giving each of Targets its RU/s and taking what they gain
// (or giving back what they lose) evenly from Sources, every other partition when none is
// named. The container's throughput does not change.
type Redistribution struct {
	Even    bool
	Targets []PartitionThroughput
	Sources []uint32
}

// share is range id's share of the container's throughput; 0 when it is divided evenly.
func (rec *containerRecord) share(id uint32) float64 {
	for _, r := range rec.Ranges {
		if r.ID == id {
			return r.Share
		}
	}
	return 0
}

// PartitionThroughputs is the RU/s of each of the container's physical partitions, in range
// order.
func (e *Engine) PartitionThroughputs(db, coll string) ([]PartitionThroughput, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	c, err := e.container(db, coll)
	if err != nil {
		return nil, err
	}
	return c.throughputs(), nil
}

// throughputs are c's partitions' RU/s. Callers hold e.mu.
func (c *Container) throughputs() []PartitionThroughput {
	out := make([]PartitionThroughput, len(c.rec.Ranges))
	for i, r := range c.rec.Ranges {
		out[i] = PartitionThroughput{ID: r.ID, RUPerSecond: c.partitionRate(r.ID)}
	}
	return out
}

// RedistributeThroughput redistributes the throughput of a container that has its own, and
// returns its partitions' RU/s after.
func (e *Engine) RedistributeThroughput(db, coll string, r Redistribution) ([]PartitionThroughput, error) {
	if e.cluster != nil && e.cluster.active() < clusterversion.PartitionThroughput {
		return nil, fault.New(fault.BadRequest, "Throughput redistribution needs every node of the cluster at cluster version %s or later", clusterversion.PartitionThroughput)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	c, err := e.container(db, coll)
	if err != nil {
		return nil, err
	}
	if c.rec.Throughput == nil {
		return nil, fault.New(fault.BadRequest, "Container %q has no throughput of its own to redistribute (it shares its database's)", coll)
	}
	shares, err := c.redistributed(r)
	if err != nil {
		return nil, err
	}
	rec := c.rec
	rec.Ranges = slices.Clone(rec.Ranges)
	for i := range rec.Ranges {
		rec.Ranges[i].Share = shares[rec.Ranges[i].ID]
	}
	rec.Version = e.nextVersion()
	if err := e.persist(catalog.Containers, rec.Num, rec); err != nil {
		return nil, err
	}
	c.rec = rec
	e.refreshBudgets()
	return c.throughputs(), nil
}

// redistributed is the share of each of c's ranges after r (nil for even). Callers hold e.mu.
func (c *Container) redistributed(r Redistribution) (map[uint32]float64, error) {
	if r.Even {
		if len(r.Targets)+len(r.Sources) > 0 {
			return nil, fault.New(fault.BadRequest, "An even redistribution names no target or source partitions")
		}
		return nil, nil
	}
	if len(r.Targets) == 0 {
		return nil, fault.New(fault.BadRequest, "A redistribution needs at least one target partition, or the even policy")
	}
	if len(r.Targets) > maxRedistributed || len(r.Sources) > maxRedistributed {
		return nil, fault.New(fault.BadRequest, "A redistribution names at most %d target and %d source partitions", maxRedistributed, maxRedistributed)
	}
	total := c.rec.Throughput.rate()
	now := map[uint32]float64{}
	for _, t := range c.throughputs() {
		now[t.ID] = t.RUPerSecond
	}
	next := maps.Clone(now)
	targeted := map[uint32]bool{}
	gain := 0.0
	for _, t := range r.Targets {
		if _, ok := now[t.ID]; !ok {
			return nil, fault.New(fault.NotFound, "Container %q has no physical partition %d", c.rec.ID, t.ID)
		}
		if targeted[t.ID] {
			return nil, fault.New(fault.BadRequest, "Partition %d is a target twice", t.ID)
		}
		if t.RUPerSecond < MinPartitionThroughput || t.RUPerSecond > MaxPartitionThroughput {
			return nil, fault.New(fault.BadRequest, "Partition %d's target of %g RU/s is outside %d to %d RU/s", t.ID, t.RUPerSecond, MinPartitionThroughput, MaxPartitionThroughput)
		}
		targeted[t.ID] = true
		gain += t.RUPerSecond - now[t.ID]
		next[t.ID] = t.RUPerSecond
	}
	sources := r.Sources
	for i, id := range sources {
		if _, ok := now[id]; !ok {
			return nil, fault.New(fault.NotFound, "Container %q has no physical partition %d", c.rec.ID, id)
		}
		if targeted[id] {
			return nil, fault.New(fault.BadRequest, "Partition %d is both a target and a source", id)
		}
		if slices.Contains(sources[:i], id) {
			return nil, fault.New(fault.BadRequest, "Partition %d is a source twice", id)
		}
	}
	if len(sources) == 0 {
		for _, rr := range c.rec.Ranges {
			if !targeted[rr.ID] {
				sources = append(sources, rr.ID)
			}
		}
	}
	if len(sources) == 0 && gain != 0 {
		return nil, fault.New(fault.BadRequest, "The targets' RU/s add up to %g where the container has %g: name fewer targets, or change the container's throughput", total+gain, total)
	}
	for _, id := range sources {
		next[id] -= gain / float64(len(sources))
		if next[id] < MinPartitionThroughput || next[id] > MaxPartitionThroughput {
			return nil, fault.New(fault.BadRequest, "The redistribution would leave partition %d %g RU/s, outside %d to %d RU/s", id, next[id], MinPartitionThroughput, MaxPartitionThroughput)
		}
	}
	shares := map[uint32]float64{}
	for id, rate := range next {
		shares[id] = rate / total
	}
	return shares, nil
}
