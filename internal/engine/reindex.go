package engine

import (
	"errors"
	"fmt"
	"time"

	"github.com/partita-db/partita/internal/catalog"
	"github.com/partita-db/partita/internal/clusterversion"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/indexing"
	"github.com/partita-db/partita/internal/partition"
)

// Changing a container's indexing policy. The new policy is recorded, and followed by every
// write, at once; each physical partition then rebuilds the index of the items written before,
// in the background, a bounded step at a time (partition/reindex.go), while queries trust the
// index only for the paths that every policy an item may still follow indexes. A policy that
// indexes nothing drops the index at once instead.
//
// Locks: the change takes splitOne, then splitMu exclusively, then e.mu, the order a split
// takes them in, so that no split, no request and no rebuild step runs while the partitions
// switch policy; a step takes splitOne and splitMu shared, so it never runs during a split
// (the children inherit the rebuild where the parent left it) or during a change.

// The rebuild's pace. It is not charged to the partitions' throughput, so it never makes a
// user's request see a 429; instead it reads at most reindexRate bytes of documents a second
// per container, in steps of at most reindexItems items or reindexBytes bytes per partition
// (a step holds the partition's writer for a few point reads and one unsynced batch), and
// slows to one step every reindexIdle when the partition used at least reindexBusy of its
// RU/s in the last second. At 1 KB per item that is about 4,000 items a second, a million in
// about four minutes; under load at least about 1,300 a second per partition.
const (
	reindexItems = 256
	reindexBytes = 256 << 10
	reindexRate  = 4 << 20
	reindexBusy  = 0.5
	reindexIdle  = 200 * time.Millisecond
)

// changeIndexing replaces c's indexing policy with policy, which indexes other paths than the
// current one, and starts the rebuild.
func (e *Engine) changeIndexing(c *Container, dbID, id string, r ContainerReplace) (ContainerInfo, error) {
	if e.cluster != nil {
		return e.changeIndexingInCluster(c, dbID, id, r)
	}
	c.splitOne.Lock()
	defer c.splitOne.Unlock()
	c.splitMu.Lock()
	defer c.splitMu.Unlock()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return ContainerInfo{}, fault.New(fault.Unavailable, "The server is shutting down; retry the request")
	}
	// Checked again under the locks: another replace may have come first.
	info, changed, pol, err := e.replaceContainer(dbID, id, r)
	if changed == nil {
		return info, err
	}
	if changed != c {
		return ContainerInfo{}, fault.New(fault.Unavailable, "The container was replaced while its policy changed; retry the request")
	}
	rec := c.rec
	rec.Indexing = r.Indexing
	rec.DefaultTTL = r.DefaultTTL
	rec.Version = e.nextVersion()
	// Every partition records the change before the catalog does: a partition without a
	// record of its own follows the catalog's policy, and one that recorded the change before a
	// crash kept the catalog from following is brought back to it at the next start
	// (reconcilePolicies).
	for _, p := range c.routes.Load().parts {
		if err := p.ChangePolicy(pol); err != nil {
			return ContainerInfo{}, e.reopen(c, fault.New(fault.Unavailable, "The indexing policy could not be changed: %v", err))
		}
	}
	if err := e.persist(catalog.Containers, rec.Num, rec); err != nil {
		return ContainerInfo{}, e.reopen(c, err)
	}
	c.rec = rec
	c.index.Store(pol)
	c.applyLiveness()
	e.log.Info("indexing policy changed", "database", c.db.rec.ID, "container", rec.ID)
	e.startReindexLocked(c)
	return c.info(), nil
}

