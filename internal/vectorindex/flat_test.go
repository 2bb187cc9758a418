package vectorindex

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// sortAll is the reference Flat must equal: every vector scored, sorted best first, ties
// by id.
func sortAll(m Metric, q []float32, vs [][]float32, keep func(uint64) bool) []Result {
	var all []Result
	for i, v := range vs {
		if keep == nil || keep(uint64(i)) {
			all = append(all, Result{ID: uint64(i), Score: m.Score(q, v)})
		}
	}
	slices.SortStableFunc(all, func(a, b Result) int {
		switch {
		case m.Better(a.Score, b.Score):
			return -1
		case m.Better(b.Score, a.Score):
			return 1
		}
		return 0
	})
	return all
}

func TestFlatEqualsSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	vs := randomVectors(rng, 500, 19)
	// Duplicates tie exactly; the order among them must be by id.
	for i := 0; i < 40; i++ {
		vs[100+i] = vs[i]
	}
	for _, m := range []Metric{Cosine, DotProduct, Euclidean} {
		for _, k := range []int{1, 10, 77, 600} {
			q := randomVectors(rng, 1, 19)[0]
			got := Flat(m, q, k, sliceItems(vs), nil)
			want := sortAll(m, q, vs, nil)
			want = want[:min(k, len(want))]
			if !slices.Equal(got, want) {
				t.Fatalf("%v k=%d: Flat differs from a full sort\n got %v\nwant %v", m, k, got[:min(5, len(got))], want[:min(5, len(want))])
			}
		}
	}
}

func TestFlatFilterAndLengths(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	vs := randomVectors(rng, 200, 8)
	vs[7] = []float32{1, 2, 3} // wrong length: skipped, as it has no VectorDistance
	odd := func(id uint64) bool { return id%2 == 1 }
	q := randomVectors(rng, 1, 8)[0]
	got := Flat(Euclidean, q, 10, sliceItems(vs), odd)
	want := sortAll(Euclidean, q, vs, func(id uint64) bool { return odd(id) && id != 7 })[:10]
	if !slices.Equal(got, want) {
		t.Fatalf("filtered Flat = %v, want %v", got, want)
	}
	for _, r := range Flat(Euclidean, q, 300, sliceItems(vs), nil) {
		if r.ID == 7 {
			t.Fatal("a vector of the wrong length was scored")
		}
	}
	if Flat(Cosine, q, 0, sliceItems(vs), nil) != nil {
		t.Error("k=0 returns results")
	}
}

func TestQuantizedFlat(t *testing.T) {
	base, queries := clustered(3000, 30, 64, 20, 0.5, 9)
	for _, m := range []Metric{Cosine, DotProduct, Euclidean} {
		quant, err := Train(m, base[:1000])
		if err != nil {
			t.Fatal(err)
		}
		codes := make([][]byte, len(base))
		for i, v := range base {
			// The first vectors keep raw codes, as an index trained late would.
			q := quant
			if i < 100 {
				q = nil
			}
			if codes[i], err = EncodeVector(m, q, v); err != nil {
				t.Fatal(err)
			}
		}
		iterCodes := func(yield func(uint64, []byte) bool) {
			for i, c := range codes {
				if !yield(uint64(i), c) {
					return
				}
			}
		}
		vector := func(id uint64) ([]float32, error) { return base[id], nil }
		var recall float64
		for _, q := range queries {
			want := Flat(m, q, 10, sliceItems(base), nil)
			got, err := QuantizedFlat(m, quant, q, iterCodes, SearchOptions{K: 10, Vector: vector})
			if err != nil {
				t.Fatal(err)
			}
			recall += recallAt(got, want)
			for _, r := range got { // re-ranked: scores are exact
				if s := m.Score(q, base[r.ID]); s != r.Score {
					t.Fatalf("%v: result %d scored %v, exactly %v", m, r.ID, r.Score, s)
				}
			}
			// Without full vectors the scores are approximate, the ids mostly right.
			approx, err := QuantizedFlat(m, quant, q, iterCodes, SearchOptions{K: 10})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range approx {
				if e := m.Score(q, base[r.ID]); !approxEqual(r.Score, e, 0.05*max(1, abs64(e))) {
					t.Fatalf("%v: approximate score %v too far from %v", m, r.Score, e)
				}
			}
		}
		if recall /= float64(len(queries)); recall < 0.95 {
			t.Errorf("%v: quantizedFlat recall@10 %.3f, want ≥ 0.95", m, recall)
		}
	}
}

func abs64(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
