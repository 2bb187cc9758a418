package query

import (
	"container/heap"
	"slices"

	"github.com/partita-db/partita/internal/value"
)

// An ORDER BY query that returns at most n results (TOP n, or OFFSET and LIMIT adding up to
// n) only needs, from each part it reads, the n results that part would put first: the
// others can never make the page. best keeps those n as the part's results arrive, so a
// vector search of TOP 10 over a million items holds ten results, not a million.

// orderCompare returns the comparison of two results by the query's ORDER BY keys: negative
// when a comes first. Scores (ORDER BY RANK, VectorDistance) rank most relevant first, and a
// result without one comes after those with one (orderDirections).
func (p *Prepared) orderCompare(ev *evaluator) (func(a, b result) int, error) {
	desc, score, err := p.orderDirections(ev)
	if err != nil {
		return nil, err
	}
	return func(a, b result) int {
		for k := range desc {
			x, y := a.keys[k], b.keys[k]
			if score[k] && x.IsUndefined() != y.IsUndefined() {
				if y.IsUndefined() {
					return -1
				}
				return 1
			}
			if c := value.Compare(x, y); c != 0 {
				if desc[k] {
					return -c
				}
				return c
			}
		}
		return 0
	}, nil
}

// bestOnly returns what keeps a part's first n results, or nil when the query needs all of
// them: no ORDER BY, or no bound, or DISTINCT (duplicates are removed after ordering), or
// RRF (a result's fused score depends on every other's rank).
func (p *Prepared) bestOnly(ev *evaluator) (*best, error) {
	q := p.q
	if len(q.OrderBy) == 0 || q.Select.Distinct || p.fused() || q.Select.Top == nil && q.Limit == nil {
		return nil, nil
	}
	n := maxCount
	if q.Select.Top != nil {
		n = p.count(ev, q.Select.Top)
	}
	if q.Limit != nil {
		off := 0
		if q.Offset != nil {
			off = p.count(ev, q.Offset)
		}
		n = min(n, off+p.count(ev, q.Limit))
	}
	cmp, err := p.orderCompare(ev)
	if err != nil {
		return nil, err
	}
	return &best{n: n, cmp: cmp}, nil
}

// best is a bounded heap of results, the one that would come last on top.
type best struct {
	n     int
	cmp   func(a, b result) int
	items []arrival
	seq   int
}

// arrival is a result and its place in the part's order of arrival, which breaks ties as the
// stable sort of finish does.
type arrival struct {
	res result
	seq int
}

func (b *best) add(r result) {
	b.seq++
	a := arrival{r, b.seq}
	if len(b.items) < b.n {
		heap.Push(b, a)
		return
	}
	if b.n > 0 && b.after(b.items[0], a) {
		b.items[0] = a
		heap.Fix(b, 0)
	}
}

// after reports whether x comes after y.
func (b *best) after(x, y arrival) bool {
	if c := b.cmp(x.res, y.res); c != 0 {
		return c > 0
	}
	return x.seq > y.seq
}

// inOrder returns the results kept, in their order of arrival.
func (b *best) inOrder() []result {
	slices.SortFunc(b.items, func(x, y arrival) int { return x.seq - y.seq })
	out := make([]result, len(b.items))
	for i, a := range b.items {
		out[i] = a.res
	}
	return out
}

func (b *best) Len() int           { return len(b.items) }
func (b *best) Less(i, j int) bool { return b.after(b.items[i], b.items[j]) }
func (b *best) Swap(i, j int)      { b.items[i], b.items[j] = b.items[j], b.items[i] }
func (b *best) Push(x any)         { b.items = append(b.items, x.(arrival)) }
func (b *best) Pop() any {
	x := b.items[len(b.items)-1]
	b.items = b.items[:len(b.items)-1]
	return x
}
