package vectorindex

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

// mustInsert inserts and applies.
func mustInsert(t testing.TB, ix *Index, s *MemStore, id uint64, v []float32) Changes {
	t.Helper()
	ch, err := ix.Insert(s, id, v)
	if err != nil {
		t.Fatal(err)
	}
	s.Apply(ch)
	return ch
}

func mustDelete(t testing.TB, ix *Index, s *MemStore, id uint64) {
	t.Helper()
	ch, err := ix.Delete(s, id)
	if err != nil {
		t.Fatal(err)
	}
	s.Apply(ch)
}

func mustConsolidate(t testing.TB, ix *Index, s *MemStore) {
	t.Helper()
	ch, err := ix.Consolidate(s)
	if err != nil {
		t.Fatal(err)
	}
	s.Apply(ch)
}

// checkGraph verifies the invariants of a stored graph: degrees within MaxDegree, no
// self or duplicate edges, no edge to a record that does not exist, counts that match
// the records, a valid entry point. consolidated adds: no tombstones, no edge to one, and
// a live entry point.
func checkGraph(t testing.TB, ix *Index, s *MemStore, consolidated bool) {
	t.Helper()
	meta, _ := s.Meta()
	nodes := map[uint64]Node{}
	_ = s.Scan(func(n Node) bool { nodes[n.ID] = n; return true })
	var live, dead int64
	for id, n := range nodes {
		if n.Deleted {
			dead++
			if consolidated {
				t.Fatalf("tombstone %d survived consolidation", id)
			}
		} else {
			live++
		}
		if len(n.Neighbors) > ix.Config().MaxDegree {
			t.Fatalf("node %d has %d edges, more than R=%d", id, len(n.Neighbors), ix.Config().MaxDegree)
		}
		seen := map[uint64]bool{}
		for _, nb := range n.Neighbors {
			if nb == id {
				t.Fatalf("node %d points to itself", id)
			}
			if seen[nb] {
				t.Fatalf("node %d has edge %d twice", id, nb)
			}
			seen[nb] = true
			to, ok := nodes[nb]
			if !ok {
				t.Fatalf("node %d points to %d, which has no record", id, nb)
			}
			if consolidated && to.Deleted {
				t.Fatalf("node %d points to tombstone %d after consolidation", id, nb)
			}
		}
	}
	if meta.Live != live || meta.Deleted != dead {
		t.Fatalf("meta counts %d live, %d deleted; the records %d and %d", meta.Live, meta.Deleted, live, dead)
	}
	if len(nodes) == 0 {
		if meta.HasEntry && consolidated {
			t.Fatal("an empty graph has an entry point")
		}
		return
	}
	e, ok := nodes[meta.Entry]
	if !meta.HasEntry || !ok {
		t.Fatalf("the entry point %d (has=%v) has no record", meta.Entry, meta.HasEntry)
	}
	if consolidated && e.Deleted {
		t.Fatal("the entry point is a tombstone after consolidation")
	}
	if consolidated {
		if n := unreachable(s); n > 0 {
			t.Fatalf("%d live nodes are unreachable after consolidation", n)
		}
	}
}

// unreachable counts the live nodes no path from the entry point leads to: a search can
// never return them.
func unreachable(s *MemStore) int {
	meta, _ := s.Meta()
	if !meta.HasEntry {
		return 0
	}
	seen := map[uint64]bool{meta.Entry: true}
	for queue := []uint64{meta.Entry}; len(queue) > 0; queue = queue[1:] {
		n, ok, _ := s.Node(queue[0])
		if !ok {
			continue
		}
		for _, nb := range n.Neighbors {
			if !seen[nb] {
				seen[nb] = true
				queue = append(queue, nb)
			}
		}
	}
	lost := 0
	_ = s.Scan(func(n Node) bool {
		if !n.Deleted && !seen[n.ID] {
			lost++
		}
		return true
	})
	return lost
}

// sized returns n, or a third of it (at least min) under the race detector or -short, which
// make every insert many times slower.
func sized(n, least int) int {
	if raceEnabled || testing.Short() {
		return max(least, n/3)
	}
	return n
}

