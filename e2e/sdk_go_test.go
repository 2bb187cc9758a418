package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

func TestGoSDKDatabasesAndContainers(t *testing.T) {
	forEachTransport(t, func(t *testing.T, s *server) {
		c := s.sdk(t)
		ctx := ctx(t)
		if _, err := c.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "shop"}, nil); err != nil {
			t.Fatal(err)
		}
		shared := azcosmos.NewManualThroughputProperties(400)
		if _, err := c.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "shared"}, &azcosmos.CreateDatabaseOptions{ThroughputProperties: &shared}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "shop"}, nil); statusOf(err) != http.StatusConflict {
			t.Fatalf("duplicate database: %v", err)
		}
		db, _ := c.NewDatabase("shop")
		read, err := db.Read(ctx, nil)
		if err != nil || read.DatabaseProperties.ID != "shop" || read.DatabaseProperties.ResourceID == "" {
			t.Fatalf("read database: %+v %v", read.DatabaseProperties, err)
		}

		auto := azcosmos.NewAutoscaleThroughputProperties(20000)
		for _, props := range []azcosmos.ContainerProperties{
			{ID: "orders", PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/customer"}, Version: 2}},
			{ID: "events", PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{
				Paths: []string{"/tenant", "/user", "/session"}, Kind: azcosmos.PartitionKeyKindMultiHash, Version: 2}},
		} {
			opts := &azcosmos.CreateContainerOptions{}
			if props.ID == "events" {
				opts.ThroughputProperties = &auto
			}
			resp, err := db.CreateContainer(ctx, props, opts)
			if err != nil {
				t.Fatalf("create container %s: %v", props.ID, err)
			}
			if got := resp.ContainerProperties.PartitionKeyDefinition; strings.Join(got.Paths, ",") != strings.Join(props.PartitionKeyDefinition.Paths, ",") {
				t.Fatalf("container %s came back with partition key %+v", props.ID, got)
			}
		}
		_, err = db.CreateContainer(ctx, azcosmos.ContainerProperties{ID: "bad", PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"nope"}}}, nil)
		if statusOf(err) != http.StatusBadRequest {
			t.Fatalf("invalid partition key path: %v", err)
		}
		events, _ := db.NewContainer("events")
		cr, err := events.Read(ctx, nil)
		if err != nil || cr.ContainerProperties.PartitionKeyDefinition.Kind != azcosmos.PartitionKeyKindMultiHash {
			t.Fatalf("read container: %+v %v", cr.ContainerProperties, err)
		}

		pager := db.NewQueryContainersPager("", nil)
		_ = pager // container queries arrive with the SQL engine

		orders, _ := db.NewContainer("orders")
		if _, err := orders.Delete(ctx, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := orders.Read(ctx, nil); statusOf(err) != http.StatusNotFound {
			t.Fatalf("read of a deleted container: %v", err)
		}
		if _, err := db.Delete(ctx, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Read(ctx, nil); statusOf(err) != http.StatusNotFound {
			t.Fatalf("read of a deleted database: %v", err)
		}
	})
}

type order struct {
	ID       string  `json:"id"`
	Customer string  `json:"customer"`
	Total    float64 `json:"total"`
	ETag     string  `json:"_etag,omitempty"`
}

func newOrders(t *testing.T, s *server) *azcosmos.ContainerClient {
	t.Helper()
	c := s.sdk(t)
	ctx := ctx(t)
	if _, err := c.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "shop"}, nil); err != nil {
		t.Fatal(err)
	}
	db, _ := c.NewDatabase("shop")
	tp := azcosmos.NewManualThroughputProperties(20000)
	// The composite index serves the queries' ORDER BY c.total DESC, c.id, as Cosmos requires.
	if _, err := db.CreateContainer(ctx, azcosmos.ContainerProperties{ID: "orders",
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/customer"}, Version: 2},
		IndexingPolicy: &azcosmos.IndexingPolicy{Automatic: true, IndexingMode: azcosmos.IndexingModeConsistent,
			IncludedPaths: []azcosmos.IncludedPath{{Path: "/*"}},
			CompositeIndexes: [][]azcosmos.CompositeIndex{{{Path: "/total", Order: azcosmos.CompositeIndexDescending},
				{Path: "/id", Order: azcosmos.CompositeIndexAscending}}}}},
		&azcosmos.CreateContainerOptions{ThroughputProperties: &tp}); err != nil {
		t.Fatal(err)
	}
	orders, _ := db.NewContainer("orders")
	return orders
}

func marshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestGoSDKItems(t *testing.T) {
	forEachTransport(t, func(t *testing.T, s *server) {
		orders := newOrders(t, s)
		ctx := ctx(t)
		alice := azcosmos.NewPartitionKeyString("alice")
		created, err := orders.CreateItem(ctx, alice, marshal(t, order{ID: "o1", Customer: "alice", Total: 10}), &azcosmos.ItemOptions{EnableContentResponseOnWrite: true})
		if err != nil {
			t.Fatal(err)
		}
		if created.RequestCharge <= 0 || created.ETag == "" || created.SessionToken == nil {
			t.Fatalf("create response: charge %v etag %q session %v", created.RequestCharge, created.ETag, created.SessionToken)
		}
		var got order
		json.Unmarshal(created.Value, &got)
		if got.Total != 10 || got.ETag == "" {
			t.Fatalf("created item: %s", created.Value)
		}
		if _, err := orders.CreateItem(ctx, alice, marshal(t, order{ID: "o1", Customer: "alice"}), nil); statusOf(err) != http.StatusConflict {
			t.Fatalf("duplicate create: %v", err)
		}
		// The same id under another partition key is another item.
		if _, err := orders.CreateItem(ctx, azcosmos.NewPartitionKeyString("bob"), marshal(t, order{ID: "o1", Customer: "bob", Total: 99}), nil); err != nil {
			t.Fatal(err)
		}
		read, err := orders.ReadItem(ctx, alice, "o1", nil)
		if err != nil {
			t.Fatal(err)
		}
		json.Unmarshal(read.Value, &got)
		if got.Total != 10 || read.ETag != created.ETag {
			t.Fatalf("read: %s etag %q, created etag %q", read.Value, read.ETag, created.ETag)
		}
		// Optimistic concurrency: a replace with the current etag wins, a stale one fails.
		rep, err := orders.ReplaceItem(ctx, alice, "o1", marshal(t, order{ID: "o1", Customer: "alice", Total: 11}), &azcosmos.ItemOptions{IfMatchEtag: &read.ETag})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := orders.ReplaceItem(ctx, alice, "o1", marshal(t, order{ID: "o1", Customer: "alice", Total: 12}), &azcosmos.ItemOptions{IfMatchEtag: &read.ETag}); statusOf(err) != http.StatusPreconditionFailed {
			t.Fatalf("stale If-Match: %v", err)
		}
		if rep.ETag == read.ETag {
			t.Fatal("a replace must change the etag")
		}
		if _, err := orders.UpsertItem(ctx, alice, marshal(t, order{ID: "o2", Customer: "alice", Total: 5}), nil); err != nil {
			t.Fatal(err)
		}
		up, err := orders.UpsertItem(ctx, alice, marshal(t, order{ID: "o2", Customer: "alice", Total: 6}), &azcosmos.ItemOptions{EnableContentResponseOnWrite: true})
		if err != nil || !strings.Contains(string(up.Value), `"total":6`) {
			t.Fatalf("upsert existing: %s %v", up.Value, err)
		}
		if _, err := orders.DeleteItem(ctx, alice, "o2", nil); err != nil {
			t.Fatal(err)
		}
		if _, err := orders.ReadItem(ctx, alice, "o2", nil); statusOf(err) != http.StatusNotFound {
			t.Fatalf("read after delete: %v", err)
		}
		if _, err := orders.DeleteItem(ctx, alice, "o2", nil); statusOf(err) != http.StatusNotFound {
			t.Fatalf("second delete: %v", err)
		}
		bob, err := orders.ReadItem(ctx, azcosmos.NewPartitionKeyString("bob"), "o1", nil)
		if err != nil || !strings.Contains(string(bob.Value), `"total":99`) {
			t.Fatalf("bob's o1: %s %v", bob.Value, err)
		}

		// A replace whose body carries another id renames the item; it keeps its _rid.
		var before, after struct {
			RID string `json:"_rid"`
		}
		json.Unmarshal(read.Value, &before)
		if _, err := orders.ReplaceItem(ctx, alice, "o1", marshal(t, order{ID: "o1-renamed", Customer: "alice", Total: 13}), nil); err != nil {
			t.Fatal(err)
		}
		if _, err := orders.ReadItem(ctx, alice, "o1", nil); statusOf(err) != http.StatusNotFound {
			t.Fatalf("old id after a rename: %v", err)
		}
		renamed, err := orders.ReadItem(ctx, alice, "o1-renamed", nil)
		json.Unmarshal(renamed.Value, &after)
		if err != nil || after.RID != before.RID || !strings.Contains(string(renamed.Value), `"total":13`) {
			t.Fatalf("renamed item: %s %v (rid was %s)", renamed.Value, err, before.RID)
		}
		// A rename onto an id that is taken is a conflict and changes nothing.
		orders.CreateItem(ctx, alice, marshal(t, order{ID: "o3", Customer: "alice"}), nil)
		if _, err := orders.ReplaceItem(ctx, alice, "o1-renamed", marshal(t, order{ID: "o3", Customer: "alice"}), nil); statusOf(err) != http.StatusConflict {
			t.Fatalf("rename onto a taken id: %v", err)
		}
		if _, err := orders.ReadItem(ctx, alice, "o1-renamed", nil); err != nil {
			t.Fatalf("a refused rename moved the item: %v", err)
		}
	})
}

