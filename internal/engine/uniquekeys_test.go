package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/storage"
)

var emailKey = json.RawMessage(`{"uniqueKeys":[{"paths":["/email"]}]}`)

// Many writers create items with colliding unique values in a few logical partitions while
// the container splits: of the creates of one value in one logical partition exactly one
// succeeds, the others get Conflict, and storage ends with one entry per item.
func TestUniqueKeysUnderConcurrentWriters(t *testing.T) {
	e, c := newContainer(t, Options{}, ContainerSpec{UniqueKeys: emailKey})
	const writers, values = 8, 40
	pks := []string{"a", "b", "c", "d"}
	type slot struct{ pk, email string }
	var mu sync.Mutex
	wins := map[slot][]string{}
	other := 0
	var wg sync.WaitGroup
	start := make(chan struct{})
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for v := range values {
				for _, pk := range pks {
					id := fmt.Sprintf("w%d-v%d", w, v)
					_, err := c.CreateItem(item(id, pk, fmt.Sprintf(`,"email":"v%d"`, v)), ItemOptions{})
					mu.Lock()
					switch {
					case err == nil:
						wins[slot{pk, fmt.Sprint(v)}] = append(wins[slot{pk, fmt.Sprint(v)}], id)
					case !errors.Is(err, fault.Conflict):
						other++
						t.Errorf("create %s/%s: %v", pk, id, err)
					}
					mu.Unlock()
				}
			}
		}()
	}
	// A split in the middle of it: a logical partition never splits, and the entries stay.
	wg.Add(1)
	go func() {
		defer wg.Done()
		<-start
		at, err := c.EPK(key("c"))
		if err != nil {
			t.Error(err)
			return
		}
		if err := e.split(c, c.PartitionID(at), at); err != nil {
			t.Errorf("split: %v", err)
		}
	}()
	close(start)
	wg.Wait()
	for _, pk := range pks {
		for v := range values {
			if got := wins[slot{pk, fmt.Sprint(v)}]; len(got) != 1 {
				t.Errorf("email v%d in %s: %d creates succeeded (%v), want exactly 1", v, pk, len(got), got)
			}
		}
	}
	if n := len(c.partitions()); n < 2 {
		t.Errorf("the container has %d partitions after the split", n)
	}
	if u := c.Usage(); u.Items != int64(len(pks)*values) {
		t.Errorf("the container holds %d items, want %d", u.Items, len(pks)*values)
	}
	if n := countUniqueEntries(t, e, c); n != len(pks)*values {
		t.Errorf("storage holds %d unique key entries, want %d", n, len(pks)*values)
	}
}

func countUniqueEntries(t *testing.T, e *Engine, c *Container) int {
	t.Helper()
	lo, hi := storage.UniqueContainerSpan(c.rec.Num)
	return countSpan(t, e, lo, hi)
}

// The policy is validated at creation, returned with the container, kept across restarts and
// never changed by a replace.
func TestUniqueKeyPolicyLifecycle(t *testing.T) {
	dir := t.TempDir()
	e := openEngine(t, dir, Options{})
	if _, err := e.CreateDatabase("db", nil); err != nil {
		t.Fatal(err)
	}
	pk := PartitionKeyDef{Paths: []string{"/pk"}, Version: 2}
	for _, bad := range []string{
		`{"uniqueKeys":[{"paths":["/a/*"]}]}`,
		`{"uniqueKeys":[{"paths":["/a","/a"]}]}`,
		`{"uniqueKeys":[{"paths":["/a"]},{"paths":["/a"]}]}`,
		`{"uniqueKeys":{}}`,
	} {
		if _, err := e.CreateContainer("db", ContainerSpec{ID: "bad", PartitionKey: pk, UniqueKeys: json.RawMessage(bad)}); !errors.Is(err, fault.BadRequest) {
			t.Errorf("create with %s: %v, want BadRequest", bad, err)
		}
	}
	policy := `{"uniqueKeys":[{"paths":["/email"]},{"paths":["/first","/last"]}]}`
	info, err := e.CreateContainer("db", ContainerSpec{ID: "u", PartitionKey: pk, UniqueKeys: json.RawMessage(policy)})
	if err != nil {
		t.Fatal(err)
	}
	if string(info.UniqueKeys) != policy {
		t.Errorf("created container's policy: %s", info.UniqueKeys)
	}
	plain, err := e.CreateContainer("db", ContainerSpec{ID: "plain", PartitionKey: pk})
	if err != nil {
		t.Fatal(err)
	}
	if string(plain.UniqueKeys) != `{"uniqueKeys":[]}` {
		t.Errorf("container without unique keys reports %s", plain.UniqueKeys)
	}
	for _, tc := range []struct {
		container, policy string
		ok                bool
	}{
		{"u", ``, true},
		{"u", `null`, true},
		{"u", policy, true},
		{"u", `{"uniqueKeys":[{"paths":["/last","/first"]},{"paths":["/email"]}]}`, true},
		{"u", `{"uniqueKeys":[{"paths":["/email"]}]}`, false},
		{"u", `{"uniqueKeys":[]}`, false},
		{"plain", `{"uniqueKeys":[]}`, true},
		{"plain", `{"uniqueKeys":[{"paths":["/email"]}]}`, false},
	} {
		_, err := e.ReplaceContainer("db", tc.container, ContainerReplace{UniqueKeys: json.RawMessage(tc.policy)})
		if (err == nil) != tc.ok || err != nil && !errors.Is(err, fault.BadRequest) {
			t.Errorf("replace %s with %q: %v, want ok=%v", tc.container, tc.policy, err, tc.ok)
		}
	}
	c, _ := e.Container("db", "u")
	mustCreate(t, c, item("1", "p", `,"email":"x","first":"A","last":"B"`))
	e.Close()

	e = openEngine(t, dir, Options{})
	defer e.Close()
	info, err = e.ContainerInfo("db", "u")
	if err != nil || string(info.UniqueKeys) != policy {
		t.Fatalf("after restart: %s, %v", info.UniqueKeys, err)
	}
	c, _ = e.Container("db", "u")
	if _, err := c.CreateItem(item("2", "p", `,"email":"x","first":"C"`), ItemOptions{}); !errors.Is(err, fault.Conflict) {
		t.Fatalf("duplicate email after restart: %v", err)
	}
	if _, err := c.CreateItem(item("2", "p", `,"email":"y","first":"A","last":"B"`), ItemOptions{}); !errors.Is(err, fault.Conflict) {
		t.Fatalf("duplicate name after restart: %v", err)
	}
}

