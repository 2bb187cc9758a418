package e2e

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

// TestGoSDKIndexingPolicyChange replaces the indexing policy of a container holding a few
// thousand items through the Go SDK: the new policy comes back at once, the rebuild's progress
// (read as Cosmos users read it, with PopulateQuotaInfo) climbs to 100, and queries on the
// path leaving the index and on the path entering it answer exactly while writes go on.
func TestGoSDKIndexingPolicyChange(t *testing.T) {
	s := startServer(t, false)
	c := s.sdk(t)
	ctx := ctx(t)
	if _, err := c.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "db"}, nil); err != nil {
		t.Fatal(err)
	}
	db, _ := c.NewDatabase("db")
	onlyN := &azcosmos.IndexingPolicy{
		Automatic: true, IndexingMode: azcosmos.IndexingModeConsistent,
		IncludedPaths: []azcosmos.IncludedPath{{Path: "/n/?"}},
		ExcludedPaths: []azcosmos.ExcludedPath{{Path: "/*"}},
	}
	tp := azcosmos.NewManualThroughputProperties(12000) // two physical partitions
	if _, err := db.CreateContainer(ctx, azcosmos.ContainerProperties{ID: "items",
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}, Version: 2},
		IndexingPolicy:         onlyN}, &azcosmos.CreateContainerOptions{ThroughputProperties: &tp}); err != nil {
		t.Fatal(err)
	}
	items, _ := db.NewContainer("items")

	const n = 3000
	upsert := func(ctx context.Context, i, shift int) error {
		body := fmt.Sprintf(`{"id":"d%d","pk":"k%d","n":%d,"tag":"t%d"}`, i, i%50, i+shift, i%5)
		_, err := items.UpsertItem(ctx, azcosmos.NewPartitionKeyString(fmt.Sprintf("k%d", i%50)), []byte(body), nil)
		return err
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 16 {
				if err := upsert(ctx, i, 0); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}

	progress := func() int {
		t.Helper()
		resp, err := items.Read(ctx, &azcosmos.ReadContainerOptions{PopulateQuotaInfo: true})
		if err != nil {
			t.Fatal(err)
		}
		h := resp.RawResponse.Header.Get("x-ms-documentdb-collection-index-transformation-progress")
		p, err := strconv.Atoi(h)
		if err != nil || p < 0 || p > 100 {
			t.Fatalf("index transformation progress %q", h)
		}
		return p
	}
	all := azcosmos.NewPartitionKey()
	check := func(when string) {
		t.Helper()
		// Each tag is on a fifth of the items; n keeps its value for items the writer below
		// leaves alone (ids from 1000 on).
		if got := runQuery[int](t, items, all, `SELECT VALUE COUNT(1) FROM c WHERE c.tag = "t1"`, 0); len(got) != 1 || got[0] != n/5 {
			t.Fatalf("%s: count of tag t1 = %v, want %d", when, got, n/5)
		}
		if got := runQuery[string](t, items, all, "SELECT VALUE c.id FROM c WHERE c.n >= 2000 AND c.n < 2100", 0); len(got) != 100 {
			t.Fatalf("%s: %d items with n in [2000, 2100), want 100", when, len(got))
		}
		// ORDER BY c.n would be refused once the new policy excludes /n, as Cosmos refuses it;
		// the id is always ordered.
		if got := runQuery[int](t, items, all, "SELECT TOP 3 VALUE c.n FROM c WHERE c.n >= 2990 AND c.n < 3000 ORDER BY c.id DESC", 0); fmt.Sprint(got) != "[2999 2998 2997]" {
			t.Fatalf("%s: top n %v", when, got)
		}
	}
	if p := progress(); p != 100 {
		t.Fatalf("progress before any change: %d", p)
	}
	check("before the change")

	// The new policy: /tag enters the index, /n leaves it.
	props := (func() azcosmos.ContainerProperties {
		r, err := items.Read(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		return *r.ContainerProperties
	})()
	props.IndexingPolicy = &azcosmos.IndexingPolicy{
		Automatic: true, IndexingMode: azcosmos.IndexingModeConsistent,
		IncludedPaths: []azcosmos.IncludedPath{{Path: "/tag/?"}},
		ExcludedPaths: []azcosmos.ExcludedPath{{Path: "/*"}},
	}
	stop := make(chan struct{})
	wg.Add(1)
	go func() { // writes go on during the rebuild: items below 1000, n shifted and back
		defer wg.Done()
		for round := 0; ; round++ {
			for i := 0; i < 1000; i += 7 {
				select {
				case <-stop:
					return
				default:
				}
				if err := upsert(ctx, i, 10000*(round%2)); err != nil {
					errs <- err
					return
				}
			}
		}
	}()
	resp, err := items.Replace(ctx, props, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.ContainerProperties.IndexingPolicy; got == nil || len(got.IncludedPaths) != 1 || got.IncludedPaths[0].Path != "/tag/?" {
		t.Fatalf("replace returned the policy %+v", got)
	}
	var seen []int
	deadline := time.Now().Add(time.Minute)
	for {
		p := progress()
		if len(seen) == 0 || seen[len(seen)-1] != p {
			seen = append(seen, p)
		}
		check(fmt.Sprintf("at progress %d", p))
		if p == 100 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the rebuild did not finish within a minute; progress went %v", seen)
		}
	}
	close(stop)
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
	t.Logf("progress went %v", seen)
	check("after the rebuild")
	r, err := items.Read(ctx, nil)
	if err != nil || r.ContainerProperties.IndexingPolicy.IncludedPaths[0].Path != "/tag/?" {
		t.Fatalf("read after the rebuild: %v", err)
	}
}
