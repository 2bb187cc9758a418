package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

// A partition's budget is the partition's, whichever replica serves: point reads of a 400 RU/s
// container of one partition, at Session through one node and at Eventual through the two
// others, each node at 250 reads a second (within the budget on its own, nearly twice it
// together), are answered 429 (each replica with a budget of its own would never refuse
// one), and the request units charged for the reads that succeed stay within the budget in
// every second, give or take a tolerance. Then every node describes the partition with the
// same figures, those of all its replicas: the partitions view, /metrics and
// x-ms-resource-usage.
func TestClusterPartitionBudgetAcrossReplicas(t *testing.T) {
	nodes := startClusterOf(t, 3)
	retrying(t, "the cluster's version shares budgets", func() error {
		for i, n := range nodes {
			if v := clusterStatusOf(t, n.server).ClusterVersion; v < 2 {
				return fmt.Errorf("node %d reads the cluster's version as v%d", i+1, v)
			}
		}
		return nil
	})
	createDBAndContainer(t, nodes[0].sdk(t), nodes[0].sdk(t), budgetRU)
	var throttled atomic.Int64
	cs := make([]*azcosmos.ContainerClient, len(nodes))
	for i, n := range nodes {
		cs[i] = budgetClient(t, n.server, &throttled)
	}
	pk := azcosmos.NewPartitionKeyString("p")
	retrying(t, "the item written", func() error {
		_, err := cs[0].UpsertItem(ctx(t), pk, []byte(`{"id":"x","pk":"p"}`), nil)
		return err
	})
	for i, c := range cs {
		retrying(t, fmt.Sprintf("the item read through node %d", i+1), func() error {
			_, err := c.ReadItem(ctx(t), pk, "x", &azcosmos.ItemOptions{ConsistencyLevel: azcosmos.ConsistencyLevelEventual.ToPtr()})
			return err
		})
	}
	throttled.Store(0)

	r := spreadReads(t, cs, &throttled, 250, 8*time.Second)
	t.Logf("%d reads a second offered through each of 3 nodes to a %d RU/s partition for %v: %s", 250, budgetRU, 8*time.Second, r)
	if r.thrott == 0 {
		t.Fatalf("reads nearly twice the partition's budget, spread over its replicas, were never throttled: %s", r)
	}
	for _, s := range r.seconds {
		if s.ru > budgetRU*budgetTolerance {
			t.Fatalf("second %d: %.0f RU charged for the reads that succeeded, over the %d RU/s budget (and %.0f%%): %s",
				s.at, s.ru, budgetRU, 100*(budgetTolerance-1), r)
		}
	}
	if r.mean > budgetRU*meanTolerance {
		t.Fatalf("the replicas served %.0f RU/s together, over the %d RU/s budget (and %.0f%%): %s", r.mean, budgetRU, 100*(meanTolerance-1), r)
	}
	if r.mean < budgetRU/3 {
		t.Fatalf("the replicas served %.0f RU/s of the %d they may spend together: %s", r.mean, budgetRU, r)
	}

	// Every node describes the partition alike, with every replica's request units (more
	// than the clients of any one node were charged).
	retrying(t, "the same figures through every node", func() error {
		var first partitionFigures
		for i, n := range nodes {
			f, err := figuresThrough(t, n.server)
			if err != nil {
				return fmt.Errorf("node %d: %w", i+1, err)
			}
			if f.items != 1 || f.ruTotal < 0.9*r.total || f.throttled == 0 {
				return fmt.Errorf("node %d describes the partition as %+v, with %.0f RU charged for reads through all nodes", i+1, f, r.total)
			}
			if i == 0 {
				first = f
			} else if !f.same(first) {
				return fmt.Errorf("node %d describes the partition as %+v, node 1 as %+v", i+1, f, first)
			}
		}
		return nil
	})
}

// budgetRU is the container's throughput in TestClusterPartitionBudgetAcrossReplicas (one
// partition); budgetTolerance is how far over it a second's charges may be seen by the
// clients, and meanTolerance the run's mean. A request admitted just before a second ends is
// answered, and counted, in the next, and one that crosses its replica's limit still
// completes; on a busy machine a client paused for a moment counts a burst of answers in one
// second. Both bounds are under what a budget per replica let through (a mean of 470 RU/s and
// a second of 750 in the same run, docs/benchmarks.md).
const (
	budgetRU        = 400
	budgetTolerance = 1.5
	meanTolerance   = 1.1
)

// budgetClient is a client of container "c" of database "db" through s that counts the 429s
// it receives (its retries included), and retries them as the other SDKs do by default (up
// to nine times).
func budgetClient(t *testing.T, s *server, throttled *atomic.Int64) *azcosmos.ContainerClient {
	t.Helper()
	c, err := s.sdkWith(t, azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: 9},
		PerRetryPolicies: []policy.Policy{count429{throttled}}}).NewContainer("db", "c")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// spreadResult is what spreadReads measured.
type spreadResult struct {
	seconds []chargedSecond // the whole seconds of the run, in order
	// total is the RU charged for the reads that succeeded, mean that over the whole seconds'
	// count; ok, refused and throttled count reads that succeeded, that failed after the
	// SDK's retries, and the 429 answers seen.
	total, mean, peak   float64
	ok, refused, thrott int64
}

// chargedSecond is the RU charged in one second (Unix time) for the reads that succeeded.
type chargedSecond struct {
	at int64
	ru float64
}