// Each kind of write is checked, and a refused one changes nothing.
func TestUniqueKeyViolationsChangeNothing(t *testing.T) {
	e, c := newContainer(t, Options{}, ContainerSpec{UniqueKeys: emailKey})
	mustCreate(t, c, item("1", "p", `,"email":"x"`))
	mustCreate(t, c, item("2", "p", `,"email":"y"`))
	before := snapshot(t, e)
	conflict := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, fault.Conflict) {
			t.Errorf("%s: %v, want Conflict", what, err)
		}
	}
	_, err := c.CreateItem(item("3", "p", `,"email":"x"`), ItemOptions{})
	conflict("create", err)
	_, err = c.ReplaceItem("2", item("2", "p", `,"email":"x"`), ItemOptions{})
	conflict("replace", err)
	_, err = c.UpsertItem(item("2", "p", `,"email":"x"`), ItemOptions{})
	conflict("upsert of an existing item", err)
	_, err = c.UpsertItem(item("3", "p", `,"email":"x"`), ItemOptions{})
	conflict("upsert of a new item", err)
	_, err = c.PatchItem(key("p"), "2", Patch{Ops: []document.PatchOp{{Op: "set", Path: "/email", Value: json.RawMessage(`"x"`)}}}, ItemOptions{})
	conflict("patch", err)
	results, failed, err := c.ExecuteBatch(context.Background(), key("p"), []BatchOp{
		{Kind: OpCreate, Item: document.FromJSON(item("3", "p", `,"email":"z"`))},
		{Kind: OpUpsert, Item: document.FromJSON(item("4", "p", `,"email":"z"`))},
	})
	if err != nil || failed != 1 || !errors.Is(results[1].Err, fault.Conflict) || !errors.Is(results[0].Err, fault.Aborted) {
		t.Errorf("batch: failed at %d, %v, results %+v", failed, err, results)
	}
	if snapshot(t, e) != before {
		t.Error("refused writes changed storage")
	}
	// A missing value is a value too: once item 2 has no email, item 1 cannot lose its own.
	_, err = c.PatchItem(key("p"), "2", Patch{Ops: []document.PatchOp{{Op: "remove", Path: "/email"}}}, ItemOptions{})
	if err != nil {
		t.Fatalf("patch removing the email: %v", err)
	}
	before = snapshot(t, e)
	_, err = c.PatchItem(key("p"), "1", Patch{Ops: []document.PatchOp{{Op: "remove", Path: "/email"}}}, ItemOptions{})
	conflict("patch removing a second email", err)
	_, err = c.UpsertItem(item("1", "p", `,"email":null`), ItemOptions{})
	conflict("upsert of a null email", err)
	if snapshot(t, e) != before {
		t.Error("refused writes changed storage")
	}
	// Another logical partition is free to use the same values.
	mustCreate(t, c, item("1", "q", `,"email":"x"`))
}

// Deleting a container removes its unique key entries with the rest of its data.
func TestDeleteContainerRemovesUniqueEntries(t *testing.T) {
	e, _ := newContainer(t, Options{}, ContainerSpec{})
	empty := snapshot(t, e)
	if _, err := e.CreateContainer("db", ContainerSpec{ID: "u", PartitionKey: PartitionKeyDef{Paths: []string{"/pk"}}, UniqueKeys: emailKey}); err != nil {
		t.Fatal(err)
	}
	u, _ := e.Container("db", "u")
	for i := range 20 {
		mustCreate(t, u, item(fmt.Sprint(i), "p", fmt.Sprintf(`,"email":"e%d"`, i)))
	}
	if n := countUniqueEntries(t, e, u); n != 20 {
		t.Fatalf("%d entries before the delete", n)
	}
	if err := e.DeleteContainer("db", "u", ""); err != nil {
		t.Fatal(err)
	}
	if added, removed := keysChanged(t, e, empty); len(added)+len(removed) > 0 {
		t.Fatalf("the delete left keys that were not there before the container existed: %q, and removed some that were: %q", added, removed)
	}
}
