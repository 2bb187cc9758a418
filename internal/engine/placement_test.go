package engine

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/replica"
	"github.com/partita-db/partita/internal/replication"
)

// The replicas follow the cluster's nodes: a node added later receives a replica of every
// partition and serves them; a drained node gives its replicas and leaderships away; a node
// whose disk was wiped gets new replicas in place of those it lost; a node gone for longer
// than DeadAfter has its replicas removed, and gets new ones when it comes back. Every item
// written along the way is read back on every node.
func TestClusterPlacement(t *testing.T) {
	tc := newTestCluster(t, 4)
	tc.deadAfter = 2 * time.Second
	for id := 1; id <= 3; id++ {
		tc.start(id)
	}
	tc.createContainer(nil)
	c1, err := tc.node(1).Container("db", "c")
	if err != nil {
		t.Fatal(err)
	}
	num := c1.num
	written := 0
	write := func(via int, n int) {
		t.Helper()
		c, err := tc.node(via).Container("db", "c")
		if err != nil {
			t.Fatalf("node %d: %v", via, err)
		}
		for range n {
			i := written
			eventually(t, fmt.Sprintf("create %d through node %d", i, via), func() error {
				_, err := c.CreateItem(item(fmt.Sprint(i), fmt.Sprint("k", i%7), ""), ItemOptions{})
				if errors.Is(err, fault.Conflict) {
					return nil
				}
				return err
			})
			written++
		}
	}
	readAll := func(via int) {
		t.Helper()
		var c *Container
		eventually(t, fmt.Sprintf("node %d opens the container", via), func() error {
			var err error
			c, err = tc.node(via).Container("db", "c")
			return err
		})
		for i := range written {
			eventually(t, fmt.Sprintf("node %d reads item %d", via, i), func() error {
				_, err := c.ReadItem(key(fmt.Sprint("k", i%7)), fmt.Sprint(i))
				return err
			})
		}
	}
	// voters waits until, as node via sees them, every partition's voters are on the stores
	// of the nodes want, and nowhere else.
	voters := func(via int, want ...int) {
		t.Helper()
		eventually(t, fmt.Sprintf("voters on nodes %v", want), func() error {
			var stores []replication.Member
			for _, id := range want {
				stores = append(stores, replication.Member{Node: replication.NodeID(id), Store: tc.node(id).Store()})
			}
			h := tc.node(via).replicas.hostOf()
			for part := range uint32(2) {
				st, ok := h.Status(replica.Group(num, part))
				if !ok {
					return fmt.Errorf("no replica of partition %d", part)
				}
				var got []replication.Member
				for _, v := range st.Descriptor.Voters {
					m, _ := st.Descriptor.Member(v)
					got = append(got, replication.Member{Node: m.Node, Store: m.Store})
				}
				slices.SortFunc(got, func(a, b replication.Member) int { return cmp.Compare(a.Node, b.Node) })
				if !slices.Equal(got, stores) || len(st.Descriptor.Learners) > 0 {
					return fmt.Errorf("partition %d: voters %v, learners %v", part, got, st.Descriptor.Learners)
				}
			}
			return nil
		})
	}
	write(1, 30)

	// With three nodes, a drain is refused: it would leave two.
	if _, err := tc.node(2).Drain("1", true); !errors.Is(err, fault.BadRequest) {
		t.Fatalf("draining one of three nodes: %v", err)
	}

	// A fourth node gets a replica of each partition, serves them, and takes a leadership.
	tc.start(4)
	voters(2, 1, 2, 3, 4)
	readAll(4)
	write(4, 10)
	eventually(t, "leaderships spread", func() error {
		st := tc.node(4).Status()
		leads := map[uint64]int{}
		for _, r := range st.Replicas {
			leads[r.Leader]++
		}
		if len(leads) != 2 || leads[0] != 0 {
			return fmt.Errorf("leaders %v", leads)
		}
		return nil
	})

	// Node 1 is drained: its replicas go, and it can be stopped with nothing lost. Meanwhile it
	// serves point reads and queries of everything written, and none fails or misses an item:
	// a read that meets one of its replicas as it is removed is served where the range is
	// held then.
	n1, err := tc.node(1).Container("db", "c")
	if err != nil {
		t.Fatal(err)
	}
	stopReads := make(chan struct{})
	var reads sync.WaitGroup
	var readFailures atomic.Int64
	var readsDone atomic.Int64
	reads.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stopReads:
				return
			default:
			}
			j := i % written
			if _, err := n1.ReadItem(key(fmt.Sprint("k", j%7)), fmt.Sprint(j)); err != nil {
				readFailures.Add(1)
				t.Errorf("node 1 reads item %d while it is drained: %v", j, err)
			}
			if i%10 == 0 {
				ids, err := queryValues(n1, "SELECT VALUE c.id FROM c")
				if err != nil || len(ids) != written {
					readFailures.Add(1)
					t.Errorf("node 1 queries while it is drained: %d items of %d, %v", len(ids), written, err)
				}
			}
			readsDone.Add(1)
		}
	})
	if _, err := tc.node(2).Drain("1", true); err != nil {
		t.Fatal(err)
	}
	voters(2, 2, 3, 4)
	close(stopReads)
	reads.Wait()
	t.Logf("node 1 served %d reads while it was drained, %d failed", readsDone.Load(), readFailures.Load())
	tc.stop(1)
	write(3, 10)
	readAll(4)

	// Node 2 loses its disk: it comes back with another store, gets new replicas, and the
	// ones it lost leave the groups.
	tc.stop(2)
	tc.wipe(2)
	tc.start(2)
	voters(3, 2, 3, 4)
	readAll(2)
	write(2, 10)

	// Node 3 is gone for longer than DeadAfter: its replicas are removed and the two others
	// go on; back, it gets new replicas in place of those it held.
	tc.stop(3)
	voters(4, 2, 4)
	write(4, 10)
	tc.start(3)
	voters(2, 2, 3, 4)
	readAll(3)
	for _, id := range []int{2, 3, 4} {
		readAll(id)
	}
}

