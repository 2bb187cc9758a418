package engine

import (
	"sync"
	"time"

	"github.com/partita-db/partita/internal/partition"
	"github.com/partita-db/partita/internal/ru"
)

// The reaper deletes expired items in the background. Reads hide an expired item from the
// moment it expires; the reaper only reclaims its storage and logs its delete in the change
// feed (marked as expired), so it may lag without anyone seeing the item again.
//
// Every reapEvery it asks each partition of the containers with time to live on for what has
// expired, from the partition's expiry index (partition.FindExpired), and deletes it through
// the partition's writer (an Expire operation, which deletes only what is still expired when it
// is decided). So a round costs what it deletes, whatever the size of the containers; only the
// first round after a partition opens reads all of its items, to build the index. It spends
// only what the partition's budget spares (ru.Budget.Spare): what users left unused of the last
// second's throughput, priced as a read feed for the items it reads and as a delete for each
// item it deletes. Those request units are not charged to the budget, so the reaper never makes
// a user request wait or fail; a partition whose users spend its whole budget is simply not
// reaped until they slow down.

const (
	reapEvery = time.Second
	// reapChunk is how many expired items one step finds; they are deleted in one command.
	reapChunk = 100
)

// reapState orders the reaper's rounds: one at a time (the goroutine, or a test's reapOnce).
type reapState struct {
	mu sync.Mutex
}

// reapOnce reaps every container with time to live on, as far as the partitions' spare
// request units allow at now, and returns how many items it deleted.
func (e *Engine) reapOnce(now time.Time) int {
	e.reap.mu.Lock()
	defer e.reap.mu.Unlock()
	e.mu.RLock()
	var cs []*Container
	for _, d := range e.dbs {
		for _, c := range d.containers {
			if c.rec.DefaultTTL != nil || len(c.rec.KeyDeletes) > 0 {
				cs = append(cs, c)
			}
		}
	}
	e.mu.RUnlock()
	deleted := 0
	for _, c := range cs {
		for _, p := range c.partitions() {
			select {
			case <-e.stop:
				return deleted
			default:
			}
			if !e.keepsUp(p) {
				continue // its leader's node reaps it
			}
			deleted += e.reapPartition(p, now)
			if ks := c.keyDeletesIn(p.Range()); len(ks) > 0 {
				n, done := e.reapKeyDeletes(p, now)
				deleted += n
				if done {
					e.endKeyDeletes(c, ks)
				}
			}
		}
	}
	return deleted
}

// reapPartition deletes p's expired items while its budget spares request units.
func (e *Engine) reapPartition(p *partition.Partition, now time.Time) int {
	spare := p.Budget().Spare(now)
	deleted := 0
	spent := 0.0
	for spent < spare {
		found, scan, err := p.FindExpired(reapChunk)
		if err != nil {
			e.log.Error("time to live", "partition", p.ID(), "err", err)
			return deleted
		}
		if !scan.Built { // building the index is paid once, beside the budget
			spent += ru.Feed(scan.Read, scan.Bytes, 1)
		}
		if len(found) > 0 {
			n, cost, err := expire(p, found)
			if err != nil {
				p.Unreaped(found)
				return deleted
			}
			deleted, spent = deleted+n, spent+cost
		}
		if scan.Done {
			return deleted
		}
	}
	return deleted
}

// expire deletes the items found gone in p with Expire operations (each deletes only what is
// still gone when it is decided) and returns how many it deleted and what that cost. A split
// that closes p meanwhile refuses them (Unavailable): the children find the items again.
func expire(p *partition.Partition, found []partition.ExpiredItem) (deleted int, cost float64, err error) {
	ops := make([]partition.Operation, len(found))
	for i, x := range found {
		ops[i] = partition.Operation{Kind: partition.Expire, EPK: x.EPK, ID: x.ID}
	}
	res, err := p.Execute(ops...)
	if err != nil {
		return 0, 0, err
	}
	for _, r := range res {
		if r.PrevBytes > 0 {
			deleted++
			cost += ru.Delete(r.PrevBytes, r.IndexTerms)
		}
	}
	return deleted, cost, nil
}

// unixClock is the clock partitions stamp writes with and judge expiry by, in Unix seconds;
// nil for the system clock.
func (e *Engine) unixClock() func() int64 {
	if e.opts.Now == nil {
		return nil
	}
	now := e.opts.Now
	return func() int64 { return now().Unix() }
}
