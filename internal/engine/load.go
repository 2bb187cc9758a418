package engine

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/partita-db/partita/internal/nodecall"
	"github.com/partita-db/partita/internal/replica"
	"github.com/partita-db/partita/internal/replication"
)

// Load, for placement with Cluster.Replicas. A node's load is what the replicas it holds
// weigh: each replica one, plus its partition's bytes and the request units its replicas were
// charged in the last minute, each in units of the mean group's (weight). Every node knows
// the figures of the replicas it holds; a node's placement pass asks every live node for
// theirs (at most every figuresEvery) and keeps them in memory. They never go to the control
// plane: they change by the second, and a pass gathers them again in a few.
//
// Weighing by bytes and RU as well as by count moves replicas off a node that holds a large
// or busy partition, which counting alone would leave as loaded as the others in number.

// figuresEvery is how old a node's figures may be before they are asked for again: by its
// placement pass, and, once the cluster's version shares budgets, by the loop that keeps the
// figures of every partition for the node's metrics (figures.go).
const figuresEvery = 2 * time.Second

// figuresTimeout bounds the wait for one node's figures; a node that does not answer in
// time is left out of that pass's figures (its groups weigh by their other replicas').
const figuresTimeout = 2 * time.Second

// The least mean a group's bytes and RU are measured against, so that a cluster of nearly
// empty and idle partitions is balanced by count, and one small write does not make its
// partition weigh as much as all the others.
const (
	minMeanBytes = 1 << 20
	minMeanRU    = 60 // a request unit a second, over the minute figures cover
)

// figuresHottest bounds the hottest logical partitions a replica's figures name: the metrics
// of a partition held elsewhere name at most that many per replica (the advisor asks for
// more of a partition held here).
const figuresHottest = 32

// loadFigures are the groups' figures one pass gathered: each group's size (the largest of
// its replicas') and the request units charged to all its replicas. A nil *loadFigures
// weighs every replica one.
type loadFigures struct {
	at    time.Time
	bytes map[replication.GroupID]int64
	ru    map[replication.GroupID]float64
	// meanBytes and meanRU are the groups' means, at least minMeanBytes and minMeanRU.
	meanBytes, meanRU float64
	// parts are the partitions' figures, their replicas' put together, for the groups of
	// which some node sent full figures (figures.go).
	parts map[replication.GroupID]*partitionFigures
}

// newLoadFigures sums the replicas' figures by group.
func newLoadFigures(at time.Time, fs []nodecall.ReplicaFigure) *loadFigures {
	f := &loadFigures{at: at, bytes: map[replication.GroupID]int64{}, ru: map[replication.GroupID]float64{}}
	for _, r := range fs {
		g := replication.GroupID(r.Group)
		f.bytes[g] = max(f.bytes[g], r.Bytes)
		f.ru[g] += r.RU
	}
	var bytes, ru float64
	for g, b := range f.bytes {
		bytes += float64(b)
		ru += f.ru[g]
	}
	n := float64(max(1, len(f.bytes)))
	f.meanBytes, f.meanRU = math.Max(bytes/n, minMeanBytes), math.Max(ru/n, minMeanRU)
	f.parts = mergeFigures(fs)
	return f
}

// weight is what a replica of g weighs in its node's load: one, plus g's bytes and RU each
// over the mean group's. A group with no figures (none of its nodes answered, or it is new)
// weighs as its count alone.
func (f *loadFigures) weight(g replication.GroupID) float64 {
	if f == nil {
		return 1
	}
	return 1 + float64(f.bytes[g])/f.meanBytes + f.ru[g]/f.meanRU
}

// localFigures are the figures of the replicas this node holds.
func (e *Engine) localFigures() []nodecall.ReplicaFigure {
	var out []nodecall.ReplicaFigure
	now := time.Now()
	e.mu.RLock()
	defer e.mu.RUnlock()
	for _, d := range e.dbs {
		for _, c := range d.containers {
			for _, p := range c.routes.Load().parts {
				b, s := p.Budget(), p.Stats()
				bs := b.StatsAt(now)
				f := nodecall.ReplicaFigure{Group: uint64(replica.Group(c.num, p.ID())), Bytes: s.Bytes, RU: bs.LastMinute,
					Full: true, Leading: p.Leading(), Items: s.Items, LSN: s.LSN, Total: bs.Total, Throttled: bs.Throttled,
					Seconds: b.Seconds(now)}
				for _, t := range b.Trend(now) {
					f.Trend = append(f.Trend, nodecall.TrendFigure{Start: t.Start.Unix(), PeakRU: t.PeakRU, Normalized: t.Normalized})
				}
				for _, l := range c.withKeys(p, logicalStats(p.Hottest(figuresHottest))) {
					f.Hottest = append(f.Hottest, nodecall.LogicalFigure{EPK: l.EPK.Hex(), RU: l.RU, Key: l.Key})
				}
				out = append(out, f)
			}
		}
	}
	return out
}

// gatherFigures asks every live node for its replicas' figures (this node's own are read
// here) and keeps them for the next figuresEvery: for placement's passes, and for the
// metrics of every partition (figures.go), whichever asks first.
func (e *Engine) gatherFigures(live map[replication.NodeID]ClusterNode, now time.Time) {
	e.gathering.Lock()
	defer e.gathering.Unlock()
	if f := e.figures.Load(); f != nil && now.Sub(f.at) < figuresEvery {
		return
	}
	var mu sync.Mutex
	all := e.localFigures()
	var wg sync.WaitGroup
	for id := range live {
		if id == e.cluster.Node {
			continue
		}
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(e.stopped, figuresTimeout)
			defer cancel()
			ans, err := e.cluster.Call(ctx, id, &nodecall.Request{Figures: true})
			if err != nil || ans.Err != nil {
				e.log.Debug("placement: a node's load figures", "node", id, "err", err)
				return
			}
			mu.Lock()
			all = append(all, ans.Figures...)
			mu.Unlock()
		})
	}
	wg.Wait()
	e.figures.Store(newLoadFigures(now, all))
}
