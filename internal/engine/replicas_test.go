package engine

import (
	"fmt"
	"testing"

	"github.com/partita-db/partita/internal/catalog"
	"github.com/partita-db/partita/internal/storage"
)

// groups counts the replicas whose Raft state the store holds.
func groups(t *testing.T, e *Engine) int {
	t.Helper()
	span := storage.RaftGroupsSpan()
	it, err := e.db.NewIter(span.Start, span.End)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	n := 0
	for it.First(); it.Valid(); it.Next() {
		if _, kind, _, err := storage.ParseRaftKey(it.Key()); err == nil && kind == storage.RaftReplica {
			n++
		}
	}
	return n
}

// A data directory of the direct path opens with replicated partitions: each partition
// becomes the only replica of a new group over what it holds, and serves it.
func TestReplicatedOpensADirectPathDirectory(t *testing.T) {
	dir := t.TempDir()
	e := openEngine(t, dir, Options{MinPartitions: 3})
	if _, err := e.CreateDatabase("db", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := e.CreateContainer("db", ContainerSpec{ID: "c", PartitionKey: PartitionKeyDef{Paths: []string{"/pk"}, Version: 2}}); err != nil {
		t.Fatal(err)
	}
	c, _ := e.Container("db", "c")
	for i := range 100 {
		mustCreate(t, c, item(fmt.Sprint(i), fmt.Sprint("k", i%10), ""))
	}
	e.Close()
	e = openEngine(t, dir, Options{MinPartitions: 3, Replicated: true})
	defer e.Close()
	if n := groups(t, e); n != 3 {
		t.Fatalf("%d groups for 3 partitions", n)
	}
	c, _ = e.Container("db", "c")
	for i := range 100 {
		if _, err := c.ReadItem(key(fmt.Sprint("k", i%10)), fmt.Sprint(i)); err != nil {
			t.Fatalf("item %d: %v", i, err)
		}
	}
	mustCreate(t, c, item("new", "k1", ""))
	if u := c.Usage(); u.Items != 101 {
		t.Fatalf("%d items, want 101", u.Items)
	}
}

// The groups of a container whose record is gone (the process stopped after a deletion
// committed, before it dropped them) are dropped at the next start.
func TestReplicatedGroupsOfADeletedContainerAreDropped(t *testing.T) {
	dir := t.TempDir()
	e := openEngine(t, dir, Options{MinPartitions: 2, Replicated: true})
	if _, err := e.CreateDatabase("db", nil); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"kept", "gone"} {
		if _, err := e.CreateContainer("db", ContainerSpec{ID: id, PartitionKey: PartitionKeyDef{Paths: []string{"/pk"}, Version: 2}}); err != nil {
			t.Fatal(err)
		}
	}
	c, _ := e.Container("db", "kept")
	mustCreate(t, c, item("a", "p", ""))
	gone, _ := e.Container("db", "gone")
	num := gone.num
	e.Close()
	// What a stop between the deletion's commit and the drop leaves: the record gone, the
	// groups still there.
	db, err := storage.Open(dir+"/db", storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	store := catalog.NewLocal(db)
	cur, err := store.Load()
	if err == nil {
		_, err = store.Commit(catalog.Change{Counters: cur.Counters, Delete: []catalog.Key{{Kind: catalog.Containers, Num: num}}})
	}
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	e = openEngine(t, dir, Options{MinPartitions: 2, Replicated: true})
	defer e.Close()
	if n := groups(t, e); n != 2 {
		t.Fatalf("%d groups after the start, want the 2 of the container kept", n)
	}
	c, _ = e.Container("db", "kept")
	if _, err := c.ReadItem(key("p"), "a"); err != nil {
		t.Fatal(err)
	}
}
