package vectorindex

import "slices"

// Delete marks id's node as a tombstone. The node keeps its edges, so searches still pass
// through it (removing it at once would cut the paths it carries) but never return it;
// Consolidate later removes it and repairs the nodes that pointed to it. Deleting an id
// that is absent or already deleted changes nothing.
func (ix *Index) Delete(r Reader, id uint64) (Changes, error) {
	o, err := ix.newOp(r)
	if err != nil {
		return Changes{}, err
	}
	defer o.release()
	n, err := o.get(id)
	if err != nil || n == nil || n.Deleted {
		return Changes{}, err
	}
	if n, err = o.mutable(id); err != nil {
		return Changes{}, err
	}
	n.Deleted = true
	o.meta.Live--
	o.meta.Deleted++
	return o.changes(), nil
}

// TombstoneFraction is the share of stored nodes that are tombstones: searches waste that
// much of their work on them, which is what a caller weighs when deciding to Consolidate
// (0.1, say, is a reasonable trigger).
func (m Meta) TombstoneFraction() float64 {
	if m.Live+m.Deleted == 0 {
		return 0
	}
	return float64(m.Deleted) / float64(m.Live+m.Deleted)
}

// Consolidate is the graph's maintenance pass. It removes every tombstone and repairs the
// live nodes that had edges into one, as FreshDiskANN does: such a node's new out-edges
// are RobustPrune's choice among its live neighbours and the live neighbours of its
// deleted ones, so the paths that ran through a tombstone now run around it. When the
// entry point is a tombstone, it moves to the live node nearest to it among those
// reachable through tombstones (or to any live node).
//
// It also finds the live nodes that no edge leads to any more — an insert can leave one
// behind when it trims a neighbour's full list — and links each again as if inserted,
// which gives it an in-edge; a graph without tombstones is worth consolidating now and
// then for that alone.
//
// Consolidate scans the whole graph twice and holds a set of the ids that have an in-edge
// (some tens of bytes per node), and its Changes cover every node it repairs, so its cost
// grows with the graph: run it when tombstones are a sizeable share (TombstoneFraction),
// not after each delete. It is a mutation like Insert: serialise it with them.
func (ix *Index) Consolidate(r Scanner) (Changes, error) {
	o, err := ix.newOp(r)
	if err != nil {
		return Changes{}, err
	}
	defer o.release()
	dead := map[uint64][]uint64{}
	if err := r.Scan(func(n Node) bool {
		if n.Deleted {
			dead[n.ID] = n.Neighbors
		}
		return true
	}); err != nil {
		return Changes{}, err
	}
	// hasIn collects the targets of the edges that will remain: those of the nodes left
	// as they are now, then those of every node rewritten below.
	hasIn := map[uint64]bool{}
	var touched, live []uint64
	if err := r.Scan(func(n Node) bool {
		if n.Deleted {
			return true
		}
		live = append(live, n.ID)
		for _, nb := range n.Neighbors {
			if _, ok := dead[nb]; ok {
				touched = append(touched, n.ID)
				return true
			}
		}
		for _, nb := range n.Neighbors {
			hasIn[nb] = true
		}
		return true
	}); err != nil {
		return Changes{}, err
	}
	slices.Sort(touched) // a deterministic order of work
	slices.Sort(live)

	if _, ok := dead[o.meta.Entry]; ok || !o.meta.HasEntry {
		var fallback *uint64
		if len(live) > 0 {
			fallback = &live[0]
		}
		if err := o.moveEntry(dead, fallback); err != nil {
			return Changes{}, err
		}
	}

	var orphans []uint64
	var ids []uint64
	for _, id := range touched {
		n, err := o.mutable(id)
		if err != nil {
			return Changes{}, err
		}
		if n == nil || n.Deleted {
			continue
		}
		ids = ids[:0]
		for _, nb := range n.Neighbors {
			if out, ok := dead[nb]; ok {
				ids = append(ids, out...)
			} else {
				ids = append(ids, nb)
			}
		}
		slices.Sort(ids)
		ids = slices.Compact(ids)
		ids = slices.DeleteFunc(ids, func(id uint64) bool { _, ok := dead[id]; return ok })
		if err := o.repair(n, ids); err != nil {
			return Changes{}, err
		}
		if len(n.Neighbors) == 0 {
			orphans = append(orphans, id)
		}
		for _, nb := range n.Neighbors {
			hasIn[nb] = true
		}
	}
	// Nodes left with no out-edge, then nodes with no in-edge, are linked again. The
	// tombstones stay readable (as tombstones) until the end, so that these searches can
	// still pass through them.
	for _, id := range live {
		if !hasIn[id] {
			orphans = append(orphans, id)
		}
	}
	for _, id := range orphans {
		if !o.meta.HasEntry || o.meta.Entry == id {
			continue
		}
		n, err := o.get(id)
		if err != nil {
			return Changes{}, err
		}
		if n == nil || n.Deleted || !o.prepareNode(&o.b.q, n.Code) {
			continue
		}
		if err := o.link(*n); err != nil {
			return Changes{}, err
		}
		if n, _ = o.get(id); n != nil {
			for _, nb := range n.Neighbors {
				hasIn[nb] = true
			}
		}
	}
	for id := range dead {
		o.remove(id)
	}
	o.meta.Deleted -= int64(len(dead))
	if o.meta.Deleted < 0 { // counts from a store that lost track; never below zero
		o.meta.Deleted = 0
	}
	return o.changes(), nil
}

// moveEntry replaces a deleted (or missing) entry point: by the live node nearest to the
// old entry among the first ones reachable through tombstones, else by fallback, else by
// nothing (an empty graph).
func (o *op) moveEntry(dead map[uint64][]uint64, fallback *uint64) error {
	old := o.meta.Entry
	var best uint64
	var bestD float32
	found := false
	if on, err := o.get(old); err != nil {
		return err
	} else if o.meta.HasEntry && on != nil && o.prepareNode(&o.b.q, on.Code) {
		var seen idSet
		seen.reset(64)
		seen.add(old)
		// Breadth-first through tombstones, expanding only tombstones, and stopping at the
		// first level that holds a live node: those are the old entry's nearest heirs.
		level := []uint64{old}
		for depth := 0; len(level) > 0 && depth < 8 && !found; depth++ {
			var next []uint64
			for _, id := range level {
				for _, nb := range dead[id] {
					if _, added := seen.add(nb); !added {
						continue
					}
					if _, isDead := dead[nb]; isDead {
						next = append(next, nb)
						continue
					}
					n, err := o.get(nb)
					if err != nil {
						return err
					}
					if n == nil || n.Deleted {
						continue
					}
					if d := o.b.q.dist(n.Code); !found || d < bestD {
						best, bestD, found = nb, d, true
					}
				}
			}
			level = next
		}
	}
	switch {
	case found:
		o.meta.Entry, o.meta.HasEntry = best, true
	case fallback != nil:
		o.meta.Entry, o.meta.HasEntry = *fallback, true
	default:
		o.meta.Entry, o.meta.HasEntry = 0, false
	}
	return nil
}
