package engine

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/query"
	"github.com/partita-db/partita/internal/storage"
	"github.com/partita-db/partita/internal/value"
)

func openEngine(t testing.TB, dir string, opts Options) *Engine {
	t.Helper()
	opts.Dir = dir
	opts.Replicated = opts.Replicated || replicated(t)
	e, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// newContainer opens an engine in a fresh directory with one container partitioned on /pk.
func newContainer(t testing.TB, opts Options, spec ContainerSpec) (*Engine, *Container) {
	t.Helper()
	e := openEngine(t, t.TempDir(), opts)
	t.Cleanup(func() { e.Close() })
	if _, err := e.CreateDatabase("db", nil); err != nil {
		t.Fatal(err)
	}
	if spec.ID == "" {
		spec.ID = "c"
	}
	if spec.PartitionKey.Paths == nil {
		spec.PartitionKey = PartitionKeyDef{Paths: []string{"/pk"}, Version: 2}
	}
	if _, err := e.CreateContainer("db", spec); err != nil {
		t.Fatal(err)
	}
	c, err := e.Container("db", spec.ID)
	if err != nil {
		t.Fatal(err)
	}
	return e, c
}

func item(id, pk string, extra string) []byte {
	return []byte(fmt.Sprintf(`{"id":%q,"pk":%q%s}`, id, pk, extra))
}

func key(s string) epk.Key { return epk.Key{epk.String(s)} }

func mustCreate(t testing.TB, c *Container, body []byte) ItemResult {
	t.Helper()
	r, err := c.CreateItem(body, ItemOptions{})
	if err != nil {
		t.Fatalf("create %s: %v", body, err)
	}
	return r
}

func field(t testing.TB, doc []byte, name string) any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(doc, &m); err != nil {
		t.Fatalf("stored item is not JSON: %v: %s", err, doc)
	}
	return m[name]
}

