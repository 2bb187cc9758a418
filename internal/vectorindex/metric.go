package vectorindex

import (
	"fmt"
	"math"
	"strings"
)

// Metric is a vector embedding's distanceFunction: how VectorDistance scores two vectors.
type Metric int

const (
	// Cosine is the cosine similarity, in [-1, 1]; higher is more similar. A zero vector
	// has no direction, so its cosine with anything (itself included) is 0: neither similar
	// nor opposite, and never NaN, which would break every ordering built on scores.
	Cosine Metric = iota
	// DotProduct is the inner product; higher is more similar.
	DotProduct
	// Euclidean is the Euclidean (L2) distance; lower is more similar.
	Euclidean
)

// ParseMetric reads a distanceFunction as Cosmos DB spells it ("cosine", "dotproduct",
// "euclidean"), in any case.
func ParseMetric(s string) (Metric, error) {
	switch strings.ToLower(s) {
	case "cosine":
		return Cosine, nil
	case "dotproduct":
		return DotProduct, nil
	case "euclidean":
		return Euclidean, nil
	}
	return 0, fmt.Errorf("vectorindex: unknown distance function %q", s)
}

// String returns the metric's name as Cosmos DB spells it.
func (m Metric) String() string {
	switch m {
	case Cosine:
		return "cosine"
	case DotProduct:
		return "dotproduct"
	case Euclidean:
		return "euclidean"
	}
	return fmt.Sprintf("Metric(%d)", int(m))
}

func (m Metric) valid() bool { return m == Cosine || m == DotProduct || m == Euclidean }

// Score is VectorDistance(a, b): the cosine similarity, the inner product or the Euclidean
// distance, accumulated in double precision over the vectors' float32 values, so that the
// score a query returns is the one a direct computation gives. (Walks of the graph and scans of
// codes compare in single precision, with the kernels; only their candidates are scored here.)
// The vectors must have the same length; when they do not, Score returns NaN (the caller is
// expected to have checked, and to return undefined as Cosmos DB does).
func (m Metric) Score(a, b []float32) float64 {
	if len(a) != len(b) {
		return math.NaN()
	}
	var ab, aa, bb, sq float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		ab += x * y
		aa += x * x
		bb += y * y
		sq += (x - y) * (x - y)
	}
	switch m {
	case Cosine:
		if aa <= 0 || bb <= 0 {
			return 0
		}
		return max(-1, min(1, ab/(math.Sqrt(aa)*math.Sqrt(bb))))
	case DotProduct:
		return ab
	case Euclidean:
		return math.Sqrt(sq)
	}
	return math.NaN()
}

// Better reports whether score x ranks before score y: higher first for Cosine and
// DotProduct, lower first for Euclidean. NaN is never better than anything.
func (m Metric) Better(x, y float64) bool {
	if m == Euclidean {
		return x < y
	}
	return x > y
}

// Distance is the score turned so that lower is always better, for code that sorts without
// knowing the metric: 1−cosine, −dot product, or the Euclidean distance itself.
func (m Metric) Distance(a, b []float32) float64 { return m.distanceOfScore(m.Score(a, b)) }

func (m Metric) distanceOfScore(s float64) float64 {
	switch m {
	case Cosine:
		return 1 - s
	case DotProduct:
		return -s
	}
	return s
}

// distKind is how the graph and the quantized scans compare vectors internally. Every kind
// is "lower is closer" and cheap to compute against a code (see query.dist).
type distKind uint8

const (
	// kindL2 is the squared Euclidean distance: it orders like the Euclidean distance and
	// needs no square root.
	kindL2 distKind = iota
	// kindCos is 1 − cosine, computed against vectors normalised at encoding time.
	kindCos
	// kindNegDot is −(a·b).
	kindNegDot
)

// searchKind is the comparison a query uses: the metric's own order.
func (m Metric) searchKind() distKind {
	switch m {
	case Cosine:
		return kindCos
	case DotProduct:
		return kindNegDot
	}
	return kindL2
}

// buildKind is the comparison the graph is built with. RobustPrune's rule, "drop c' when
// α·d(c, c') ≤ d(p, c')", needs a distance that is non-negative and behaves like a metric:
// the inner product is neither (it can be negative, and a vector is not always its own
// best match), so a DotProduct graph is built on Euclidean neighbourhoods and searched with
// the inner product. Cosine's 1 − cos is half the squared distance between unit vectors,
// so it prunes like kindL2.
func (m Metric) buildKind() distKind {
	if m == Cosine {
		return kindCos
	}
	return kindL2
}

// approxScore turns an internal distance back into the metric's score, for results that
// were not re-ranked against full vectors.
func (m Metric) approxScore(k distKind, d float32) float64 {
	switch k {
	case kindCos:
		return max(-1, min(1, 1-float64(d)))
	case kindNegDot:
		return -float64(d)
	}
	return math.Sqrt(max(0, float64(d)))
}

// exactScorer scores many vectors against one query with Score.
type exactScorer struct {
	m Metric
	q []float32
}

func newExactScorer(m Metric, q []float32) exactScorer { return exactScorer{m: m, q: q} }

// score is m.Score(q, v); ok is false when v has the wrong length.
func (e *exactScorer) score(v []float32) (float64, bool) {
	if len(v) != len(e.q) {
		return 0, false
	}
	return e.m.Score(e.q, v), true
}
