package vectorindex

import (
	"errors"
	"sync"
)

// SearchOptions are one query's parameters.
type SearchOptions struct {
	// K is how many results to return (the query's TOP).
	K int
	// ListSize (L) is the search's candidate list: larger finds the true neighbours more
	// often and costs proportionally more. Cosmos DB's searchListSizeMultiplier times K
	// maps here; zero means DefaultSearchListMultiplier·K. It is raised to K if lower.
	ListSize int
	// RerankMultiplier·K candidates, the best by approximate distance, are re-scored with
	// full vectors (Cosmos DB's quantizedVectorListMultiplier for quantizedFlat); zero means
	// DefaultRerankMultiplier.
	RerankMultiplier int
	// Filter, when set, admits ids to the results; a node it rejects is still traversed,
	// as the graph's paths run through it. With a selective filter few admitted nodes may
	// be met: raise ListSize, or use Flat when the filter leaves few items.
	Filter func(id uint64) bool
	// Vector, when set, returns an id's full vector for re-ranking (from the item store);
	// a nil vector (the item is gone, or holds no valid vector) drops the candidate. When
	// Vector is nil, results carry scores computed from codes, which are approximate once
	// the quantizer is trained.
	Vector func(id uint64) ([]float32, error)
}

// Defaults for the SearchOptions left zero.
const (
	DefaultSearchListMultiplier = 10
	DefaultRerankMultiplier     = 5
)

// Result is one item found, with its VectorDistance score.
type Result struct {
	ID    uint64
	Score float64
}

var beams = sync.Pool{New: func() any { return new(beam) }}

// Search returns the K nodes nearest to vec, best first. It only reads r, and any number
// of searches may run at once on readers that stay consistent while they run.
//
// The graph is walked with distances between the query (float32) and the stored codes;
// every live, admitted node met on the way competes for RerankMultiplier·K places — not
// only those left in the final candidate list, which matters when a filter rejects many —
// and those places are re-scored exactly and cut to K.
func (ix *Index) Search(r Reader, vec []float32, opt SearchOptions) ([]Result, error) {
	if err := checkVector(vec, ix.cfg.Dimensions); err != nil {
		return nil, err
	}
	if opt.K <= 0 {
		return nil, nil
	}
	meta, err := r.Meta()
	if err != nil {
		return nil, err
	}
	if !meta.HasEntry || meta.Live == 0 {
		return nil, nil
	}
	quant, err := r.Quantizer()
	if err != nil {
		return nil, err
	}
	L := opt.ListSize
	if L <= 0 {
		L = DefaultSearchListMultiplier * opt.K
	}
	L = max(L, opt.K)
	pool := newDistHeap(rerankSize(opt))

	b := beams.Get().(*beam)
	defer beams.Put(b)
	m := ix.cfg.Metric
	b.q.reset(m, m.searchKind(), vec, quant)
	err = b.search(r.Node, &b.q, meta.Entry, L, false, func(id uint64, d float32, deleted bool) {
		if deleted || !pool.wants(d) {
			return
		}
		if opt.Filter != nil && !opt.Filter(id) {
			return
		}
		pool.push(id, d)
	})
	if err != nil {
		return nil, err
	}
	return finish(m, m.searchKind(), vec, pool.sorted(), opt)
}

func rerankSize(opt SearchOptions) int {
	mult := opt.RerankMultiplier
	if mult <= 0 {
		mult = DefaultRerankMultiplier
	}
	return max(opt.K, mult*opt.K)
}

// finish turns candidates sorted by approximate distance into the K best results: exact
// scores from full vectors when opt.Vector is set, approximate ones otherwise.
func finish(m Metric, kind distKind, vec []float32, cands []scored, opt SearchOptions) ([]Result, error) {
	if opt.Vector == nil {
		n := min(opt.K, len(cands))
		out := make([]Result, n)
		for i, c := range cands[:n] {
			out[i] = Result{ID: c.id, Score: m.approxScore(kind, c.dist)}
		}
		return out, nil
	}
	top := newTopK(m, opt.K)
	ex := newExactScorer(m, vec)
	for _, c := range cands {
		v, err := opt.Vector(c.id)
		if err != nil {
			return nil, err
		}
		if v == nil {
			continue
		}
		s, ok := ex.score(v)
		if !ok {
			return nil, errors.Join(ErrDimensions, errors.New("vectorindex: a re-ranking vector has the wrong length"))
		}
		top.offer(c.id, s)
	}
	return top.sorted(), nil
}