func newIndex(t testing.TB, cfg Config) *Index {
	t.Helper()
	ix, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

// searchAll runs queries against the graph and Flat over the live vectors and returns the
// mean recall@k.
func searchRecall(t testing.TB, ix *Index, s Reader, vecs map[uint64][]float32, queries [][]float32, k int, opt SearchOptions) float64 {
	t.Helper()
	items := func(yield func(uint64, []float32) bool) {
		for id, v := range vecs {
			if !yield(id, v) {
				return
			}
		}
	}
	opt.K = k
	if opt.Vector == nil {
		opt.Vector = func(id uint64) ([]float32, error) { return vecs[id], nil }
	}
	var recall float64
	for _, q := range queries {
		want := Flat(ix.Config().Metric, q, k, items, opt.Filter)
		got, err := ix.Search(s, q, opt)
		if err != nil {
			t.Fatal(err)
		}
		for i := 1; i < len(got); i++ {
			if ix.Config().Metric.Better(got[i].Score, got[i-1].Score) {
				t.Fatalf("results out of order: %v", got)
			}
		}
		for _, r := range got {
			if _, ok := vecs[r.ID]; !ok {
				t.Fatalf("search returned %d, which is deleted", r.ID)
			}
		}
		recall += recallAt(got, want)
	}
	return recall / float64(len(queries))
}

func TestNewConfig(t *testing.T) {
	ix := newIndex(t, Config{Metric: Euclidean, Dimensions: 3})
	c := ix.Config()
	if c.MaxDegree != DefaultMaxDegree || c.BuildListSize != DefaultBuildListSize || c.Alpha != DefaultAlpha || c.TrainSize != DefaultTrainSize {
		t.Errorf("defaults not filled in: %+v", c)
	}
	for _, bad := range []Config{{Metric: 9, Dimensions: 3}, {Dimensions: 0}, {Dimensions: 3, Alpha: 0.5}, {Dimensions: 3, MaxDegree: 1}} {
		if _, err := New(bad); err == nil {
			t.Errorf("New(%+v) accepted", bad)
		}
	}
	st := NewMemStore()
	if _, err := ix.Insert(st, 1, []float32{1, 2}); err == nil {
		t.Error("inserted a vector of the wrong length")
	}
	if res, err := ix.Search(st, []float32{1, 2, 3}, SearchOptions{K: 5}); err != nil || res != nil {
		t.Errorf("search of an empty graph: %v, %v", res, err)
	}
}

// Small graphs are searched exhaustively: results equal Flat's, scores included.
func TestSmallGraphIsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, m := range []Metric{Cosine, DotProduct, Euclidean} {
		ix := newIndex(t, Config{Metric: m, Dimensions: 16})
		st := NewMemStore()
		vecs := map[uint64][]float32{}
		for i, v := range randomVectors(rng, 60, 16) {
			id := uint64(1000 + 7*i)
			vecs[id] = v
			mustInsert(t, ix, st, id, v)
		}
		checkGraph(t, ix, st, false)
		for _, q := range randomVectors(rng, 10, 16) {
			got, err := ix.Search(st, q, SearchOptions{K: 5, ListSize: 60, RerankMultiplier: 12,
				Vector: func(id uint64) ([]float32, error) { return vecs[id], nil }})
			if err != nil {
				t.Fatal(err)
			}
			want := Flat(m, q, 5, func(yield func(uint64, []float32) bool) {
				for id, v := range vecs {
					if !yield(id, v) {
						return
					}
				}
			}, nil)
			if !slices.Equal(got, want) {
				t.Fatalf("%v: graph %v, flat %v", m, got, want)
			}
		}
	}
}

func TestSearchFilter(t *testing.T) {
	base, queries := clustered(sized(2500, 800), 30, 32, 10, 0.5, 23)
	ix := newIndex(t, Config{Metric: Cosine, Dimensions: 32, TrainSize: 300})
	st := NewMemStore()
	vecs := map[uint64][]float32{}
	for i, v := range base {
		vecs[uint64(i)] = v
		mustInsert(t, ix, st, uint64(i), v)
	}
	for _, mod := range []uint64{2, 10} {
		allowed := func(id uint64) bool { return id%mod == 0 }
		var calls int
		opt := SearchOptions{Filter: func(id uint64) bool { calls++; return allowed(id) }}
		for _, q := range queries {
			res, err := ix.Search(st, q, SearchOptions{K: 10, Filter: allowed})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range res {
				if !allowed(r.ID) {
					t.Fatalf("filter 1/%d: result %d is not allowed", mod, r.ID)
				}
			}
		}
		// Filtered results are the nearest allowed items, not a subset of the unfiltered.
		opt.ListSize = 200
		if r := searchRecall(t, ix, st, vecs, queries, 10, opt); r < 0.9 {
			t.Errorf("filter 1/%d: recall@10 %.3f, want ≥ 0.9", mod, r)
		}
		if calls == 0 {
			t.Error("the filter was never consulted")
		}
	}
}

