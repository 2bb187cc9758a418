package engine

import (
	"time"

	"github.com/partita-db/partita/internal/partition"
)

// rate is the RU/s a throughput setting provides: the manual figure, or the autoscale maximum
// (autoscale scales between 10% and 100% of it as load requires, so a busy partition may use
// its share of the maximum).
func (t Throughput) rate() float64 {
	if t.AutoscaleMax > 0 {
		return float64(t.AutoscaleMax)
	}
	return float64(t.Manual)
}

// refreshBudgets divides provisioned throughput among physical partitions: a container's own
// throughput among its partitions, a database's shared throughput among the partitions of all
// its containers that have none of their own. Callers hold e.mu or own the engine.
//
// Each replica's budget is set to its partition's whole share; in a cluster whose version
// shares budgets, its replicas then divide that share between them (shares.go).
func (e *Engine) refreshBudgets() {
	now := time.Now()
	for _, d := range e.dbs {
		shared := sharedPartitions(d)
		for _, c := range d.containers {
			for _, p := range c.routes.Load().parts {
				e.setBudget(p, partitionRate(c, p.ID(), shared), now)
			}
		}
	}
}

// setBudget gives replica p's budget its partition's rate, and burst capacity as the engine's
// options say: the one place a replica's budget is set, whether by a change of the catalog
// (refreshBudgets), a share pass (budgetsHeld) or a replica opened again (replaceRoute).
func (e *Engine) setBudget(p *partition.Partition, rate float64, now time.Time) {
	p.Budget().SetRate(rate)
	p.Budget().SetBurst(e.opts.BurstCapacity, now)
}

// partitionRate is the RU/s of c's physical partition id, when shared partitions share its
// database's throughput: its share of the container's own throughput when that was
// redistributed (redistribute.go), else an even part; 0 for none (unlimited). Callers hold e.mu
// or own the engine.
func partitionRate(c *Container, id uint32, shared int) float64 {
	switch {
	case c.rec.Throughput != nil:
		if s := c.rec.share(id); s > 0 {
			return c.rec.Throughput.rate() * s
		}
		return c.rec.Throughput.rate() / float64(max(partitionCount(c), 1))
	case c.db.rec.Throughput != nil && shared > 0:
		return c.db.rec.Throughput.rate() / float64(shared)
	}
	return 0
}

// sharedPartitions counts the partitions of d's containers that share its throughput.
func sharedPartitions(d *Database) int {
	n := 0
	for _, c := range d.containers {
		if c.rec.Throughput == nil {
			n += partitionCount(c)
		}
	}
	return n
}

// partitionCount is how many partitions c has: those held on other nodes too
// (routing.remote), so that every node gives a partition the same budget.
func partitionCount(c *Container) int {
	rt := c.routes.Load()
	return len(rt.parts) + len(rt.remote)
}

// partitionRate is the RU/s of c's physical partition id. Callers hold e.mu.
func (c *Container) partitionRate(id uint32) float64 {
	return partitionRate(c, id, sharedPartitions(c.db))
}
