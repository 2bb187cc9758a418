package e2e

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

// A conditional patch (PatchOperations.SetCondition) applies when the current item passes the
// filter and is refused with 412, changing nothing, when it does not; the condition combines
// with If-Match, and works inside a transactional batch.
func TestGoSDKConditionalPatch(t *testing.T) {
	s := startServer(t, false)
	orders := newOrders(t, s)
	ctx := ctx(t)
	pk := azcosmos.NewPartitionKeyString("erin")
	created, err := orders.CreateItem(ctx, pk, []byte(`{"id":"c1","customer":"erin","stock":1,"info":{"state":"open"}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	take := func(cond string) azcosmos.PatchOperations {
		ops := azcosmos.PatchOperations{}
		ops.SetCondition(cond) // the SDK writes the condition into JSON unescaped: no double quotes
		ops.AppendIncrement("/stock", -1)
		return ops
	}
	unchanged := func(what string) {
		t.Helper()
		read, err := orders.ReadItem(ctx, pk, "c1", nil)
		if err != nil || read.ETag != created.ETag {
			t.Fatalf("%s changed the item: %s %v", what, read.Value, err)
		}
	}

	for _, cond := range []string{
		"from c where c.stock > 5",
		"FROM c WHERE c.info.state = 'closed'",
		"FROM c WHERE c.missing = 1", // undefined
	} {
		if _, err := orders.PatchItem(ctx, pk, "c1", take(cond), nil); statusOf(err) != http.StatusPreconditionFailed {
			t.Fatalf("%s: %v, want 412", cond, err)
		}
		unchanged(cond)
	}
	for _, cond := range []string{"FROM c WHERE c.stock >", "FROM c WHERE x.stock > 0", "SELECT * FROM c"} {
		if _, err := orders.PatchItem(ctx, pk, "c1", take(cond), nil); statusOf(err) != http.StatusBadRequest {
			t.Fatalf("%s: %v, want 400", cond, err)
		}
		unchanged(cond)
	}
	stale := azcore.ETag("\"00000000-0000-0000-0000-000000000000\"")
	if _, err := orders.PatchItem(ctx, pk, "c1", take("FROM c WHERE c.stock > 0"), &azcosmos.ItemOptions{IfMatchEtag: &stale}); statusOf(err) != http.StatusPreconditionFailed {
		t.Fatalf("a holding condition with a stale etag: %v", err)
	}
	unchanged("a stale etag")

	resp, err := orders.PatchItem(ctx, pk, "c1", take("FROM c WHERE c.stock > 0 AND STARTSWITH(c.info.state, 'op')"),
		&azcosmos.ItemOptions{IfMatchEtag: &created.ETag, EnableContentResponseOnWrite: true})
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ Stock int }
	if json.Unmarshal(resp.Value, &got); got.Stock != 0 {
		t.Fatalf("patched: %s", resp.Value)
	}
	// The stock is spent: the same conditional patch is now refused.
	if _, err := orders.PatchItem(ctx, pk, "c1", take("FROM c WHERE c.stock > 0"), nil); statusOf(err) != http.StatusPreconditionFailed {
		t.Fatalf("second take: %v", err)
	}

	batch := orders.NewTransactionalBatch(pk)
	batch.CreateItem([]byte(`{"id":"c2","customer":"erin"}`), nil)
	batch.PatchItem("c1", take("FROM c WHERE c.stock > 0"), nil)
	bresp, err := orders.ExecuteTransactionalBatch(ctx, batch, nil)
	if err != nil {
		t.Fatal(err)
	}
	if bresp.Success || bresp.OperationResults[0].StatusCode != 424 || bresp.OperationResults[1].StatusCode != http.StatusPreconditionFailed {
		t.Fatalf("batch with a failing condition: success %v, results %+v", bresp.Success, bresp.OperationResults)
	}
	if _, err := orders.ReadItem(ctx, pk, "c2", nil); statusOf(err) != http.StatusNotFound {
		t.Fatalf("the failed batch created c2: %v", err)
	}
	restock := azcosmos.PatchOperations{}
	restock.SetCondition("FROM c WHERE c.stock = 0")
	restock.AppendSet("/stock", 5)
	batch = orders.NewTransactionalBatch(pk)
	batch.PatchItem("c1", restock, nil)
	if bresp, err = orders.ExecuteTransactionalBatch(ctx, batch, nil); err != nil || !bresp.Success {
		t.Fatalf("batch with a holding condition: %v %+v", err, bresp)
	}
}
