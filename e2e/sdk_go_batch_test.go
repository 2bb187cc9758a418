package e2e

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

func TestGoSDKPatch(t *testing.T) {
	s := startServer(t, false)
	orders := newOrders(t, s)
	ctx := ctx(t)
	pk := azcosmos.NewPartitionKeyString("carol")
	if _, err := orders.CreateItem(ctx, pk, []byte(`{"id":"p1","customer":"carol","total":10,"lines":["a"],"note":"x"}`), nil); err != nil {
		t.Fatal(err)
	}
	ops := azcosmos.PatchOperations{}
	ops.AppendIncrement("/total", 5)
	ops.AppendAdd("/lines/-", "b")
	ops.AppendSet("/status", "shipped")
	ops.AppendRemove("/note")
	resp, err := orders.PatchItem(ctx, pk, "p1", ops, &azcosmos.ItemOptions{EnableContentResponseOnWrite: true})
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	json.Unmarshal(resp.Value, &got)
	if got["total"] != 15.0 || got["status"] != "shipped" || got["note"] != nil || len(got["lines"].([]any)) != 2 {
		t.Fatalf("patched item: %s", resp.Value)
	}
	bad := azcosmos.PatchOperations{}
	bad.AppendReplace("/missing", 1)
	if _, err := orders.PatchItem(ctx, pk, "p1", bad, nil); statusOf(err) != http.StatusBadRequest {
		t.Fatalf("patch of a missing path: %v", err)
	}
	read, _ := orders.ReadItem(ctx, pk, "p1", nil)
	if read.ETag != resp.ETag {
		t.Fatal("a failed patch changed the item")
	}
	stale := azcore.ETag("\"00000000-0000-0000-0000-000000000000\"")
	if _, err := orders.PatchItem(ctx, pk, "p1", ops, &azcosmos.ItemOptions{IfMatchEtag: &stale}); statusOf(err) != http.StatusPreconditionFailed {
		t.Fatalf("patch with a stale etag: %v", err)
	}
	if _, err := orders.PatchItem(ctx, pk, "missing", ops, nil); statusOf(err) != http.StatusNotFound {
		t.Fatalf("patch of a missing item: %v", err)
	}
}

func TestGoSDKTransactionalBatch(t *testing.T) {
	forEachTransport(t, func(t *testing.T, s *server) {
		orders := newOrders(t, s)
		ctx := ctx(t)
		pk := azcosmos.NewPartitionKeyString("dave")
		if _, err := orders.CreateItem(ctx, pk, []byte(`{"id":"existing","customer":"dave","total":1}`), nil); err != nil {
			t.Fatal(err)
		}
		ok := orders.NewTransactionalBatch(pk)
		ok.CreateItem([]byte(`{"id":"b1","customer":"dave","total":1}`), nil)
		ok.UpsertItem([]byte(`{"id":"b2","customer":"dave","total":2}`), nil)
		ok.ReplaceItem("existing", []byte(`{"id":"existing","customer":"dave","total":3}`), nil)
		ok.ReadItem("b1", nil)
		inc := azcosmos.PatchOperations{}
		inc.AppendIncrement("/total", 10)
		ok.PatchItem("b2", inc, nil)
		resp, err := orders.ExecuteTransactionalBatch(ctx, ok, &azcosmos.TransactionalBatchOptions{EnableContentResponseOnWrite: true})
		if err != nil {
			t.Fatal(err)
		}
		if !resp.Success || len(resp.OperationResults) != 5 {
			t.Fatalf("batch: success %v, %d results", resp.Success, len(resp.OperationResults))
		}
		wantStatus := []int32{201, 201, 200, 200, 200}
		for i, r := range resp.OperationResults {
			if r.StatusCode != wantStatus[i] || r.RequestCharge <= 0 {
				t.Errorf("operation %d: status %d charge %v, want %d", i, r.StatusCode, r.RequestCharge, wantStatus[i])
			}
		}
		var b2 order
		json.Unmarshal(resp.OperationResults[4].ResourceBody, &b2)
		if b2.Total != 12 {
			t.Fatalf("patched in batch: %s", resp.OperationResults[4].ResourceBody)
		}

		// Without content on write, written items stay out of the answer; a read's is there.
		lean := orders.NewTransactionalBatch(pk)
		lean.CreateItem([]byte(`{"id":"b5","customer":"dave"}`), nil)
		resp, err = orders.ExecuteTransactionalBatch(ctx, lean, nil)
		if err != nil || !resp.Success || resp.OperationResults[0].ResourceBody != nil || resp.OperationResults[0].ETag == "" {
			t.Fatalf("batch without content on write: %v %+v", err, resp.OperationResults)
		}
		lean = orders.NewTransactionalBatch(pk)
		lean.ReadItem("b5", nil)
		resp, err = orders.ExecuteTransactionalBatch(ctx, lean, nil)
		if err != nil || !resp.Success || resp.OperationResults[0].ResourceBody == nil {
			t.Fatalf("read in a batch without content on write: %v %+v", err, resp.OperationResults)
		}

		// A batch whose third operation fails applies nothing.
		bad := orders.NewTransactionalBatch(pk)
		bad.CreateItem([]byte(`{"id":"b3","customer":"dave"}`), nil)
		bad.DeleteItem("b1", nil)
		bad.CreateItem([]byte(`{"id":"b2","customer":"dave"}`), nil) // exists: 409
		bad.UpsertItem([]byte(`{"id":"b4","customer":"dave"}`), nil)
		resp, err = orders.ExecuteTransactionalBatch(ctx, bad, nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Success {
			t.Fatal("a batch with a conflicting create succeeded")
		}
		for i, want := range []int32{424, 424, 409, 424} {
			if got := resp.OperationResults[i].StatusCode; got != want {
				t.Errorf("failed batch operation %d: status %d, want %d", i, got, want)
			}
		}
		for _, id := range []string{"b3", "b4"} {
			if _, err := orders.ReadItem(ctx, pk, id, nil); statusOf(err) != http.StatusNotFound {
				t.Errorf("%s exists after a failed batch: %v", id, err)
			}
		}
		if _, err := orders.ReadItem(ctx, pk, "b1", nil); err != nil {
			t.Errorf("b1 was deleted by a failed batch: %v", err)
		}
	})
}