// changeIndexingInCluster replaces c's indexing policy on a node of a cluster. The catalog
// changes first, and is the policy every node's writes follow from the moment it learns of
// it; the leader of each partition then records the change in the partition's log (place,
// and here at once for those this node leads), which every replica applies, and rebuilds its
// index. The answer waits until every partition has recorded the policy. A leader that stops
// before it recorded it leaves that to the next one.
func (e *Engine) changeIndexingInCluster(c *Container, dbID, id string, r ContainerReplace) (ContainerInfo, error) {
	var pol *indexing.Policy
	err := e.commitFresh(func() (catalog.Change, func(), error) {
		cur, err := e.container(dbID, id)
		if err != nil {
			return catalog.Change{}, nil, err
		}
		if cur != c {
			return catalog.Change{}, nil, fault.New(fault.Unavailable, "The container was replaced while its policy changed; retry the request")
		}
		if err := checkVersion(fmt.Sprintf("container %q", id), c.rec.Version, r.IfMatch); err != nil {
			return catalog.Change{}, nil, err
		}
		if pol, err = indexing.Parse(r.Indexing); err != nil {
			return catalog.Change{}, nil, err
		}
		rec := c.rec
		rec.Indexing = r.Indexing
		rec.DefaultTTL = r.DefaultTTL
		rec.Version = e.nextVersion()
		ch, err := e.changeRecord(catalog.Containers, rec.Num, rec)
		return ch, func() {
			c.rec = rec
			c.index.Store(pol)
			c.applyLiveness()
			e.startReindexLocked(c)
		}, err
	})
	if err != nil {
		return ContainerInfo{}, err
	}
	e.log.Info("indexing policy changed", "database", c.db.rec.ID, "container", id)
	for deadline := time.Now().Add(catalogWait); ; time.Sleep(50 * time.Millisecond) {
		e.recordPolicy(c)
		pending := 0
		for _, p := range c.routes.Load().parts {
			if !p.Policy().Equal(pol) {
				pending++
			}
		}
		if pending == 0 {
			break
		}
		if time.Now().After(deadline) {
			return ContainerInfo{}, fault.New(fault.Unavailable, "The indexing policy is changed, but %d partition(s) did not record it in time; they will", pending)
		}
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	return c.info(), nil
}

// recordPolicy has each partition of c this node's replica leads record the container's
// policy, when it follows another, or recheck its system paths' entries, and the rebuild of
// those with one in flight run here (cluster only: see changeIndexingInCluster).
func (e *Engine) recordPolicy(c *Container) {
	e.recheckSystemPaths(c)
	pol := c.policy()
	for _, p := range c.routes.Load().parts {
		if p.Leading() && !p.Policy().Equal(pol) {
			if err := p.ChangePolicy(pol); err != nil {
				e.log.Debug("recording an indexing policy", "container", c.id, "partition", p.ID(), "err", err)
			}
		}
	}
	e.mu.Lock()
	e.startReindexLocked(c)
	e.mu.Unlock()
}

// recheckSystemPaths has each partition of c this node leads recheck its entries of id and
// _ts (partition/recheck.go), when c is older than them: a node of an earlier build may have
// led the partition and written items without them. Only once the cluster's version says
// that every node knows the recheck entry (and so indexes them too): a replica of a release
// before would stop at an entry it cannot read. The rebuild that follows runs as any other
// (startReindexLocked).
func (e *Engine) recheckSystemPaths(c *Container) {
	if !c.olderSystemPaths || e.cluster == nil || e.cluster.active() < clusterversion.SystemPathsRecheck {
		return
	}
	for _, p := range c.routes.Load().parts {
		if p.Leading() && p.RecheckNeeded() {
			if err := p.RecheckSystemPaths(); err != nil {
				e.log.Debug("rechecking the system paths' entries", "container", c.id, "partition", p.ID(), "err", err)
			} else {
				e.log.Info("rechecking the system paths' entries, now that every node indexes them", "container", c.id, "partition", p.ID())
			}
		}
	}
}

// startReindexLocked starts the rebuild goroutine of c if a rebuild is in flight and none
// runs. Callers hold e.mu.
func (e *Engine) startReindexLocked(c *Container) {
	if e.closed || e.opts.ManualReindex || !c.reindexPending() || !c.reindexing.CompareAndSwap(false, true) {
		return
	}
	e.background.Add(1)
	go e.reindexLoop(c)
}

// resumeReindex starts the rebuilds a restart interrupted.
func (e *Engine) resumeReindex() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, d := range e.dbs {
		for _, c := range d.containers {
			e.startReindexLocked(c)
		}
	}
}

