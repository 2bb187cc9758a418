package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/gocql/gocql"
)

// BenchmarkCQL measures the Cassandra API through gocql (prepared point INSERT, point SELECT
// by the full primary key, a 100-row partition slice), serially and from many goroutines,
// side by side with the same operations on the REST API through the Go SDK, against one real
// partita serve. Figures are recorded in docs/benchmarks.md; nothing here asserts a timing.
//
//	go test -run '^$' -bench CQL -benchtime 2s ./e2e/
//
// The server runs with --rate-limit=false, so that what is measured is the server and not
// the provisioned throughput (a default 400 RU/s table would refuse most of the load), and
// without TLS, on both APIs. Allocations are the client's: the server is another process.
func BenchmarkCQL(b *testing.B) {
	s, cluster := cqlServer(b, false, "--rate-limit=false")
	sess := cqlSession(b, cluster)
	// gocql holds writes up to WriteCoalesceWaitTime (200 µs) to send several in one syscall;
	// a serial client only waits. The same session without it, for the serial runs.
	nc := *cluster
	nc.WriteCoalesceWaitTime = 0
	nc.PoolConfig.HostSelectionPolicy = gocql.TokenAwareHostPolicy(gocql.RoundRobinHostPolicy()) // a policy serves one session
	sessNC := cqlSession(b, &nc)
	cont := restBenchContainer(b, s)

	value := strings.Repeat("v", 100)
	mustExec(b, sess, `CREATE KEYSPACE bench WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`)
	mustExec(b, sess, `CREATE TABLE bench.kv (k text PRIMARY KEY, v text)`)
	mustExec(b, sess, `CREATE TABLE bench.wide (p int, c int, v text, PRIMARY KEY (p, c))`)

	// Rows the reads pick from at random, and 20 partitions of 100 rows for the slices.
	const preload, slices, sliceRows = 10000, 20, 100
	parallel(b, preload, 32, func(i int) error {
		return sess.Query(`INSERT INTO bench.kv (k, v) VALUES (?, ?)`, "r"+strconv.Itoa(i), value).Exec()
	})
	parallel(b, slices*sliceRows, 32, func(i int) error {
		return sess.Query(`INSERT INTO bench.wide (p, c, v) VALUES (?, ?, ?)`, i/sliceRows, i%sliceRows, value).Exec()
	})
	parallel(b, preload, 32, func(i int) error {
		id := "r" + strconv.Itoa(i)
		_, err := cont.UpsertItem(context.Background(), azcosmos.NewPartitionKeyString(id), restItem(id, id, value), nil)
		return err
	})
	parallel(b, slices*sliceRows, 32, func(i int) error {
		pk := "p" + strconv.Itoa(i/sliceRows)
		id := pk + "-" + strconv.Itoa(i%sliceRows)
		_, err := cont.UpsertItem(context.Background(), azcosmos.NewPartitionKeyString(pk), restItem(id, pk, value), nil)
		return err
	})

	var seq atomic.Int64 // fresh keys for the writes, across runs
	ops := []struct {
		name string
		op   func(r *rand.Rand) error
	}{
		{"insert/cql", func(*rand.Rand) error {
			return sess.Query(`INSERT INTO bench.kv (k, v) VALUES (?, ?)`, "w"+strconv.FormatInt(seq.Add(1), 10), value).Exec()
		}},
		{"insert/cql-nocoalesce", func(*rand.Rand) error {
			return sessNC.Query(`INSERT INTO bench.kv (k, v) VALUES (?, ?)`, "w"+strconv.FormatInt(seq.Add(1), 10), value).Exec()
		}},
		{"insert/rest", func(*rand.Rand) error {
			id := "w" + strconv.FormatInt(seq.Add(1), 10)
			_, err := cont.UpsertItem(context.Background(), azcosmos.NewPartitionKeyString(id), restItem(id, id, value), nil)
			return err
		}},
		{"select/cql", func(r *rand.Rand) error {
			var v string
			return sess.Query(`SELECT v FROM bench.kv WHERE k = ?`, "r"+strconv.Itoa(r.IntN(preload))).Scan(&v)
		}},
		{"select/cql-nocoalesce", func(r *rand.Rand) error {
			var v string
			return sessNC.Query(`SELECT v FROM bench.kv WHERE k = ?`, "r"+strconv.Itoa(r.IntN(preload))).Scan(&v)
		}},
		{"select/rest", func(r *rand.Rand) error {
			id := "r" + strconv.Itoa(r.IntN(preload))
			resp, err := cont.ReadItem(context.Background(), azcosmos.NewPartitionKeyString(id), id, nil)
			if err == nil && len(resp.Value) == 0 {
				err = fmt.Errorf("empty item %s", id)
			}
			return err
		}},
		{"slice100/cql", func(r *rand.Rand) error {
			iter := sess.Query(`SELECT c, v FROM bench.wide WHERE p = ?`, r.IntN(slices)).Iter()
			var c int
			var v string
			n := 0
			for iter.Scan(&c, &v) {
				n++
			}
			if err := iter.Close(); err != nil {
				return err
			}
			if n != sliceRows {
				return fmt.Errorf("slice read %d rows", n)
			}
			return nil
		}},
		{"slice100/rest", func(r *rand.Rand) error {
			pk := azcosmos.NewPartitionKeyString("p" + strconv.Itoa(r.IntN(slices)))
			pager := cont.NewQueryItemsPager("SELECT * FROM c", pk, nil)
			n := 0
			for pager.More() {
				page, err := pager.NextPage(context.Background())
				if err != nil {
					return err
				}
				n += len(page.Items)
			}
			if n != sliceRows {
				return fmt.Errorf("slice read %d items", n)
			}
			return nil
		}},
	}
	for _, o := range ops {
		for _, workers := range []int{1, 32} {
			b.Run(fmt.Sprintf("%s/workers=%d", o.name, workers), func(b *testing.B) { measure(b, workers, o.op) })
		}
	}
}

