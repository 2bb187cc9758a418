package engine

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/partita-db/partita/internal/partition"
)

// Consistency of reads. A client's read names a level (its account's default, or a weaker one
// it asks for) and, at Session, the session tokens it holds: the LSN it has seen of each
// partition key range. The level decides what the replica that serves the read waits for
// (partition.Consistency):
//
//   - Strong: linearizable: the replica applies the read index its leader confirms;
//   - Bounded Staleness: the replica serves what it applied if it confirmed a read index
//     with its leader less than the account's interval ago and applied it, and is no more
//     than the account's prefix of log entries behind what its leader last told it; else it
//     confirms one as a Strong read does (partition.Bounded);
//   - Session: the replica serves once it has applied the token's LSN of the partition it
//     reads, or of any of the partition's ancestors (a split's children continue their
//     parent's LSNs, so a token from before a split holds after it) or descendants (a
//     replica that has not applied its split yet waits for it, or the read is served
//     elsewhere), and what this node acknowledged or was shown of them (nodeSession);
//   - Consistent Prefix and Eventual: the replica serves what it has applied.
//
// On a single node every level reads every acknowledged write. Strong and Bounded Staleness
// reads are charged twice the request units, as on the service.

// Level is a Cosmos DB consistency level, strongest first. The zero Level is no client's: a
// read a transaction or a script makes, which is linearizable and charged as a read.
type Level uint8

const (
	Strong Level = iota + 1
	BoundedStaleness
	Session
	ConsistentPrefix
	Eventual
)

// ConsistencyLevels are the levels' names, as the service spells them, strongest first.
var ConsistencyLevels = []string{"Strong", "BoundedStaleness", "Session", "ConsistentPrefix", "Eventual"}

// LevelOf is the level named name (in any case); 0 when name is none.
func LevelOf(name string) Level {
	for i, l := range ConsistencyLevels {
		if strings.EqualFold(l, name) {
			return Level(i + 1)
		}
	}
	return 0
}

func (l Level) String() string {
	if l == 0 || int(l) > len(ConsistencyLevels) {
		return "none"
	}
	return ConsistencyLevels[l-1]
}

// Staleness is the bound of Bounded Staleness reads: how many versions (writes), and how
// long, a read may lag behind the writes of the partition it reads (the service's
// maxStalenessPrefix and maxIntervalInSeconds). Zero fields take DefaultStaleness's.
type Staleness struct {
	Versions uint64
	Interval time.Duration
}

// DefaultStaleness is the bound the service gives an account by default; MinStaleness and
// MaxStaleness are the limits it accepts (the interval's minimum is a single-region account's).
var (
	DefaultStaleness = Staleness{Versions: 100, Interval: 5 * time.Second}
	MinStaleness     = Staleness{Versions: 1, Interval: 5 * time.Second}
	MaxStaleness     = Staleness{Versions: 1<<31 - 1, Interval: 24 * time.Hour}
)

// Check refuses a bound outside the service's limits (the interval in whole seconds).
func (s Staleness) Check() error {
	s = s.orDefault()
	if s.Versions < MinStaleness.Versions || s.Versions > MaxStaleness.Versions {
		return fmt.Errorf("the staleness prefix must be within %d to %d versions, not %d", MinStaleness.Versions, MaxStaleness.Versions, s.Versions)
	}
	if s.Interval < MinStaleness.Interval || s.Interval > MaxStaleness.Interval || s.Interval%time.Second != 0 {
		return fmt.Errorf("the staleness interval must be whole seconds within %v to %v, not %v", MinStaleness.Interval, MaxStaleness.Interval, s.Interval)
	}
	return nil
}

func (s Staleness) orDefault() Staleness {
	if s.Versions == 0 {
		s.Versions = DefaultStaleness.Versions
	}
	if s.Interval == 0 {
		s.Interval = DefaultStaleness.Interval
	}
	return s
}

// Staleness is the account's bound for Bounded Staleness reads.
func (e *Engine) Staleness() Staleness { return e.opts.Staleness.orDefault() }

// ReadConsistency is how a client's read may be served; the zero ReadConsistency is that of a
// read that is not a client's.
type ReadConsistency struct {
	Level Level `json:"level,omitempty"`
	// Session, at Session, is the LSN of each partition key range the client has seen, by
	// range id (its session tokens; AnyRange for a token that names no range); nil for none.
	Session map[uint32]uint64 `json:"session,omitempty"`
}

// AnyRange keys, in ReadConsistency.Session, a session token of the oldest form, a bare LSN,
// which holds for every range.
const AnyRange = ^uint32(0)

