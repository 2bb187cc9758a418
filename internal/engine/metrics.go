package engine

import (
	"time"

	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/partition"
	"github.com/partita-db/partita/internal/ru"
)

// PartitionMetrics describes one physical partition for operators.
type PartitionMetrics struct {
	Database  string
	Container string
	ID        uint32
	Range     epk.Range
	Parents   []uint32
	partition.Stats
	ru.BudgetStats
	Largest []partition.LogicalStat // by bytes; only when asked for
	Hottest []partition.LogicalStat // by request units in the last minute or two
	Trend   []ru.TrendPoint         // consumption over the last five minutes; only when asked for
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

func (c *Container) metrics(top int) ([]PartitionMetrics, error) {
	parents := map[uint32][]uint32{}
	for _, r := range c.rec.Ranges {
		parents[r.ID] = r.Parents
	}
	var out []PartitionMetrics
	for _, p := range c.routes.Load().parts {
		m := PartitionMetrics{Database: c.db.rec.ID, Container: c.rec.ID, ID: p.ID(), Range: p.Range(),
			Parents: parents[p.ID()], Stats: p.Stats(), BudgetStats: p.Budget().Stats()}
		if top > 0 {
			var err error
			if m.Largest, err = p.Largest(top); err != nil {
				return nil, err
			}
			m.Hottest = p.Hottest(top)
			m.Trend = p.Budget().Trend(time.Now())
		}
		out = append(out, m)
	}
	return out, nil
}
