package e2e

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

// A container whose partitions split as it grows keeps answering point reads, ReadMany and
// queries exactly, during and after the splits, through the Go SDK.
func TestGoSDKDuringSplits(t *testing.T) {
	s, c := splittingContainer(t)
	ctx := ctx(t)
	pad := strings.Repeat("x", 900)
	const n = 5000
	pkOf := func(i int) string { return fmt.Sprintf("k%d", i%200) }
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 8 {
				body := fmt.Sprintf(`{"id":"%d","pk":%q,"n":%d,"pad":%q}`, i, pkOf(i), i, pad)
				if _, err := c.CreateItem(ctx, azcosmos.NewPartitionKeyString(pkOf(i)), []byte(body), nil); err != nil {
					t.Error(err)
					return
				}
				if i%500 == 0 { // queries while splits happen
					if got := countQuery(t, c, "SELECT VALUE COUNT(1) FROM c WHERE c.n = @n", i); got != 1 {
						t.Errorf("item %d counted %d times during splits", i, got)
					}
				}
			}
		}()
	}
	wg.Wait()
	time.Sleep(500 * time.Millisecond) // let the last background split finish

	rc := rawClient{s: s, key: emulatorKey, now: time.Now}
	_, _, b := rc.do(t, "GET", "/dbs/db/colls/c/pkranges", nil, nil)
	var ranges struct {
		PartitionKeyRanges []struct {
			ID      string   `json:"id"`
			Parents []string `json:"parents"`
		}
	}
	json.Unmarshal(b, &ranges)
	if len(ranges.PartitionKeyRanges) < 4 {
		t.Fatalf("%d ranges after ~5 MB with a 1 MB split size: %s", len(ranges.PartitionKeyRanges), b)
	}
	for _, r := range ranges.PartitionKeyRanges {
		if len(r.Parents) == 0 {
			t.Fatalf("range %s has no parents after splits", r.ID)
		}
	}

	// ReadMany addresses ranges by id from the SDK's own copy of the ranges.
	var items []azcosmos.ItemIdentity
	var want []string
	for i := 0; i < n; i += 97 {
		items = append(items, azcosmos.ItemIdentity{ID: fmt.Sprint(i), PartitionKey: azcosmos.NewPartitionKeyString(pkOf(i))})
		want = append(want, fmt.Sprint(i))
	}
	rm, err := c.ReadManyItems(ctx, items, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range rm.Items {
		var v struct{ ID string }
		json.Unmarshal(it, &v)
		got = append(got, v.ID)
	}
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("ReadMany after splits found %d of %d items", len(got), len(want))
	}

	// A single-partition query and a cross-partition ORDER BY in small pages.
	one := runQuery[struct{ ID string }](t, c, azcosmos.NewPartitionKeyString("k7"), "SELECT c.id FROM c", 5)
	if len(one) != n/200 {
		t.Fatalf("k7 holds %d items, want %d", len(one), n/200)
	}
	ordered := runQuery[struct{ N int }](t, c, azcosmos.NewPartitionKey(), "SELECT c.n FROM c ORDER BY c.n DESC", 250)
	if len(ordered) != n {
		t.Fatalf("ORDER BY returned %d items, want %d", len(ordered), n)
	}
	for i, o := range ordered {
		if o.N != n-1-i {
			t.Fatalf("ORDER BY position %d holds %d", i, o.N)
		}
	}
}

// splittingContainer starts a server whose partitions split at 1 MiB, without rate limits,
// and creates the container db/c on it, keyed by /pk.
func splittingContainer(t *testing.T) (*server, *azcosmos.ContainerClient) {
	s := startServer(t, false, "--partition-max-bytes", "1048576", "--rate-limit=false")
	ctx := ctx(t)
	client := s.sdk(t)
	client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "db"}, nil)
	db, _ := client.NewDatabase("db")
	if _, err := db.CreateContainer(ctx, azcosmos.ContainerProperties{ID: "c",
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}, Version: 2}}, nil); err != nil {
		t.Fatal(err)
	}
	c, _ := db.NewContainer("c")
	return s, c
}

func countQuery(t *testing.T, c *azcosmos.ContainerClient, sql string, n int) int {
	t.Helper()
	pager := c.NewQueryItemsPager(sql, azcosmos.NewPartitionKey(), &azcosmos.QueryOptions{
		QueryParameters: []azcosmos.QueryParameter{{Name: "@n", Value: n}}})
	page, err := pager.NextPage(ctx(t))
	if err != nil || len(page.Items) != 1 {
		t.Errorf("count query: %v %v", page.Items, err)
		return -1
	}
	var v int
	json.Unmarshal(page.Items[0], &v)
	return v
}
