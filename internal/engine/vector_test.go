package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/partition"
	"github.com/partita-db/partita/internal/query"
	"github.com/partita-db/partita/internal/storage"
	"github.com/partita-db/partita/internal/value"
	"github.com/partita-db/partita/internal/vectorindex"
)

const vectorDims = 16

var (
	vectorPolicy     = json.RawMessage(`{"vectorEmbeddings":[{"path":"/v","dataType":"float32","dimensions":16,"distanceFunction":"cosine"}]}`)
	diskANNIndexed   = json.RawMessage(`{"includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/v/*"}],"vectorIndexes":[{"path":"/v","type":"diskANN"}]}`)
	quantizedIndexed = json.RawMessage(`{"includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/v/*"}],"vectorIndexes":[{"path":"/v","type":"quantizedFlat"}]}`)
	flatIndexed      = json.RawMessage(`{"includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/v/*"}],"vectorIndexes":[{"path":"/v","type":"flat"}]}`)
)

// vectorItem is item i: pk one of 5 values, a tag, and a vector of clustered values.
func vectorItem(rng *rand.Rand, i int) []byte {
	v := make([]float64, vectorDims)
	center := float64(i % 7)
	for d := range v {
		v[d] = math.Round((center*math.Sin(float64(d+1)*center)+rng.NormFloat64()*0.3)*1e4) / 1e4
	}
	b, _ := json.Marshal(v)
	return item(fmt.Sprintf("i%04d", i), fmt.Sprintf("p%d", i%5), fmt.Sprintf(`,"tag":%d,"v":%s`, i%3, b))
}

// vectorSearch runs sql with @q bound to q and returns the ids in order and what the index did.
func vectorSearch(t *testing.T, c *Container, sql string, q []float64, noIndex bool) ([]string, query.IndexUse) {
	t.Helper()
	p, err := query.Prepare(sql)
	if err != nil {
		t.Fatal(err)
	}
	elems := make([]value.Value, len(q))
	for i, f := range q {
		elems[i] = value.Num(f)
	}
	res, err := c.Query(p, epk.All, query.Options{Params: map[string]value.Value{"@q": value.Arr(elems)}, NoIndex: noIndex, MaxItems: 1000})
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	var ids []string
	for _, v := range res.Results {
		ids = append(ids, v.Get("id").Str())
	}
	return ids, res.Stats.Index
}

