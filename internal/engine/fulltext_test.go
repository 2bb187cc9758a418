package engine

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/partita-db/partita/internal/catalog"
	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fulltext"
	"github.com/partita-db/partita/internal/indexing"
	"github.com/partita-db/partita/internal/query"
	"github.com/partita-db/partita/internal/storage"
)

var (
	ftTextPolicy  = json.RawMessage(`{"defaultLanguage":"en-US","fullTextPaths":[{"path":"/text","language":"en-US"}]}`)
	ftTextIndexed = json.RawMessage(`{"fullTextIndexes":[{"path":"/text"}]}`)
	ftTermPath    = indexing.FullTextTermPath("/text")
	ftWords       = strings.Fields("cat cats dog dogs bird fish running runs jump the quick brown lazy a of")
)

// ftText is a random text of the vocabulary, "" now and then (an item without text).
func ftText(rng *rand.Rand) string {
	n := rng.IntN(10)
	if n == 0 {
		return ""
	}
	var w []string
	for range n {
		w = append(w, ftWords[rng.IntN(len(ftWords))])
	}
	return strings.Join(w, " ")
}

// ftItems is what a test wrote: id -> text, and the order of creation.
type ftItems map[string]string

func (items ftItems) body(id, text string, n int) []byte {
	extra := fmt.Sprintf(`,"n":%d`, n)
	if text != "" {
		extra += fmt.Sprintf(`,"text":%q`, text)
	}
	return item(id, "p"+id[len(id)-1:], extra)
}

// ftQueries are the searches compared with and without the index. Results are ids in order.
var ftQueries = []struct {
	sql string
	// index: the index serves the query once built (its filter or its candidates).
	index bool
}{
	{`SELECT c.id FROM c WHERE FullTextContains(c.text, 'cats')`, true},
	{`SELECT c.id FROM c WHERE FullTextContains(c.text, 'the')`, false}, // a stop word: no term
	{`SELECT c.id FROM c WHERE c.n >= 0 AND FullTextContainsAll(c.text, 'dog', 'running fish')`, true},
	{`SELECT c.id FROM c WHERE FullTextContainsAny(c.text, 'bird', 'jumps', 'the')`, true},
	{`SELECT TOP 7 c.id FROM c WHERE FullTextContains(c.text, 'lazy')`, true},
	{`SELECT TOP 10 c.id FROM c ORDER BY RANK FullTextScore(c.text, 'cat', 'bird')`, true},
	{`SELECT TOP 10 c.id FROM c WHERE c.n > 50 ORDER BY RANK FullTextScore(c.text, ['quick', 'fish'])`, true},
	// more results than items holding a term: the others fill in, read as before
	{`SELECT TOP 1000 c.id FROM c ORDER BY RANK FullTextScore(c.text, 'bird')`, false},
}

// ftRun runs sql page by page (pages of size) and returns the ids and the work done.
func ftRun(t *testing.T, c *Container, sql string, noIndex bool, size int) ([]string, query.Stats) {
	t.Helper()
	p, err := query.Prepare(sql)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	var stats query.Stats
	cont := ""
	for {
		res, err := c.Query(p, epk.All, query.Options{NoIndex: noIndex, MaxItems: size, Continuation: cont})
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		for _, v := range res.Results {
			ids = append(ids, v.Get("id").Str())
		}
		stats.ItemsLoaded += res.Stats.ItemsLoaded
		if res.Stats.Index.Filter != "" {
			stats.Index.Filter = res.Stats.Index.Filter
		}
		if cont = res.Next; cont == "" {
			return ids, stats
		}
	}
}

