package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

// Time to live through the Go SDK, on the real clock: an item of a container with a 2 s
// default stops being readable, queryable and read-many-able once expired; one with ttl -1
// stays; an invalid ttl is refused.
func TestGoSDKTimeToLive(t *testing.T) {
	s := startServer(t, false)
	client := s.sdk(t)
	ctx := ctx(t)
	if _, err := client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "ttl"}, nil); err != nil {
		t.Fatal(err)
	}
	db, _ := client.NewDatabase("ttl")
	_, err := db.CreateContainer(ctx, azcosmos.ContainerProperties{ID: "bad",
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}, Version: 2},
		DefaultTimeToLive:      to.Ptr[int32](-5)}, nil)
	if statusOf(err) != http.StatusBadRequest {
		t.Fatalf("defaultTtl -5: %v", err)
	}
	resp, err := db.CreateContainer(ctx, azcosmos.ContainerProperties{ID: "sessions",
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}, Version: 2},
		DefaultTimeToLive:      to.Ptr[int32](2)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := resp.ContainerProperties.DefaultTimeToLive; d == nil || *d != 2 {
		t.Fatalf("created container's defaultTtl: %v", d)
	}
	c, _ := db.NewContainer("sessions")
	pk := azcosmos.NewPartitionKeyString("u1")
	write := func(id, extra string) {
		t.Helper()
		if _, err := c.CreateItem(ctx, pk, []byte(fmt.Sprintf(`{"id":%q,"pk":"u1"%s}`, id, extra)), nil); err != nil {
			t.Fatalf("create %s: %v", id, err)
		}
	}
	write("short", "")
	write("forever", `,"ttl":-1`)
	if _, err := c.CreateItem(ctx, pk, []byte(`{"id":"zero","pk":"u1","ttl":0}`), nil); statusOf(err) != http.StatusBadRequest {
		t.Fatalf("ttl 0: %v", err)
	}
	if _, err := c.ReadItem(ctx, pk, "short", nil); err != nil {
		t.Fatalf("read before expiry: %v", err)
	}

	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := c.ReadItem(ctx, pk, "short", nil)
		if statusOf(err) == http.StatusNotFound {
			break
		}
		if err != nil || time.Now().After(deadline) {
			t.Fatalf("read of an item past its 2 s ttl: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	ids := func(items [][]byte) []string {
		var out []string
		for _, b := range items {
			var v struct{ ID string }
			json.Unmarshal(b, &v)
			out = append(out, v.ID)
		}
		sort.Strings(out)
		return out
	}
	for _, scope := range []azcosmos.PartitionKey{pk, azcosmos.NewPartitionKey()} {
		var got [][]byte
		pager := c.NewQueryItemsPager("SELECT * FROM c", scope, nil)
		for pager.More() {
			page, err := pager.NextPage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, page.Items...)
		}
		if fmt.Sprint(ids(got)) != "[forever]" {
			t.Fatalf("query after expiry: %v", ids(got))
		}
	}
	rm, err := c.ReadManyItems(ctx, []azcosmos.ItemIdentity{{ID: "short", PartitionKey: pk}, {ID: "forever", PartitionKey: pk}}, nil)
	if err != nil || fmt.Sprint(ids(rm.Items)) != "[forever]" {
		t.Fatalf("read many after expiry: %v %v", ids(rm.Items), err)
	}
	if _, err := c.ReplaceItem(ctx, pk, "short", []byte(`{"id":"short","pk":"u1"}`), nil); statusOf(err) != http.StatusNotFound {
		t.Fatalf("replace of an expired item: %v", err)
	}
	write("short", "") // its id is free again

	// Replacing the container turns the default off (the properties sent have none).
	props := resp.ContainerProperties
	props.DefaultTimeToLive = nil
	rr, err := c.Replace(ctx, *props, nil)
	if err != nil || rr.ContainerProperties.DefaultTimeToLive != nil {
		t.Fatalf("replace without defaultTtl: %v %v", rr.ContainerProperties, err)
	}
}