// reconcile brings c's partitions back to what its catalog record says, after a restart that
// interrupted a change: a policy change that some partitions recorded before the catalog did,
// or a split that started and neither committed nor aborted (its children are built again only
// when the split is started again).
func (c *Container) reconcile() error {
	for _, p := range c.routes.Load().parts {
		if _, _, _, ok := p.SplitInFlight(); ok {
			if err := p.AbortSplit(); err != nil {
				return err
			}
		}
		if !p.Policy().Equal(c.policy()) {
			if err := p.ChangePolicy(c.policy()); err != nil {
				return err
			}
		}
	}
	return nil
}

// reindexPending reports whether a partition of c has a rebuild in flight.
func (c *Container) reindexPending() bool {
	for _, p := range c.routes.Load().parts {
		if _, _, settled := p.ReindexProgress(); !settled {
			return true
		}
	}
	return false
}

// reindexLoop rebuilds c's index until no partition has a rebuild in flight, c is deleted, or
// the engine closes.
func (e *Engine) reindexLoop(c *Container) {
	defer e.background.Done()
	for {
		began := time.Now()
		finished, read, busy, err := e.reindexStep(c, reindexItems, reindexBytes)
		if err != nil {
			c.reindexing.Store(false)
			if e.live(c) {
				e.log.Error("index rebuild stopped; it resumes at the next start", "container", c.rid.String(), "err", err)
			}
			return
		}
		if finished {
			c.reindexing.Store(false)
			// A change may have come after the last step and found this goroutine running.
			if !e.live(c) || !c.reindexPending() || !c.reindexing.CompareAndSwap(false, true) {
				return
			}
			continue
		}
		wait := time.Duration(read)*time.Second/reindexRate - time.Since(began)
		if busy || read == 0 { // read nothing: the partitions left are led elsewhere
			wait = max(wait, reindexIdle)
		}
		select {
		case <-e.stop:
			c.reindexing.Store(false)
			return
		case <-time.After(max(wait, 0)):
		}
	}
}

// reindexStep advances the rebuild of every partition of c that has one by one step of at
// most items items or bytes bytes. It reports whether none is left in flight, the bytes of
// documents read, and whether a partition is busy serving requests.
func (e *Engine) reindexStep(c *Container, items, bytes int) (finished bool, read int, busy bool, err error) {
	c.splitOne.Lock()
	defer c.splitOne.Unlock()
	c.splitMu.RLock()
	defer c.splitMu.RUnlock()
	if !e.live(c) {
		return true, 0, false, nil
	}
	finished = true
	for _, p := range c.routes.Load().parts {
		if _, _, settled := p.ReindexProgress(); settled {
			continue
		}
		if !e.keepsUp(p) {
			finished = false // its leader's node rebuilds it; this one waits to see it settle
			continue
		}
		if s := p.Budget().Stats(); s.PerSecond > 0 && s.LastSecond >= reindexBusy*s.PerSecond {
			busy = true
		}
		done, n, err := p.ReindexStep(items, bytes)
		read += n
		if e.cluster != nil && errors.Is(err, partition.ErrNotLeaseholder) {
			finished = false // the leadership moved: the new leader's node goes on
			continue
		}
		if err != nil {
			return false, read, busy, err
		}
		finished = finished && done
	}
	return finished, read, busy, nil
}

// live reports whether c is still open: not deleted, and the engine not closing.
func (e *Engine) live(c *Container) bool {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return !e.closed && c.db.containers[c.rec.ID] == c
}

// indexProgress is the share of c's items, in percent, that follow its current indexing
// policy: 100 when no rebuild is in flight, at most 99 while one is.
func (c *Container) indexProgress() int {
	var done, items int64
	settled := true
	for _, p := range c.routes.Load().parts {
		d, n, s := p.ReindexProgress()
		if s {
			d = n
		}
		settled = settled && s
		done, items = done+min(d, n), items+n
	}
	switch {
	case settled:
		return 100
	case items == 0:
		return 0
	}
	return int(min(done*100/items, 99))
}
