package engine

import (
	"fmt"
	"slices"
	"testing"

	"github.com/partita-db/partita/internal/catalog"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/partition"
	"github.com/partita-db/partita/internal/replica"
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

// untaken makes c's routing table what a node of a cluster holds of a container whose two
// partitions it reads elsewhere, while the host has opened replicas of them (their snapshots
// came) that no container took yet. With split, the range held elsewhere is their parent's,
// one range that split there. It returns the replicas.
func untaken(t *testing.T, e *Engine, c *Container, split bool) []*partition.Partition {
	t.Helper()
	rs := e.replicas
	rs.mu.Lock()
	defer rs.mu.Unlock()
	ps := c.routes.Load().parts
	if len(ps) != 2 {
		t.Fatalf("%d partitions, want 2", len(ps))
	}
	var remote []remoteRange
	for _, p := range ps {
		rs.opened[replica.Group(c.num, p.ID())] = p
		remote = append(remote, remoteRange{id: p.ID(), r: p.Range()})
	}
	if split {
		remote = []remoteRange{{id: 99, r: epk.Range{Min: ps[0].Range().Min, Max: ps[1].Range().Max}}}
	}
	c.routes.Store(&routing{remote: remote})
	return ps
}

// A node that opened replicas of a split's children before its catalog named them routes to
// them once it does: the catalog's refresh takes them in.
func TestReplicatedChildrenOpenedBeforeTheCatalogAreTaken(t *testing.T) {
	e := openEngine(t, t.TempDir(), Options{MinPartitions: 2, Replicated: true})
	defer e.Close()
	c := replicatedContainer(t, e)
	kids := untaken(t, e, c, true)
	e.mu.Lock()
	e.replicas.refreshRemote(c)
	e.mu.Unlock()
	rt := c.routes.Load()
	if len(rt.remote) != 0 || !slices.Equal(rt.parts, kids) {
		t.Fatalf("after the refresh the table has %d replicas and %d ranges elsewhere, want the 2 children here", len(rt.parts), len(rt.remote))
	}
	e.replicas.mu.Lock()
	left := len(e.replicas.opened)
	e.replicas.mu.Unlock()
	if left != 0 {
		t.Fatalf("%d replicas still untaken", left)
	}
}

// A replica opened and not taken, whose removal from its group the host reports (its data is
// deleted), is never taken after.
func TestReplicatedRemovedReplicaIsNotTaken(t *testing.T) {
	e := openEngine(t, t.TempDir(), Options{MinPartitions: 2, Replicated: true})
	defer e.Close()
	c := replicatedContainer(t, e)
	ps := untaken(t, e, c, false)
	e.replicaRemoved(replica.Group(c.num, ps[1].ID()))
	rs := e.replicas
	rs.mu.Lock()
	rs.adopt(c)
	rt := c.routes.Load()
	c.routes.Store(&routing{parts: ps}) // for Close
	rs.mu.Unlock()
	if !slices.Equal(rt.parts, ps[:1]) || len(rt.remote) != 1 || rt.remote[0].id != ps[1].ID() {
		t.Fatalf("after the removal the table has %d replicas here and %d ranges elsewhere, want the first here and the second elsewhere", len(rt.parts), len(rt.remote))
	}
}

// replicatedContainer creates the container db/c, keyed by /pk.
func replicatedContainer(t *testing.T, e *Engine) *Container {
	t.Helper()
	if _, err := e.CreateDatabase("db", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := e.CreateContainer("db", ContainerSpec{ID: "c", PartitionKey: PartitionKeyDef{Paths: []string{"/pk"}, Version: 2}}); err != nil {
		t.Fatal(err)
	}
	c, _ := e.Container("db", "c")
	return c
}
