package engine

import (
	"time"

	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
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
func (e *Engine) refreshBudgets() {
	for _, d := range e.dbs {
		shared := 0
		for _, c := range d.containers {
			if c.rec.Throughput == nil {
				shared += len(c.routes.Load().parts)
			}
		}
		for _, c := range d.containers {
			parts := c.routes.Load().parts
			var per float64
			switch {
			case c.rec.Throughput != nil:
				per = c.rec.Throughput.rate() / float64(len(parts))
			case d.rec.Throughput != nil && shared > 0:
				per = d.rec.Throughput.rate() / float64(shared)
			}
			for _, p := range parts {
				p.Budget().SetRate(per)
			}
		}
	}
}

// admit refuses a request with 429/3200 when one of the partitions it needs has spent this
// second's budget and rate limiting is on.
func (c *Container) admit(parts ...*partition.Partition) error {
	if !c.e.opts.RateLimit {
		return nil
	}
	now := time.Now()
	for _, p := range parts {
		if ok, retry := p.Budget().Admit(now); !ok {
			return fault.Throttle(retry)
		}
	}
	return nil
}

// spend charges a request to the partitions it used, evenly.
func spend(charge float64, parts ...*partition.Partition) {
	now := time.Now()
	for _, p := range parts {
		p.Budget().Spend(now, charge/float64(len(parts)))
	}
}

// spendItem charges an item operation to its partition and its logical partition.
func spendItem(charge float64, p *partition.Partition, e epk.EPK) {
	spend(charge, p)
	p.RecordLogical(e, charge)
}