// measure runs op b.N times from workers goroutines and reports ops/s and the latency
// percentiles beside ns/op.
func measure(b *testing.B, workers int, op func(r *rand.Rand) error) {
	lat := make([]time.Duration, b.N)
	var next atomic.Int64
	var failed atomic.Value
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), uint64(b.N)))
			for {
				i := next.Add(1) - 1
				if i >= int64(b.N) {
					return
				}
				t0 := time.Now()
				if err := op(r); err != nil {
					failed.CompareAndSwap(nil, err)
					return
				}
				lat[i] = time.Since(t0)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	slices.Sort(lat)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "ops/s")
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

// parallel runs fn(0..n-1) from workers goroutines; any error fails the benchmark.
func parallel(b *testing.B, n, workers int, fn func(i int) error) {
	b.Helper()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := fn(i); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
}

// restBenchContainer creates the REST side's container, partitioned by /pk, with an HTTP
// client that keeps a connection per worker (the default keeps two and churns the rest).
func restBenchContainer(b *testing.B, s *server) *azcosmos.ContainerClient {
	cred, err := azcosmos.NewKeyCredential(emulatorKey)
	if err != nil {
		b.Fatal(err)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 128
	c, err := azcosmos.NewClientWithKey(s.Endpoint, cred, &azcosmos.ClientOptions{ClientOptions: azcore.ClientOptions{
		Transport: &http.Client{Transport: tr, Timeout: time.Minute},
		Retry:     policy.RetryOptions{MaxRetries: 2},
	}})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "restbench"}, nil); err != nil {
		b.Fatal(err)
	}
	db, err := c.NewDatabase("restbench")
	if err != nil {
		b.Fatal(err)
	}
	if _, err := db.CreateContainer(ctx, azcosmos.ContainerProperties{ID: "kv",
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}}}, nil); err != nil {
		b.Fatal(err)
	}
	cont, err := c.NewContainer("restbench", "kv")
	if err != nil {
		b.Fatal(err)
	}
	return cont
}

// restItem is the REST side's item: the same 100-byte value as the CQL row.
func restItem(id, pk, value string) []byte {
	doc, _ := json.Marshal(map[string]string{"id": id, "pk": pk, "v": value})
	return doc
}
