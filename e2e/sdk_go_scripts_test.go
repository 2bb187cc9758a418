package e2e

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

// Server-side JavaScript with the Go SDK. azcosmos v1.5.0 has no API for stored procedures,
// triggers or UDFs as resources, nor for executing a procedure, so those go through signed REST
// requests; its ItemOptions name triggers (PreTriggers, PostTriggers) and its queries may call
// UDFs. The requests here are the REST examples of docs/server-side.md.
func TestGoSDKScripts(t *testing.T) {
	forEachTransport(t, func(t *testing.T, s *server) {
		orders := newOrders(t, s) // /customer, 20000 RU/s: 4 physical partitions
		raw := rawClient{s: s, key: emulatorKey, now: time.Now}
		ctx := ctx(t)
		const coll = "/dbs/shop/colls/orders"
		jsonHeaders := map[string]string{"Content-Type": "application/json"}

		create := func(kind string, def map[string]string) {
			t.Helper()
			code, _, b := raw.do(t, "POST", coll+"/"+kind, marshal(t, def), jsonHeaders)
			if code != http.StatusCreated {
				t.Fatalf("create %s %s: %d %s", kind, def["id"], code, b)
			}
			var got map[string]any
			if err := json.Unmarshal(b, &got); err != nil || got["id"] != def["id"] || got["body"] != def["body"] || got["_etag"] == nil {
				t.Fatalf("created %s: %s", kind, b)
			}
		}
		create("triggers", map[string]string{"id": "stampCreatedAt", "triggerType": "Pre", "triggerOperation": "Create",
			"body": `function stampCreatedAt() {
	var request = getContext().getRequest();
	var item = request.getBody();
	if (!("createdAt" in item)) item.createdAt = Date.now();
	request.setBody(item);
}`})
		create("triggers", map[string]string{"id": "refuseLargeOrders", "triggerType": "Post", "triggerOperation": "All",
			"body": `function refuseLargeOrders() {
	var order = getContext().getResponse().getBody();
	if (order.total > 1000) throw new Error("order " + order.id + " is over the limit");
}`})
		create("udfs", map[string]string{"id": "withTax",
			"body": `function withTax(total) { return Math.round(total * 108) / 100; }`})
		// Its query sees the orders it created: they commit together when it returns.
		create("sprocs", map[string]string{"id": "placeOrders",
			"body": `function placeOrders(customer, totals) {
	var collection = getContext().getCollection();
	totals.forEach(function (total, i) {
		collection.createDocument(collection.getSelfLink(), { id: customer + "-" + i, customer: customer, total: total });
	});
	collection.queryDocuments(collection.getSelfLink(), "SELECT VALUE SUM(c.total) FROM c", function (err, sums) {
		if (err) throw err;
		console.log("placed " + totals.length + " orders for " + customer);
		getContext().getResponse().setBody({ placed: totals.length, total: sums[0] });
	});
}`})

		// A pre-trigger through the SDK: the stored item carries the server's timestamp.
		alice := azcosmos.NewPartitionKeyString("alice")
		before := time.Now().UnixMilli()
		created, err := orders.CreateItem(ctx, alice, []byte(`{"id":"o1","customer":"alice","total":40}`),
			&azcosmos.ItemOptions{PreTriggers: []string{"stampCreatedAt"}, EnableContentResponseOnWrite: true})
		if err != nil {
			t.Fatal(err)
		}
		after := time.Now().UnixMilli()
		var stamped struct {
			CreatedAt int64   `json:"createdAt"`
			Total     float64 `json:"total"`
		}
		if err := json.Unmarshal(created.Value, &stamped); err != nil || stamped.CreatedAt < before-1000 || stamped.CreatedAt > after+1000 {
			t.Fatalf("created item %s: createdAt outside [%d, %d] (%v)", created.Value, before, after, err)
		}
		read, err := orders.ReadItem(ctx, alice, "o1", nil)
		if err != nil {
			t.Fatal(err)
		}
		var stored struct {
			CreatedAt int64 `json:"createdAt"`
		}
		if err := json.Unmarshal(read.Value, &stored); err != nil || stored.CreatedAt != stamped.CreatedAt {
			t.Fatalf("stored item %s, want createdAt %d", read.Value, stamped.CreatedAt)
		}

		// A post-trigger that throws fails the SDK's CreateItem with 400, and the item is not kept.
		_, err = orders.CreateItem(ctx, alice, []byte(`{"id":"o2","customer":"alice","total":5000}`),
			&azcosmos.ItemOptions{PostTriggers: []string{"refuseLargeOrders"}})
		if statusOf(err) != http.StatusBadRequest {
			t.Fatalf("a throwing post-trigger: %v, want 400", err)
		}
		if _, err := orders.ReadItem(ctx, alice, "o2", nil); statusOf(err) != http.StatusNotFound {
			t.Fatalf("the refused item: %v, want 404", err)
		}
		if _, err := orders.CreateItem(ctx, alice, []byte(`{"id":"o3","customer":"alice","total":500}`),
			&azcosmos.ItemOptions{PostTriggers: []string{"refuseLargeOrders"}}); err != nil {
			t.Fatalf("an order the post-trigger accepts: %v", err)
		}

		// Execute the procedure: POST on its path, the arguments as a JSON array, the partition
		// key in its header.
		code, h, b := raw.do(t, "POST", coll+"/sprocs/placeOrders", []byte(`["bob", [10, 20, 30.5]]`), map[string]string{
			"Content-Type":                          "application/json",
			"x-ms-documentdb-partitionkey":          `["bob"]`,
			"x-ms-documentdb-script-enable-logging": "true",
		})
		if code != http.StatusOK || string(b) != `{"placed":3,"total":60.5}` {
			t.Fatalf("execute: %d %s", code, b)
		}
		if charge, err := strconv.ParseFloat(h.Get("x-ms-request-charge"), 64); err != nil || charge <= 0 {
			t.Fatalf("execute charge %q", h.Get("x-ms-request-charge"))
		}
		if log, err := url.PathUnescape(h.Get("x-ms-documentdb-script-log-results")); err != nil || log != "placed 3 orders for bob" {
			t.Fatalf("script log %q (%v)", h.Get("x-ms-documentdb-script-log-results"), err)
		}
		// A procedure's writes must stay in the partition key it runs for.
		code, _, b = raw.do(t, "POST", coll+"/sprocs/placeOrders", []byte(`["carol", [1]]`), map[string]string{
			"Content-Type": "application/json", "x-ms-documentdb-partitionkey": `["bob"]`,
		})
		if code != http.StatusBadRequest || cosmosError(t, b) != "Requests originating from scripts cannot reference partition keys other than the one for which client request was submitted." {
			t.Fatalf("a write to another partition key: %d %s", code, b)
		}

		// UDFs in the SDK's queries, cross-partition and in one partition.
		type gross struct {
			ID    string  `json:"id"`
			Gross float64 `json:"gross"`
		}
		all := runQuery[gross](t, orders, azcosmos.NewPartitionKey(),
			"SELECT c.id, udf.withTax(c.total) AS gross FROM c WHERE udf.withTax(c.total) > 25 ORDER BY c.total DESC", 2)
		want := []gross{{"o3", 540}, {"o1", 43.2}, {"bob-2", 32.94}}
		if len(all) != len(want) {
			t.Fatalf("cross-partition UDF query: %+v, want %+v", all, want)
		}
		for i := range want {
			if all[i] != want[i] {
				t.Fatalf("cross-partition UDF query: %+v, want %+v", all, want)
			}
		}
		bobs := runQuery[float64](t, orders, azcosmos.NewPartitionKeyString("bob"),
			"SELECT VALUE udf.withTax(c.total) FROM c WHERE c.total >= @min ORDER BY c.total", 0,
			azcosmos.QueryParameter{Name: "@min", Value: 20})
		if len(bobs) != 2 || bobs[0] != 21.6 || bobs[1] != 32.94 {
			t.Fatalf("single-partition UDF query: %v", bobs)
		}
		pager := orders.NewQueryItemsPager("SELECT VALUE udf.noSuchFunction(c.total) FROM c", alice, nil)
		if _, err := pager.NextPage(ctx); statusOf(err) != http.StatusBadRequest {
			t.Fatalf("an unknown UDF: %v, want 400", err)
		}
	})
}
