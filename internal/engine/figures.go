package engine

import (
	"cmp"
	"slices"
	"time"

	"github.com/partita-db/partita/internal/clusterversion"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/nodecall"
	"github.com/partita-db/partita/internal/partition"
	"github.com/partita-db/partita/internal/replica"
	"github.com/partita-db/partita/internal/replication"
	"github.com/partita-db/partita/internal/ru"
)

// The figures of every partition on every node (issue 50). Once the cluster's version is
// clusterversion.PartitionBudgets, a node's metrics (/metrics, the partitions view and so the
// explorer's partition map, x-ms-resource-usage) describe every partition of the cluster with
// the same figures whichever node is asked, where before they described the replicas the node
// held, and each replica only what it served.
//
// They come from the load figures placement already gathers (load.go: a forwarded request
// asking each live node for its replicas' figures), which every node now gathers at least
// every figuresEvery (figuresLoop), and are put together by partition (mergeFigures):
//
//   - items, bytes and LSN are the leader's replica's (the one that applied the most, when no
//     answer says it leads);
//   - request units spent, refused requests, the spend of each second of the last minute, the
//     consumption trend and the hottest logical partitions add up the replicas': what each
//     served is the partition's;
//   - the largest logical partitions are read from this node's replica, when it holds one
//     (they are in storage, the same on every replica); a partition held elsewhere names none;
//   - the budget (RU/s) is the partition's share of its throughput, from the catalog.
//
// So they are as fresh as the last gathering: at most figuresEvery, and the time the nodes
// take to answer (figuresTimeout at worst), old. A node that does not answer is missing from
// them until it does; a partition no node has sent figures of yet (a split's child) shows this
// node's replica's, or none when it holds no replica. A gathering older than figuresStale (the
// control plane does not list the nodes) is not used: the node falls back to its own replicas.

// figuresStale is how old gathered figures may be and still be served.
const figuresStale = 30 * time.Second

// partitionFigures are one partition's figures, its replicas' put together.
type partitionFigures struct {
	PartitionStats
	leading   bool // the stats are its leader's replica's
	total     float64
	throttled uint64
	seconds   []ru.SecondSpent // every replica's, a second possibly more than once
	trend     []ru.TrendPoint  // by window, oldest first: the replicas' peaks added
	hottest   []LogicalStat    // by request units, most first
}

// mergeFigures puts the replicas' full figures together by partition.
func mergeFigures(fs []nodecall.ReplicaFigure) map[replication.GroupID]*partitionFigures {
	out := map[replication.GroupID]*partitionFigures{}
	trends := map[replication.GroupID]map[int64]ru.TrendPoint{}
	hot := map[replication.GroupID]map[epk.EPK]LogicalStat{}
	for _, r := range fs {
		if !r.Full {
			continue // an older node's
		}
		g := replication.GroupID(r.Group)
		pf := out[g]
		if pf == nil {
			pf = &partitionFigures{}
			out[g] = pf
			trends[g], hot[g] = map[int64]ru.TrendPoint{}, map[epk.EPK]LogicalStat{}
		}
		if r.Leading && !pf.leading || pf.leading == r.Leading && r.LSN > pf.LSN {
			pf.PartitionStats = PartitionStats{LSN: r.LSN, Items: r.Items, Bytes: r.Bytes}
			pf.leading = r.Leading
		}
		pf.total += r.Total
		pf.throttled += r.Throttled
		pf.seconds = append(pf.seconds, r.Seconds...)
		for _, t := range r.Trend {
			// The busiest second of a window on each replica, added: at least the partition's
			// busiest second of it, and exactly that when one replica served it all.
			p := trends[g][t.Start]
			p.Start, p.PeakRU, p.Normalized = time.Unix(t.Start, 0), p.PeakRU+t.PeakRU, p.Normalized+t.Normalized
			trends[g][t.Start] = p
		}
		for _, l := range r.Hottest {
			if e, err := epk.ParseHex(l.EPK); err == nil {
				h := hot[g][e]
				h.EPK, h.RU = e, h.RU+l.RU
				if h.Key == nil {
					h.Key = l.Key
				}
				hot[g][e] = h
			}
		}
	}
	for g, pf := range out {
		for _, p := range trends[g] {
			pf.trend = append(pf.trend, p)
		}
		slices.SortFunc(pf.trend, func(a, b ru.TrendPoint) int { return a.Start.Compare(b.Start) })
		for _, h := range hot[g] {
			pf.hottest = append(pf.hottest, h)
		}
		slices.SortFunc(pf.hottest, func(a, b LogicalStat) int {
			return cmp.Or(cmp.Compare(b.RU, a.RU), cmp.Compare(a.EPK, b.EPK))
		})
	}
	return out
}

