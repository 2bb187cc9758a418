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
	"github.com/partita-db/partita/internal/query"
	"github.com/partita-db/partita/internal/value"
)

// BenchmarkCostAgainstSize measures each operation on containers of growing size, so that a
// cost that grows with the container (rather than with the work asked for) shows as a growing
// time per operation. Every container holds, besides its bulk of 1 KB items over 1,000 logical
// partitions, one logical partition "hot" of 100 items that the logical-partition operations
// read; time to live is on (a day, so nothing expires) and the all-versions change feed kept.
//
// Sizes are 10,000 and 100,000 items, and also 1,000,000 with PARTITA_BENCH_SIZES (a list,
// e.g. "10000,100000,1000000"). Writes run on 16 goroutines, as a server's clients would, so
// that their syncs are shared and the time per write is the writes' work, not the disk's.
//
//	go test ./internal/engine -run XXX -bench CostAgainstSize -benchtime 2000x
func BenchmarkCostAgainstSize(b *testing.B) {
	sizes := []int{10_000, 100_000}
	if s := os.Getenv("PARTITA_BENCH_SIZES"); s != "" {
		sizes = nil
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(f)
			if err != nil {
				b.Fatal(err)
			}
			sizes = append(sizes, n)
		}
	}
	for _, n := range sizes {
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
	// The load's compactions are not what is measured: wait (up to two minutes) for two
	// seconds without one.
	for quiet, waited := 0, 0; quiet < 20 && waited < 1200; waited++ {
		if quiet++; e.db.Compacting() {
			quiet = 0
		}
		time.Sleep(100 * time.Millisecond)
	}
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
