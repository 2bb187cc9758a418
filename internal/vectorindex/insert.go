package vectorindex

import (
	"cmp"
	"math"
	"slices"
)

// Insert adds the vector of id to the graph, or replaces it when id is already there (a
// tombstone of id comes back to life). It returns the records to write; it writes
// nothing. Mutations of one graph must be serialised by the caller, each one reading the
// state its predecessors left (see the package documentation).
//
// The insert is FreshDiskANN's: search the graph for the new vector, choose its out-edges
// among the nodes the search expanded (RobustPrune), then give each chosen neighbour the
// reverse edge, reworking that neighbour's list when it is full (see addEdge).
//
// Replacing a vector keeps the edges other nodes have into it; they were chosen for the
// old vector and now merely cost a little search efficiency, until consolidation or later
// prunes rework them.
func (ix *Index) Insert(r Reader, id uint64, vec []float32) (Changes, error) {
	if err := checkVector(vec, ix.cfg.Dimensions); err != nil {
		return Changes{}, err
	}
	o, err := ix.newOp(r)
	if err != nil {
		return Changes{}, err
	}
	defer o.release()
	old, err := o.get(id)
	if err != nil {
		return Changes{}, err
	}
	o.meta.Inserts++
	others := o.meta.Live // live nodes besides this one
	switch {
	case old == nil:
		o.meta.Live++
	case old.Deleted:
		o.meta.Deleted--
		o.meta.Live++
	default:
		others--
	}
	node := Node{ID: id, Code: encodeCode(ix.cfg.Metric, o.quant, vec)}
	if !o.meta.HasEntry || others == 0 {
		// The first live vector is the whole graph and its entry point. Tombstones left
		// from before cannot be its neighbours, and searches must start from it: were
		// they to start from a tombstone, nothing would lead to it.
		o.meta.Entry, o.meta.HasEntry = id, true
		o.put(node)
	} else {
		o.b.q.reset(ix.cfg.Metric, ix.cfg.Metric.buildKind(), vec, o.quant)
		if err := o.link(node); err != nil {
			return Changes{}, err
		}
	}
	if err := o.maybeTrain(); err != nil {
		return Changes{}, err
	}
	return o.changes(), nil
}

// link gives node (whose vector is prepared in o.b.q) its out-edges from a search of the
// graph, writes it, and adds the reverse edges. A node that none of its neighbours
// accepts would have no edge leading to it — no search could ever return it — so the
// nearest neighbour is then made to take it.
func (o *op) link(node Node) error {
	if err := o.b.search(o.fetch, &o.b.q, o.meta.Entry, o.ix.cfg.BuildListSize, true, nil); err != nil {
		return err
	}
	node.Neighbors = o.prune(node.ID, o.b.visited)
	o.put(node)
	reached := false
	for _, j := range node.Neighbors {
		ok, err := o.addEdge(j, &node, false)
		if err != nil {
			return err
		}
		reached = reached || ok
	}
	if !reached && len(node.Neighbors) > 0 {
		if _, err := o.addEdge(node.Neighbors[0], &node, true); err != nil {
			return err
		}
	}
	return nil
}

// edgeEnd is one out-edge of a node whose list is being reworked, with the distances the
// rework needs.
type edgeEnd struct {
	id       uint64
	fromJ    float32 // to the list's owner
	fromP    float32 // to the node being added
	mustStay bool
}