func (r spreadResult) String() string {
	rate := float64(r.thrott) / float64(max(1, r.ok+r.thrott))
	return fmt.Sprintf("%.0f RU/s charged on average (%.0f in the busiest second) for %d reads; %d answers 429 (%.0f%% of the answers), %d reads refused after the SDK's retries",
		r.mean, r.peak, r.ok, r.thrott, 100*rate, r.refused)
}

// spreadReads reads item "x" through each client, perRate times a second each (16 readers a
// client: a reader waiting out a 429 leaves the others reading), the first at Session, the
// others at Eventual, for d; throttled counts the clients' 429s.
func spreadReads(t *testing.T, cs []*azcosmos.ContainerClient, throttled *atomic.Int64, perRate int, d time.Duration) spreadResult {
	t.Helper()
	var mu sync.Mutex
	charged := map[int64]float64{}
	var r spreadResult
	cx := ctx(t)
	before := throttled.Load()
	start := time.Now()
	stop := start.Add(d)
	var wg sync.WaitGroup
	var failed error
	for i, c := range cs {
		level := azcosmos.ConsistencyLevelEventual
		if i == 0 {
			level = azcosmos.ConsistencyLevelSession
		}
		opts := &azcosmos.ItemOptions{ConsistencyLevel: level.ToPtr()}
		tokens := make(chan struct{}, 16)
		wg.Go(func() {
			tick := time.NewTicker(time.Second / time.Duration(perRate))
			defer tick.Stop()
			defer close(tokens)
			for now := range tick.C {
				if now.After(stop) {
					return
				}
				select {
				case tokens <- struct{}{}:
				default: // every reader is busy: the offered rate is not kept up
				}
			}
		})
		for range 16 {
			wg.Go(func() {
				for range tokens {
					resp, err := c.ReadItem(cx, azcosmos.NewPartitionKeyString("p"), "x", opts)
					at := time.Now().Unix()
					mu.Lock()
					switch {
					case err == nil:
						charged[at] += float64(resp.RequestCharge)
						r.ok++
					case statusOf(err) == 429:
						r.refused++
					default:
						failed = errors.Join(failed, err)
					}
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	if failed != nil {
		t.Fatalf("reads failed: %v", failed)
	}
	r.thrott = throttled.Load() - before
	for at, ru := range charged {
		r.total += ru
		// Only the whole seconds of the run: the first and last are partial.
		if at > start.Unix() && at < stop.Unix() {
			r.seconds = append(r.seconds, chargedSecond{at: at, ru: ru})
		}
	}
	sort.Slice(r.seconds, func(i, j int) bool { return r.seconds[i].at < r.seconds[j].at })
	for _, s := range r.seconds {
		r.mean += s.ru / float64(len(r.seconds))
		r.peak = math.Max(r.peak, s.ru)
	}
	return r
}

// partitionFigures are what a node says of the container's one partition.
type partitionFigures struct {
	items, bytes, throttled int64
	ruTotal                 float64
	// metricsItems and metricsRU are the same from /metrics; usage is x-ms-resource-usage.
	metricsItems, metricsRU float64
	usage                   string
}

// same reports whether f and o agree; the request units added up in another order may
// differ in the last digits.
func (f partitionFigures) same(o partitionFigures) bool {
	near := func(a, b float64) bool { return math.Abs(a-b) < 0.01 }
	return f.items == o.items && f.bytes == o.bytes && f.throttled == o.throttled && near(f.ruTotal, o.ruTotal) &&
		f.metricsItems == o.metricsItems && near(f.metricsRU, o.metricsRU) && f.usage == o.usage
}

// figuresThrough reads the container's one partition's figures through s: the partitions
// view, /metrics and the usage header of a read of the container.
func figuresThrough(t *testing.T, s *server) (partitionFigures, error) {
	c := rawClient{s: s, key: emulatorKey, now: time.Now}
	code, _, b := c.do(t, "GET", "/dbs/db/colls/c/partitions", nil, nil)
	var view struct {
		Partitions []struct {
			Items     int64   `json:"items"`
			Bytes     int64   `json:"bytes"`
			RUTotal   float64 `json:"ruTotal"`
			Throttled int64   `json:"throttled"`
		} `json:"partitions"`
	}
	if code != 200 || json.Unmarshal(b, &view) != nil || len(view.Partitions) != 1 {
		return partitionFigures{}, fmt.Errorf("the partitions view: %d %s", code, b)
	}
	p := view.Partitions[0]
	f := partitionFigures{items: p.Items, bytes: p.Bytes, ruTotal: p.RUTotal, throttled: p.Throttled}
	labels := `{container="c",database="db",partition="0"}`
	f.metricsItems = metricValue(t, s, "partita_partition_items"+labels)
	f.metricsRU = metricValue(t, s, "partita_partition_ru_total"+labels)
	if f.metricsItems != float64(f.items) || math.Abs(f.metricsRU-f.ruTotal) > 0.01 {
		return f, fmt.Errorf("/metrics says %v items and %v RU, the partitions view %d and %v", f.metricsItems, f.metricsRU, f.items, f.ruTotal)
	}
	code, hdr, b := c.do(t, "GET", "/dbs/db/colls/c", nil, nil)
	if code != 200 {
		return f, fmt.Errorf("reading the container: %d %s", code, b)
	}
	f.usage = hdr.Get("x-ms-resource-usage")
	return f, nil
}