// clusterFigures are the figures of every partition as this node last gathered them; nil
// on a node alone, before the cluster's version shares budgets, and when the last gathering
// is older than figuresStale.
func (e *Engine) clusterFigures() *loadFigures {
	if e.cluster == nil || e.cluster.active() < clusterversion.PartitionBudgets {
		return nil
	}
	f := e.figures.Load()
	if f == nil || f.parts == nil || time.Since(f.at) > figuresStale {
		return nil
	}
	return f
}

// figuresLoop gathers the figures of every partition every figuresEvery, once the cluster's
// version shares budgets, until the engine closes.
func (e *Engine) figuresLoop() {
	e.every(figuresEvery/4, func(now time.Time) {
		if e.cluster.active() < clusterversion.PartitionBudgets {
			return
		}
		if f := e.figures.Load(); f != nil && now.Sub(f.at) < figuresEvery {
			return // placement gathered them meanwhile
		}
		nodes, err := e.cluster.Nodes(e.stopped)
		if err != nil {
			return // tried again at the next tick; the last figures serve meanwhile
		}
		live := map[replication.NodeID]ClusterNode{}
		for _, n := range nodes {
			live[replication.NodeID(n.ID)] = n
		}
		e.gatherFigures(live, now)
	})
}

// stats are partition id's items, bytes and LSN by f, or else by this node's replica p (nil:
// none here).
func (f *loadFigures) stats(c *Container, id uint32, p *partition.Partition) PartitionStats {
	if pf := f.parts[replica.Group(c.num, id)]; pf != nil {
		return pf.PartitionStats
	}
	if p != nil {
		return statsOf(p)
	}
	return PartitionStats{}
}

// budgetStats are partition id's request-unit figures by f, or else by this node's replica
// p (nil: none here); rate is the partition's budget.
func (f *loadFigures) budgetStats(c *Container, id uint32, p *partition.Partition, rate float64) ru.BudgetStats {
	if pf := f.parts[replica.Group(c.num, id)]; pf != nil {
		s := ru.StatsOf(rate, pf.seconds, f.at.Unix())
		s.Total, s.Throttled = pf.total, pf.throttled
		if p != nil {
			s.Bank = p.Budget().Stats().Bank // this node's replica's: the figures carry none
		}
		return s
	}
	if p != nil {
		return p.Budget().Stats()
	}
	return ru.BudgetStats{PerSecond: rate}
}

// ranges are c's partitions in range order, each with this node's replica (nil when another
// node holds it).
func (c *Container) ranges() []heldRange {
	rt := c.routes.Load()
	out := make([]heldRange, 0, len(rt.parts)+len(rt.remote))
	for _, p := range rt.parts {
		out = append(out, heldRange{id: p.ID(), r: p.Range(), p: p})
	}
	for _, rr := range rt.remote {
		out = append(out, heldRange{id: rr.id, r: rr.r})
	}
	slices.SortFunc(out, func(a, b heldRange) int { return cmp.Compare(a.r.Min, b.r.Min) })
	return out
}

// heldRange is one partition of a container, and this node's replica of it (nil: none).
type heldRange struct {
	id uint32
	r  epk.Range
	p  *partition.Partition
}

// clusterMetrics is metrics by the figures f of every partition. Callers hold e.mu.
func (c *Container) clusterMetrics(f *loadFigures, top int) ([]PartitionMetrics, error) {
	parents := map[uint32][]uint32{}
	for _, r := range c.rec.Ranges {
		parents[r.ID] = r.Parents
	}
	var out []PartitionMetrics
	for _, h := range c.ranges() {
		rate := c.partitionRate(h.id)
		m := PartitionMetrics{Database: c.db.rec.ID, Container: c.rec.ID, ID: h.id, Range: h.r, Parents: parents[h.id],
			PartitionStats: f.stats(c, h.id, h.p), BudgetStats: f.budgetStats(c, h.id, h.p, rate)}
		if top > 0 {
			if h.p != nil {
				largest, err := h.p.Largest(top)
				if err != nil {
					return nil, err
				}
				m.Largest = c.withKeys(h.p, logicalStats(largest))
			}
			if pf := f.parts[replica.Group(c.num, h.id)]; pf != nil {
				m.Hottest, m.Trend = pf.hottest[:min(top, len(pf.hottest))], pf.trend
			} else if h.p != nil {
				m.Hottest, m.Trend = c.withKeys(h.p, logicalStats(h.p.Hottest(top))), h.p.Budget().Trend(time.Now())
			}
		}
		out = append(out, m)
	}
	return out, nil
}