// A container created with a diskANN index keeps a graph in each partition from its first
// write: vector searches read candidates from it (the index use says so), return the exact
// order of what they find, agree with exact search, follow replaces and deletes, survive a
// restart and combine with filters. The children of a split, and an index added over items
// already there, build their graphs online; a flat index keeps none.
func TestVectorIndexSearch(t *testing.T) {
	dir := t.TempDir()
	e := openEngine(t, dir, Options{MinPartitions: 2})
	if _, err := e.CreateDatabase("db", nil); err != nil {
		t.Fatal(err)
	}
	spec := ContainerSpec{ID: "c", PartitionKey: PartitionKeyDef{Paths: []string{"/pk"}, Version: 2},
		VectorPolicy: vectorPolicy, Indexing: diskANNIndexed}
	if _, err := e.CreateContainer("db", spec); err != nil {
		t.Fatal(err)
	}
	c, _ := e.Container("db", "c")
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 300 {
		mustCreate(t, c, vectorItem(rng, i))
	}
	// Replace some vectors and delete some items: the graph follows.
	for i := 0; i < 300; i += 10 {
		if _, err := c.UpsertItem(vectorItem(rng, i), ItemOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 5; i < 300; i += 20 {
		if _, err := c.DeleteItem(key(fmt.Sprintf("p%d", i%5)), fmt.Sprintf("i%04d", i), ItemOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	const top = `SELECT TOP 10 c.id FROM c ORDER BY VectorDistance(c.v, @q)`
	const filtered = `SELECT TOP 10 c.id FROM c WHERE c.tag = 1 ORDER BY VectorDistance(c.v, @q)`
	check := func(when string, wantIndex bool) {
		t.Helper()
		var worst float64 = 1
		for probe := range 8 {
			var q []float64
			for d := range vectorDims {
				q = append(q, math.Sin(float64(d*probe+1))*float64(probe%7+1))
			}
			for _, sql := range []string{top, filtered} {
				got, use := vectorSearch(t, c, sql, q, false)
				exact, exactUse := vectorSearch(t, c, sql, q, true)
				if exactUse.Vector != "" || len(exact) != 10 {
					t.Fatalf("%s: exact search used %q and found %d", when, exactUse.Vector, len(exact))
				}
				if (use.Vector == "/v") != wantIndex {
					t.Fatalf("%s: %s used the vector index %q, want used %v", when, sql, use.Vector, wantIndex)
				}
				worst = min(worst, vectorindex.Recall(got, exact))
				// What the index found comes in exact order: a prefix of the exact ranking
				// of those items.
				var order []int
				for _, id := range got {
					if i := slices.Index(exact, id); i >= 0 {
						order = append(order, i)
					}
				}
				if !sort.IntsAreSorted(order) {
					t.Fatalf("%s: %s: %v out of the exact order %v", when, sql, got, exact)
				}
			}
		}
		if worst < 0.9 {
			t.Fatalf("%s: worst recall@10 %.2f, want at least 0.9", when, worst)
		}
	}
	check("after the writes", true)

	e.Close()
	e = openEngine(t, dir, Options{MinPartitions: 2})
	defer func() { e.Close() }()
	c, _ = e.Container("db", "c")
	check("after a restart", true)

	// The children of a split build their graphs anew.
	parts, err := e.SplitPartition("db", "c", 0, nil)
	if err != nil || len(parts) != 2 {
		t.Fatalf("split: %v %v", parts, err)
	}
	check("after a split", true) // meanwhile, exact reads where a graph is being built
	waitReindexed(t, c)
	checkGraphs(t, e, c)
	check("after the children's build", true)

	// quantizedFlat over the same path keeps the graph and compares every code instead.
	if _, err := e.ReplaceContainer("db", "c", ContainerReplace{Indexing: quantizedIndexed}); err != nil {
		t.Fatal(err)
	}
	waitReindexed(t, c)
	check("with a quantizedFlat index", true)

	// A flat index keeps no graph: the searches read the items, and the graph's records are
	// gone with the policy that asked for them.
	if _, err := e.ReplaceContainer("db", "c", ContainerReplace{Indexing: flatIndexed}); err != nil {
		t.Fatal(err)
	}
	waitReindexed(t, c)
	check("with a flat index", false)
	for _, part := range c.info().Partitions {
		lo, hi := storage.VectorSpan(c.num, part.ID, "/v")
		if n := countSpan(t, e, lo, hi); n != 0 {
			t.Fatalf("partition %d: %d vector index records left after the policy dropped the index", part.ID, n)
		}
	}
	// Back to diskANN over items already there: built online.
	if _, err := e.ReplaceContainer("db", "c", ContainerReplace{Indexing: diskANNIndexed}); err != nil {
		t.Fatal(err)
	}
	waitReindexed(t, c)
	checkGraphs(t, e, c)
	check("with an index added over existing items", true)
}

// An index added over items already there is built a small step at a time while writers
// create, replace (with and without a vector) and delete items: once the build ends, each
// partition's graph holds exactly the items that hold a vector, and searches use it. Before
// a partition's build ends, its searches read the items.
func TestVectorIndexBuild(t *testing.T) {
	e := openEngine(t, t.TempDir(), Options{MinPartitions: 2, ManualReindex: true})
	defer e.Close()
	if _, err := e.CreateDatabase("db", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := e.CreateContainer("db", ContainerSpec{ID: "c", PartitionKey: PartitionKeyDef{Paths: []string{"/pk"}, Version: 2},
		VectorPolicy: vectorPolicy, Indexing: flatIndexed}); err != nil {
		t.Fatal(err)
	}
	c, _ := e.Container("db", "c")
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range 400 {
		mustCreate(t, c, vectorItem(rng, i))
	}
	// write deletes, replaces (with and without a vector) or creates an item.
	write := func(rng *rand.Rand, ids int) error {
		n := rng.IntN(ids)
		id, pk := fmt.Sprintf("i%04d", n), fmt.Sprintf("p%d", n%5)
		switch rng.IntN(4) {
		case 0:
			_, err := c.DeleteItem(key(pk), id, ItemOptions{})
			if errors.Is(err, fault.NotFound) {
				return nil
			}
			return err
		case 1:
			_, err := c.UpsertItem(item(id, pk, `,"v":"none"`), ItemOptions{})
			return err
		}
		_, err := c.UpsertItem(vectorItem(rng, n), ItemOptions{})
		return err
	}
	q := make([]float64, vectorDims)
	for d := range q {
		q[d] = math.Sin(float64(d))
	}
	const top = `SELECT TOP 10 c.id FROM c ORDER BY VectorDistance(c.v, @q)`
	build := func(between func(step int)) {
		t.Helper()
		if _, err := e.ReplaceContainer("db", "c", ContainerReplace{Indexing: diskANNIndexed}); err != nil {
			t.Fatal(err)
		}
		if _, use := vectorSearch(t, c, top, q, false); use.Vector != "" {
			t.Fatal("a search used a graph before its build began")
		}
		for step := 0; ; step++ {
			between(step)
			finished, _, _, err := e.reindexStep(c, 16, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			if finished {
				t.Logf("built in %d steps", step+1)
				return
			}
			if step > 500 {
				t.Fatal("the build does not end")
			}
		}
	}
	verify := func(when string) {
		t.Helper()
		checkGraphs(t, e, c)
		got, use := vectorSearch(t, c, top, q, false)
		exact, _ := vectorSearch(t, c, top, q, true)
		if use.Vector != "/v" || vectorindex.Recall(got, exact) < 0.9 {
			t.Fatalf("%s: %v (index %q), exact %v", when, got, use.Vector, exact)
		}
	}

	// Writes between steps: behind the cursor, ahead of it, and new items.
	build(func(int) {
		for range 6 {
			if err := write(rng, 500); err != nil {
				t.Fatal(err)
			}
		}
	})
	verify("after a build with writes between its steps")

	// Writers running while the steps are read and decided, from the first on.
	if _, err := e.ReplaceContainer("db", "c", ContainerReplace{Indexing: flatIndexed}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wr := rand.New(rand.NewPCG(7, uint64(w)))
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := write(wr, 1200); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	build(func(int) { time.Sleep(time.Millisecond) })
	close(stop)
	wg.Wait()
	verify("after a build with concurrent writers")
}

// waitReindexed waits until c's index follows its policy everywhere.
func waitReindexed(t *testing.T, c *Container) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); c.indexProgress() < 100; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the index is %d%% rebuilt after 30s", c.indexProgress())
		}
	}
}

// countSpan counts the keys in [lo, hi).
func countSpan(t *testing.T, e *Engine, lo, hi []byte) int {
	t.Helper()
	it, err := e.db.NewIter(lo, hi)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	n := 0
	for it.First(); it.Valid(); it.Next() {
		n++
	}
	return n
}

// checkGraphs checks that every partition of c keeps a complete graph over /v whose live nodes
// are exactly the items that hold a vector, as a query reads them.
func checkGraphs(t *testing.T, e *Engine, c *Container) {
	t.Helper()
	p, _ := query.Prepare(`SELECT VALUE c.id FROM c WHERE IS_ARRAY(c.v)`)
	res, err := c.Query(p, epk.All, query.Options{MaxItems: 100000, NoIndex: true})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, v := range res.Results {
		want[v.Str()] = true
	}
	got := map[string]bool{}
	for _, part := range c.info().Partitions {
		live, complete, err := partition.VectorNodes(e.db, c.num, part.ID, "/v")
		if err != nil || !complete {
			t.Fatalf("partition %d: complete %v, %v", part.ID, complete, err)
		}
		for _, seq := range live {
			_, id, err := partition.ItemAt(e.db, c.num, part.ID, seq)
			if err != nil {
				t.Fatalf("partition %d: node %d names no item: %v", part.ID, seq, err)
			}
			got[id] = true
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d live nodes, %d items with a vector", len(got), len(want))
	}
	for id := range want {
		if !got[id] {
			t.Fatalf("item %s holds a vector and has no node", id)
		}
	}
}

// Power loss while writers create, replace and delete items with vectors: after the engine
// reopens on what survived, each partition's graph holds a live node for exactly the items that
// hold a vector, no more and no fewer, and searches still agree with exact search.
func TestVectorIndexPowerLoss(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 9))
			opts := Options{Dir: "/data", FS: storage.NewMemFS(), CacheSize: 8 << 20, MinPartitions: 2}
			e := openEngine(t, "/data", opts)
			if _, err := e.CreateDatabase("db", nil); err != nil {
				t.Fatal(err)
			}
			if _, err := e.CreateContainer("db", ContainerSpec{ID: "c", PartitionKey: PartitionKeyDef{Paths: []string{"/pk"}, Version: 2},
				VectorPolicy: vectorPolicy, Indexing: diskANNIndexed}); err != nil {
				t.Fatal(err)
			}
			c, _ := e.Container("db", "c")
			var crashed *storage.MemFS
			var once sync.Once
			var acked atomic.Int64
			after := int64(100 + rng.IntN(200))
			crash := func() { once.Do(func() { crashed = opts.FS.Crash(50, rand.New(rand.NewPCG(seed, 1))) }) }
			var wg sync.WaitGroup
			for w := range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					wr := rand.New(rand.NewPCG(seed, uint64(w)))
					for i := 0; i < 150; i++ {
						n := w*1000 + wr.IntN(120)
						var err error
						switch wr.IntN(5) {
						case 0:
							_, err = c.DeleteItem(key(fmt.Sprintf("p%d", n%5)), fmt.Sprintf("i%04d", n), ItemOptions{})
							if errors.Is(err, fault.NotFound) {
								err = nil
							}
						case 1: // an item without a vector
							_, err = c.UpsertItem(item(fmt.Sprintf("i%04d", n), fmt.Sprintf("p%d", n%5), `,"v":"none"`), ItemOptions{})
						default:
							_, err = c.UpsertItem(vectorItem(wr, n), ItemOptions{})
						}
						if err != nil {
							t.Error(err)
							return
						}
						if acked.Add(1) == after {
							opts.FS.BeforeSync(crash)
						}
					}
				}()
			}
			wg.Wait()
			crash()
			opts.FS.BeforeSync(nil)
			e.Close()

			opts.FS = crashed
			e = openEngine(t, "/data", opts)
			defer e.Close()
			c, _ = e.Container("db", "c")
			t.Logf("%d acknowledged", acked.Load())
			checkGraphs(t, e, c)
			q := make([]float64, vectorDims)
			for d := range q {
				q[d] = math.Cos(float64(d))
			}
			ids, use := vectorSearch(t, c, `SELECT TOP 10 c.id FROM c ORDER BY VectorDistance(c.v, @q)`, q, false)
			exact, _ := vectorSearch(t, c, `SELECT TOP 10 c.id FROM c ORDER BY VectorDistance(c.v, @q)`, q, true)
			if use.Vector == "" || vectorindex.Recall(ids, exact) < 0.9 {
				t.Fatalf("after the crash: %v (index %q), exact %v", ids, use.Vector, exact)
			}
		})
	}
}