// A node logs the comings and goings of the others once each: first seen live, gone, live
// again, drained, drain ended; a pass that changes nothing logs nothing.
func TestNoteNodesLogsEachEventOnce(t *testing.T) {
	var buf strings.Builder
	e := &Engine{log: slog.New(slog.NewTextHandler(&buf, nil))}
	pl := &placer{seen: map[replication.NodeID]ClusterNode{}, wasLive: map[replication.NodeID]bool{}}
	a := ClusterNode{ID: 0xa, Addr: "a:1"}
	b := ClusterNode{ID: 0xb, Addr: "b:1"}
	drained := b
	drained.Draining = true
	for _, pass := range []struct {
		live []ClusterNode
		want []string
	}{
		{[]ClusterNode{a, b}, []string{"a node is live\" node=a", "a node is live\" node=b"}},
		{[]ClusterNode{a, b}, nil},
		{[]ClusterNode{a}, []string{"no longer live (stopped, paused, cut off, or not registered)\" node=b"}},
		{[]ClusterNode{a}, nil},
		{[]ClusterNode{a, b}, []string{"live again\" node=b"}},
		{[]ClusterNode{a, drained}, []string{"being drained\" node=b"}},
		{[]ClusterNode{a, b}, []string{"drain ended\" node=b"}},
	} {
		buf.Reset()
		live := map[replication.NodeID]ClusterNode{}
		for _, n := range pass.live {
			live[replication.NodeID(n.ID)] = n
		}
		e.noteNodes(pl, live)
		lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
		if buf.Len() == 0 {
			lines = nil
		}
		if len(lines) != len(pass.want) {
			t.Fatalf("live %v: logged %q, want %q", pass.live, lines, pass.want)
		}
		for _, w := range pass.want {
			if !strings.Contains(buf.String(), w) {
				t.Fatalf("live %v: logged %q, want %q", pass.live, lines, w)
			}
		}
	}
}
