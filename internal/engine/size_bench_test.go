package engine

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/query"
	"github.com/partita-db/partita/internal/value"
)

// BenchmarkCostAgainstSize measures each operation on containers of growing size, so that a
// cost that grows with the container (rather than with the work asked for) shows as a growing
// time per operation. Every container holds, besides its bulk of 1 KB items over 1,000 logical
// partitions, one logical partition "hot" of 100 items that the logical-partition operations
// read; time to live is on (a day, so nothing expires) and the all-versions change feed kept.
// ORDER BY pages are read by id and by pk, which n/1,000 items share.
//
// Sizes are 10,000 and 100,000 items, and also 1,000,000 with PARTITA_BENCH_SIZES (a list,
// e.g. "10000,100000,1000000"). Writes run on 16 goroutines, as a server's clients would, so
// that their syncs are shared and the time per write is the writes' work, not the disk's.
//
//	go test ./internal/engine -run XXX -bench CostAgainstSize -benchtime 2000x
func BenchmarkCostAgainstSize(b *testing.B) {
	uncheckedCounts(b)
	for _, n := range benchSizes(b, "PARTITA_BENCH_SIZES", 10_000, 100_000) {
		b.Run(fmt.Sprintf("items=%d", n), func(b *testing.B) { benchAtSize(b, n) })
	}
}

