package e2e

import (
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

// count429 counts throttled responses on their way to the SDK's retry policy.
type count429 struct{ n *atomic.Int64 }

func (c count429) Do(req *policy.Request) (*http.Response, error) {
	resp, err := req.Next()
	// As the service does, a 429 reports a small charge for refusing the request.
	if err == nil && resp.StatusCode == http.StatusTooManyRequests && resp.Header.Get("x-ms-retry-after-ms") != "" &&
		resp.Header.Get("x-ms-substatus") == "3200" && resp.Header.Get("x-ms-request-charge") == "0.38" {
		c.n.Add(1)
	}
	return resp, err
}

// A 400 RU/s container under load answers some requests 429 with a retry-after; the SDK's
// retries then complete every request.
func TestGoSDKRetriesThrottledRequests(t *testing.T) {
	s := startServer(t, false)
	var throttled atomic.Int64
	cred, _ := azcosmos.NewKeyCredential(emulatorKey)
	client, err := azcosmos.NewClientWithKey(s.Endpoint, cred, &azcosmos.ClientOptions{ClientOptions: azcore.ClientOptions{
		Transport:        s.client,
		PerRetryPolicies: []policy.Policy{count429{&throttled}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctx(t)
	client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "db"}, nil)
	db, _ := client.NewDatabase("db")
	tp := azcosmos.NewManualThroughputProperties(400)
	if _, err := db.CreateContainer(ctx, azcosmos.ContainerProperties{ID: "c",
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}, Version: 2}},
		&azcosmos.CreateContainerOptions{ThroughputProperties: &tp}); err != nil {
		t.Fatal(err)
	}
	c, _ := db.NewContainer("c")
	var wg sync.WaitGroup
	var failures atomic.Int64
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 25 {
				pk := fmt.Sprintf("p%d", i%5)
				body := []byte(fmt.Sprintf(`{"id":"w%d-%d","pk":%q}`, w, i, pk))
				if _, err := c.CreateItem(ctx, azcosmos.NewPartitionKeyString(pk), body, nil); err != nil {
					t.Error(err)
					failures.Add(1)
					return
				}
			}
		}()
	}
	wg.Wait()
	if failures.Load() > 0 {
		t.Fatal("requests failed despite the SDK's retries")
	}
	if throttled.Load() == 0 {
		t.Fatal("200 creates at 5.5 RU each on a 400 RU/s container were never throttled")
	}
	pager := c.NewQueryItemsPager("SELECT VALUE COUNT(1) FROM c", azcosmos.NewPartitionKey(), nil)
	page, err := pager.NextPage(ctx)
	if err != nil || len(page.Items) != 1 || string(page.Items[0]) != "200" {
		t.Fatalf("count after the load: %v %v", page.Items, err)
	}
	t.Logf("%d responses were 429 and retried", throttled.Load())
}
