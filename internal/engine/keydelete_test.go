package engine

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/partita-db/partita/internal/clusterversion"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/query"
)

// keyDeleteQuery runs sql over the whole container and returns the ids (or numbers) it yields.
func keyDeleteQuery(t *testing.T, c *Container, sql string) []string {
	t.Helper()
	p, err := query.Prepare(sql)
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Query(p, epk.All, query.Options{MaxItems: 10000})
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	var out []string
	for _, v := range res.Results {
		if id := v.Get("id"); !id.IsUndefined() {
			out = append(out, id.Str())
		} else {
			out = append(out, fmt.Sprint(v.Num()))
		}
	}
	return out
}

// Deleting a partition key's items: they are gone for reads, queries and counts at once,
// while the other keys' stay; an id of the deleted key can be created again at once, and an
// item written after the request stays; the deletion survives a restart, follows the key into
// a split's children, and ends once the reaper deleted every item, which storage then no
// longer holds.
func TestDeleteAllItemsByPartitionKey(t *testing.T) {
	dir := t.TempDir()
	e := openEngine(t, dir, Options{MinPartitions: 2})
	if _, err := e.CreateDatabase("db", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := e.CreateContainer("db", ContainerSpec{ID: "c", PartitionKey: PartitionKeyDef{Paths: []string{"/pk"}, Version: 2}}); err != nil {
		t.Fatal(err)
	}
	c, _ := e.Container("db", "c")
	for i := range 150 {
		mustCreate(t, c, item(fmt.Sprintf("a%03d", i), "gone", `,"n":1`))
	}
	for i := range 20 {
		mustCreate(t, c, item(fmt.Sprintf("b%03d", i), "kept", `,"n":1`))
	}
	if _, err := c.DeleteAllItemsByPartitionKey(context.Background(), key("gone")); err != nil {
		t.Fatal(err)
	}
	check := func(when string, gone, kept int) {
		t.Helper()
		if _, err := c.ReadItem(key("gone"), "a008"); !errors.Is(err, fault.NotFound) {
			t.Fatalf("%s: read of a deleted key's item: %v", when, err)
		}
		if got := keyDeleteQuery(t, c, `SELECT c.id FROM c WHERE c.pk = "gone"`); len(got) != gone {
			t.Fatalf("%s: the deleted key's query found %d items, want %d", when, len(got), gone)
		}
		if got := keyDeleteQuery(t, c, `SELECT VALUE COUNT(1) FROM c`); len(got) != 1 || got[0] != fmt.Sprint(gone+kept) {
			t.Fatalf("%s: COUNT(1) = %v, want %d", when, got, gone+kept)
		}
		if got := keyDeleteQuery(t, c, `SELECT c.id FROM c ORDER BY c.id`); len(got) != gone+kept {
			t.Fatalf("%s: ORDER BY found %d items, want %d", when, len(got), gone+kept)
		}
	}
	check("at once", 0, 20)

	// An id of the deleted key is free again, and what is written after the request stays.
	mustCreate(t, c, item("a007", "gone", `,"n":2`))
	mustCreate(t, c, item("new", "gone", `,"n":2`))
	check("after two creates", 2, 20)
	if len(c.KeyDeletes()) != 1 {
		t.Fatalf("deletions in progress: %+v", c.KeyDeletes())
	}

	// A restart keeps the deletion.
	e.Close()
	e = openEngine(t, dir, Options{MinPartitions: 2})
	defer func() { e.Close() }()
	c, _ = e.Container("db", "c")
	check("after a restart", 2, 20)
	ks := c.KeyDeletes()
	if len(ks) != 1 || string(ks[0].Key) != `["gone"]` {
		t.Fatalf("deletions after the restart: %+v", ks)
	}

	// A split of the key's partition: the child that takes the key deletes it.
	if _, err := e.SplitPartition("db", "c", ks[0].Partition, nil); err != nil {
		t.Fatal(err)
	}
	check("after a split", 2, 20)

	for i := 0; len(c.KeyDeletes()) > 0; i++ {
		if i == 100 {
			t.Fatalf("the deletion never ended: %+v", c.KeyDeletes())
		}
		e.reapOnce(time.Now().Add(time.Duration(i) * time.Second))
	}
	check("once ended", 2, 20)
	stored := int64(0)
	for _, p := range c.info().Partitions {
		stored += p.Items
	}
	if stored != 22 {
		t.Fatalf("storage holds %d items once the deletion ended, want 22", stored)
	}
}

// A hierarchical key must be given whole, and a container that is gone is refused.
func TestDeleteAllItemsByPartitionKeyRefusals(t *testing.T) {
	e, c := newContainer(t, Options{}, ContainerSpec{PartitionKey: PartitionKeyDef{Paths: []string{"/a", "/b"}, Kind: "MultiHash", Version: 2}})
	_, err := c.DeleteAllItemsByPartitionKey(context.Background(), epk.Key{epk.String("x")})
	if !errors.Is(err, fault.BadRequest) {
		t.Fatalf("a partial hierarchical key: %v", err)
	}
	if err := e.DeleteContainer("db", "c", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DeleteAllItemsByPartitionKey(context.Background(), epk.Key{epk.String("x"), epk.String("y")}); !errors.Is(err, fault.NotFound) {
		t.Fatalf("a deleted container: %v", err)
	}
}

// In a cluster: a deletion asked through one node hides the key's items on every node (once
// each has the catalog's change, which carries it), the leader's node deletes them, and the
// deletion then ends on every node. A cluster at the previous release's version refuses it:
// its nodes would drop the deletion from the container's record.
func TestDeleteAllItemsByPartitionKeyInACluster(t *testing.T) {
	t.Run("v2", func(t *testing.T) {
		tc := newTestCluster(t, 3)
		tc.active = clusterversion.V2
		for id := 1; id <= 3; id++ {
			tc.start(id)
		}
		tc.createContainer(nil)
		c, err := tc.node(1).Container("db", "c")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.DeleteAllItemsByPartitionKey(context.Background(), key("gone")); !errors.Is(err, fault.BadRequest) {
			t.Fatalf("at cluster version v2: %v", err)
		}
	})
	tc := startTestCluster(t, 3)
	tc.createContainer(nil)
	c1, err := tc.node(1).Container("db", "c")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		eventually(t, fmt.Sprint("create ", i), func() error {
			_, err := c1.CreateItem(item(fmt.Sprintf("i%02d", i), []string{"gone", "kept"}[i%2], ""), ItemOptions{})
			if errors.Is(err, fault.Conflict) {
				return nil
			}
			return err
		})
	}
	eventually(t, "the deletion through node 2", func() error {
		c2, err := tc.node(2).Container("db", "c")
		if err != nil {
			return err
		}
		_, err = c2.DeleteAllItemsByPartitionKey(context.Background(), key("gone"))
		return err
	})
	for n := 1; n <= 3; n++ {
		c, err := tc.node(n).Container("db", "c")
		if err != nil {
			t.Fatal(err)
		}
		eventually(t, fmt.Sprintf("node %d hides the key's items", n), func() error {
			if got := keyDeleteQuery(t, c, `SELECT c.id FROM c`); len(got) != 20 {
				return fmt.Errorf("%d items", len(got))
			}
			return nil
		})
		eventually(t, fmt.Sprintf("node %d sees the deletion end", n), func() error {
			if ks := c.KeyDeletes(); len(ks) > 0 {
				return fmt.Errorf("%d deletions in progress", len(ks))
			}
			return nil
		})
	}
}

// The reaper's deletes of a partition key's items are plain deletes in the all-versions change
// feed, not expiries.
func TestKeyDeletesAreNotExpiriesInTheFeed(t *testing.T) {
	e, c := newContainer(t, Options{ChangeFeedRetention: time.Hour}, ContainerSpec{})
	mustCreate(t, c, item("a", "gone", ""))
	mustCreate(t, c, item("b", "gone", ""))
	if _, err := c.DeleteAllItemsByPartitionKey(context.Background(), key("gone")); err != nil {
		t.Fatal(err)
	}
	for i := 0; len(c.KeyDeletes()) > 0; i++ {
		if i == 10 {
			t.Fatal("the deletion never ended")
		}
		e.reapOnce(time.Now())
	}
	page, err := c.ChangeFeed(FeedQuery{Range: epk.All, AllVersions: true})
	if err != nil {
		t.Fatal(err)
	}
	deletes := 0
	for _, ch := range page.Changes {
		if ch.Op.String() == "delete" {
			deletes++
			if ch.Expired {
				t.Fatalf("the delete of %s is marked expired", ch.ID)
			}
		}
	}
	if deletes != 2 {
		t.Fatalf("%d deletes in the feed, want 2: %+v", deletes, page.Changes)
	}
}
