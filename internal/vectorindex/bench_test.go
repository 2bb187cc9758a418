package vectorindex

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// benchFigures are what one run of the clustered benchmark measured.
type benchFigures struct {
	n, dims, queries int
	buildSeconds     float64
	flatQPS          float64
	qflatQPS         float64 // quantizedFlat over the graph's codes
	qflatRecall      float64
	rows             []benchRow
	codeBytes        float64 // per vector, the code alone
	edgeBytes        float64 // per vector, the encoded neighbour list
	recordBytes      float64 // per vector, the whole encoded record (MarshalNode)
	avgDegree        float64
	unreachable      int // live nodes no path from the entry point reaches

	maintSeconds     float64 // a Consolidate with no tombstones
	maintPuts        int
	unreachableAfter int
	deleteSeconds    float64 // deleting every tenth vector
	consSeconds      float64 // the Consolidate after those deletes
	consPuts         int
	recallAfter      float64 // at the default list size, against exact search of the rest
	unreachableEnd   int
}

type benchRow struct {
	listSize int
	recall   float64
	qps      float64
}

// runClusteredBench builds a graph over a clustered data set, computes the exact top-k of
// every query with Flat, and measures graph search at each list size.
func runClusteredBench(tb testing.TB, m Metric, n, nq, dims int, cfg Config, k int, listSizes []int) benchFigures {
	tb.Helper()
	base, queries := clustered(n, nq, dims, 100, 0.5, 42)
	cfg.Metric, cfg.Dimensions = m, dims
	ix, err := New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	store := NewMemStore()
	start := time.Now()
	for i, v := range base {
		ch, err := ix.Insert(store, uint64(i), v)
		if err != nil {
			tb.Fatal(err)
		}
		store.Apply(ch)
	}
	f := benchFigures{n: n, dims: dims, queries: nq, buildSeconds: time.Since(start).Seconds()}

	truth := make([][]Result, nq)
	start = time.Now()
	for i, q := range queries {
		truth[i] = Flat(m, q, k, sliceItems(base), nil)
	}
	f.flatQPS = float64(nq) / time.Since(start).Seconds()

	vector := func(id uint64) ([]float32, error) { return base[id], nil }
	for _, L := range listSizes {
		opt := SearchOptions{K: k, ListSize: L, Vector: vector}
		var recall float64
		start = time.Now()
		for i, q := range queries {
			res, err := ix.Search(store, q, opt)
			if err != nil {
				tb.Fatal(err)
			}
			recall += recallAt(res, truth[i])
		}
		f.rows = append(f.rows, benchRow{listSize: L, recall: recall / float64(nq), qps: float64(nq) / time.Since(start).Seconds()})
	}

	// quantizedFlat over the same codes, on a share of the queries (it is a full scan).
	ids, codes := []uint64{}, [][]byte{}
	_ = store.Scan(func(n Node) bool { ids, codes = append(ids, n.ID), append(codes, n.Code); return true })
	quant, _ := store.Quantizer()
	iterCodes := func(yield func(uint64, []byte) bool) {
		for i, c := range codes {
			if !yield(ids[i], c) {
				return
			}
		}
	}
	nqf := max(1, nq/5)
	start = time.Now()
	for i, q := range queries[:nqf] {
		res, err := QuantizedFlat(m, quant, q, iterCodes, SearchOptions{K: k, Vector: vector})
		if err != nil {
			tb.Fatal(err)
		}
		f.qflatRecall += recallAt(res, truth[i])
	}
	f.qflatQPS = float64(nqf) / time.Since(start).Seconds()
	f.qflatRecall /= float64(nqf)

	var code, rec, deg int
	_ = store.Scan(func(n Node) bool {
		code += len(n.Code)
		r := len(MarshalNode(n))
		rec += r
		deg += len(n.Neighbors)
		return true
	})
	f.codeBytes = float64(code) / float64(n)
	f.recordBytes = float64(rec) / float64(n)
	f.edgeBytes = f.recordBytes - f.codeBytes
	f.avgDegree = float64(deg) / float64(n)
	f.unreachable = unreachable(store)

	// Maintenance with no tombstones: it relinks the nodes that no edge leads to.
	start = time.Now()
	ch, err := ix.Consolidate(store)
	if err != nil {
		tb.Fatal(err)
	}
	store.Apply(ch)
	f.maintSeconds, f.maintPuts, f.unreachableAfter = time.Since(start).Seconds(), len(ch.Put), unreachable(store)

	// Delete every tenth vector, consolidate, and search what is left.
	start = time.Now()
	for i := 0; i < n; i += 10 {
		ch, err := ix.Delete(store, uint64(i))
		if err != nil {
			tb.Fatal(err)
		}
		store.Apply(ch)
	}
	f.deleteSeconds = time.Since(start).Seconds()
	start = time.Now()
	if ch, err = ix.Consolidate(store); err != nil {
		tb.Fatal(err)
	}
	store.Apply(ch)
	f.consSeconds, f.consPuts = time.Since(start).Seconds(), len(ch.Put)
	kept := func(id uint64) bool { return id%10 != 0 }
	for _, q := range queries[:nqf] {
		want := Flat(m, q, k, sliceItems(base), kept)
		got, err := ix.Search(store, q, SearchOptions{K: k, Vector: vector})
		if err != nil {
			tb.Fatal(err)
		}
		f.recallAfter += recallAt(got, want)
	}
	f.recallAfter /= float64(nqf)
	f.unreachableEnd = unreachable(store)
	return f
}

