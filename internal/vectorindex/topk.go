package vectorindex

import (
	"cmp"
	"container/heap"
	"math"
	"slices"
)

// The bounded collections behind every search: keep the best n of a stream in O(log n)
// per item, with the worst kept on top of a heap so that a newcomer is compared with one
// element only.

// scored is a candidate with its approximate distance (lower is closer).
type scored struct {
	id   uint64
	dist float32
}

// distHeap keeps the n smallest distances offered (a max-heap on distance).
type distHeap struct {
	n     int
	items []scored
}

func newDistHeap(n int) *distHeap { return &distHeap{n: n, items: make([]scored, 0, min(n, 1024))} }

func (h *distHeap) Len() int { return len(h.items) }
func (h *distHeap) Less(i, j int) bool {
	a, b := h.items[i], h.items[j]
	return a.dist > b.dist || (a.dist == b.dist && a.id > b.id)
}
func (h *distHeap) Swap(i, j int) { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *distHeap) Push(x any)    { h.items = append(h.items, x.(scored)) }
func (h *distHeap) Pop() any {
	x := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return x
}

// wants reports whether a candidate at distance d would be kept: a cheap test before a
// filter or a push.
func (h *distHeap) wants(d float32) bool {
	return h.n > 0 && (len(h.items) < h.n || d < h.items[0].dist)
}

func (h *distHeap) push(id uint64, d float32) {
	if math.IsNaN(float64(d)) || !h.wants(d) {
		return
	}
	if len(h.items) < h.n {
		heap.Push(h, scored{id, d})
		return
	}
	h.items[0] = scored{id, d}
	heap.Fix(h, 0)
}

// sorted returns the kept candidates closest first (ties by id), emptying the heap.
func (h *distHeap) sorted() []scored {
	out := h.items
	h.items = nil
	slices.SortFunc(out, func(a, b scored) int {
		if c := cmp.Compare(a.dist, b.dist); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
	return out
}

// topK keeps the k best results by the metric's score; equal scores rank by id, so that
// results are deterministic.
type topK struct {
	m     Metric
	k     int
	items []Result
}

func newTopK(m Metric, k int) *topK { return &topK{m: m, k: k, items: make([]Result, 0, min(k, 1024))} }

// before reports whether a ranks before b.
func (t *topK) before(a, b Result) bool {
	if t.m.Better(a.Score, b.Score) {
		return true
	}
	if t.m.Better(b.Score, a.Score) {
		return false
	}
	return a.ID < b.ID
}

func (t *topK) Len() int           { return len(t.items) }
func (t *topK) Less(i, j int) bool { return t.before(t.items[j], t.items[i]) } // worst on top
func (t *topK) Swap(i, j int)      { t.items[i], t.items[j] = t.items[j], t.items[i] }
func (t *topK) Push(x any)         { t.items = append(t.items, x.(Result)) }
func (t *topK) Pop() any {
	x := t.items[len(t.items)-1]
	t.items = t.items[:len(t.items)-1]
	return x
}

// offer considers one result; NaN scores (from invalid vectors) are never kept.
func (t *topK) offer(id uint64, score float64) {
	if t.k <= 0 || math.IsNaN(score) {
		return
	}
	r := Result{ID: id, Score: score}
	if len(t.items) < t.k {
		heap.Push(t, r)
		return
	}
	if t.before(r, t.items[0]) {
		t.items[0] = r
		heap.Fix(t, 0)
	}
}

// sorted returns the kept results best first, emptying the collection.
func (t *topK) sorted() []Result {
	out := t.items
	t.items = nil
	slices.SortFunc(out, func(a, b Result) int {
		if t.before(a, b) {
			return -1
		}
		if t.before(b, a) {
			return 1
		}
		return 0
	})
	return out
}