// addEdge adds the edge j → p (p's vector prepared in o.b.q) and reports whether j's list
// holds p afterwards. Below MaxDegree the edge is simply appended. At MaxDegree, rather
// than running RobustPrune again over all R+1 candidates (R² distances, for each of the R
// neighbours of every insert — most of the cost of building), the list is updated as
// RobustPrune would treat the one newcomer: p is refused if a neighbour nearer to j covers
// it, otherwise it comes in and removes the farther neighbours it covers; if the list
// still overflows, it is cut to R−headroom edges: the bridgeSlots farthest and the
// nearest. force
// skips the covering rules and keeps p whatever its rank. Tombstones and missing records
// in the list are dropped whenever the list is rewritten.
func (o *op) addEdge(j uint64, p *Node, force bool) (bool, error) {
	n, err := o.get(j)
	if err != nil || n == nil || n.ID == p.ID {
		return false, err
	}
	if slices.Contains(n.Neighbors, p.ID) {
		return true, nil
	}
	R := o.ix.cfg.MaxDegree
	if len(n.Neighbors) < R {
		m, err := o.mutable(j)
		if err != nil {
			return false, err
		}
		m.Neighbors = append(m.Neighbors, p.ID)
		return true, nil
	}
	qj := &o.b.pq
	if !o.prepareNode(qj, n.Code) {
		return false, nil
	}
	ents := o.ents[:0]
	for _, id := range n.Neighbors {
		s, ok, err := o.fetch(id) // read, not cached: only the code is needed, once
		if err != nil {
			return false, err
		}
		if !ok || s.Deleted || id == j {
			continue
		}
		// The insert's search compared p with most of j's neighbours already (it expanded
		// j, or passed by): reuse those distances.
		fromP, ok := o.b.seen.dist(id)
		if !ok || math.IsInf(float64(fromP), 1) {
			fromP = o.b.q.dist(s.Code)
		}
		ents = append(ents, edgeEnd{id: id, fromJ: qj.dist(s.Code), fromP: fromP})
	}
	o.ents = ents
	dp := qj.dist(p.Code)
	if len(ents) == len(n.Neighbors) && !force { // a full list of live nodes: p must earn its place
		for _, e := range ents {
			if e.fromJ < dp && o.ix.alpha2*e.fromP <= dp {
				return false, nil
			}
		}
		ents = slices.DeleteFunc(ents, func(e edgeEnd) bool { return e.fromJ > dp && o.ix.alpha2*e.fromP <= e.fromJ })
	}
	ents = append(ents, edgeEnd{id: p.ID, fromJ: dp, mustStay: force})
	if len(ents) > R {
		// Trim to a little below R, so that the next few reverse edges are plain appends:
		// this rework then runs once per headroom(R)+1 additions instead of at each.
		target := R - headroom(R)
		slices.SortFunc(ents, func(a, b edgeEnd) int {
			if c := cmp.Compare(a.fromJ, b.fromJ); c != 0 {
				return c
			}
			return cmp.Compare(a.id, b.id)
		})
		// Drop the middle: keep the nearest and the bridgeSlots farthest, and p if forced.
		far := bridgeSlots(R)
		near := target - far
		kept := ents[:0]
		for i, e := range ents {
			if i < near || i >= len(ents)-far || (e.mustStay && len(kept) < target) {
				kept = append(kept, e)
			}
		}
		if len(kept) > target { // p was forced in among the kept: the last of the nearest goes
			kept = slices.Delete(kept, near-1, near)
		}
		ents = kept
	}
	m, err := o.mutable(j)
	if err != nil {
		return false, err
	}
	m.Neighbors = m.Neighbors[:0]
	in := false
	for _, e := range ents {
		m.Neighbors = append(m.Neighbors, e.id)
		in = in || e.id == p.ID
	}
	return in, nil
}

// headroom is how far below R an overflowing list is trimmed.
func headroom(R int) int { return R / 8 }

// maybeTrain trains the quantizer once the graph holds TrainSize vectors. The sample is
// the graph itself, walked breadth-first from the entry point: every node reachable holds
// a raw code, which is decoded, used for training and re-encoded with the new quantizer
// in the same Changes, so the caller needs no list of the first vectors. A node the walk
// does not reach keeps its raw code, which stays readable. The entry point then moves to
// the sample's medoid (the vector nearest the sample's mean), a central start that
// shortens every search.
func (o *op) maybeTrain() error {
	cfg := o.ix.cfg
	if o.quant != nil || cfg.TrainSize < 0 || o.meta.Live+o.meta.Deleted < int64(cfg.TrainSize) || !o.meta.HasEntry {
		return nil
	}
	var ids []uint64
	var sample [][]float32
	var live []bool
	var seen idSet
	seen.reset(cfg.TrainSize)
	seen.add(o.meta.Entry)
	for queue := []uint64{o.meta.Entry}; len(queue) > 0; queue = queue[1:] {
		n, err := o.get(queue[0])
		if err != nil {
			return err
		}
		if n == nil {
			continue
		}
		v := make([]float32, cfg.Dimensions)
		if len(n.Code) > 0 && n.Code[0] == codeRaw && decodeCode(v, n.Code, nil) {
			ids = append(ids, n.ID)
			sample = append(sample, v)
			live = append(live, !n.Deleted)
		}
		for _, nb := range n.Neighbors {
			if _, added := seen.add(nb); added {
				queue = append(queue, nb)
			}
		}
	}
	if len(sample) == 0 {
		return nil
	}
	q, err := TrainScalar(cfg.Metric, sample)
	if err != nil {
		return err
	}
	mean := make([]float32, cfg.Dimensions)
	for _, v := range sample {
		for i, x := range v {
			mean[i] += x
		}
	}
	for i := range mean {
		mean[i] /= float32(len(sample))
	}
	best, bestD := -1, float32(0)
	for i, v := range sample {
		n, err := o.mutable(ids[i])
		if err != nil {
			return err
		}
		n.Code = encodeCode(cfg.Metric, q, v)
		if d := sqL2(mean, v); live[i] && (best < 0 || d < bestD) {
			best, bestD = i, d
		}
	}
	if best >= 0 {
		o.meta.Entry = ids[best]
	}
	o.quant, o.trained = q, true
	return nil
}
