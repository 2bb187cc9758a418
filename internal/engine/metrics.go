package engine

import (
	"encoding/json"
	"slices"
	"time"

	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/partition"
	"github.com/partita-db/partita/internal/replica"
	"github.com/partita-db/partita/internal/replication"
	"github.com/partita-db/partita/internal/ru"
)

// PartitionMetrics describes one physical partition for operators.
type PartitionMetrics struct {
	Database  string
	Container string
	ID        uint32
	Range     epk.Range
	Parents   []uint32
	PartitionStats
	ru.BudgetStats
	Largest []LogicalStat   // by bytes; only when asked for
	Hottest []LogicalStat   // by request units in the last minute or two
	Trend   []ru.TrendPoint // consumption over the last five minutes; only when asked for
}

// PartitionStats are a physical partition's counters as of its last write.
type PartitionStats struct {
	LSN   uint64
	Items int64
	Bytes int64
}

func statsOf(p *partition.Partition) PartitionStats {
	s := p.Stats()
	return PartitionStats{LSN: s.LSN, Items: s.Items, Bytes: s.Bytes}
}

// LogicalStat describes one logical partition of a physical partition.
type LogicalStat struct {
	EPK epk.EPK
	// Key is its partition key value as JSON (an array of a hierarchical key's values), read
	// from one of its items; nil when it has none left, or when no replica that could read
	// it said.
	Key   json.RawMessage
	Items int64
	Bytes int64
	RU    float64 // request units charged to it in the last minute or so
}

func logicalStats(ls []partition.LogicalStat) []LogicalStat {
	out := make([]LogicalStat, len(ls))
	for i, l := range ls {
		out[i] = LogicalStat{EPK: l.EPK, Items: l.Items, Bytes: l.Bytes, RU: l.RU}
	}
	return out
}

// Metrics describes every physical partition of every container. With top > 0 it also names
// each partition's top largest and hottest logical partitions (which reads storage) and its
// consumption trend.
func (e *Engine) Metrics(top int) ([]PartitionMetrics, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	var out []PartitionMetrics
	for _, dbID := range sortedKeys(e.dbs) {
		d := e.dbs[dbID]
		for _, cID := range sortedKeys(d.containers) {
			ms, err := d.containers[cID].metrics(top)
			if err != nil {
				return nil, err
			}
			out = append(out, ms...)
		}
	}
	return out, nil
}

// NodeMetrics are a node's replication counters: those of a cluster's node; nothing else is
// set on a node alone.
type NodeMetrics struct {
	Node, Store uint64 // 0 on a node alone
	// Replicas and Leading count this node's replicas of partitions and those that lead
	// their groups; Learners those not voting yet (catching up after they were added).
	Replicas, Leading, Learners int
	// SnapshotsSent and SnapshotsInstalled count the replication host's snapshots.
	SnapshotsSent, SnapshotsInstalled uint64
	// Forwarded counts the writes and splits this node sent to another node's leader;
	// Served those it ran for other nodes.
	Forwarded, Served uint64
	// ReadsLeading and ReadsFollowing count the clients' reads this node's replicas served,
	// those that led their group and those that followed.
	ReadsLeading, ReadsFollowing uint64
}

// NodeMetrics describes this node's part in its cluster, for operators.
func (e *Engine) NodeMetrics() NodeMetrics {
	if e.cluster == nil {
		return NodeMetrics{}
	}
	h := e.replicas.hostOf()
	m := NodeMetrics{Node: uint64(e.cluster.Node), Store: uint64(h.Store()), Forwarded: e.asker.Sent(), Served: e.served.Load(),
		ReadsLeading: e.readsLeading.Load(), ReadsFollowing: e.readsFollowing.Load()}
	m.SnapshotsSent, m.SnapshotsInstalled = h.Snapshots()
	var parts []*partition.Partition
	var groups []uint64
	e.mu.RLock()
	for _, d := range e.dbs {
		for _, c := range d.containers {
			for _, p := range c.routes.Load().parts {
				parts = append(parts, p)
				groups = append(groups, uint64(replica.Group(c.num, p.ID())))
			}
		}
	}
	e.mu.RUnlock()
	for i, p := range parts {
		st, ok := h.Status(replication.GroupID(groups[i]))
		if !ok {
			continue
		}
		m.Replicas++
		if p.Leading() {
			m.Leading++
		}
		if slices.Contains(st.Descriptor.Learners, st.Replica) {
			m.Learners++
		}
	}
	return m
}

// ContainerMetrics describes the physical partitions of one container.
func (e *Engine) ContainerMetrics(dbID, id string, top int) ([]PartitionMetrics, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	c, err := e.container(dbID, id)
	if err != nil {
		return nil, err
	}
	return c.metrics(top)
}

// metrics describes c's partitions: every one by the figures gathered from the cluster once
// its version shares budgets (figures.go), else those this node holds a replica of, by their
// replicas. Callers hold e.mu.
func (c *Container) metrics(top int) ([]PartitionMetrics, error) {
	if f := c.e.clusterFigures(); f != nil {
		return c.clusterMetrics(f, top)
	}
	parents := map[uint32][]uint32{}
	for _, r := range c.rec.Ranges {
		parents[r.ID] = r.Parents
	}
	var out []PartitionMetrics
	for _, p := range c.routes.Load().parts {
		m := PartitionMetrics{Database: c.db.rec.ID, Container: c.rec.ID, ID: p.ID(), Range: p.Range(),
			Parents: parents[p.ID()], PartitionStats: statsOf(p), BudgetStats: p.Budget().Stats()}
		if top > 0 {
			largest, err := p.Largest(top)
			if err != nil {
				return nil, err
			}
			m.Largest, m.Hottest = c.withKeys(p, logicalStats(largest)), c.withKeys(p, logicalStats(p.Hottest(top)))
			m.Trend = p.Budget().Trend(time.Now())
		}
		out = append(out, m)
	}
	return out, nil
}