// ftCheck compares every query with and without the index, and with the BM25 statistics the
// items give. index says whether the index must serve the queries that it can (nil: no
// check, while a rebuild is in flight).
func ftCheck(t *testing.T, when string, c *Container, items ftItems, index *bool) {
	t.Helper()
	for _, q := range ftQueries {
		want, scan := ftRun(t, c, q.sql, true, 1000)
		for _, size := range []int{1000, 25} {
			got, stats := ftRun(t, c, q.sql, false, size)
			if !slices.Equal(got, want) {
				t.Fatalf("%s: %s (pages of %d)\n got %v\nwant %v", when, q.sql, size, got, want)
			}
			if index == nil || size != 1000 {
				continue
			}
			// The index served the query when it was chosen and spared reads: a partition
			// that does not trust it reads its items as a scan does.
			used := stats.Index.Filter == ftTermPath && stats.ItemsLoaded < scan.ItemsLoaded
			if used != (*index && q.index) {
				t.Fatalf("%s: %s used the full-text index: %v (filter %q, %d items loaded, %d without the index)",
					when, q.sql, used, stats.Index.Filter, stats.ItemsLoaded, scan.ItemsLoaded)
			}
		}
		if strings.Contains(q.sql, "FullTextContains(c.text, 'cats')") && len(want) == 0 {
			t.Fatalf("%s: %s found nothing: the test searches too little", when, q.sql)
		}
	}
	// The statistics of the index are those of the items, over every partition, and so are
	// the scores computed from them.
	tokens := []string{"bird", "cat", "fish", "quick"}
	src := &partitionSource{ranges: []epk.Range{epk.All}, index: c.policy(), c: c}
	src.parts, _ = c.queryParts(src.ranges)
	st, ok, err := src.FullTextStats(ftTermPath, tokens)
	if err != nil {
		t.Fatal(err)
	}
	if index != nil && ok != *index {
		t.Fatalf("%s: statistics from the index: %v", when, ok)
	}
	if !ok {
		return
	}
	scan := fulltext.Corpus{Docs: len(items), Freq: map[string]int{}}
	for _, text := range items {
		terms := fulltext.Analyze("en-US", text)
		scan.Terms += len(terms)
		for _, tok := range tokens {
			if slices.Contains(terms, tok) {
				scan.Freq[tok]++
			}
		}
	}
	idx := fulltext.Corpus{Docs: int(st.Items), Terms: int(st.Tokens), Freq: map[string]int{}}
	for i, tok := range tokens {
		idx.Freq[tok] = int(st.Freq[i])
	}
	if idx.Docs != scan.Docs || idx.Terms != scan.Terms {
		t.Fatalf("%s: index statistics %+v, items give %+v", when, idx, scan)
	}
	for _, text := range items {
		tf := map[string]int{}
		n := 0
		fulltext.Each("en-US", text, func(tok string) { tf[tok]++; n++ })
		a, b := idx.Score([]string{"quick", "fish"}, tf, n), scan.Score([]string{"quick", "fish"}, tf, n)
		if math.Abs(a-b) > 1e-9 {
			t.Fatalf("%s: score of %q: %v from the index, %v from the items", when, text, a, b)
		}
	}
}