// Every replica of a partition holds the same graph, byte for byte, after concurrent writes:
// a graph's mutations are deterministic, and the inserts planned in parallel (vectorindex
// Plan) decide what they would decide one by one, however each replica batched the log.
func TestReplicasHoldTheSameGraph(t *testing.T) {
	tc := startTestCluster(t, 3)
	e1 := tc.node(1)
	if _, err := e1.CreateDatabase("db", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := e1.CreateContainer("db", ContainerSpec{ID: "c", PartitionKey: PartitionKeyDef{Paths: []string{"/pk"}, Version: 2},
		VectorPolicy: vectorPolicy, Indexing: diskANNIndexed}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 3))
			for i := range 120 {
				n := w*1000 + rng.IntN(100)
				eventually(t, fmt.Sprint("write ", w, " ", i), func() error {
					c, err := tc.node(1+(w+i)%3).Container("db", "c")
					if err != nil {
						return err
					}
					if i%9 == 8 {
						_, err = c.DeleteItem(key(fmt.Sprintf("p%d", n%5)), fmt.Sprintf("i%04d", n), ItemOptions{})
						if errors.Is(err, fault.NotFound) {
							err = nil
						}
						return err
					}
					_, err = c.UpsertItem(vectorItem(rng, n), ItemOptions{})
					return err
				})
			}
		})
	}
	wg.Wait()
	c, err := e1.Container("db", "c")
	if err != nil {
		t.Fatal(err)
	}
	graph := func(e *Engine, part uint32) (string, error) {
		lo, hi := storage.VectorSpan(c.num, part, "/v")
		it, err := e.db.NewIter(lo, hi)
		if err != nil {
			return "", err
		}
		defer it.Close()
		var b strings.Builder
		for it.First(); it.Valid(); it.Next() {
			fmt.Fprintf(&b, "%x=%x\n", it.Key(), it.Value())
		}
		return b.String(), it.Error()
	}
	for _, part := range c.info().Partitions {
		eventually(t, fmt.Sprintf("partition %d's replicas hold the same graph", part.ID), func() error {
			want, err := graph(e1, part.ID)
			if err != nil {
				return err
			}
			if strings.Count(want, "\n") < 50 {
				return fmt.Errorf("node 1 holds %d graph records", strings.Count(want, "\n"))
			}
			for id := 2; id <= 3; id++ {
				got, err := graph(tc.node(id), part.ID)
				if err != nil {
					return err
				}
				if got != want {
					return fmt.Errorf("node %d's graph differs from node 1's (%d and %d records)", id, strings.Count(got, "\n"), strings.Count(want, "\n"))
				}
			}
			return nil
		})
	}
}
