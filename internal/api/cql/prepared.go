package cql

import (
	"container/list"
	"sync"

	"github.com/partita-db/partita/internal/cqlexec"
)

// preparedCache holds the prepared statements of all connections by id, dropping the least
// recently used past its capacity: a driver that EXECUTEs a dropped id is told UNPREPARED and
// prepares it again.
type preparedCache struct {
	mu  sync.Mutex
	cap int
	// order holds *cqlexec.Prepared, most recently used first; byID indexes it.
	order *list.List
	byID  map[[16]byte]*list.Element
}

func newPreparedCache(capacity int) *preparedCache {
	return &preparedCache{cap: capacity, order: list.New(), byID: map[[16]byte]*list.Element{}}
}

// put stores p, replacing a statement of the same id (prepared again after a schema change).
func (c *preparedCache) put(p *cqlexec.Prepared) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byID[p.ID]; ok {
		e.Value = p
		c.order.MoveToFront(e)
		return
	}
	c.byID[p.ID] = c.order.PushFront(p)
	for c.order.Len() > c.cap {
		e := c.order.Back()
		c.order.Remove(e)
		delete(c.byID, e.Value.(*cqlexec.Prepared).ID)
	}
}

// get returns the statement of id, or nil.
func (c *preparedCache) get(id []byte) *cqlexec.Prepared {
	if len(id) != 16 {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byID[[16]byte(id)]
	if !ok {
		return nil
	}
	c.order.MoveToFront(e)
	return e.Value.(*cqlexec.Prepared)
}

// drop removes p, which the executor found stale, unless it was prepared again meanwhile.
func (c *preparedCache) drop(p *cqlexec.Prepared) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byID[p.ID]; ok && e.Value == p {
		c.order.Remove(e)
		delete(c.byID, p.ID)
	}
}
