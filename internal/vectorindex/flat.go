package vectorindex

import "iter"

// Flat is exact (brute-force) search, Cosmos DB's flat index and VectorDistance's
// brute-force mode: it scores every vector the iterator yields and returns the k best,
// best first, ties broken by id. Vectors of another length than the query are skipped (an
// item whose vector does not match has no VectorDistance), and so are ids that filter
// rejects. The iterator owns its errors: one that fails stops yielding and reports the
// failure to its caller.
func Flat(m Metric, query []float32, k int, items iter.Seq2[uint64, []float32], filter func(id uint64) bool) []Result {
	top := newTopK(m, k)
	if k <= 0 {
		return nil
	}
	ex := newExactScorer(m, query)
	for id, v := range items {
		if filter != nil && !filter(id) {
			continue
		}
		if s, ok := ex.score(v); ok {
			top.offer(id, s)
		}
	}
	return top.sorted()
}

// QuantizedFlat is Cosmos DB's quantizedFlat index: it scans codes (made by EncodeVector
// with the same metric and quantizer; raw codes too), keeps the RerankMultiplier·K closest
// by approximate distance, and re-ranks them with full vectors through opt.Vector (without
// it, the scores are approximate). opt.ListSize is not used. A code of another length or
// format than the quantizer's is skipped.
func QuantizedFlat(m Metric, quant Quantizer, vec []float32, codes iter.Seq2[uint64, []byte], opt SearchOptions) ([]Result, error) {
	if opt.K <= 0 {
		return nil, nil
	}
	if err := checkVector(vec, -1); err != nil {
		return nil, err
	}
	if quant != nil && quant.Dimensions() != len(vec) {
		return nil, ErrDimensions
	}
	var q query
	q.reset(m, m.searchKind(), vec, quant)
	pool := newDistHeap(rerankSize(opt))
	for id, code := range codes {
		d := q.dist(code)
		if !pool.wants(d) || d > maxFinite {
			continue
		}
		if opt.Filter != nil && !opt.Filter(id) {
			continue
		}
		pool.push(id, d)
	}
	return finish(m, m.searchKind(), vec, pool.sorted(), opt)
}

// maxFinite is the largest finite float32: query.dist returns +Inf for unreadable codes.
const maxFinite = 3.4028234663852886e38