func TestGoSDKPartitionKeyTypes(t *testing.T) {
	s := startServer(t, false)
	c := s.sdk(t)
	ctx := ctx(t)
	c.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "db"}, nil)
	db, _ := c.NewDatabase("db")
	if _, err := db.CreateContainer(ctx, azcosmos.ContainerProperties{ID: "h",
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/a", "/b"}, Kind: azcosmos.PartitionKeyKindMultiHash, Version: 2}}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateContainer(ctx, azcosmos.ContainerProperties{ID: "v1",
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/a"}}}, nil); err != nil {
		t.Fatal(err)
	}
	h, _ := db.NewContainer("h")
	v1, _ := db.NewContainer("v1")
	cases := []struct {
		name string
		key  azcosmos.PartitionKey
		a    any
	}{
		{"string", azcosmos.NewPartitionKeyString("x"), "x"},
		{"emoji and control characters", azcosmos.NewPartitionKeyString("😀\x7f\a"), "😀\x7f\a"},
		{"number", azcosmos.NewPartitionKeyNumber(42.5), 42.5},
		{"bool", azcosmos.NewPartitionKeyBool(true), true},
		{"null", azcosmos.NullPartitionKey, nil},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id := fmt.Sprint("item", i)
			body := marshal(t, map[string]any{"id": id, "a": tc.a, "b": "second"})
			if _, err := v1.CreateItem(ctx, tc.key, body, nil); err != nil {
				t.Fatalf("v1 create: %v", err)
			}
			if _, err := v1.ReadItem(ctx, tc.key, id, nil); err != nil {
				t.Fatalf("v1 read: %v", err)
			}
			hk := tc.key.AppendString("second")
			if _, err := h.CreateItem(ctx, hk, body, nil); err != nil {
				t.Fatalf("hierarchical create: %v", err)
			}
			if _, err := h.ReadItem(ctx, hk, id, nil); err != nil {
				t.Fatalf("hierarchical read: %v", err)
			}
		})
	}
	_ = to.Ptr[int]
}