func TestItemLifecycle(t *testing.T) {
	_, c := newContainer(t, Options{}, ContainerSpec{})
	created := mustCreate(t, c, item("a", "p1", `,"n":1,"_rid":"client","_ts":5`))
	if !created.Created || created.Charge <= 0 || created.ETag == "" {
		t.Fatalf("create result: %+v", created)
	}
	if got := field(t, created.Doc, "_rid"); got == "client" || got == nil {
		t.Fatalf("system property _rid not replaced: %v", got)
	}
	if got := field(t, created.Doc, "_etag"); got != `"`+created.ETag+`"` {
		t.Fatalf("_etag %v, want quoted %s", got, created.ETag)
	}
	read, err := c.ReadItem(key("p1"), "a")
	if err != nil || !bytes.Equal(read.Doc, created.Doc) || read.ETag != created.ETag || read.Charge != 1 {
		t.Fatalf("read: %+v %v", read, err)
	}
	replaced, err := c.ReplaceItem("a", item("a", "p1", `,"n":2`), ItemOptions{IfMatch: created.ETag})
	if err != nil || replaced.ETag == created.ETag || field(t, replaced.Doc, "n") != 2.0 {
		t.Fatalf("replace: %+v %v", replaced, err)
	}
	if field(t, replaced.Doc, "_rid") != field(t, created.Doc, "_rid") {
		t.Fatal("an item's _rid must survive a replace")
	}
	up, err := c.UpsertItem(item("b", "p1", ""), ItemOptions{})
	if err != nil || !up.Created {
		t.Fatalf("upsert new: %+v %v", up, err)
	}
	up, err = c.UpsertItem(item("b", "p1", `,"x":true`), ItemOptions{})
	if err != nil || up.Created {
		t.Fatalf("upsert existing: %+v %v", up, err)
	}
	if _, err := c.DeleteItem(key("p1"), "a", ItemOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ReadItem(key("p1"), "a"); !errors.Is(err, fault.NotFound) {
		t.Fatalf("read after delete: %v", err)
	}
	s := c.partitions()[0].Stats()
	if s.Items != 1 || s.Bytes <= 0 || s.LSN != 5 {
		t.Fatalf("stats after 4 writes and a delete: %+v", s)
	}
}

// A front end that holds an item as a value (a CQL row, a script's result) writes it through
// the same pipeline, with no JSON in between, and reads it back as the same item.
func TestItemsGivenAsValues(t *testing.T) {
	_, c := newContainer(t, Options{}, ContainerSpec{})
	row := value.Obj([]value.Member{{Key: "id", Val: value.Str("v1")}, {Key: "pk", Val: value.Str("p")}, {Key: "n", Val: value.Num(3)}})
	created, err := c.WriteItem(OpCreate, "", document.FromValue(row), ItemOptions{})
	if err != nil || !created.Created {
		t.Fatalf("create from a value: %+v %v", created, err)
	}
	if _, err := c.WriteItem(OpCreate, "", document.FromValue(row), ItemOptions{}); !errors.Is(err, fault.Conflict) {
		t.Fatalf("second create from a value: %v, want a conflict", err)
	}
	read, err := c.ReadItem(key("p"), "v1")
	if err != nil || string(read.Doc) != string(created.Doc) || field(t, read.Doc, "n") != 3.0 {
		t.Fatalf("read back %s (%v), created %s", read.Doc, err, created.Doc)
	}
	results, failedAt, err := c.ExecuteBatch(context.Background(), key("p"), []BatchOp{
		{Kind: OpUpsert, Item: document.FromValue(value.Obj([]value.Member{{Key: "id", Val: value.Str("v2")}, {Key: "pk", Val: value.Str("p")}}))},
		{Kind: OpReplace, ID: "v1", Item: document.FromJSON([]byte(`{"id":"v1","pk":"p","n":4}`))},
	})
	if err != nil || failedAt >= 0 || !results[0].Created || field(t, results[1].Doc, "n") != 4.0 {
		t.Fatalf("batch of a value and JSON: %+v %d %v", results, failedAt, err)
	}
}

func TestIfMatchAny(t *testing.T) {
	_, c := newContainer(t, Options{}, ContainerSpec{})
	if _, err := c.ReplaceItem("a", item("a", "p", ""), ItemOptions{IfMatch: "*"}); !errors.Is(err, fault.NotFound) {
		t.Fatalf("If-Match * on a missing item: %v", err)
	}
	// An upsert of a missing item creates it, If-Match or not: the service checks If-Match
	// only against a version to replace.
	for _, ifMatch := range []string{"*", `"00000000-0000-0000-0000-000000000007"`} {
		r, err := c.UpsertItem(item("u"+ifMatch, "p", ""), ItemOptions{IfMatch: ifMatch})
		if err != nil || !r.Created {
			t.Fatalf("upsert with If-Match %s of a missing item: %+v %v", ifMatch, r, err)
		}
	}
	if _, err := c.UpsertItem(item("u*", "p", ""), ItemOptions{IfMatch: "stale"}); !errors.Is(err, fault.PreconditionFailed) {
		t.Fatalf("upsert with a stale If-Match of an existing item: %v", err)
	}
	mustCreate(t, c, item("a", "p", ""))
	if _, err := c.ReplaceItem("a", item("a", "p", `,"v":1`), ItemOptions{IfMatch: "*"}); err != nil {
		t.Fatalf("If-Match * on an existing item: %v", err)
	}
}

func TestSameIDUnderTwoPartitionKeys(t *testing.T) {
	_, c := newContainer(t, Options{}, ContainerSpec{Throughput: &Throughput{Manual: 30000}})
	mustCreate(t, c, item("same", "k1", `,"v":1`))
	mustCreate(t, c, item("same", "k2", `,"v":2`))
	for k, want := range map[string]float64{"k1": 1, "k2": 2} {
		r, err := c.ReadItem(key(k), "same")
		if err != nil || field(t, r.Doc, "v") != want {
			t.Fatalf("read (%s, same): %v %v", k, r.Doc, err)
		}
	}
	if _, err := c.CreateItem(item("same", "k1", ""), ItemOptions{}); !errors.Is(err, fault.Conflict) {
		t.Fatalf("duplicate (pk, id) must be 409, got %v", err)
	}
}

func TestPersistenceAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	e := openEngine(t, dir, Options{})
	if _, err := e.CreateDatabase("db", &Throughput{AutoscaleMax: 20000}); err != nil {
		t.Fatal(err)
	}
	hier := PartitionKeyDef{Paths: []string{"/tenant", "/user"}}
	if _, err := e.CreateContainer("db", ContainerSpec{ID: "h", PartitionKey: hier}); err != nil {
		t.Fatal(err)
	}
	c, _ := e.Container("db", "h")
	want := map[string][]byte{}
	for i := range 300 {
		body := []byte(fmt.Sprintf(`{"id":"i%d","tenant":"t%d","user":%d}`, i, i%7, i%13))
		want[fmt.Sprint(i)] = mustCreate(t, c, body).Doc
	}
	before, _ := e.ContainerInfo("db", "h")
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	e = openEngine(t, dir, Options{})
	defer e.Close()
	after, err := e.ContainerInfo("db", "h")
	if err != nil {
		t.Fatal(err)
	}
	if after.PartitionKey.Kind != "MultiHash" || after.PartitionKey.Version != 2 || len(after.Partitions) != 2 {
		t.Fatalf("container after restart: %+v", after)
	}
	for i := range after.Partitions {
		if after.Partitions[i].PartitionStats != before.Partitions[i].PartitionStats {
			t.Fatalf("partition %d stats %+v, before restart %+v", i, after.Partitions[i].PartitionStats, before.Partitions[i].PartitionStats)
		}
	}
	c, _ = e.Container("db", "h")
	for i := range 300 {
		k := epk.Key{epk.String(fmt.Sprintf("t%d", i%7)), epk.Number(float64(i % 13))}
		r, err := c.ReadItem(k, fmt.Sprintf("i%d", i))
		if err != nil || !bytes.Equal(r.Doc, want[fmt.Sprint(i)]) {
			t.Fatalf("item %d after restart: %s %v", i, r.Doc, err)
		}
	}
	r := mustCreate(t, c, []byte(`{"id":"new","tenant":"t0","user":0}`))
	if r.LSN <= before.Partitions[c.PartitionID(c.scheme.Hash(epk.Key{epk.String("t0"), epk.Number(0)}))].LSN {
		t.Fatal("LSN must continue after a restart")
	}
	if dbs := e.Databases(); len(dbs) != 1 || dbs[0].Throughput.AutoscaleMax != 20000 {
		t.Fatalf("databases after restart: %+v", dbs)
	}
}