func TestDeleteEverything(t *testing.T) {
	base, queries := clustered(sized(1500, 500), 5, 16, 5, 0.5, 24)
	ix := newIndex(t, Config{Metric: Euclidean, Dimensions: 16, TrainSize: 300})
	st := NewMemStore()
	for i, v := range base {
		mustInsert(t, ix, st, uint64(i), v)
	}
	for i := range base {
		mustDelete(t, ix, st, uint64(i))
	}
	checkGraph(t, ix, st, false)
	for _, q := range queries {
		if res, err := ix.Search(st, q, SearchOptions{K: 10}); err != nil || len(res) != 0 {
			t.Fatalf("search after deleting everything: %v, %v", res, err)
		}
	}
	if ch, _ := ix.Delete(st, 3); !ch.Empty() {
		t.Error("deleting a tombstone again changed something")
	}
	// Inserting among tombstones only: the new node must be found, so it leads.
	mustInsert(t, ix, st, 5000, base[0])
	if res, err := ix.Search(st, base[1], SearchOptions{K: 3}); err != nil || len(res) != 1 || res[0].ID != 5000 {
		t.Fatalf("search with one live node among tombstones: %v, %v", res, err)
	}
	mustDelete(t, ix, st, 5000)
	mustConsolidate(t, ix, st)
	checkGraph(t, ix, st, true)
	if meta, _ := st.Meta(); meta.HasEntry || st.Len() != 0 || meta.Live != 0 || meta.Deleted != 0 {
		t.Fatalf("after consolidating an all-deleted graph: %+v, %d records", meta, st.Len())
	}
	// The graph starts again; the trained quantizer stays.
	mustInsert(t, ix, st, 7, base[7])
	mustInsert(t, ix, st, 8, base[8])
	res, err := ix.Search(st, base[8], SearchOptions{K: 1})
	if err != nil || len(res) != 1 || res[0].ID != 8 {
		t.Fatalf("search after rebuilding: %v, %v", res, err)
	}
}

func TestDeleteEntryPoint(t *testing.T) {
	base, queries := clustered(sized(1200, 500), 20, 16, 5, 0.5, 25)
	ix := newIndex(t, Config{Metric: Cosine, Dimensions: 16, TrainSize: 300})
	st := NewMemStore()
	vecs := map[uint64][]float32{}
	for i, v := range base {
		vecs[uint64(i)] = v
		mustInsert(t, ix, st, uint64(i), v)
	}
	for range 3 {
		meta, _ := st.Meta()
		entry := meta.Entry
		mustDelete(t, ix, st, entry)
		delete(vecs, entry)
		// A tombstoned entry still leads searches.
		if r := searchRecall(t, ix, st, vecs, queries, 10, SearchOptions{}); r < 0.9 {
			t.Errorf("recall with a deleted entry %.3f", r)
		}
		mustConsolidate(t, ix, st)
		checkGraph(t, ix, st, true)
		if meta, _ := st.Meta(); meta.Entry == entry {
			t.Fatal("the entry point did not move")
		}
		if r := searchRecall(t, ix, st, vecs, queries, 10, SearchOptions{}); r < 0.9 {
			t.Errorf("recall after moving the entry %.3f", r)
		}
	}
}

func TestTrainingSwitchesCodes(t *testing.T) {
	base, queries := clustered(700, 10, 24, 5, 0.5, 26)
	ix := newIndex(t, Config{Metric: DotProduct, Dimensions: 24, TrainSize: 300})
	st := NewMemStore()
	trained := 0
	for i, v := range base {
		ch := mustInsert(t, ix, st, uint64(i), v)
		if ch.Quantizer != nil {
			trained++
			if i != 299 {
				t.Fatalf("trained at insert %d, want 299", i)
			}
			if len(ch.Put) < 250 {
				t.Errorf("training re-encoded only %d nodes", len(ch.Put))
			}
		}
	}
	if trained != 1 {
		t.Fatalf("trained %d times", trained)
	}
	raw := 0
	_ = st.Scan(func(n Node) bool {
		if n.Code[0] == codeRaw {
			raw++
		}
		return true
	})
	if raw > 30 {
		t.Errorf("%d nodes kept raw codes after training", raw)
	}
	checkGraph(t, ix, st, false)
	vecs := map[uint64][]float32{}
	for i, v := range base {
		vecs[uint64(i)] = v
	}
	if r := searchRecall(t, ix, st, vecs, queries, 10, SearchOptions{}); r < 0.9 {
		t.Errorf("recall@10 after training %.3f", r)
	}
	never := newIndex(t, Config{Metric: DotProduct, Dimensions: 24, TrainSize: -1})
	st2 := NewMemStore()
	for i, v := range base[:400] {
		if ch := mustInsert(t, never, st2, uint64(i), v); ch.Quantizer != nil {
			t.Fatal("TrainSize −1 trained")
		}
	}
}

