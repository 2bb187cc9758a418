package engine

import (
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/partita-db/partita/internal/partition"
)

// Readiness. A node alone is ready once it is open. A node of a cluster is ready once it is
// registered in the control plane and every replica it held when it started has caught up
// with its group: it has applied its leader's commit index as of a read barrier taken after
// the start (Partition.ReadBarrier), so that a load balancer sends it no request before it
// can serve what the cluster acknowledged while it was away. Catching up is latched: once
// done, readiness follows the registration alone.

// readiness is what the engine knows of its catching up.
type readiness struct {
	mu sync.Mutex
	// behind are the partitions held at the start that have not caught up yet (nil before
	// catching up began); caughtUp is set once none is left.
	behind   map[*partition.Partition]string
	caughtUp bool
}

// readyEvery is the pause between two rounds of read barriers while some replica is behind.
const readyEvery = 200 * time.Millisecond

// catchUp runs read barriers on the replicas held at the start until each has caught up.
// Callers add it to e.background.
func (e *Engine) catchUp() {
	defer e.background.Done()
	behind := e.heldPartitions()
	e.ready.mu.Lock()
	e.ready.behind = behind
	e.ready.mu.Unlock()
	for {
		held := e.heldPartitions()
		e.ready.mu.Lock()
		left := slices.Collect(maps.Keys(e.ready.behind))
		e.ready.mu.Unlock()
		for _, p := range left {
			// A partition split, deleted or moved away since is no longer waited for.
			if _, ok := held[p]; !ok || p.ReadBarrier() == nil {
				e.ready.mu.Lock()
				delete(e.ready.behind, p)
				e.ready.mu.Unlock()
			}
		}
		e.ready.mu.Lock()
		done := len(e.ready.behind) == 0
		e.ready.caughtUp = done
		e.ready.mu.Unlock()
		if done {
			e.log.Info("this node's replicas have caught up with their groups", "since-start", time.Since(e.opened).Round(time.Millisecond))
			return
		}
		select {
		case <-e.stop:
			return
		case <-time.After(readyEvery):
		}
	}
}

// heldPartitions are the partitions this node holds a replica of, each named for readiness.
func (e *Engine) heldPartitions() map[*partition.Partition]string {
	held := map[*partition.Partition]string{}
	e.mu.RLock()
	defer e.mu.RUnlock()
	for _, d := range e.dbs {
		for _, c := range d.containers {
			for _, p := range c.routes.Load().parts {
				held[p] = fmt.Sprintf("%s/%s partition %d", d.rec.ID, c.id, p.ID())
			}
		}
	}
	return held
}

// Ready reports whether the node is ready to serve, and if not, why.
func (e *Engine) Ready() (bool, string) {
	if e.cluster == nil {
		return true, ""
	}
	if e.cluster.Registered != nil && !e.cluster.Registered() {
		return false, "This node is not registered in the cluster's control plane (it cannot reach a majority of the founding nodes); it registers again by itself"
	}
	e.ready.mu.Lock()
	defer e.ready.mu.Unlock()
	if !e.ready.caughtUp {
		n, some := len(e.ready.behind), ""
		for _, name := range e.ready.behind {
			some = name
			break
		}
		if e.ready.behind == nil {
			return false, "This node has not started catching up with its partitions' groups yet"
		}
		return false, fmt.Sprintf("%d of this node's replicas have not caught up with their groups yet (%s among them)", n, some)
	}
	return true, ""
}
