package engine

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
