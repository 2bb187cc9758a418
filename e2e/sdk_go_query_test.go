package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

// loadOrders fills the orders container with n orders over 20 customers.
func loadOrders(t *testing.T, orders *azcosmos.ContainerClient, n int) {
	t.Helper()
	ctx := ctx(t)
	for i := range n {
		cust := fmt.Sprintf("cust%02d", i%20)
		body := marshal(t, order{ID: fmt.Sprintf("o%03d", i), Customer: cust, Total: float64((i * 37) % 101)})
		if _, err := orders.CreateItem(ctx, azcosmos.NewPartitionKeyString(cust), body, nil); err != nil {
			t.Fatal(err)
		}
	}
}

func queryAll[T any](t *testing.T, pager interface {
	More() bool
}, next func() ([][]byte, error)) []T {
	t.Helper()
	var out []T
	for pager.More() {
		items, err := next()
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range items {
			var v T
			if err := json.Unmarshal(b, &v); err != nil {
				t.Fatalf("result %s: %v", b, err)
			}
			out = append(out, v)
		}
	}
	return out
}

func runQuery[T any](t *testing.T, c *azcosmos.ContainerClient, pk azcosmos.PartitionKey, sql string, pageSize int32, params ...azcosmos.QueryParameter) []T {
	t.Helper()
	pager := c.NewQueryItemsPager(sql, pk, &azcosmos.QueryOptions{PageSizeHint: pageSize, QueryParameters: params})
	ctx := ctx(t)
	pages := 0
	out := queryAll[T](t, pager, func() ([][]byte, error) {
		pages++
		resp, err := pager.NextPage(ctx)
		if err == nil && resp.RequestCharge <= 0 {
			t.Errorf("query page without a request charge")
		}
		if err == nil && pageSize > 0 && len(resp.Items) > int(pageSize) {
			t.Errorf("page of %d items with a page size of %d", len(resp.Items), pageSize)
		}
		return resp.Items, err
	})
	return out
}

func TestGoSDKQueries(t *testing.T) {
	s := startServer(t, false)
	orders := newOrders(t, s) // 20,000 RU/s: 4 physical partitions
	loadOrders(t, orders, 120)
	all := azcosmos.NewPartitionKey()

	// Single partition, with a parameter.
	mine := runQuery[order](t, orders, azcosmos.NewPartitionKeyString("cust03"), "SELECT * FROM c WHERE c.total >= @min", 2,
		azcosmos.QueryParameter{Name: "@min", Value: 0})
	if len(mine) != 6 {
		t.Fatalf("cust03 has %d orders, want 6", len(mine))
	}
	for _, o := range mine {
		if o.Customer != "cust03" {
			t.Fatalf("single-partition query returned %+v", o)
		}
	}

	// Cross-partition ORDER BY in small pages: every item once, in order.
	sorted := runQuery[order](t, orders, all, "SELECT c.id, c.total FROM c ORDER BY c.total DESC, c.id", 7)
	if len(sorted) != 120 {
		t.Fatalf("ORDER BY returned %d items, want 120", len(sorted))
	}
	ids := map[string]bool{}
	for i, o := range sorted {
		ids[o.ID] = true
		if i > 0 && (o.Total > sorted[i-1].Total || o.Total == sorted[i-1].Total && o.ID < sorted[i-1].ID) {
			t.Fatalf("out of order at %d: %+v after %+v", i, o, sorted[i-1])
		}
	}
	if len(ids) != 120 {
		t.Fatalf("ORDER BY pages repeated items: %d distinct", len(ids))
	}

	// Plain cross-partition scan in pages of 13.
	plain := runQuery[order](t, orders, all, "SELECT * FROM c", 13)
	if len(plain) != 120 {
		t.Fatalf("SELECT * returned %d items, want 120", len(plain))
	}

	// Aggregates and GROUP BY, computed on the server over all partitions.
	count := runQuery[float64](t, orders, all, "SELECT VALUE COUNT(1) FROM c", 0)
	if len(count) != 1 || count[0] != 120 {
		t.Fatalf("COUNT: %v", count)
	}
	type perCustomer struct {
		Customer string  `json:"customer"`
		N        float64 `json:"n"`
		Sum      float64 `json:"sum"`
	}
	groups := runQuery[perCustomer](t, orders, all, "SELECT c.customer, COUNT(1) AS n, SUM(c.total) AS sum FROM c GROUP BY c.customer", 0)
	if len(groups) != 20 {
		t.Fatalf("GROUP BY: %d groups, want 20", len(groups))
	}
	want := 0.0
	for i := range 120 {
		want += float64((i * 37) % 101)
	}
	got := 0.0
	for _, g := range groups {
		got += g.Sum
		if g.N != 6 {
			t.Fatalf("group %+v", g)
		}
	}
	if got != want {
		t.Fatalf("sum over groups %v, want %v", got, want)
	}
	top := runQuery[string](t, orders, all, "SELECT DISTINCT VALUE c.customer FROM c ORDER BY c.customer OFFSET 2 LIMIT 3", 2)
	if fmt.Sprint(top) != "[cust02 cust03 cust04]" {
		t.Fatalf("DISTINCT ORDER BY OFFSET LIMIT: %v", top)
	}

	// A query that does not parse is refused with 400.
	pager := orders.NewQueryItemsPager("SELECT * FROM c WHERE", all, nil)
	if _, err := pager.NextPage(ctx(t)); statusOf(err) != http.StatusBadRequest {
		t.Fatalf("bad query: %v", err)
	}
}

func TestGoSDKReadManyAndThroughput(t *testing.T) {
	s := startServer(t, true)
	orders := newOrders(t, s)
	loadOrders(t, orders, 60)
	ctx := ctx(t)
	var items []azcosmos.ItemIdentity
	for _, i := range []int{0, 7, 19, 33, 59} {
		items = append(items, azcosmos.ItemIdentity{ID: fmt.Sprintf("o%03d", i), PartitionKey: azcosmos.NewPartitionKeyString(fmt.Sprintf("cust%02d", i%20))})
	}
	items = append(items, azcosmos.ItemIdentity{ID: "missing", PartitionKey: azcosmos.NewPartitionKeyString("cust00")})
	resp, err := orders.ReadManyItems(ctx, items, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, b := range resp.Items {
		var o order
		json.Unmarshal(b, &o)
		got = append(got, o.ID)
	}
	sort.Strings(got)
	if fmt.Sprint(got) != "[o000 o007 o019 o033 o059]" {
		t.Fatalf("ReadMany found %v", got)
	}

	tp, err := orders.ReadThroughput(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := tp.ThroughputProperties.ManualThroughput(); !ok || n != 20000 {
		t.Fatalf("throughput %v %v", n, ok)
	}
	if _, err := orders.ReplaceThroughput(ctx, azcosmos.NewManualThroughputProperties(30000), nil); err != nil {
		t.Fatal(err)
	}
	tp, _ = orders.ReadThroughput(ctx, nil)
	if n, _ := tp.ThroughputProperties.ManualThroughput(); n != 30000 {
		t.Fatalf("throughput after replace: %v", n)
	}
	if _, err := orders.ReplaceThroughput(ctx, azcosmos.NewManualThroughputProperties(300), nil); statusOf(err) != http.StatusBadRequest {
		t.Fatalf("throughput below the minimum: %v", err)
	}
}