func benchAtSize(b *testing.B, n int) {
	day := int64(86400)
	e, c := newContainer(b, Options{ChangeFeedRetention: time.Hour}, ContainerSpec{DefaultTTL: &day, Throughput: &Throughput{Manual: 40000}})
	parallel(b, n, 32, func(i int) {
		if _, err := c.CreateItem(body1KB(fmt.Sprint(i), fmt.Sprint("k", i%1000)), ItemOptions{}); err != nil {
			b.Fatal(err)
		}
	})
	for i := range 100 {
		mustCreate(b, c, body1KB(fmt.Sprint("hot", i), "hot"))
	}
	e.reapOnce(time.Now()) // builds the expiry indexes, once
	e.purgeLogsOnce(time.Now().Add(2 * time.Hour))
	settle(e)
	var next atomic.Int64
	writes := func(name string, op func(i int) error) {
		b.Run(name, func(b *testing.B) {
			b.SetParallelism(8) // 16 goroutines on 2 cores
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := op(int(next.Add(1))); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
	writes("create", func(i int) error {
		_, err := c.CreateItem(body1KB(fmt.Sprint("new", i), fmt.Sprint("k", i%1000)), ItemOptions{})
		return err
	})
	writes("upsert", func(i int) error {
		_, err := c.UpsertItem(body1KB(fmt.Sprint(i*7919%n), fmt.Sprint("k", i*7919%n%1000)), ItemOptions{})
		return err
	})
	writes("replace", func(i int) error {
		id := fmt.Sprint(i * 7919 % n)
		_, err := c.ReplaceItem(id, body1KB(id, fmt.Sprint("k", i*7919%n%1000)), ItemOptions{})
		return err
	})
	incr := Patch{Ops: []document.PatchOp{{Op: "incr", Path: "/n", Value: json.RawMessage("1")}}}
	writes("patch", func(i int) error {
		id := i * 7919 % n
		_, err := c.PatchItem(key(fmt.Sprint("k", id%1000)), fmt.Sprint(id), incr, ItemOptions{})
		return err
	})
	writes("read", func(i int) error {
		id := i * 7919 % n
		_, err := c.ReadItem(key(fmt.Sprint("k", id%1000)), fmt.Sprint(id))
		return err
	})
	hot, err := c.KeyRange(key("hot"))
	if err != nil {
		b.Fatal(err)
	}
	q, err := query.Prepare("SELECT * FROM c WHERE c.pk = @k")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("query-logical-page-of-10", func(b *testing.B) {
		for b.Loop() {
			res, err := c.Query(q, hot, query.Options{Params: map[string]value.Value{"@k": value.Str("hot")}, MaxItems: 10})
			if err != nil || len(res.Results) != 10 {
				b.Fatalf("%d items, %v", len(res.Results), err)
			}
		}
	})
	b.Run("feed-logical-from-start", func(b *testing.B) {
		for b.Loop() {
			page, err := c.ChangeFeed(FeedQuery{Range: hot, Max: 10})
			if err != nil || len(page.Changes) != 10 {
				b.Fatalf("%d changes, %v", len(page.Changes), err)
			}
		}
	})
	// A page of an ORDER BY over the whole container, first and from the middle; by id, and by
	// pk, which n/1000 items share (a page from the middle starts among them).
	for _, o := range []struct{ name, by string }{{"orderby", "c.id"}, {"orderby-pk", "c.pk"}} {
		ob, err := query.Prepare("SELECT * FROM c ORDER BY " + o.by)
		if err != nil {
			b.Fatal(err)
		}
		middle, err := c.Query(ob, epk.All, query.Options{MaxItems: n / 2})
		if err != nil {
			b.Fatal(err)
		}
		for _, from := range []struct{ name, tok string }{{"-page-of-10", ""}, {"-page-of-10-middle", middle.Next}} {
			b.Run(o.name+from.name, func(b *testing.B) {
				for b.Loop() {
					res, err := c.Query(ob, epk.All, query.Options{MaxItems: 10, Continuation: from.tok})
					if err != nil || len(res.Results) != 10 {
						b.Fatalf("%d items, %v", len(res.Results), err)
					}
				}
			})
		}
	}
	// A page of a range filter without ORDER BY, which returns items in creation order: one
	// that 55.5% of the items match (pk from "k5" up: k5-k9, k50-k99, k500-k999), spread over
	// creation order, first and from the middle; and one that 0.1% match ("k999").
	rq, err := query.Prepare("SELECT * FROM c WHERE c.pk >= @lo")
	if err != nil {
		b.Fatal(err)
	}
	for _, r := range []struct {
		name, lo string
		middle   bool
	}{{"range-broad", "k5", true}, {"range-narrow", "k999", false}} {
		params := map[string]value.Value{"@lo": value.Str(r.lo)}
		pages := []struct{ name, tok string }{{"-page-of-10", ""}}
		if r.middle {
			middle, err := c.Query(rq, epk.All, query.Options{Params: params, MaxItems: n / 4})
			if err != nil {
				b.Fatal(err)
			}
			pages = append(pages, struct{ name, tok string }{"-page-of-10-middle", middle.Next})
		}
		for _, from := range pages {
			b.Run(r.name+from.name, func(b *testing.B) {
				for b.Loop() {
					res, err := c.Query(rq, epk.All, query.Options{Params: params, MaxItems: 10, Continuation: from.tok})
					if err != nil || len(res.Results) != 10 {
						b.Fatalf("%d items, %v", len(res.Results), err)
					}
				}
			})
		}
	}
	// Background jobs: a purge pass after 100 replaces, a reaper round with nothing due.
	e.purgeLogsOnce(time.Now().Add(2 * time.Hour)) // what the benchmarks above wrote, and any split's children
	b.Run("purge-after-100-writes", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			parallel(b, 100, 16, func(i int) {
				if _, err := c.UpsertItem(body1KB(fmt.Sprint(i), fmt.Sprint("k", i%1000)), ItemOptions{}); err != nil {
					b.Fatal(err)
				}
			})
			b.StartTimer()
			e.purgeLogsOnce(time.Now().Add(2 * time.Hour))
		}
	})
	b.Run("reap-round", func(b *testing.B) {
		for b.Loop() {
			e.reapOnce(time.Now())
		}
	})
}

// benchSizes are the sizes listed in the environment variable env (comma-separated), or else
// the defaults.
func benchSizes(b *testing.B, env string, defaults ...int) []int {
	s := os.Getenv(env)
	if s == "" {
		return defaults
	}
	var sizes []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(f)
		if err != nil {
			b.Fatalf("%s: %v", env, err)
		}
		sizes = append(sizes, n)
	}
	return sizes
}

