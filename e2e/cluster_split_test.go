package e2e

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

// Splits in a three-process cluster, with the Go SDK: a container grows past the split size
// while clients write through every node, and its throughput is raised through another node.
// Every node lists the same partition key ranges (parents included), every acknowledged item
// is read through every node, and a cross-partition query counts them all.
func TestClusterSplitsProcesses(t *testing.T) {
	nodes := startClusterOf(t, 3, func(int) []string { return []string{"--partition-max-bytes", "1048576", "--rate-limit=false"} })
	cx := ctx(t)
	createDBAndContainer(t, nodes[0].sdk(t), nodes[0].sdk(t), 400) // one partition
	container := func(n int) *azcosmos.ContainerClient {
		c, err := nodes[n].sdk(t).NewContainer("db", "c")
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	pad := strings.Repeat("x", 900)
	const n = 2400
	pkOf := func(i int) string { return fmt.Sprint("k", i%300) }
	// The writers stop when the test does, failed or not: none outlives it.
	var wg sync.WaitGroup
	defer wg.Wait()
	var stop atomic.Bool
	defer stop.Store(true)
	for w := range 6 {
		c := container(w % 3)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n && !stop.Load(); i += 6 {
				body := fmt.Sprintf(`{"id":"%d","pk":%q,"pad":%q}`, i, pkOf(i), pad)
				err := retry(fmt.Sprint("create ", i), func() error {
					_, err := c.CreateItem(cx, azcosmos.NewPartitionKeyString(pkOf(i)), []byte(body), nil)
					if statusOf(err) == 409 {
						return nil
					}
					return err
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	// Meanwhile, the throughput is raised through another node: 30,000 RU/s needs three
	// partitions at least.
	time.Sleep(time.Second)
	tp := azcosmos.NewManualThroughputProperties(30000)
	if _, err := container(2).ReplaceThroughput(cx, tp, nil); err != nil {
		t.Fatal(err)
	}
	wg.Wait()

	type pkrange struct {
		ID      string   `json:"id"`
		Min     string   `json:"minInclusive"`
		Max     string   `json:"maxExclusive"`
		Parents []string `json:"parents"`
	}
	var first []pkrange
	retrying(t, "the same ranges on every node", func() error {
		for i, nd := range nodes {
			rc := rawClient{s: nd.server, key: emulatorKey, now: time.Now}
			_, _, b := rc.do(t, "GET", "/dbs/db/colls/c/pkranges", nil, nil)
			var ranges struct{ PartitionKeyRanges []pkrange }
			if err := json.Unmarshal(b, &ranges); err != nil {
				return err
			}
			got := ranges.PartitionKeyRanges
			if len(got) < 4 {
				return fmt.Errorf("node %d lists %d ranges", i+1, len(got))
			}
			if i == 0 {
				first = got
			} else if !slices.EqualFunc(first, got, func(a, b pkrange) bool {
				return a.ID == b.ID && a.Min == b.Min && a.Max == b.Max && slices.Equal(a.Parents, b.Parents)
			}) {
				return fmt.Errorf("node %d lists %v, node 1 %v", i+1, got, first)
			}
		}
		return nil
	})
	for _, r := range first {
		if len(r.Parents) == 0 {
			t.Fatalf("range %s has no parents after splits: %v", r.ID, first)
		}
	}
	t.Logf("%d partition key ranges after %d items of 1 KB with a 1 MiB split size and 30,000 RU/s", len(first), n)
	for nd := range nodes {
		c := container(nd)
		for i := range n {
			if _, err := c.ReadItem(cx, azcosmos.NewPartitionKeyString(pkOf(i)), fmt.Sprint(i), nil); err != nil {
				t.Fatalf("node %d reads item %d: %v", nd+1, i, err)
			}
		}
		if got := countAll(t, c); got != n {
			t.Fatalf("node %d counts %d items, want %d", nd+1, got, n)
		}
	}
}

// countAll counts the container's items with a cross-partition query.
func countAll(t *testing.T, c *azcosmos.ContainerClient) int {
	t.Helper()
	pager := c.NewQueryItemsPager("SELECT VALUE COUNT(1) FROM c", azcosmos.NewPartitionKey(), nil)
	total := 0
	for pager.More() {
		page, err := pager.NextPage(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Items {
			var n int
			json.Unmarshal(it, &n)
			total += n
		}
	}
	return total
}
