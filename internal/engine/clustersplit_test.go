package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/partita-db/partita/internal/fault"
)

// Splits in a cluster: on demand through a node that does not lead the partition, by raised
// throughput through another, and by size under writes through every node. Every node's
// routing and catalog end with the same ranges (parents included), every item is read through
// every node, and writes go on to the children through every node.
func TestClusterSplits(t *testing.T) {
	tc := newTestCluster(t, 3)
	tc.maxPartitionBytes = 96 << 10
	for id := 1; id <= 3; id++ {
		tc.start(id)
	}
	tc.createContainer(nil)
	written := 0
	pad := strings.Repeat("x", 900)
	write := func(n int) {
		t.Helper()
		for range n {
			i := written
			c, err := tc.node(i%3+1).Container("db", "c")
			if err != nil {
				t.Fatal(err)
			}
			eventually(t, fmt.Sprint("create ", i), func() error {
				_, err := c.CreateItem(item(fmt.Sprint(i), fmt.Sprint("k", i), fmt.Sprintf(`,"pad":%q`, pad)), ItemOptions{})
				if errors.Is(err, fault.Conflict) {
					return nil
				}
				return err
			})
			written++
		}
	}
	// same waits until every node routes and lists the same ranges, and reads every item.
	same := func(what string, atLeast int) []PartitionInfo {
		t.Helper()
		var first []PartitionInfo
		eventually(t, what, func() error {
			for id := 1; id <= 3; id++ {
				info, err := tc.node(id).ContainerInfo("db", "c")
				if err != nil {
					return err
				}
				if len(info.Partitions) < atLeast {
					return fmt.Errorf("node %d has %d partitions", id, len(info.Partitions))
				}
				e := tc.node(id)
				var ids []uint32
				e.mu.RLock()
				for _, r := range e.containerByNum(1).rec.Ranges {
					ids = append(ids, r.ID)
				}
				e.mu.RUnlock()
				var routed []uint32
				for _, p := range info.Partitions {
					routed = append(routed, p.ID)
				}
				if !slices.Equal(ids, routed) {
					return fmt.Errorf("node %d routes %v, its catalog lists %v", id, routed, ids)
				}
				if id == 1 {
					first = info.Partitions
				} else if !slices.EqualFunc(first, info.Partitions, func(a, b PartitionInfo) bool {
					return a.ID == b.ID && a.Range == b.Range && slices.Equal(a.Parents, b.Parents)
				}) {
					return fmt.Errorf("node %d has partitions %v, node 1 %v", id, info.Partitions, first)
				}
			}
			return nil
		})
		for id := 1; id <= 3; id++ {
			c, _ := tc.node(id).Container("db", "c")
			for i := range written {
				if _, err := c.ReadItem(key(fmt.Sprint("k", i)), fmt.Sprint(i)); err != nil {
					t.Fatalf("%s: node %d reads item %d: %v", what, id, i, err)
				}
			}
		}
		return first
	}
	write(30)
	same("created", 2)

	// On demand, through a node that does not lead partition 0.
	_, via := tc.leaderOf(0)
	children, err := tc.node(via).SplitPartition("db", "c", 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(children) != 2 || !slices.Equal(children[0].Parents, []uint32{0}) {
		t.Fatalf("split through node %d: children %v", via, children)
	}
	parts := same("after a split on demand", 3)
	if len(parts) != 3 {
		t.Fatalf("%d partitions after one split", len(parts))
	}
	write(30)

	// By throughput, raised through node 3: 40,000 RU/s needs four partitions.
	offers := tc.node(3).Offers()
	if _, err := tc.node(3).ReplaceOffer(offers[0].ID, OfferReplace{Throughput: Throughput{Manual: 40000}}); err != nil {
		t.Fatal(err)
	}
	same("after raising the throughput", 4)

	// By size: a partition past 96 KiB splits while every node writes.
	write(600)
	parts = same("after splits by size", 5)
	t.Logf("%d partitions after %d items", len(parts), written)
}

// A split whose catalog write never happened (every node stopped before): the nodes start
// again with the catalog behind their replicas, serve the children, and a leader of a child
// writes the ranges to the catalog.
func TestClusterSplitCatalogBehind(t *testing.T) {
	tc := startTestCluster(t, 3)
	tc.createContainer(nil)
	c, _ := tc.node(2).Container("db", "c")
	for i := range 40 {
		eventually(t, fmt.Sprint("create ", i), func() error {
			_, err := c.CreateItem(item(fmt.Sprint(i), fmt.Sprint("k", i), ""), ItemOptions{})
			if errors.Is(err, fault.Conflict) {
				return nil
			}
			return err
		})
	}
	skipRangeSync.Store(true)
	t.Cleanup(func() { skipRangeSync.Store(false) })
	if _, err := tc.node(1).SplitPartition("db", "c", 1, nil); !errors.Is(err, fault.Conflict) {
		// The split happened, but the catalog does not show its children: no children to report.
		t.Fatalf("split with the catalog write skipped: %v", err)
	}
	for id := 1; id <= 3; id++ {
		tc.stop(id)
	}
	skipRangeSync.Store(false)
	for id := 1; id <= 3; id++ {
		tc.start(id)
	}
	eventually(t, "the catalog shows the split", func() error {
		for id := 1; id <= 3; id++ {
			info, err := tc.node(id).ContainerInfo("db", "c")
			if err != nil {
				return err
			}
			var got []string
			for _, p := range info.Partitions {
				got = append(got, fmt.Sprint(p.ID, p.Parents))
			}
			if want := []string{"0 []", "2 [1]", "3 [1]"}; !slices.Equal(got, want) {
				return fmt.Errorf("node %d: partitions %v, want %v", id, got, want)
			}
		}
		return nil
	})
	for id := 1; id <= 3; id++ {
		c, _ := tc.node(id).Container("db", "c")
		for i := range 40 {
			if _, err := c.ReadItem(key(fmt.Sprint("k", i)), fmt.Sprint(i)); err != nil {
				t.Fatalf("node %d reads item %d: %v", id, i, err)
			}
		}
	}
}

// A split asked for through a node that does not lead the partition, while a split its leader
// started is still in flight (as when a leader loses the leadership between a split's start
// and its commit): the leader refuses the new one while the other stands, and the node asks
// again until the leader has aborted the orphan (abortOrphanSplits), so the caller gets the
// split, not a conflict.
func TestClusterSplitOutlastsAnOrphanSplit(t *testing.T) {
	tc := startTestCluster(t, 3)
	tc.createContainer(nil)
	leader, via := tc.leaderOf(0)
	c := tc.containerOn(leader)
	p := c.routes.Load().byID(0)
	at, _ := c.midpoint(p.Range())
	if _, err := p.StartSplit(at, 1000, 1001); err != nil { // nothing here commits or aborts it
		t.Fatal(err)
	}
	began := time.Now()
	children, err := tc.node(via).SplitPartition("db", "c", 0, nil)
	if err != nil {
		t.Fatalf("a split through node %d while partition 0 has an orphan split in flight: %v", via, err)
	}
	if len(children) != 2 || children[0].ID == 1000 || children[1].ID == 1001 {
		t.Fatalf("children %v; want two, not the orphan's", children)
	}
	t.Logf("split in %v", time.Since(began).Round(time.Millisecond))
}

// A node cut off while a partition splits misses the split, and no replica of the parent is
// left to send it. Meanwhile it serves no session that saw a child from its replica of the
// parent (the read goes to the children's holders). Once the network heals, it drops its
// replica of the parent for the children's snapshots, routes to its own replicas of the
// children, and reads every item from them, those written after the split included.
func TestClusterSplitMissedByACutOffNode(t *testing.T) {
	tc := startTestCluster(t, 3)
	tc.createContainer(nil)
	create := func(via, i int) {
		t.Helper()
		c := tc.containerOn(via)
		eventually(t, fmt.Sprint("create ", i), func() error {
			_, err := c.UpsertItem(item(fmt.Sprint(i), fmt.Sprint("k", i), ""), ItemOptions{})
			return err
		})
	}
	for i := range 20 {
		create(1, i)
	}
	leader, cut := tc.leaderOf(0)
	tc.mu.Lock()
	tc.isolated[cut] = true
	tc.mu.Unlock()
	children, err := tc.node(leader).SplitPartition("db", "c", 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 20; i < 40; i++ {
		create(leader, i)
	}
	// Meanwhile a session that wrote an item of a child is not served the parent's older
	// version by the cut-off node, which still routes to the parent.
	cl := tc.containerOn(leader)
	k := -1
	for i := range 20 {
		e, _ := cl.EPK(key(fmt.Sprint("k", i)))
		if id := cl.PartitionID(e); id == children[0].ID || id == children[1].ID {
			k = i
			break
		}
	}
	if k < 0 {
		t.Fatal("no item of the first 20 is in the split partition")
	}
	var w ItemResult
	eventually(t, fmt.Sprint("replace item ", k), func() error {
		var err error
		w, err = cl.UpsertItem(item(fmt.Sprint(k), fmt.Sprint("k", k), `,"v":2`), ItemOptions{})
		return err
	})
	r, err := tc.containerOn(cut).ReadItemAt(context.Background(), nil, key(fmt.Sprint("k", k)), fmt.Sprint(k), ReadConsistency{Level: Session, Session: map[uint32]uint64{w.PartitionID: w.LSN}})
	if err != nil || !strings.Contains(string(r.Doc), `"v":2`) {
		t.Fatalf("a session read of item %d through node %d after its write to child %d: %s, %v", k, cut, w.PartitionID, r.Doc, err)
	}
	tc.mu.Lock()
	tc.isolated[cut] = false
	tc.mu.Unlock()

	c := tc.containerOn(cut)
	eventually(t, fmt.Sprintf("node %d holds the children", cut), func() error {
		rt := c.routes.Load()
		for _, ch := range children {
			if rt.byID(ch.ID) == nil {
				return fmt.Errorf("node %d holds %v, not child %d", cut, tc.partitionIDs(cut), ch.ID)
			}
		}
		return nil
	})
	eventually(t, fmt.Sprintf("node %d's replicas have every item", cut), func() error {
		for i := range 40 {
			k := key(fmt.Sprint("k", i))
			e, _ := c.EPK(k)
			if c.routes.Load().lookup(e) == nil {
				return fmt.Errorf("item %d's partition is not held on node %d", i, cut)
			}
			if _, err := c.ReadItemAt(context.Background(), nil, k, fmt.Sprint(i), ReadConsistency{Level: Eventual}); err != nil {
				return fmt.Errorf("item %d at Eventual on node %d: %w", i, cut, err)
			}
		}
		return nil
	})
}

// leaderOf waits until partition id of container "c" has a leader, and returns the node whose
// replica leads it and one whose replica follows.
func (tc *testCluster) leaderOf(id uint32) (leader, follower int) {
	tc.t.Helper()
	eventually(tc.t, fmt.Sprintf("partition %d has a leader", id), func() error {
		leader, follower = 0, 0
		for n := 1; n <= len(tc.nodes); n++ {
			if tc.containerOn(n).routes.Load().byID(id).Leading() {
				leader = n
			} else {
				follower = n
			}
		}
		if leader == 0 {
			return errors.New("no leader yet")
		}
		return nil
	})
	return leader, follower
}