func TestReplaceVector(t *testing.T) {
	base, _ := clustered(sized(1500, 500), 0, 16, 10, 0.5, 27)
	ix := newIndex(t, Config{Metric: Euclidean, Dimensions: 16, TrainSize: 300})
	st := NewMemStore()
	for i, v := range base {
		mustInsert(t, ix, st, uint64(i), v)
	}
	// Move vector 5 onto vector 400's place; deleted-then-reinserted 6 comes back too.
	target := slices.Clone(base[400])
	target[0] += 0.001
	mustInsert(t, ix, st, 5, target)
	mustDelete(t, ix, st, 6)
	mustInsert(t, ix, st, 6, base[6])
	checkGraph(t, ix, st, false)
	if meta, _ := st.Meta(); meta.Live != int64(len(base)) || meta.Deleted != 0 {
		t.Fatalf("counts after replacing: %+v", meta)
	}
	for _, c := range []struct {
		q  []float32
		id uint64
	}{{target, 5}, {base[6], 6}} {
		res, err := ix.Search(st, c.q, SearchOptions{K: 3})
		if err != nil || len(res) == 0 || res[0].ID != c.id {
			t.Fatalf("searching for %d: %v, %v", c.id, res, err)
		}
	}
}

// Records written through MarshalNode and read back through UnmarshalNode, with the
// quantizer through its bytes, give the same searches: what a persistent store does.
func TestPersistedGraphSearchesTheSame(t *testing.T) {
	base, queries := clustered(sized(1500, 600), 20, 32, 10, 0.5, 28)
	ix := newIndex(t, Config{Metric: Cosine, Dimensions: 32, TrainSize: 300})
	st := NewMemStore()
	for i, v := range base {
		mustInsert(t, ix, st, uint64(i), v)
	}
	copyStore := NewMemStore()
	var ch Changes
	_ = st.Scan(func(n Node) bool {
		m, err := UnmarshalNode(n.ID, MarshalNode(n))
		if err != nil {
			t.Fatal(err)
		}
		ch.Put = append(ch.Put, m)
		return true
	})
	meta, _ := st.Meta()
	mb, _ := meta.MarshalBinary()
	var m2 Meta
	if err := m2.UnmarshalBinary(mb); err != nil {
		t.Fatal(err)
	}
	quant, _ := st.Quantizer()
	qb, _ := quant.MarshalBinary()
	q2, err := UnmarshalQuantizer(qb)
	if err != nil {
		t.Fatal(err)
	}
	ch.Meta, ch.Quantizer = &m2, q2
	copyStore.Apply(ch)
	vector := func(id uint64) ([]float32, error) { return base[id], nil }
	for _, q := range queries {
		a, _ := ix.Search(st, q, SearchOptions{K: 10, Vector: vector})
		b, _ := ix.Search(copyStore, q, SearchOptions{K: 10, Vector: vector})
		if !slices.Equal(a, b) {
			t.Fatalf("searches differ after a round trip through bytes:\n%v\n%v", a, b)
		}
	}
}