func TestItemsLandInTheirPartition(t *testing.T) {
	for _, def := range []PartitionKeyDef{
		{Paths: []string{"/pk"}, Version: 1},
		{Paths: []string{"/pk"}, Version: 2},
		{Paths: []string{"/pk", "/n"}},
	} {
		t.Run(fmt.Sprintf("%s-v%d", def.Kind, def.Version), func(t *testing.T) {
			_, c := newContainer(t, Options{}, ContainerSpec{PartitionKey: def, Throughput: &Throughput{Manual: 50000}})
			parts := c.partitions()
			if len(parts) != 9 { // ceil(50,000 / 6,000)
				t.Fatalf("%d partitions, want 9", len(parts))
			}
			const n = 3000
			for i := range n {
				mustCreate(t, c, []byte(fmt.Sprintf(`{"id":"%d","pk":"key-%d","n":%d}`, i, i, i%3)))
			}
			seen := map[string]bool{}
			for _, p := range parts {
				count := 0
				err := p.Scan([]epk.Range{epk.All}, 0, func(d partitionDoc) bool {
					e, id := d.EPK(), d.ID()
					if !p.Range().Contains(e) {
						t.Errorf("item %s with EPK %s stored in partition %d %v", id, e.Hex(), p.ID(), p.Range())
					}
					var it struct {
						PK string  `json:"pk"`
						N  float64 `json:"n"`
					}
					json.Unmarshal(d.JSON, &it)
					k := epk.Key{epk.String(it.PK)}
					if def.Kind == "MultiHash" || len(def.Paths) == 2 {
						k = append(k, epk.Number(it.N))
					}
					if want, _ := c.EPK(k); want != e {
						t.Errorf("item %s stored under EPK %s, its key hashes to %s", id, e.Hex(), want.Hex())
					}
					seen[id] = true
					count++
					return true
				})
				if err != nil {
					t.Fatal(err)
				}
				if count == 0 || int64(count) != p.Stats().Items {
					t.Errorf("partition %d holds %d items, stats say %d", p.ID(), count, p.Stats().Items)
				}
			}
			if len(seen) != n {
				t.Fatalf("found %d distinct items, want %d", len(seen), n)
			}
		})
	}
}

