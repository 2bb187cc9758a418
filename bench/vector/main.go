// Command vector measures vector search through the official Go SDK: it loads a clustered
// synthetic data set into a container with a vector index, runs TOP k searches from many
// workers, and reports the load rate, the queries per second, latency, and recall@k against
// exact search computed here, on the client.
//
// Run it once per index type against the same server and compare (docs/benchmarks.md):
//
//	partita serve --data /tmp/vb --addr 127.0.0.1:18181 --tls=false --rate-limit=false --cql-addr= &
//	go run ./bench/vector -endpoint http://127.0.0.1:18181 -index diskANN -n 100000
//	go run ./bench/vector -endpoint http://127.0.0.1:18181 -index flat -n 100000
//
// Each run creates its own container (vectors-<index>), deleted first when it exists.
package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/partita-db/partita/internal/vectorindex"
)

const emulatorKey = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "vector:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		endpoint = flag.String("endpoint", "http://127.0.0.1:18181", "Cosmos DB endpoint")
		key      = flag.String("key", emulatorKey, "master key")
		index    = flag.String("index", "diskANN", "vector index type: flat, quantizedFlat or diskANN")
		n        = flag.Int("n", 100000, "vectors to load")
		dims     = flag.Int("dims", 128, "dimensions")
		clusters = flag.Int("clusters", 100, "Gaussian clusters the vectors are drawn around")
		queries  = flag.Int("queries", 200, "distinct query vectors (recall is averaged over them)")
		k        = flag.Int("k", 10, "TOP k")
		conc     = flag.Int("concurrency", 8, "concurrent query workers")
		loadConc = flag.Int("load-concurrency", 32, "concurrent load workers")
		dur      = flag.Duration("duration", 20*time.Second, "how long queries run")
		ru       = flag.Int("ru", 400, "the container's manual throughput (6,000 RU/s per physical partition)")
		jsonOut  = flag.String("json", "", "append the result as one JSON line to this file")
		build    = flag.Bool("build", false, "load under a flat index, then replace the policy with -index and time the online build")
		text     = flag.Bool("fulltext", false, "measure full-text search instead: -n documents of random words, FullTextContains and FullTextScore queries")
	)
	flag.Parse()
	ctx := context.Background()
	cred, err := azcosmos.NewKeyCredential(*key)
	if err != nil {
		return err
	}
	transport := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, MaxIdleConnsPerHost: 256}}
	client, err := azcosmos.NewClientWithKey(*endpoint, cred, &azcosmos.ClientOptions{ClientOptions: azcore.ClientOptions{Transport: transport, Retry: policy.RetryOptions{MaxRetries: 10}}})
	if err != nil {
		return err
	}
	if _, err := client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "vbench"}, nil); err != nil && !isStatus(err, http.StatusConflict) {
		return err
	}
	db, _ := client.NewDatabase("vbench")
	if *text {
		return fullText(ctx, db, *n, *conc, *loadConc, *dur, *ru, *jsonOut)
	}
	loadIndex := *index
	if *build {
		loadIndex = "flat"
	}
	c, err := recreate(ctx, db, *ru, azcosmos.ContainerProperties{
		ID:                     "vectors-" + *index,
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}, Version: 2},
		VectorEmbeddingPolicy: &azcosmos.VectorEmbeddingPolicy{VectorEmbeddings: []azcosmos.VectorEmbedding{
			{Path: "/v", DataType: azcosmos.VectorDataTypeFloat32, DistanceFunction: azcosmos.VectorDistanceFunctionCosine, Dimensions: int32(*dims)},
		}},
		IndexingPolicy: &azcosmos.IndexingPolicy{
			Automatic: true, IndexingMode: azcosmos.IndexingModeConsistent,
			IncludedPaths: []azcosmos.IncludedPath{{Path: "/*"}},
			ExcludedPaths: []azcosmos.ExcludedPath{{Path: "/v/*"}},
			VectorIndexes: []azcosmos.VectorIndex{{Path: "/v", Type: azcosmos.VectorIndexType(loadIndex)}},
		},
	})
	if err != nil {
		return err
	}

	rng := rand.New(rand.NewPCG(42, uint64(*dims)))
	data := clustered(rng, *n, *dims, *clusters)
	start := time.Now()
	if err := load(ctx, c, len(data), *loadConc, "v", func(i int) any { return data[i] }); err != nil {
		return err
	}
	var wg sync.WaitGroup
	loadSecs := time.Since(start).Seconds()
	fmt.Printf("loaded %d vectors of %d dimensions in %.1fs: %.0f/s\n", *n, *dims, loadSecs, float64(*n)/loadSecs)
	var buildSecs float64
	if *build {
		if buildSecs, err = rebuild(ctx, c, *index); err != nil {
			return err
		}
		fmt.Printf("built the %s index online in %.1fs: %.0f vectors/s\n", *index, buildSecs, float64(*n)/buildSecs)
	}

	// Queries: points near the data (a cluster's member, moved a little), and their exact top k.
	qs := make([][]float32, *queries)
	truth := make([][]string, *queries)
	for i := range qs {
		base := data[rng.IntN(len(data))]
		q := make([]float32, *dims)
		for d := range q {
			q[d] = base[d] + float32(rng.NormFloat64()*0.1)
		}
		qs[i], truth[i] = q, exactTop(data, q, *k)
	}
	sql := fmt.Sprintf("SELECT TOP %d c.id FROM c ORDER BY VectorDistance(c.v, @q)", *k)
	var done atomic.Int64
	var recallSum float64
	var recallN int
	var mu sync.Mutex
	var lat []time.Duration
	var charge float64
	deadline := time.Now().Add(*dur)
	var qerr atomic.Value
	start = time.Now()
	for w := range *conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; time.Now().Before(deadline) && qerr.Load() == nil; i += *conc {
				qi := i % len(qs)
				t0 := time.Now()
				ids, ch, err := search(ctx, c, sql, qs[qi])
				if err != nil {
					qerr.Store(err)
					return
				}
				took := time.Since(t0)
				done.Add(1)
				mu.Lock()
				lat = append(lat, took)
				charge += ch
				if i < len(qs) {
					recallSum += vectorindex.Recall(ids, truth[qi])
					recallN++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if err, _ := qerr.Load().(error); err != nil {
		return fmt.Errorf("query: %w", err)
	}
	secs := time.Since(start).Seconds()
	slices.Sort(lat)
	res := map[string]any{
		"index": *index, "n": *n, "dims": *dims, "k": *k, "concurrency": *conc,
		"load_per_sec": float64(*n) / loadSecs, "build_secs": buildSecs, "qps": float64(done.Load()) / secs,
		"p50_ms": ms(lat[len(lat)/2]), "p99_ms": ms(lat[len(lat)*99/100]),
		"recall": recallSum / float64(max(recallN, 1)), "recall_queries": recallN,
		"ru_per_query": charge / float64(max(done.Load(), 1)),
	}
	fmt.Printf("%s: %.1f queries/s, p50 %.1f ms, p99 %.1f ms, recall@%d %.3f over %d queries, %.1f RU per query\n",
		*index, res["qps"], res["p50_ms"], res["p99_ms"], *k, res["recall"], recallN, res["ru_per_query"])
	return appendLine(*jsonOut, res)
}

// fullText loads n documents of 20 to 60 words drawn from a vocabulary of 5,000 (Zipf
// distributed, as words are) into a container with a full-text policy on /text, then times
// two searches from conc workers: a FullTextContains filter and a BM25 ranking.
func fullText(ctx context.Context, db *azcosmos.DatabaseClient, n, conc, loadConc int, dur time.Duration, ru int, jsonOut string) error {
	c, err := recreate(ctx, db, ru, azcosmos.ContainerProperties{
		ID:                     "fulltext",
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}, Version: 2},
		FullTextPolicy:         &azcosmos.FullTextPolicy{DefaultLanguage: "en-US", FullTextPaths: []azcosmos.FullTextPath{{Path: "/text", Language: "en-US"}}},
		IndexingPolicy: &azcosmos.IndexingPolicy{Automatic: true, IndexingMode: azcosmos.IndexingModeConsistent,
			IncludedPaths: []azcosmos.IncludedPath{{Path: "/*"}}, FullTextIndexes: []azcosmos.FullTextIndex{{Path: "/text"}}},
	})
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(7, 7))
	zipf := rand.NewZipf(rng, 1.1, 1, 4999)
	word := func() string { return fmt.Sprintf("w%dx", zipf.Uint64()) }
	docs := make([]string, n)
	for i := range docs {
		words := make([]string, 20+rng.IntN(41))
		for j := range words {
			words[j] = word()
		}
		docs[i] = strings.Join(words, " ")
	}
	start := time.Now()
	if err := load(ctx, c, n, loadConc, "text", func(i int) any { return docs[i] }); err != nil {
		return err
	}
	var wg sync.WaitGroup
	fmt.Printf("loaded %d documents in %.1fs\n", n, time.Since(start).Seconds())
	for _, sql := range []string{
		"SELECT TOP 10 c.id FROM c WHERE FullTextContains(c.text, @a)",
		"SELECT TOP 10 c.id FROM c ORDER BY RANK FullTextScore(c.text, @a, @b)",
	} {
		var lat []time.Duration
		var mu sync.Mutex
		deadline := time.Now().Add(dur)
		var qerr atomic.Value
		for w := range conc {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := rand.New(rand.NewPCG(uint64(w), 1))
				for time.Now().Before(deadline) && qerr.Load() == nil {
					// Words of middling frequency: rank 50 to 500.
					a, b := fmt.Sprintf("w%dx", 50+r.IntN(450)), fmt.Sprintf("w%dx", 50+r.IntN(450))
					t0 := time.Now()
					pager := c.NewQueryItemsPager(sql, azcosmos.NewPartitionKey(), &azcosmos.QueryOptions{
						QueryParameters: []azcosmos.QueryParameter{{Name: "@a", Value: a}, {Name: "@b", Value: b}}})
					for pager.More() {
						if _, err := pager.NextPage(ctx); err != nil {
							qerr.Store(err)
							return
						}
					}
					mu.Lock()
					lat = append(lat, time.Since(t0))
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if err, _ := qerr.Load().(error); err != nil {
			return fmt.Errorf("%s: %w", sql, err)
		}
		slices.Sort(lat)
		res := map[string]any{"query": sql, "n": n, "concurrency": conc, "queries": len(lat),
			"p50_ms": ms(lat[len(lat)/2]), "p99_ms": ms(lat[len(lat)*99/100])}
		fmt.Printf("%s: %d queries, p50 %.1f ms, p99 %.1f ms\n", sql, len(lat), res["p50_ms"], res["p99_ms"])
		if err := appendLine(jsonOut, res); err != nil {
			return err
		}
	}
	return nil
}

// recreate creates the container props describes, with manual throughput ru, deleting it
// first when it exists.
func recreate(ctx context.Context, db *azcosmos.DatabaseClient, ru int, props azcosmos.ContainerProperties) (*azcosmos.ContainerClient, error) {
	c, err := db.NewContainer(props.ID)
	if err != nil {
		return nil, err
	}
	if _, err := c.Delete(ctx, nil); err != nil && !isStatus(err, http.StatusNotFound) {
		return nil, err
	}
	tp := azcosmos.NewManualThroughputProperties(int32(ru))
	if _, err := db.CreateContainer(ctx, props, &azcosmos.CreateContainerOptions{ThroughputProperties: &tp}); err != nil {
		return nil, err
	}
	return c, nil
}

// rebuild replaces c's vector index with one of type typ and waits until the container reports
// its index transformation complete; it returns the seconds that took.
func rebuild(ctx context.Context, c *azcosmos.ContainerClient, typ string) (float64, error) {
	resp, err := c.Read(ctx, nil)
	if err != nil {
		return 0, err
	}
	props := *resp.ContainerProperties
	props.IndexingPolicy.VectorIndexes = []azcosmos.VectorIndex{{Path: "/v", Type: azcosmos.VectorIndexType(typ)}}
	start := time.Now()
	if _, err := c.Replace(ctx, props, nil); err != nil {
		return 0, err
	}
	for {
		resp, err := c.Read(ctx, &azcosmos.ReadContainerOptions{PopulateQuotaInfo: true})
		if err != nil {
			return 0, err
		}
		if resp.RawResponse.Header.Get("x-ms-documentdb-collection-index-transformation-progress") == "100" {
			return time.Since(start).Seconds(), nil
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// appendLine appends res to the file at path as one JSON line; nothing when path is "".
func appendLine(path string, res map[string]any) error {
	if path == "" {
		return nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	b, _ := json.Marshal(res)
	_, err = f.Write(append(b, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// load creates n items from conc workers: item i has id i, one of 64 partition key values, and
// field set to value(i).
func load(ctx context.Context, c *azcosmos.ContainerClient, n, conc int, field string, value func(i int) any) error {
	var next atomic.Int64
	var loadErr atomic.Value
	var wg sync.WaitGroup
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n && loadErr.Load() == nil; i = int(next.Add(1) - 1) {
				pk := fmt.Sprintf("p%d", i%64)
				body, _ := json.Marshal(map[string]any{"id": fmt.Sprint(i), "pk": pk, field: value(i)})
				if _, err := c.CreateItem(ctx, azcosmos.NewPartitionKeyString(pk), body, nil); err != nil {
					loadErr.Store(err)
				}
			}
		}()
	}
	wg.Wait()
	if err, _ := loadErr.Load().(error); err != nil {
		return fmt.Errorf("load: %w", err)
	}
	return nil
}

// clustered draws n vectors around clusters centres drawn from a unit Gaussian, each moved
// by a Gaussian of deviation 0.3 per dimension.
func clustered(rng *rand.Rand, n, dims, clusters int) [][]float32 {
	centres := make([][]float32, clusters)
	for i := range centres {
		centres[i] = make([]float32, dims)
		for d := range centres[i] {
			centres[i][d] = float32(rng.NormFloat64())
		}
	}
	out := make([][]float32, n)
	for i := range out {
		c := centres[rng.IntN(clusters)]
		v := make([]float32, dims)
		for d := range v {
			v[d] = float32(math.Round((float64(c[d])+rng.NormFloat64()*0.3)*1e5) / 1e5)
		}
		out[i] = v
	}
	return out
}

// exactTop is the ids of the k vectors of data most similar to q by cosine.
func exactTop(data [][]float32, q []float32, k int) []string {
	type scored struct {
		i int
		s float64
	}
	qn := norm(q)
	all := make([]scored, len(data))
	for i, v := range data {
		var dot float64
		for d := range v {
			dot += float64(v[d]) * float64(q[d])
		}
		all[i] = scored{i, dot / (norm(v) * qn)}
	}
	sort.Slice(all, func(a, b int) bool { return all[a].s > all[b].s })
	ids := make([]string, k)
	for i := range ids {
		ids[i] = fmt.Sprint(all[i].i)
	}
	return ids
}

func norm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

// search runs the query across partitions and returns the ids found and the charge.
func search(ctx context.Context, c *azcosmos.ContainerClient, sql string, q []float32) ([]string, float64, error) {
	pager := c.NewQueryItemsPager(sql, azcosmos.NewPartitionKey(), &azcosmos.QueryOptions{
		QueryParameters: []azcosmos.QueryParameter{{Name: "@q", Value: q}},
	})
	var ids []string
	var charge float64
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, 0, err
		}
		charge += float64(page.RequestCharge)
		for _, b := range page.Items {
			var r struct {
				ID string `json:"id"`
			}
			if err := json.Unmarshal(b, &r); err != nil {
				return nil, 0, err
			}
			ids = append(ids, r.ID)
		}
	}
	return ids, charge, nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func isStatus(err error, status int) bool {
	var re *azcore.ResponseError
	return errors.As(err, &re) && re.StatusCode == status
}
