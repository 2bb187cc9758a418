package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

// A container created without a partition key through the Go SDK (a ContainerProperties with
// no PartitionKeyDefinition, which it sends as an empty definition): the server gives it the
// system key, /_partitionKey, and one physical partition. Items without a _partitionKey are
// one logical partition, addressed with the SDK's NewPartitionKey() ([]) or NullPartitionKey
// ([null]); a stored procedure and a transactional batch run in it; the change feed and a
// cross-partition query see every item. The limits: created with more than 10,000 RU/s it is
// refused (400), and its none logical partition fills as any logical partition does (403,
// substatus 1014). Raised past 10,000 RU/s, it splits, and the items with a _partitionKey
// value spread over the partitions.
func TestNonPartitionedContainerWithGoSDK(t *testing.T) {
	s := startServer(t, false, "--logical-partition-max-bytes", "65536")
	cx := ctx(t)
	client := s.sdk(t)
	if _, err := client.CreateDatabase(cx, azcosmos.DatabaseProperties{ID: "db"}, nil); err != nil {
		t.Fatal(err)
	}
	db, _ := client.NewDatabase("db")
	if _, err := db.CreateContainer(cx, azcosmos.ContainerProperties{ID: "big"}, &azcosmos.CreateContainerOptions{
		ThroughputProperties: new(azcosmos.NewManualThroughputProperties(20000))}); statusOf(err) != 400 {
		t.Fatalf("a container without a partition key at 20,000 RU/s: %v, want 400", err)
	}
	if _, err := db.CreateContainer(cx, azcosmos.ContainerProperties{ID: "legacy"}, nil); err != nil {
		t.Fatal(err)
	}
	rc := rawClient{s: s, key: emulatorKey, now: time.Now}
	code, _, body := rc.do(t, "GET", "/dbs/db/colls/legacy", nil, nil)
	var def struct {
		PartitionKey map[string]any `json:"partitionKey"`
	}
	if err := json.Unmarshal(body, &def); code != 200 || err != nil ||
		!reflect.DeepEqual(def.PartitionKey, map[string]any{"paths": []any{"/_partitionKey"}, "kind": "Hash", "systemKey": true}) {
		t.Fatalf("the container's partition key definition: %d %s", code, body)
	}
	c, _ := db.NewContainer("legacy")
	none := azcosmos.NewPartitionKey()
	for i := range 5 {
		if _, err := c.CreateItem(cx, none, fmt.Appendf(nil, `{"id":"n%d","v":%d}`, i, i), nil); err != nil {
			t.Fatalf("create n%d with no partition key: %v", i, err)
		}
	}
	if _, err := c.CreateItem(cx, azcosmos.NullPartitionKey, []byte(`{"id":"null","_partitionKey":null,"v":9}`), nil); err != nil {
		t.Fatalf("create with a null _partitionKey: %v", err)
	}
	for _, pk := range []azcosmos.PartitionKey{none, azcosmos.NullPartitionKey} {
		r, err := c.ReadItem(cx, pk, "null", nil)
		if err != nil || !strings.Contains(string(r.Value), `"v":9`) {
			t.Fatalf("read of the null-keyed item: %v %s", err, r.Value)
		}
	}
	if _, err := c.ReadItem(cx, azcosmos.NewPartitionKeyString("x"), "n1", nil); statusOf(err) != 404 {
		t.Fatalf("an item without a key read under the key \"x\": %v, want 404", err)
	}
	if _, err := c.CreateItem(cx, azcosmos.NewPartitionKeyString("p"), []byte(`{"id":"keyed","_partitionKey":"p"}`), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateItem(cx, none, []byte(`{"id":"wrong","_partitionKey":"p"}`), nil); statusOf(err) != 400 {
		t.Fatalf("an item with a _partitionKey created under none: %v, want 400", err)
	}

	// A transactional batch and a stored procedure in the none logical partition.
	b := c.NewTransactionalBatch(none)
	b.UpsertItem([]byte(`{"id":"n0","v":100}`), nil)
	b.DeleteItem("n4", nil)
	if r, err := c.ExecuteTransactionalBatch(cx, b, nil); err != nil || !r.Success {
		t.Fatalf("a batch with no partition key: %v", err)
	}
	sproc := `function () { __.queryDocuments(__.getSelfLink(), "SELECT VALUE SUM(c.v) FROM c", function (err, r) {
		if (err) throw err; getContext().getResponse().setBody(r[0]); }); }`
	if code, _, b := rc.do(t, "POST", "/dbs/db/colls/legacy/sprocs", []byte(fmt.Sprintf(`{"id":"sum","body":%q}`, sproc)), nil); code != 201 {
		t.Fatalf("create the procedure: %d %s", code, b)
	}
	if code, _, b := rc.do(t, "POST", "/dbs/db/colls/legacy/sprocs/sum", []byte(`[]`), map[string]string{"x-ms-documentdb-partitionkey": "[]"}); code != 200 || string(b) != "115" {
		t.Fatalf("the procedure over the none logical partition: %d %s, want 115 (100+1+2+3+9)", code, b)
	}

	// A cross-partition query and the change feed see every item.
	ids := func() []string {
		var out []string
		pager := c.NewQueryItemsPager("SELECT VALUE c.id FROM c", azcosmos.NewPartitionKey(), nil)
		for pager.More() {
			page, err := pager.NextPage(cx)
			if err != nil {
				t.Fatal(err)
			}
			for _, raw := range page.Items {
				var id string
				json.Unmarshal(raw, &id)
				out = append(out, id)
			}
		}
		slices.Sort(out)
		return out
	}
	want := []string{"keyed", "n0", "n1", "n2", "n3", "null"}
	if got := ids(); !slices.Equal(got, want) {
		t.Fatalf("query: %v, want %v", got, want)
	}
	feed, err := c.ReadChangeFeed(cx, &azcosmos.ChangeFeedOptions{FeedRange: &azcosmos.FeedRange{MinInclusive: "", MaxExclusive: "FF"}})
	if err != nil || feed.Count != len(want) {
		t.Fatalf("the change feed: %v, %d changes, want %d", err, feed.Count, len(want))
	}

	// The none logical partition is capped like any logical partition: 403/1014.
	pad := strings.Repeat("x", 20000)
	var full error
	for i := 0; i < 5 && full == nil; i++ {
		_, full = c.CreateItem(cx, none, fmt.Appendf(nil, `{"id":"big%d","pad":%q}`, i, pad), nil)
	}
	var re *azcore.ResponseError
	if !errors.As(full, &re) || re.StatusCode != 403 || re.RawResponse.Header.Get("x-ms-substatus") != "1014" {
		t.Fatalf("filling the none logical partition: %v, want 403 with substatus 1014", full)
	}
	if _, err := c.CreateItem(cx, azcosmos.NewPartitionKeyString("q"), fmt.Appendf(nil, `{"id":"big-q","_partitionKey":"q","pad":%q}`, pad), nil); err != nil {
		t.Fatalf("an item of another logical partition once none is full: %v", err)
	}

	// Raised past what it was created with, it splits like any container; the items with a
	// _partitionKey value spread, and every item is still read under its key.
	for i := range 40 {
		k := fmt.Sprintf("k%d", i)
		if _, err := c.CreateItem(cx, azcosmos.NewPartitionKeyString(k), fmt.Appendf(nil, `{"id":"i%d","_partitionKey":%q}`, i, k), nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.ReplaceThroughput(cx, azcosmos.NewManualThroughputProperties(30000), nil); err != nil {
		t.Fatalf("raising the throughput to 30,000 RU/s: %v", err)
	}
	var counts []int64
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if counts = partitionCounts(t, rc, "legacy"); len(counts) >= 3 || time.Now().After(deadline) {
			break
		}
	}
	holding := 0
	for _, n := range counts {
		if n > 0 {
			holding++
		}
	}
	if len(counts) < 3 || holding < 3 {
		t.Fatalf("after raising the throughput the items are in %d partitions of %d (%v), want 3 or more", holding, len(counts), counts)
	}
	for i := range 40 {
		if _, err := c.ReadItem(cx, azcosmos.NewPartitionKeyString(fmt.Sprintf("k%d", i)), fmt.Sprintf("i%d", i), nil); err != nil {
			t.Fatalf("read i%d after the split: %v", i, err)
		}
	}
	if _, err := c.ReadItem(cx, none, "n1", nil); err != nil {
		t.Fatalf("read n1 (no key) after the split: %v", err)
	}
	t.Logf("after the split: %v items per partition", counts)
}

// Debian's Python SDK 3.x creates a collection without a partition key unless told otherwise.
// Its API version comes before the system key, so the collection it reads back has no
// partitionKey, and it names none: items, queries, a stored procedure and the change feed all
// work without one (testdata/python/cosmos_nokey.py).
func TestPythonSDK3NonPartitioned(t *testing.T) {
	py := python3With(t, "azure.cosmos.cosmos_client")
	srv := startServer(t, false)
	got, out := runPython(t, py, "cosmos_nokey.py", srv.Endpoint, emulatorKey)
	want := map[string]any{
		"partition_key": nil, // its API version (2018-09-17) is shown no system key, as by the service
		"read":          3.0, "replaced": 40.0, "upserted": 5.0,
		"query": []any{1.0, 2.0, 3.0, 5.0, 40.0}, "count": 5.0, "sproc": 51.0,
		"change_feed":      []any{"i1", "i2", "i3", "i4", "i5"},
		"duplicate_status": 409.0, "too_much_throughput_status": 400.0,
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("the Python SDK saw\n%s\nwant\n%v", out, want)
	}
}