// settle waits (up to two minutes) for two seconds without a compaction: a load's compactions
// are not what a benchmark measures.
func settle(e *Engine) {
	for quiet, waited := 0, 0; quiet < 20 && waited < 1200; waited++ {
		if quiet++; e.db.Compacting() {
			quiet = 0
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// parallel calls fn(0..n-1) on workers goroutines.
func parallel(b *testing.B, n, workers int, fn func(i int)) {
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += workers {
				fn(i)
			}
		}()
	}
	wg.Wait()
}

// BenchmarkCostAgainstLogicalSize measures the operations on one logical partition as it grows
// from 10 items to 100,000 (PARTITA_BENCH_LOGICAL, a list, sets the sizes): writes into it,
// point reads, a page of its query from the start and from its middle, a page of its query in
// ORDER BY order, and a page of its change feed from the start and from its middle. Its items
// share one physical partition with 1,000 items of other logical partitions. Each should cost
// what the page or the write asks for, not what the logical partition holds.
//
//	go test ./internal/engine -run XXX -bench CostAgainstLogicalSize
func BenchmarkCostAgainstLogicalSize(b *testing.B) {
	uncheckedCounts(b)
	for _, n := range benchSizes(b, "PARTITA_BENCH_LOGICAL", 10, 1000, 100_000) {
		b.Run(fmt.Sprintf("items=%d", n), func(b *testing.B) { benchAtLogicalSize(b, n) })
	}
}

func benchAtLogicalSize(b *testing.B, n int) {
	e, c := newContainer(b, Options{ChangeFeedRetention: time.Hour}, ContainerSpec{Throughput: &Throughput{Manual: 40000}})
	// n is the item's rank, so ORDER BY c.n runs against creation order's.
	body := func(id, pk string, n int) []byte {
		return item(id, pk, fmt.Sprintf(`,"n":%d,"pad":"%s"`, n, strings.Repeat("x", 960)))
	}
	parallel(b, 1000, 16, func(i int) {
		mustCreate(b, c, body(fmt.Sprint(i), fmt.Sprint("k", i), i))
	})
	parallel(b, n, 32, func(i int) {
		mustCreate(b, c, body(fmt.Sprint("hot", i), "hot", n-i))
	})
	e.purgeLogsOnce(time.Now().Add(2 * time.Hour))
	settle(e)
	hot, err := c.KeyRange(key("hot"))
	if err != nil {
		b.Fatal(err)
	}
	var next atomic.Int64
	writes := func(name string, op func(i int) error) {
		b.Run(name, func(b *testing.B) {
			b.SetParallelism(8)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := op(int(next.Add(1))); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
	params := map[string]value.Value{"@k": value.Str("hot")}
	// page runs the query's page of (up to) 10 that starts after skip results.
	page := func(name, sql string, skip int) {
		q, err := query.Prepare(sql)
		if err != nil {
			b.Fatal(err)
		}
		from := ""
		if skip > 0 {
			res, err := c.Query(q, hot, query.Options{Params: params, MaxItems: skip})
			if err != nil {
				b.Fatal(err)
			}
			from = res.Next
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				res, err := c.Query(q, hot, query.Options{Params: params, MaxItems: 10, Continuation: from})
				if err != nil || len(res.Results) != min(10, n-skip) {
					b.Fatalf("%d items, %v", len(res.Results), err)
				}
			}
		})
	}
	const where = "SELECT * FROM c WHERE c.pk = @k"
	page("query-page", where, 0)
	page("query-page-middle", where, n/2)
	page("orderby-page", where+" ORDER BY c.n", 0)
	page("orderby-page-middle", where+" ORDER BY c.n", n/2)
	// A range filter that every item matches, on a query scoped to the logical partition by
	// its partition key alone (as the SDKs send it), not by the SQL.
	const ranged = "SELECT * FROM c WHERE c.n >= 0"
	page("range-page", ranged, 0)
	page("range-page-middle", ranged, n/2)
	feed := func(name string, skip int) {
		start := FeedStart{}
		if skip > 0 {
			p, err := c.ChangeFeed(FeedQuery{Range: hot, Max: skip})
			if err != nil {
				b.Fatal(err)
			}
			start = FeedStart{After: p.Through, HasAfter: true}
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				p, err := c.ChangeFeed(FeedQuery{Range: hot, Start: start, Max: 10})
				if err != nil || len(p.Changes) != min(10, n-skip) {
					b.Fatalf("%d changes, %v", len(p.Changes), err)
				}
			}
		})
	}
	feed("feed-page", 0)
	feed("feed-page-middle", n/2)
	// Writes last: creates grow the logical partition.
	writes("create", func(i int) error {
		_, err := c.CreateItem(body(fmt.Sprint("new", i), "hot", -i), ItemOptions{})
		return err
	})
	writes("replace", func(i int) error {
		id := fmt.Sprint("hot", i*7919%n)
		_, err := c.ReplaceItem(id, body(id, "hot", i), ItemOptions{})
		return err
	})
	incr := Patch{Ops: []document.PatchOp{{Op: "incr", Path: "/n", Value: json.RawMessage("1")}}}
	writes("patch", func(i int) error {
		_, err := c.PatchItem(key("hot"), fmt.Sprint("hot", i*7919%n), incr, ItemOptions{})
		return err
	})
	writes("read", func(i int) error {
		_, err := c.ReadItem(key("hot"), fmt.Sprint("hot", i*7919%n))
		return err
	})
}
