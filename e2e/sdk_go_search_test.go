package e2e

import (
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

// Vector and full-text search through the Go SDK: the policies round-trip and are refused
// where the service refuses them, a cross-partition vector search returns the exact top k
// with the exact scores, filters combine with it, and full-text filters, BM25 ranking and
// hybrid ranking give the documented shapes.
func TestGoSDKVectorAndFullTextSearch(t *testing.T) {
	s := startServer(t, false, "--min-partitions", "4")
	c := s.sdk(t)
	ctx := ctx(t)
	if _, err := c.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "search"}, nil); err != nil {
		t.Fatal(err)
	}
	db, _ := c.NewDatabase("search")
	pkDef := azcosmos.PartitionKeyDefinition{Paths: []string{"/category"}, Version: 2}
	vectors := &azcosmos.VectorEmbeddingPolicy{VectorEmbeddings: []azcosmos.VectorEmbedding{
		{Path: "/embedding", DataType: azcosmos.VectorDataTypeFloat32, DistanceFunction: azcosmos.VectorDistanceFunctionCosine, Dimensions: 8},
	}}
	text := &azcosmos.FullTextPolicy{DefaultLanguage: "en-US", FullTextPaths: []azcosmos.FullTextPath{{Path: "/description", Language: "en-US"}}}
	indexing := func(excluded bool, vi ...azcosmos.VectorIndex) *azcosmos.IndexingPolicy {
		p := &azcosmos.IndexingPolicy{Automatic: true, IndexingMode: azcosmos.IndexingModeConsistent,
			IncludedPaths: []azcosmos.IncludedPath{{Path: "/*"}}, VectorIndexes: vi,
			FullTextIndexes: []azcosmos.FullTextIndex{{Path: "/description"}}}
		if excluded {
			p.ExcludedPaths = []azcosmos.ExcludedPath{{Path: "/embedding/*"}}
		}
		return p
	}
	flat := azcosmos.VectorIndex{Path: "/embedding", Type: azcosmos.VectorIndexTypeFlat}

	// Refusals: each leaves no container behind.
	for name, props := range map[string]azcosmos.ContainerProperties{
		"vector path range-indexed":   {IndexingPolicy: indexing(false, flat)},
		"index on an undeclared path": {IndexingPolicy: indexing(true, azcosmos.VectorIndex{Path: "/other", Type: azcosmos.VectorIndexTypeFlat})},
		"flat over 505 dimensions": {VectorEmbeddingPolicy: &azcosmos.VectorEmbeddingPolicy{VectorEmbeddings: []azcosmos.VectorEmbedding{
			{Path: "/embedding", DataType: azcosmos.VectorDataTypeFloat32, DistanceFunction: azcosmos.VectorDistanceFunctionCosine, Dimensions: 1536}}},
			IndexingPolicy: indexing(true, flat)},
		"zero dimensions": {VectorEmbeddingPolicy: &azcosmos.VectorEmbeddingPolicy{VectorEmbeddings: []azcosmos.VectorEmbedding{
			{Path: "/embedding", DataType: azcosmos.VectorDataTypeFloat32, DistanceFunction: azcosmos.VectorDistanceFunctionCosine}}}},
		"unknown language": {FullTextPolicy: &azcosmos.FullTextPolicy{DefaultLanguage: "tlh-KL"}},
	} {
		props.ID, props.PartitionKeyDefinition = "bad", pkDef
		if props.VectorEmbeddingPolicy == nil && props.IndexingPolicy != nil {
			props.VectorEmbeddingPolicy = vectors
		}
		if props.FullTextPolicy == nil && props.IndexingPolicy != nil {
			props.FullTextPolicy = text
		}
		if _, err := db.CreateContainer(ctx, props, nil); statusOf(err) != http.StatusBadRequest {
			t.Errorf("%s: %v, want 400", name, err)
		}
	}

	props := azcosmos.ContainerProperties{ID: "products", PartitionKeyDefinition: pkDef,
		VectorEmbeddingPolicy: vectors, FullTextPolicy: text, IndexingPolicy: indexing(true, flat)}
	if _, err := db.CreateContainer(ctx, props, nil); err != nil {
		t.Fatal(err)
	}
	products, _ := db.NewContainer("products")
	read, err := products.Read(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := read.ContainerProperties
	if v := got.VectorEmbeddingPolicy; v == nil || len(v.VectorEmbeddings) != 1 || v.VectorEmbeddings[0].Dimensions != 8 ||
		v.VectorEmbeddings[0].DistanceFunction != azcosmos.VectorDistanceFunctionCosine {
		t.Fatalf("vector embedding policy read back: %+v", v)
	}
	if f := got.FullTextPolicy; f == nil || f.DefaultLanguage != "en-US" || len(f.FullTextPaths) != 1 || f.FullTextPaths[0].Path != "/description" {
		t.Fatalf("full-text policy read back: %+v", f)
	}
	if ip := got.IndexingPolicy; ip == nil || len(ip.VectorIndexes) != 1 || ip.VectorIndexes[0].Type != azcosmos.VectorIndexTypeFlat || len(ip.FullTextIndexes) != 1 {
		t.Fatalf("indexing policy read back: %+v", ip)
	}
	// The vector policy cannot change; sending back what was read is fine.
	if _, err := products.Replace(ctx, *got, nil); err != nil {
		t.Fatalf("replace with the properties read: %v", err)
	}
	changed := *got
	changed.VectorEmbeddingPolicy = &azcosmos.VectorEmbeddingPolicy{VectorEmbeddings: []azcosmos.VectorEmbedding{
		{Path: "/embedding", DataType: azcosmos.VectorDataTypeFloat32, DistanceFunction: azcosmos.VectorDistanceFunctionEuclidean, Dimensions: 8}}}
	if _, err := products.Replace(ctx, changed, nil); statusOf(err) != http.StatusBadRequest {
		t.Fatalf("replace with another distance function: %v, want 400", err)
	}

	// 200 products over 10 categories, with random unit-free vectors and a description.
	type product struct {
		ID          string    `json:"id"`
		Category    string    `json:"category"`
		Embedding   []float64 `json:"embedding"`
		Description string    `json:"description"`
		Price       int       `json:"price"`
	}
	rng := rand.New(rand.NewPCG(7, 11))
	words := []string{"red", "bicycle", "helmet", "mountain", "road", "light", "fast", "carbon", "frame", "wheel"}
	var all []product
	for i := range 200 {
		p := product{ID: fmt.Sprintf("p%03d", i), Category: fmt.Sprintf("cat%d", i%10), Price: i % 50}
		for range 8 {
			p.Embedding = append(p.Embedding, math.Round(rng.NormFloat64()*1000)/1000)
		}
		var desc []string
		for range 3 + i%5 {
			desc = append(desc, words[rng.IntN(len(words))])
		}
		p.Description = strings.Join(desc, " ")
		all = append(all, p)
		if _, err := products.CreateItem(ctx, azcosmos.NewPartitionKeyString(p.Category), marshal(t, p), nil); err != nil {
			t.Fatal(err)
		}
	}
	q := []float64{0.5, -0.2, 0.1, 0.9, -0.4, 0.3, 0.0, 0.7}
	cosine := func(a []float64) float64 {
		var dot, na, nb float64
		for i := range a {
			x, y := float64(float32(a[i])), float64(float32(q[i]))
			dot, na, nb = dot+x*y, na+x*x, nb+y*y
		}
		return dot / math.Sqrt(na*nb)
	}
	type scored struct {
		ID    string  `json:"id"`
		Score float64 `json:"score"`
	}
	exactTop := func(keep func(product) bool, k int) []scored {
		var out []scored
		for _, p := range all {
			if keep(p) {
				out = append(out, scored{p.ID, cosine(p.Embedding)})
			}
		}
		sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
		return out[:k]
	}
	same := func(what string, got, want []scored) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: %d results, want %d", what, len(got), len(want))
		}
		for i := range got {
			if got[i].ID != want[i].ID || math.Abs(got[i].Score-want[i].Score) > 1e-9 {
				t.Fatalf("%s: result %d is %+v, want %+v", what, i, got[i], want[i])
			}
		}
	}
	param := []azcosmos.QueryParameter{{Name: "@q", Value: q}}
	res := runQuery[scored](t, products, azcosmos.NewPartitionKey(),
		`SELECT TOP 10 c.id, VectorDistance(c.embedding, @q) AS score FROM c ORDER BY VectorDistance(c.embedding, @q)`, 0, param...)
	same("cross-partition top 10", res, exactTop(func(product) bool { return true }, 10))
	res = runQuery[scored](t, products, azcosmos.NewPartitionKey(),
		`SELECT TOP 5 c.id, VectorDistance(c.embedding, @q) AS score FROM c WHERE c.price < 20 ORDER BY VectorDistance(c.embedding, @q)`, 0, param...)
	same("filtered top 5", res, exactTop(func(p product) bool { return p.Price < 20 }, 5))
	res = runQuery[scored](t, products, azcosmos.NewPartitionKeyString("cat3"),
		`SELECT TOP 3 c.id, VectorDistance(c.embedding, @q) AS score FROM c ORDER BY VectorDistance(c.embedding, @q)`, 0, param...)
	same("one logical partition's top 3", res, exactTop(func(p product) bool { return p.Category == "cat3" }, 3))

	// Stable across a split (its children answer exactly until they keep a graph of their
	// own) and across an indexing policy change (diskANN for flat, then back).
	raw := rawClient{s: s, key: emulatorKey, now: time.Now}
	if code, _, b := raw.do(t, "POST", "/dbs/search/colls/products/partitions/0/split", nil, nil); code != http.StatusOK {
		t.Fatalf("split: %d %s", code, b)
	}
	top10 := `SELECT TOP 10 c.id, VectorDistance(c.embedding, @q) AS score FROM c ORDER BY VectorDistance(c.embedding, @q)`
	same("top 10 after a split", runQuery[scored](t, products, azcosmos.NewPartitionKey(), top10, 0, param...), exactTop(func(product) bool { return true }, 10))
	for _, typ := range []azcosmos.VectorIndexType{azcosmos.VectorIndexTypeDiskANN, azcosmos.VectorIndexTypeFlat} {
		props := *got
		props.IndexingPolicy = indexing(true, azcosmos.VectorIndex{Path: "/embedding", Type: typ})
		if _, err := products.Replace(ctx, props, nil); err != nil {
			t.Fatalf("replace with a %s index: %v", typ, err)
		}
		same(fmt.Sprintf("top 10 with a %s index", typ), runQuery[scored](t, products, azcosmos.NewPartitionKey(), top10, 0, param...), exactTop(func(product) bool { return true }, 10))
	}

	// Full text: the filter matches the analyzed words (bicycles is bicycle).
	ids := runQuery[struct {
		ID string `json:"id"`
	}](t, products, azcosmos.NewPartitionKey(), `SELECT c.id FROM c WHERE FullTextContainsAll(c.description, "Bicycles", "helmet")`, 0)
	var want []string
	for _, p := range all {
		if strings.Contains(p.Description, "bicycle") && strings.Contains(p.Description, "helmet") {
			want = append(want, p.ID)
		}
	}
	var gotIDs []string
	for _, r := range ids {
		gotIDs = append(gotIDs, r.ID)
	}
	slices.Sort(gotIDs)
	if len(want) == 0 || !slices.Equal(gotIDs, want) {
		t.Fatalf("FullTextContainsAll: %v, want %v", gotIDs, want)
	}
	// BM25 ranking puts an item holding both words before one holding one.
	ranked := runQuery[product](t, products, azcosmos.NewPartitionKey(),
		`SELECT TOP 5 * FROM c ORDER BY RANK FullTextScore(c.description, "carbon", "frame")`, 0)
	if len(ranked) != 5 || !strings.Contains(ranked[0].Description, "carbon") || !strings.Contains(ranked[0].Description, "frame") {
		t.Fatalf("FullTextScore top 5: %+v", ranked)
	}
	// Hybrid: RRF of the two rankings; the documented shape, TOP k of whole items.
	hybrid := runQuery[product](t, products, azcosmos.NewPartitionKey(),
		`SELECT TOP 10 * FROM c ORDER BY RANK RRF(VectorDistance(c.embedding, @q), FullTextScore(c.description, "carbon"), [1, 1])`, 0, param...)
	if len(hybrid) != 10 {
		t.Fatalf("hybrid: %d results, want 10", len(hybrid))
	}
	// Scores may not be projected.
	pager := products.NewQueryItemsPager(`SELECT FullTextScore(c.description, "carbon") AS s FROM c`, azcosmos.NewPartitionKey(), nil)
	if _, err := pager.NextPage(ctx); statusOf(err) != http.StatusBadRequest {
		t.Fatalf("a projected FullTextScore: %v, want 400", err)
	}
}
