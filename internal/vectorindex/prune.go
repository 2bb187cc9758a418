package vectorindex

import (
	"cmp"
	"slices"
)

// prepareNode readies the vector a stored code reproduces as a query of the graph's build
// kind; false when the code cannot be read.
func (o *op) prepareNode(q *query, code []byte) bool {
	b := &o.b
	if cap(b.buf) < o.ix.cfg.Dimensions {
		b.buf = make([]float32, o.ix.cfg.Dimensions)
	}
	b.buf = b.buf[:o.ix.cfg.Dimensions]
	if !decodeCode(b.buf, code, o.quant) {
		return false
	}
	q.reset(o.ix.cfg.Metric, o.ix.cfg.Metric.buildKind(), b.buf, o.quant)
	return true
}

// prune is RobustPrune: from candidates carrying their distance to a point p, choose at
// most R out-edges for p. Candidates are taken closest first; one is dropped when an
// already chosen neighbour covers it — α·d(chosen, c) ≤ d(p, c): c is closer to that
// neighbour (by a margin α) than to p, so a search reaches c through it. (The graph's
// distances are squared, so the test is made with α².) The result points in diverse
// directions, which is what lets a greedy search converge.
//
// The check is lazy — each candidate is compared with the neighbours chosen before it,
// and the scan stops when the list is full — which chooses what the usual eager form
// (each choice striking out the candidates it covers) chooses, with R²/2 comparisons at
// most instead of R·|candidates|.
//
// When more candidates survive than there are slots, the plain rule keeps the R closest,
// and on clustered data whose points are all about equally far apart (where α never
// fires) that drops every edge leaving the cluster: the graph falls apart into islands
// that no search can cross. So the last bridgeSlots(R) slots go to the farthest surviving
// candidates instead, which keeps a few long edges in every list that fills up. On data
// where pruning thins the lists below R, nothing changes.
//
// cands is reordered; candidates equal to self, tombstones and duplicates are skipped.
func (o *op) prune(self uint64, cands []cand) []uint64 {
	slices.SortFunc(cands, func(a, b cand) int {
		if c := cmp.Compare(a.dist, b.dist); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
	o.pset.reset(len(cands))
	live := cands[:0]
	for _, c := range cands {
		if _, added := o.pset.add(c.id); added && c.id != self && !c.deleted {
			live = append(live, c)
		}
	}
	R := o.ix.cfg.MaxDegree
	near := R - bridgeSlots(R)
	out := make([]uint64, 0, min(R, len(live)))
	if len(o.sel) < R {
		o.sel = make([]query, R)
	}
	try := func(c *cand) {
		for i := range out {
			if o.ix.alpha2*o.sel[i].dist(c.code) <= c.dist {
				return
			}
		}
		if o.prepareNode(&o.sel[len(out)], c.code) {
			out = append(out, c.id)
		}
	}
	i := 0
	for ; i < len(live) && len(out) < near; i++ {
		try(&live[i])
	}
	for j := len(live) - 1; j >= i && len(out) < R; j-- {
		try(&live[j])
	}
	return out
}

// bridgeSlots is how many of R edges are kept for long edges when a list overflows.
func bridgeSlots(R int) int { return R / 8 }