// Several mutations in one batch, through an Overlay, decide exactly what the same
// mutations applied one by one decide.
func TestOverlayBatchesMatchSequential(t *testing.T) {
	base, _ := clustered(600, 0, 16, 5, 0.5, 29)
	ix := newIndex(t, Config{Metric: Euclidean, Dimensions: 16, TrainSize: 200})
	seq, batched := NewMemStore(), NewMemStore()
	for start := 0; start < len(base); start += 50 {
		o := NewOverlay(batched)
		for i := start; i < start+50; i++ {
			mustInsert(t, ix, seq, uint64(i), base[i])
			ch, err := ix.Insert(o, uint64(i), base[i])
			if err != nil {
				t.Fatal(err)
			}
			o.Apply(ch)
			if i%7 == 0 {
				mustDelete(t, ix, seq, uint64(i/2))
				ch, err := ix.Delete(o, uint64(i/2))
				if err != nil {
					t.Fatal(err)
				}
				o.Apply(ch)
			}
		}
		batched.Apply(o.Changes())
	}
	if seq.Len() != len(base) {
		t.Fatalf("the sequential store holds %d records, want %d", seq.Len(), len(base))
	}
	a := map[uint64]string{}
	_ = seq.Scan(func(n Node) bool { a[n.ID] = fmt.Sprint(MarshalNode(n)); return true })
	_ = batched.Scan(func(n Node) bool {
		if a[n.ID] != fmt.Sprint(MarshalNode(n)) {
			t.Fatalf("node %d differs between sequential and batched application", n.ID)
		}
		delete(a, n.ID)
		return true
	})
	ma, _ := seq.Meta()
	mb, _ := batched.Meta()
	if len(a) != 0 || ma != mb {
		t.Fatalf("stores differ: %d records missing, meta %+v vs %+v", len(a), ma, mb)
	}
}

// The property test: random inserts, deletes and consolidations, checked against exact
// search over the vectors that are live, with the invariants after every round.
func TestRandomOperationsKeepRecall(t *testing.T) {
	seeds := []uint64{1, 2, 3}
	if testing.Short() || raceEnabled {
		seeds = seeds[:1]
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 99))
			metric := []Metric{Cosine, DotProduct, Euclidean}[seed%3]
			pool, queries := clustered(3000, 30, 24, 12, 0.5, seed)
			ix := newIndex(t, Config{Metric: metric, Dimensions: 24, MaxDegree: 24, BuildListSize: 64, TrainSize: 500})
			st := NewMemStore()
			live := map[uint64][]float32{}
			next := 0
			for round := range 6 {
				for range 400 {
					switch {
					case len(live) > 50 && rng.IntN(4) == 0:
						// Delete a random live id (chosen from the sorted ids: map order
						// would make the run differ from one time to the next).
						victim := slices.Sorted(maps.Keys(live))[rng.IntN(len(live))]
						mustDelete(t, ix, st, victim)
						delete(live, victim)
					case len(live) > 0 && rng.IntN(10) == 0:
						// Replace a vector in place.
						id := slices.Sorted(maps.Keys(live))[rng.IntN(len(live))]
						v := pool[rng.IntN(len(pool))]
						mustInsert(t, ix, st, id, v)
						live[id] = v
					case next < len(pool):
						id := uint64(next)*1_000_003 + 17 // ids need not be dense
						mustInsert(t, ix, st, id, pool[next])
						live[id] = pool[next]
						next++
					}
				}
				consolidate := round%2 == 1
				if consolidate {
					mustConsolidate(t, ix, st)
				}
				checkGraph(t, ix, st, consolidate)
				// A short list and few re-ranked candidates, so that a damaged graph shows.
				r := searchRecall(t, ix, st, live, queries, 10, SearchOptions{ListSize: 16, RerankMultiplier: 2})
				if r < 0.9 {
					t.Fatalf("round %d (%v, %d live): recall@10 %.3f, want ≥ 0.9", round, metric, len(live), r)
				}
				t.Logf("round %d (%v, %d live, consolidated %v): recall@10 %.3f", round, metric, len(live), consolidate, r)
			}
		})
	}
}

// Searches run while a writer inserts and deletes; run with -race.
func TestConcurrentSearches(t *testing.T) {
	base, queries := clustered(sized(1500, 600), 20, 16, 5, 0.5, 30)
	ix := newIndex(t, Config{Metric: Cosine, Dimensions: 16, TrainSize: 300})
	st := NewMemStore()
	prefill := len(base) / 3 // the quantizer is trained while searches run
	for i, v := range base[:prefill] {
		mustInsert(t, ix, st, uint64(i), v)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for g := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := ix.Search(st, queries[(i+g)%len(queries)], SearchOptions{K: 5}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	for i, v := range base[prefill:] {
		mustInsert(t, ix, st, uint64(prefill+i), v)
		if i%5 == 0 {
			mustDelete(t, ix, st, uint64(i))
		}
	}
	mustConsolidate(t, ix, st)
	close(stop)
	wg.Wait()
	checkGraph(t, ix, st, true)
}