func TestConcurrentWriters(t *testing.T) {
	_, c := newContainer(t, Options{}, ContainerSpec{Throughput: &Throughput{Manual: 12000}})
	mustCreate(t, c, item("counter", "shared", `,"n":0`))
	const writers, each = 64, 50
	var wg sync.WaitGroup
	var mu sync.Mutex
	increments := 0
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if _, err := c.CreateItem(item(fmt.Sprintf("w%d-%d", w, i), fmt.Sprintf("p%d", (w*each+i)%17), ""), ItemOptions{}); err != nil {
					t.Error(err)
					return
				}
				// Optimistic concurrency on one hot item: read, then replace with If-Match.
				r, err := c.ReadItem(key("shared"), "counter")
				if err != nil {
					t.Error(err)
					return
				}
				n := field(t, r.Doc, "n").(float64)
				_, err = c.ReplaceItem("counter", item("counter", "shared", fmt.Sprintf(`,"n":%d`, int(n)+1)), ItemOptions{IfMatch: r.ETag})
				switch {
				case err == nil:
					mu.Lock()
					increments++
					mu.Unlock()
				case !errors.Is(err, fault.PreconditionFailed):
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	total := int64(0)
	ids := map[string]int{}
	for _, p := range c.partitions() {
		total += p.Stats().Items
		p.Scan([]epk.Range{epk.All}, 0, func(d partitionDoc) bool { ids[d.ID()]++; return true })
	}
	if total != writers*each+1 || len(ids) != writers*each+1 {
		t.Fatalf("stats count %d items, scan finds %d distinct, want %d", total, len(ids), writers*each+1)
	}
	for id, n := range ids {
		if n != 1 {
			t.Fatalf("item %s stored %d times", id, n)
		}
	}
	r, _ := c.ReadItem(key("shared"), "counter")
	if got := int(field(t, r.Doc, "n").(float64)); got != increments || increments == 0 {
		t.Fatalf("counter is %d after %d successful conditional replaces", got, increments)
	}
}

// snapshot is every key and value in storage, to prove failed requests change nothing.
func snapshot(t *testing.T, e *Engine) string {
	t.Helper()
	it, err := e.db.NewIter(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var b strings.Builder
	for it.First(); it.Valid(); it.Next() {
		if _, kind, _, err := storage.ParseRaftKey(it.Key()); err == nil && kind == storage.RaftTombstone {
			continue // a dropped replica's tombstone stays, by design (replication.Host.Drop)
		}
		fmt.Fprintf(&b, "%x=%x\n", it.Key(), it.Value())
	}
	return b.String()
}

func TestErrorsChangeNothing(t *testing.T) {
	e, c := newContainer(t, Options{MaxLogicalPartitionBytes: 4096}, ContainerSpec{})
	existing := mustCreate(t, c, item("exists", "p", ""))
	mustCreate(t, c, item("exists-too", "p", ""))
	mustCreate(t, c, item("big-1", "full", `,"pad":"`+strings.Repeat("x", 3000)+`"`))
	big := `,"pad":"` + strings.Repeat("x", 2<<20) + `"`
	cases := []struct {
		name string
		do   func() (ItemResult, error)
		kind fault.Kind
	}{
		{"item over 2 MB", func() (ItemResult, error) { return c.CreateItem(item("x", "p", big), ItemOptions{}) }, fault.TooLarge},
		{"empty id", func() (ItemResult, error) { return c.CreateItem(item("", "p", ""), ItemOptions{}) }, fault.BadRequest},
		{"id over 1,023 bytes", func() (ItemResult, error) {
			return c.CreateItem(item(strings.Repeat("é", 512), "p", ""), ItemOptions{})
		}, fault.BadRequest},
		{"id with /", func() (ItemResult, error) { return c.CreateItem(item("a/b", "p", ""), ItemOptions{}) }, fault.BadRequest},
		{`id with \`, func() (ItemResult, error) { return c.CreateItem(item(`a\b`, "p", ""), ItemOptions{}) }, fault.BadRequest},
		{"id with ?", func() (ItemResult, error) { return c.CreateItem(item("a?b", "p", ""), ItemOptions{}) }, fault.BadRequest},
		{"id with #", func() (ItemResult, error) { return c.UpsertItem(item("a#b", "p", ""), ItemOptions{}) }, fault.BadRequest},
		{"id not a string", func() (ItemResult, error) { return c.CreateItem([]byte(`{"id":5,"pk":"p"}`), ItemOptions{}) }, fault.BadRequest},
		{"no id", func() (ItemResult, error) { return c.CreateItem([]byte(`{"pk":"p"}`), ItemOptions{}) }, fault.BadRequest},
		{"malformed JSON", func() (ItemResult, error) { return c.CreateItem([]byte(`{"id":"x",`), ItemOptions{}) }, fault.BadRequest},
		{"not an object", func() (ItemResult, error) { return c.CreateItem([]byte(`[1,2]`), ItemOptions{}) }, fault.BadRequest},
		{"partition key over 2 KB", func() (ItemResult, error) {
			return c.CreateItem(item("x", strings.Repeat("k", 2049), ""), ItemOptions{})
		}, fault.BadRequest},
		{"partition key is an object, named as another key", func() (ItemResult, error) {
			return c.CreateItem([]byte(`{"id":"x","pk":{"a":1}}`), ItemOptions{PartitionKey: key("p")})
		}, fault.BadRequest},
		{"named key differs from the body's", func() (ItemResult, error) {
			return c.CreateItem(item("x", "p", ""), ItemOptions{PartitionKey: key("other")})
		}, fault.BadRequest},
		{"duplicate create", func() (ItemResult, error) { return c.CreateItem(item("exists", "p", ""), ItemOptions{}) }, fault.Conflict},
		{"stale If-Match", func() (ItemResult, error) {
			return c.ReplaceItem("exists", item("exists", "p", `,"v":2`), ItemOptions{IfMatch: "00000000-0000-0000-0000-000000000000"})
		}, fault.PreconditionFailed},
		{"stale If-Match on delete", func() (ItemResult, error) {
			return c.DeleteItem(key("p"), "exists", ItemOptions{IfMatch: existing.ETag + "x"})
		}, fault.PreconditionFailed},
		{"replace of a missing item", func() (ItemResult, error) {
			return c.ReplaceItem("missing", item("missing", "p", ""), ItemOptions{})
		}, fault.NotFound},
		{"replace renaming onto a taken id", func() (ItemResult, error) {
			return c.ReplaceItem("exists-too", item("exists", "p", ""), ItemOptions{})
		}, fault.Conflict},
		{"delete of a missing item", func() (ItemResult, error) { return c.DeleteItem(key("p"), "missing", ItemOptions{}) }, fault.NotFound},
		{"read with a two-value key", func() (ItemResult, error) {
			return c.ReadItem(epk.Key{epk.String("p"), epk.String("q")}, "exists")
		}, fault.BadRequest},
		{"logical partition over its cap", func() (ItemResult, error) {
			return c.CreateItem(item("big-2", "full", `,"pad":"`+strings.Repeat("x", 3000)+`"`), ItemOptions{})
		}, fault.PartitionFull},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := snapshot(t, e)
			r, err := tc.do()
			var se *fault.Error
			if !asStatus(err, &se) || se.Kind != tc.kind {
				t.Fatalf("got %v, want %v", err, tc.kind)
			}
			if se.Message == "" || r.Charge <= 0 {
				t.Fatalf("an error needs a message and a charge: %+v %+v", se, r)
			}
			if after := snapshot(t, e); after != before {
				t.Fatal("a failed request changed storage")
			}
		})
	}
	// A write that shrinks a full logical partition is still allowed.
	if _, err := c.ReplaceItem("big-1", item("big-1", "full", ""), ItemOptions{}); err != nil {
		t.Fatalf("shrinking a full logical partition: %v", err)
	}
}

// Hash version 1 keeps only 100 characters of a key, so longer keys are refused rather than
// allowed to collide.
func TestLongKeysNeedVersion2(t *testing.T) {
	_, v1 := newContainer(t, Options{}, ContainerSpec{PartitionKey: PartitionKeyDef{Paths: []string{"/pk"}, Version: 1}})
	long := strings.Repeat("a", 100)
	mustCreate(t, v1, item("x", long, ""))
	if _, err := v1.CreateItem(item("x", long+"1", ""), ItemOptions{}); !errors.Is(err, fault.BadRequest) {
		t.Fatalf("a 101-byte key in a v1 container: %v", err)
	}
	if _, err := v1.ReadItem(key(long+"2"), "x"); !errors.Is(err, fault.BadRequest) {
		t.Fatalf("reading with a 101-byte key in a v1 container: %v", err)
	}
	_, v2 := newContainer(t, Options{}, ContainerSpec{})
	mustCreate(t, v2, item("x", long+"1", ""))
	mustCreate(t, v2, item("x", long+"2", ""))
}

// A patch condition runs where every write of its partition waits, so its work is bounded.
func TestPatchConditionIsBounded(t *testing.T) {
	_, c := newContainer(t, Options{}, ContainerSpec{})
	arr := strings.Repeat("1,", 1999) + "1"
	mustCreate(t, c, item("big", "p", `,"arr":[`+arr+`]`))
	cond, err := query.PrepareCondition("FROM c JOIN x IN c.arr JOIN y IN c.arr JOIN z IN c.arr WHERE x + y + z = 0")
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.PatchItem(key("p"), "big", Patch{Ops: []document.PatchOp{{Op: "set", Path: "/a", Value: []byte("1")}}, Condition: cond}, ItemOptions{})
	if !errors.Is(err, fault.BadRequest) {
		t.Fatalf("an unbounded condition: %v", err)
	}
	if _, err := c.CreateItem(item("next", "p", ""), ItemOptions{}); err != nil {
		t.Fatalf("the partition must still take writes: %v", err)
	}
}

func TestCatalogValidation(t *testing.T) {
	e := openEngine(t, t.TempDir(), Options{})
	defer e.Close()
	if _, err := e.CreateDatabase("db", nil); err != nil {
		t.Fatal(err)
	}
	bad := []ContainerSpec{
		{ID: "c", PartitionKey: PartitionKeyDef{}},
		{ID: "c", PartitionKey: PartitionKeyDef{Paths: []string{"pk"}}},
		{ID: "c", PartitionKey: PartitionKeyDef{Paths: []string{"/a", "/b", "/c", "/d"}}},
		{ID: "c", PartitionKey: PartitionKeyDef{Paths: []string{"/a", "/b"}, Kind: "Hash"}},
		{ID: "c", PartitionKey: PartitionKeyDef{Paths: []string{"/a"}, Kind: "Range"}},
		{ID: "c", PartitionKey: PartitionKeyDef{Paths: []string{"/a"}, Version: 3}},
		{ID: "c", PartitionKey: PartitionKeyDef{Paths: []string{"/a", "/b"}, Kind: "MultiHash", Version: 1}},
		{ID: "c", PartitionKey: PartitionKeyDef{Paths: []string{"/a/*"}}},
		{ID: "c/d", PartitionKey: PartitionKeyDef{Paths: []string{"/a"}}},
		{ID: "c", PartitionKey: PartitionKeyDef{Paths: []string{"/a"}}, Throughput: &Throughput{Manual: 300}},
		{ID: "c", PartitionKey: PartitionKeyDef{Paths: []string{"/a"}}, Throughput: &Throughput{Manual: 450}},
		{ID: "c", PartitionKey: PartitionKeyDef{Paths: []string{"/a"}}, Throughput: &Throughput{AutoscaleMax: 500}},
		{ID: "c", PartitionKey: PartitionKeyDef{Paths: []string{"/a"}}, Throughput: &Throughput{Manual: 400, AutoscaleMax: 1000}},
	}
	for _, spec := range bad {
		if _, err := e.CreateContainer("db", spec); !errors.Is(err, fault.BadRequest) {
			t.Errorf("%+v: got %v, want 400", spec, err)
		}
	}
	if _, err := e.CreateContainer("nodb", ContainerSpec{ID: "c", PartitionKey: PartitionKeyDef{Paths: []string{"/a"}}}); !errors.Is(err, fault.NotFound) {
		t.Errorf("container in a missing database: %v", err)
	}
	if cs, _ := e.Containers("db"); len(cs) != 0 {
		t.Fatalf("failed creates left containers: %+v", cs)
	}
	for _, tc := range []struct {
		t    Throughput
		want int
	}{{Throughput{Manual: 400}, 1}, {Throughput{Manual: 6000}, 1}, {Throughput{Manual: 6100}, 2}, {Throughput{AutoscaleMax: 40000}, 4}} {
		info, err := e.CreateContainer("db", ContainerSpec{ID: fmt.Sprint(tc.t), PartitionKey: PartitionKeyDef{Paths: []string{"/a"}}, Throughput: &tc.t})
		if err != nil || len(info.Partitions) != tc.want {
			t.Errorf("%+v: %d partitions (%v), want %d", tc.t, len(info.Partitions), err, tc.want)
		}
	}
}

func TestDeleteContainerRemovesItsData(t *testing.T) {
	e, c := newContainer(t, Options{}, ContainerSpec{})
	empty := snapshot(t, e)
	if _, err := e.CreateContainer("db", ContainerSpec{ID: "other", PartitionKey: PartitionKeyDef{Paths: []string{"/pk"}}}); err != nil {
		t.Fatal(err)
	}
	o, _ := e.Container("db", "other")
	for i := range 50 {
		mustCreate(t, o, item(fmt.Sprint(i), "p", ""))
	}
	if err := e.DeleteContainer("db", "other", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Container("db", "other"); !errors.Is(err, fault.NotFound) {
		t.Fatalf("deleted container still found: %v", err)
	}
	// Only the catalog counters may differ from before the container existed.
	if added, removed := keysChanged(t, e, empty); len(added)+len(removed) > 0 {
		t.Fatalf("the delete left keys that were not there before the container existed: %q, and removed some that were: %q", added, removed)
	}
	_ = c
}

// keysChanged returns the keys storage gained and lost since before, a snapshot, leaving out
// the log entries of the Raft groups that had state in before: a replica that comes to lead
// proposes its lease in a goroutine of its own (partition.SetLeader), so the log of a
// partition nobody writes to may grow by one entry at any time after it is created.
func keysChanged(t *testing.T, e *Engine, before string) (added, removed []string) {
	t.Helper()
	keys := func(snap string) map[string]bool {
		ks := map[string]bool{}
		for line := range strings.Lines(snap) {
			k, _, _ := strings.Cut(line, "=")
			ks[k] = true
		}
		return ks
	}
	// raftKey reads a Raft key's group and kind; ok is false for any other key.
	raftKey := func(k string) (group uint64, kind byte, ok bool) {
		raw, err := hex.DecodeString(k)
		if err != nil {
			return 0, 0, false
		}
		g, kind, _, err := storage.ParseRaftKey(raw)
		return g, kind, err == nil
	}
	had, has := keys(before), keys(snapshot(t, e))
	groups := map[uint64]bool{}
	for k := range had {
		if g, _, ok := raftKey(k); ok {
			groups[g] = true
		}
	}
	for k := range has {
		if g, kind, ok := raftKey(k); !had[k] && !(ok && kind == storage.RaftEntry && groups[g]) {
			added = append(added, k)
		}
	}
	for k := range had {
		if _, kind, ok := raftKey(k); !has[k] && !(ok && kind == storage.RaftEntry) {
			removed = append(removed, k)
		}
	}
	return added, removed
}

// Reads are served from the row cache when they can, but never with a version older than a
// write already acknowledged, nor older than one the same reader saw before.
func TestReadsNeverGoBackInTime(t *testing.T) {
	_, c := newContainer(t, Options{}, ContainerSpec{})
	const items, versions = 4, 300
	var acked [items]atomic.Int64
	for i := range items {
		mustCreate(t, c, item(fmt.Sprint(i), "k", `,"v":0`))
	}
	var wg sync.WaitGroup
	done := make(chan struct{})
	errs := make(chan error, 2*items)
	for i := range items {
		wg.Add(1)
		go func() { // one writer per item: versions 1, 2, ...
			defer wg.Done()
			for v := 1; v <= versions; v++ {
				if _, err := c.ReplaceItem(fmt.Sprint(i), item(fmt.Sprint(i), "k", fmt.Sprintf(`,"v":%d`, v)), ItemOptions{}); err != nil {
					errs <- err
					return
				}
				acked[i].Store(int64(v))
			}
		}()
	}
	var readers sync.WaitGroup
	for range items {
		readers.Add(1)
		go func() {
			defer readers.Done()
			var seen [items]int64
			for n := 0; ; n++ {
				select {
				case <-done:
					return
				default:
				}
				i := n % items
				floor := max(acked[i].Load(), seen[i])
				r, err := c.ReadItem(key("k"), fmt.Sprint(i))
				if err != nil {
					errs <- err
					return
				}
				var doc struct{ V int64 }
				if err := json.Unmarshal(r.Doc, &doc); err != nil {
					errs <- err
					return
				}
				if doc.V < floor {
					errs <- fmt.Errorf("item %d: read version %d after version %d was acknowledged or seen", i, doc.V, floor)
					return
				}
				seen[i] = doc.V
			}
		}()
	}
	wg.Wait()
	close(done)
	readers.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// A replace that sends back an equivalent policy changes nothing; one that changes the
// indexed paths is accepted and followed at once (reindex.go); one that is not valid is refused.
func TestReplaceContainerPolicy(t *testing.T) {
	e, _ := newContainer(t, Options{}, ContainerSpec{})
	pk := PartitionKeyDef{Paths: []string{"/pk"}, Version: 2}
	def := json.RawMessage(`{"indexingMode":"consistent","automatic":true,"includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/\"_etag\"/?"}]}`)
	if _, err := e.ReplaceContainer("db", "c", ContainerReplace{PartitionKey: pk, Indexing: def}); err != nil {
		t.Fatalf("replace with the default policy: %v", err)
	}
	if _, err := e.ReplaceContainer("db", "c", ContainerReplace{PartitionKey: pk, Indexing: nil}); err != nil {
		t.Fatalf("replace without a policy: %v", err)
	}
	// Excluding every path still indexes id and _ts (indexing.AlwaysIndexed): the other
	// entries go in a rebuild. Mode none drops the index at once.
	lean := json.RawMessage(`{"includedPaths":[],"excludedPaths":[{"path":"/*"}]}`)
	info, err := e.ReplaceContainer("db", "c", ContainerReplace{PartitionKey: pk, Indexing: lean})
	if err != nil || string(info.Indexing) != string(lean) {
		t.Fatalf("replace that excludes every path: %s %v", info.Indexing, err)
	}
	none := json.RawMessage(`{"indexingMode":"none"}`)
	info, err = e.ReplaceContainer("db", "c", ContainerReplace{PartitionKey: pk, Indexing: none})
	if err != nil || string(info.Indexing) != string(none) || info.IndexProgress != 100 {
		t.Fatalf("replace that stops indexing: %s %d%% %v", info.Indexing, info.IndexProgress, err)
	}
	if _, err := e.ReplaceContainer("db", "c", ContainerReplace{PartitionKey: pk, Indexing: json.RawMessage(`{"indexingMode":"sometimes"}`)}); !errors.Is(err, fault.BadRequest) {
		t.Fatalf("replace with an invalid policy: %v, want BadRequest", err)
	}
}

// Item ids may be up to 1,023 bytes and partition keys up to 2 KB: items with both at their
// limit are written, read, replaced and deleted like any other (their storage keys are longer
// than the buffers the write path keeps on the stack).
func TestLongIDAndKey(t *testing.T) {
	_, c := newContainer(t, Options{}, ContainerSpec{})
	id := strings.Repeat("😀", 255) + "abc"
	pk := strings.Repeat("k", 2000)
	if len(id) != 1023 {
		t.Fatalf("id of %d bytes", len(id))
	}
	mustCreate(t, c, item(id, pk, `,"v":1`))
	if _, err := c.ReplaceItem(id, item(id, pk, `,"v":2`), ItemOptions{}); err != nil {
		t.Fatal(err)
	}
	r, err := c.ReadItem(key(pk), id)
	if err != nil || !strings.Contains(string(r.Doc), `"v":2`) {
		t.Fatalf("read: %v %.80s", err, r.Doc)
	}
	if _, err := c.DeleteItem(key(pk), id, ItemOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ReadItem(key(pk), id); !errors.Is(err, fault.NotFound) {
		t.Fatalf("read after delete: %v", err)
	}
}