func (f benchFigures) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "clustered data: %d vectors × %d dims, 100 clusters, %d queries, k=10\n", f.n, f.dims, f.queries)
	fmt.Fprintf(&b, "build: %.1f s, %.0f vectors/s\n", f.buildSeconds, float64(f.n)/f.buildSeconds)
	fmt.Fprintf(&b, "exact flat search: %.1f QPS\n", f.flatQPS)
	fmt.Fprintf(&b, "quantizedFlat (re-rank 5·k): recall@10 %.4f  %.1f QPS (%.1fx flat)\n", f.qflatRecall, f.qflatQPS, f.qflatQPS/f.flatQPS)
	for _, r := range f.rows {
		fmt.Fprintf(&b, "graph L=%-4d recall@10 %.4f  %8.1f QPS  (%.1fx flat)\n", r.listSize, r.recall, r.qps, r.qps/f.flatQPS)
	}
	fmt.Fprintf(&b, "bytes/vector: %.1f encoded record (code %.1f, edges %.1f with dense ids); in memory %.1f (code + 8 per edge)\n",
		f.recordBytes, f.codeBytes, f.edgeBytes, f.codeBytes+8*f.avgDegree)
	fmt.Fprintf(&b, "average degree %.1f; live nodes unreachable from the entry: %d\n", f.avgDegree, f.unreachable)
	fmt.Fprintf(&b, "maintenance Consolidate (no tombstones): %.2f s, %d records rewritten, unreachable after: %d\n",
		f.maintSeconds, f.maintPuts, f.unreachableAfter)
	fmt.Fprintf(&b, "delete every 10th: %.2f s; Consolidate: %.2f s, %d records rewritten; then recall@10 (L=%d) %.4f, unreachable %d\n",
		f.deleteSeconds, f.consSeconds, f.consPuts, 10*DefaultSearchListMultiplier, f.recallAfter, f.unreachableEnd)
	return b.String()
}

// TestClusteredBench measures recall, speed and size on the clustered data set: 10,000
// vectors by default (a few seconds), 100,000 with PARTITA_VECTOR_BENCH=1 (minutes). It
// fails if recall@10 at the default list size falls below 0.9 on the small set, 0.95 on
// the large one.
func TestClusteredBench(t *testing.T) {
	n, nq, minRecall := 10_000, 200, 0.9
	switch {
	case os.Getenv("PARTITA_VECTOR_BENCH") == "1":
		n, nq, minRecall = 100_000, 1000, 0.95
	case raceEnabled:
		t.Skip("timings mean nothing under the race detector; the other tests cover the code")
	case testing.Short():
		n, nq = 2_000, 50
	}
	f := runClusteredBench(t, Cosine, n, nq, 128, Config{}, 10, []int{20, 50, 100, 200})
	t.Log("\n" + f.String())
	for _, r := range f.rows {
		if r.listSize == 10*DefaultSearchListMultiplier && r.recall < minRecall {
			t.Errorf("recall@10 at L=%d is %.4f, want ≥ %.2f", r.listSize, r.recall, minRecall)
		}
	}
	if f.recallAfter < minRecall {
		t.Errorf("recall@10 after deleting a tenth is %.4f, want ≥ %.2f", f.recallAfter, minRecall)
	}
	if f.unreachableAfter != 0 || f.unreachableEnd != 0 {
		t.Errorf("unreachable nodes after consolidation: %d, %d", f.unreachableAfter, f.unreachableEnd)
	}
}

// benchIndex is a 10,000-vector graph shared by the Go benchmarks below.
var benchIndex = struct {
	sync.Once
	ix      *Index
	store   *MemStore
	base    [][]float32
	queries [][]float32
}{}

func sharedIndex(b *testing.B) (*Index, *MemStore, [][]float32, [][]float32) {
	benchIndex.Do(func() {
		base, queries := clustered(10_000, 1000, 128, 100, 0.5, 42)
		ix, err := New(Config{Metric: Cosine, Dimensions: 128})
		if err != nil {
			b.Fatal(err)
		}
		store := NewMemStore()
		for i, v := range base {
			ch, err := ix.Insert(store, uint64(i), v)
			if err != nil {
				b.Fatal(err)
			}
			store.Apply(ch)
		}
		benchIndex.ix, benchIndex.store, benchIndex.base, benchIndex.queries = ix, store, base, queries
	})
	return benchIndex.ix, benchIndex.store, benchIndex.base, benchIndex.queries
}

func BenchmarkSearch(b *testing.B) {
	ix, store, base, queries := sharedIndex(b)
	opt := SearchOptions{K: 10, Vector: func(id uint64) ([]float32, error) { return base[id], nil }}
	i := 0
	for b.Loop() {
		if _, err := ix.Search(store, queries[i%len(queries)], opt); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func BenchmarkFlat(b *testing.B) {
	_, _, base, queries := sharedIndex(b)
	i := 0
	for b.Loop() {
		Flat(Cosine, queries[i%len(queries)], 10, sliceItems(base), nil)
		i++
	}
}

func BenchmarkInsert(b *testing.B) {
	base, _ := clustered(max(b.N, 2000), 0, 128, 100, 0.5, 7)
	ix, err := New(Config{Metric: Cosine, Dimensions: 128})
	if err != nil {
		b.Fatal(err)
	}
	store := NewMemStore()
	// Pre-fill past training so that the timed inserts are quantized ones.
	for i := range 2000 {
		ch, _ := ix.Insert(store, uint64(i), base[i])
		store.Apply(ch)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ch, err := ix.Insert(store, uint64(2000+i), base[i%len(base)])
		if err != nil {
			b.Fatal(err)
		}
		store.Apply(ch)
	}
}
