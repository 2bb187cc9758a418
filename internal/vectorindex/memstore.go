package vectorindex

import "sync"

// MemStore is an in-memory store for the index: the reference Reader and Scanner, used by
// the tests and benchmarks, and a model of what a persistent store does with Changes.
//
// Each call sees the store as of that call; a search that runs while Apply does may see
// some records from before and some from after it. The graph tolerates that (a missing
// neighbour is skipped), but a store that needs answers consistent with a point in time
// serves searches from a snapshot instead.
type MemStore struct {
	mu    sync.RWMutex
	nodes map[uint64]Node
	meta  Meta
	quant Quantizer
}

// NewMemStore returns an empty store.
func NewMemStore() *MemStore { return &MemStore{nodes: map[uint64]Node{}} }

// Apply writes a mutation's changes. The store keeps the Changes' slices: the index hands
// them over and does not touch them again.
func (s *MemStore) Apply(ch Changes) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ch.Delete {
		delete(s.nodes, id)
	}
	for _, n := range ch.Put {
		s.nodes[n.ID] = n
	}
	if ch.Meta != nil {
		s.meta = *ch.Meta
	}
	if ch.Quantizer != nil {
		s.quant = ch.Quantizer
	}
}

// Node implements Reader.
func (s *MemStore) Node(id uint64) (Node, bool, error) {
	s.mu.RLock()
	n, ok := s.nodes[id]
	s.mu.RUnlock()
	return n, ok, nil
}

// Meta implements Reader.
func (s *MemStore) Meta() (Meta, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.meta, nil
}

// Quantizer implements Reader.
func (s *MemStore) Quantizer() (Quantizer, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.quant, nil
}

// Scan implements Scanner. It holds the store's read lock throughout, so fn must not call
// Apply.
func (s *MemStore) Scan(fn func(Node) bool) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, n := range s.nodes {
		if !fn(n) {
			break
		}
	}
	return nil
}

// Len returns the number of records, tombstones included.
func (s *MemStore) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.nodes)
}