// A full-text index added by a policy replace is built online over a container of several
// partitions; searches give the same answers before, during and after the rebuild, across a
// restart and a split, and read the index once it is built (fewer items loaded). Data of a
// container written before full-text entries existed is rebuilt, not trusted.
func TestFullTextIndex(t *testing.T) {
	dir := t.TempDir()
	yes, no := true, false
	e := openEngine(t, dir, Options{MinPartitions: 3, ManualReindex: true})
	defer func() { e.Close() }()
	if _, err := e.CreateDatabase("db", nil); err != nil {
		t.Fatal(err)
	}
	spec := ContainerSpec{ID: "c", PartitionKey: PartitionKeyDef{Paths: []string{"/pk"}, Version: 2}, FullTextPolicy: ftTextPolicy}
	if _, err := e.CreateContainer("db", spec); err != nil {
		t.Fatal(err)
	}
	c, _ := e.Container("db", "c")
	rng := rand.New(rand.NewPCG(5, 6))
	items := ftItems{}
	write := func(i int) {
		id := fmt.Sprintf("i%04d", i)
		text := ftText(rng)
		if _, err := c.UpsertItem(items.body(id, text, i%100), ItemOptions{}); err != nil {
			t.Fatal(err)
		}
		items[id] = text
	}
	for i := range 300 {
		write(i)
	}
	// Replace, patch and delete some: the entries follow.
	for i := 0; i < 300; i += 7 {
		write(i)
	}
	for i := 3; i < 300; i += 11 {
		id := fmt.Sprintf("i%04d", i)
		text := ftText(rng)
		if text == "" {
			text = "quick fish"
		}
		raw, _ := json.Marshal(text)
		if _, err := c.PatchItem(key("p"+id[len(id)-1:]), id, Patch{Ops: []document.PatchOp{{Op: "set", Path: "/text", Value: raw}}}, ItemOptions{}); err != nil {
			t.Fatal(err)
		}
		items[id] = text
	}
	for i := 5; i < 300; i += 13 {
		id := fmt.Sprintf("i%04d", i)
		if _, err := c.DeleteItem(key("p"+id[len(id)-1:]), id, ItemOptions{}); err != nil {
			t.Fatal(err)
		}
		delete(items, id)
	}
	ftCheck(t, "without a full-text index", c, items, &no)

	if _, err := e.ReplaceContainer("db", "c", ContainerReplace{Indexing: ftTextIndexed}); err != nil {
		t.Fatal(err)
	}
	ftCheck(t, "before the rebuild", c, items, &no)
	for step := 0; ; step++ {
		finished, _, _, err := e.reindexStep(c, 40, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		write(1000 + step)
		write(step * 3)
		ftCheck(t, fmt.Sprintf("after rebuild step %d", step), c, items, nil)
		if finished {
			break
		}
	}
	ftCheck(t, "after the rebuild", c, items, &yes)
	for i := 0; i < 50; i++ {
		write(2000 + i)
	}
	ftCheck(t, "after more writes", c, items, &yes)

	e.Close()
	e = openEngine(t, dir, Options{MinPartitions: 3, ManualReindex: true})
	c, _ = e.Container("db", "c")
	ftCheck(t, "after a restart", c, items, &yes)

	if parts, err := e.SplitPartition("db", "c", 0, nil); err != nil || len(parts) != 2 {
		t.Fatalf("split: %v %v", parts, err)
	}
	ftCheck(t, "after a split", c, items, &yes)
	write(3000)
	ftCheck(t, "after a split and a write", c, items, &yes)

	// As a build before full-text entries left it: no entries, records that do not say
	// they hold them, and a catalog record without FullTextTerms.
	b := e.db.NewBatch()
	for _, part := range c.info().Partitions {
		prefix := storage.IndexPathPrefix(ftTermPath)
		if err := b.DeleteRange(storage.IndexBound(c.num, part.ID, prefix), storage.IndexBound(c.num, part.ID, append(prefix, 0xFF))); err != nil {
			t.Fatal(err)
		}
		if v, err := e.db.GetCopy(nil, storage.IndexingKey(c.num, part.ID)); err == nil {
			var rec map[string]json.RawMessage
			if err := json.Unmarshal(v, &rec); err != nil {
				t.Fatal(err)
			}
			delete(rec, "terms")
			v, _ = json.Marshal(rec)
			if err := b.Set(storage.IndexingKey(c.num, part.ID), v); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	b.Close()
	rec := c.rec
	rec.FullTextTerms = false
	if err := e.persist(catalog.Containers, rec.Num, rec); err != nil {
		t.Fatal(err)
	}
	e.Close()
	e = openEngine(t, dir, Options{MinPartitions: 3, ManualReindex: true})
	c, _ = e.Container("db", "c")
	ftCheck(t, "older data", c, items, &no)
	for {
		finished, _, _, err := e.reindexStep(c, 100, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		if finished {
			break
		}
	}
	ftCheck(t, "older data rebuilt", c, items, &yes)
}