// readFactor is what a read's request units are multiplied by at its level.
func (rc ReadConsistency) readFactor() float64 {
	if rc.Level == Strong || rc.Level == BoundedStaleness {
		return 2
	}
	return 1
}

// reader reads p at rc.
func (c *Container) reader(p *partition.Partition, rc ReadConsistency) partition.Reader {
	c.countRead(p, rc)
	return p.At(c.partitionConsistency(p.ID(), rc))
}

// countRead counts a client's read of this node's replica p, by whether p leads its group
// (NodeMetrics): how much of the reading followers take on.
func (c *Container) countRead(p *partition.Partition, rc ReadConsistency) {
	if c.e.cluster == nil || rc.Level == 0 {
		return
	}
	if p.Leading() {
		c.e.readsLeading.Add(1)
	} else {
		c.e.readsFollowing.Add(1)
	}
}

// partitionConsistency is what a read of partition id at rc waits for. On a single node, where
// every level reads alike, nothing.
func (c *Container) partitionConsistency(id uint32, rc ReadConsistency) partition.Consistency {
	if c.e.cluster == nil {
		return partition.Consistency{}
	}
	switch rc.Level {
	case 0, Strong:
		return partition.Consistency{Level: partition.Linearizable}
	case BoundedStaleness:
		// The bound counts log entries, of which a write is one: a few more (leases, empty
		// entries of new terms) make it stricter, never looser.
		s := c.e.Staleness()
		return partition.Consistency{Level: partition.Bounded, MaxLag: s.Versions, MaxAge: s.Interval}
	case ConsistentPrefix, Eventual:
		return partition.Consistency{Level: partition.Prefix}
	}
	// The tokens of the partition's ancestors count too, and what this node showed of them.
	ids := c.lineage(id)
	out := partition.Consistency{Level: partition.Session, LSN: max(rc.Session[AnyRange], c.seen(ids...))}
	for _, id := range ids {
		out.LSN = max(out.LSN, rc.Session[id])
	}
	return out
}

// nodeSession is, for each of a container's partitions, the highest LSN this node has shown a
// client: of the writes it acknowledged and of what other nodes' replicas served it. A
// Session read on this node waits for it as for a session token, so that a client that
// stays on one node reads its own writes and never an older version than it was shown, even
// without passing session tokens back (the Go SDK does not keep them): a write acknowledged
// by a leader elsewhere may not have reached this node's replica yet.
type nodeSession struct {
	mu  sync.Mutex
	lsn map[uint32]uint64
}

// saw records that this node showed a client partition id at lsn.
func (c *Container) saw(id uint32, lsn uint64) {
	if c.e.cluster == nil || lsn == 0 {
		return
	}
	s := &c.session
	s.mu.Lock()
	if s.lsn == nil {
		s.lsn = map[uint32]uint64{}
	}
	s.lsn[id] = max(s.lsn[id], lsn)
	s.mu.Unlock()
}

// seen is what this node showed of partition id, or of its ancestors.
func (c *Container) seen(ids ...uint32) uint64 {
	s := &c.session
	s.mu.Lock()
	defer s.mu.Unlock()
	var out uint64
	for _, id := range ids {
		out = max(out, s.lsn[id])
	}
	return out
}

// withSeen is rc for a read of partition id on another node: at Session, with what this node
// showed of it among its tokens.
func (c *Container) withSeen(rc ReadConsistency, id uint32) ReadConsistency {
	if rc.Level != Session {
		return rc
	}
	lsn := c.seen(c.lineage(id)...)
	if lsn <= rc.Session[id] {
		return rc
	}
	out := rc
	out.Session = maps.Clone(rc.Session)
	if out.Session == nil {
		out.Session = map[uint32]uint64{}
	}
	out.Session[id] = lsn
	return out
}

// lineage is partition id, its ancestors, and its descendants the catalog names: a replica
// that has not applied its partition's split yet must not serve a read whose session saw a
// child, since the children continue their parent's LSNs (it waits until it has applied the
// split, and the read goes on to the child, or the read is served elsewhere).
func (c *Container) lineage(id uint32) []uint32 {
	ids := []uint32{id}
	c.e.mu.RLock()
	for _, r := range c.rec.Ranges {
		if r.ID == id {
			ids = append(ids, r.Parents...)
		} else if slices.Contains(r.Parents, id) {
			ids = append(ids, r.ID)
		}
	}
	c.e.mu.RUnlock()
	return ids
}
