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
// Every reapEvery it walks the partitions of the containers with time to live on, each in
// creation order from where it stopped, and deletes what it finds expired through the
// partition's writer (an Expire operation, which deletes only what is still expired when it is
// decided). It spends only what the partition's budget spares (ru.Budget.Spare): what users
// left unused of the last second's throughput, priced as a read feed for the items it reads
// and as a delete for each item it deletes. Those request units are not charged to the
// budget, so the reaper never makes a user request wait or fail; a partition whose users spend
// its whole budget is simply not reaped until they slow down. A partition whose pass reached
// its end rests reapRest before the next pass.

const (
	reapEvery = time.Second
	reapRest  = 5 * time.Second
	// reapChunk is how many items one step reads; the expired among them are deleted in one
	// command.
	reapChunk = 100
)

// reapState is where the reaper got to in each partition.
type reapState struct {
	mu      sync.Mutex // one reaping at a time (the goroutine, or a test's reapOnce)
	cursors map[*partition.Partition]reapCursor
}

type reapCursor struct {
	next      uint64    // the creation sequence the pass goes on from
	restUntil time.Time // after a pass ended: when the next may start
}

// reapOnce reaps every container with time to live on, as far as the partitions' spare
// request units allow at now, and returns how many items it deleted. fresh starts new passes
// everywhere, resting or not (tests).
func (e *Engine) reapOnce(now time.Time, fresh bool) int {
	e.reap.mu.Lock()
	defer e.reap.mu.Unlock()
	if fresh || e.reap.cursors == nil {
		e.reap.cursors = map[*partition.Partition]reapCursor{}
	}
	e.mu.RLock()
	var cs []*Container
	for _, d := range e.dbs {
		for _, c := range d.containers {
			if c.rec.DefaultTTL != nil {
				cs = append(cs, c)
			}
		}
	}
	e.mu.RUnlock()
	live := map[*partition.Partition]bool{}
	deleted := 0
	for _, c := range cs {
		for _, p := range c.partitions() {
			select {
			case <-e.stop:
				return deleted
			default:
			}
			live[p] = true
			if e.cluster != nil && !p.Leading() {
				continue // its leader's node reaps it
			}
			deleted += e.reapPartition(p, now)
		}
	}
	for p := range e.reap.cursors { // partitions split or deleted since
		if !live[p] {
			delete(e.reap.cursors, p)
		}
	}
	return deleted
}

// reapPartition goes on with p's pass while its budget spares request units.
func (e *Engine) reapPartition(p *partition.Partition, now time.Time) int {
	cur := e.reap.cursors[p]
	if now.Before(cur.restUntil) {
		return 0
	}
	spare := p.Budget().Spare(now)
	deleted := 0
	spent := 0.0
	defer func() { e.reap.cursors[p] = cur }()
	for spent < spare {
		found, scan, err := p.FindExpired(cur.next, reapChunk)
		if err != nil {
			e.log.Error("time to live", "partition", p.ID(), "err", err)
			return deleted
		}
		spent += ru.Feed(scan.Read, scan.Bytes, 1)
		if len(found) > 0 {
			ops := make([]partition.Operation, len(found))
			for i, x := range found {
				ops[i] = partition.Operation{Kind: partition.Expire, EPK: x.EPK, ID: x.ID}
			}
			// A split that closes p meanwhile refuses this (Unavailable): the children's
			// passes find the items again.
			res, err := p.Execute(ops...)
			if err != nil {
				return deleted
			}
			for _, r := range res {
				if r.PrevBytes > 0 {
					deleted++
					spent += ru.Delete(r.PrevBytes, r.IndexTerms)
				}
			}
		}
		cur.next = scan.Next
		if scan.Done {
			cur = reapCursor{restUntil: now.Add(reapRest)}
			return deleted
		}
	}
	return deleted
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
