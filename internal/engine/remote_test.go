package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/query"
	"github.com/partita-db/partita/internal/replica"
	"github.com/partita-db/partita/internal/replication"
	"github.com/partita-db/partita/internal/value"
)

// With three replicas of each partition (Cluster.Replicas) on more nodes than three, each
// partition's voters are three nodes, and the replicas spread: a node that holds none gets
// its share. Every node serves every item call and query of a container, those on partitions
// it holds no replica of through a node that does. A node gone for longer than DeadAfter is
// replaced on a spare node, a node added takes a share, a drained node gives its replicas
// away, and every item written is read back through every node throughout.
func TestClusterReplicas(t *testing.T) {
	tc := newTestCluster(t, 5)
	tc.replicas = 3
	tc.deadAfter = 2 * time.Second
	for id := 1; id <= 4; id++ {
		tc.start(id)
	}
	tc.createContainer(nil) // two partitions
	c1, err := tc.node(1).Container("db", "c")
	if err != nil {
		t.Fatal(err)
	}
	num := c1.num
	if _, err := c1.CreateScript(Script{Kind: ProcedureScript, ID: "bump", Body: bumpProcedure}); err != nil {
		t.Fatal(err)
	}

	// settled waits until each partition has three voters, recorded by its leader, on the
	// nodes live then, and returns where they are.
	settled := func(live ...int) map[uint32][]replication.NodeID {
		t.Helper()
		out := map[uint32][]replication.NodeID{}
		eventually(t, fmt.Sprintf("three voters per partition on nodes %v", live), func() error {
			clear(out)
			for _, part := range tc.partitionIDs(live[0]) {
				rec, ok, _ := tc.groups.Get(context.Background(), replica.Group(num, part))
				if !ok || len(rec.Voters) != 3 {
					return fmt.Errorf("partition %d: record %+v", part, rec)
				}
				for _, n := range rec.Voters {
					if !slices.Contains(live, int(n)) {
						return fmt.Errorf("partition %d has a voter on node %d", part, n)
					}
				}
				st, ok := tc.node(int(rec.Leader)).replicas.hostOf().Status(replica.Group(num, part))
				if !ok || !st.Leading || len(st.Descriptor.Learners) > 0 || len(st.Descriptor.Voters) != 3 {
					return fmt.Errorf("partition %d is still changing: record %+v, leader's status %v %+v", part, rec, st.Leading, st.Descriptor)
				}
				out[part] = rec.Voters
			}
			return nil
		})
		return out
	}
	held := func(where map[uint32][]replication.NodeID, node int) int {
		n := 0
		for _, vs := range where {
			if slices.Contains(vs, replication.NodeID(node)) {
				n++
			}
		}
		return n
	}

	written := 0
	writeThrough := func(via int, n int) {
		t.Helper()
		c := tc.containerOn(via)
		for range n {
			i := written
			eventually(t, fmt.Sprintf("create %d through node %d", i, via), func() error {
				_, err := c.CreateItem(item(fmt.Sprint(i), fmt.Sprint("k", i%9), `,"n":0`), ItemOptions{})
				if errors.Is(err, fault.Conflict) {
					return nil
				}
				return err
			})
			written++
		}
	}
	// checkThrough reads every item, runs queries and the read feed through node via.
	checkThrough := func(via int) {
		t.Helper()
		c := tc.containerOn(via)
		for i := range written {
			eventually(t, fmt.Sprintf("node %d reads item %d", via, i), func() error {
				_, err := c.ReadItem(key(fmt.Sprint("k", i%9)), fmt.Sprint(i))
				return err
			})
		}
		eventually(t, fmt.Sprintf("node %d counts and sorts every item", via), func() error {
			if got, err := queryValues(c, "SELECT VALUE COUNT(1) FROM c"); err != nil || len(got) != 1 || got[0] != fmt.Sprint(written) {
				return fmt.Errorf("count %v, %v; want %d", got, err, written)
			}
			ids, err := queryValues(c, "SELECT VALUE c.id FROM c ORDER BY c.id")
			if err != nil || len(ids) != written || !slices.IsSorted(ids) {
				return fmt.Errorf("%d ids (sorted %v), %v; want %d", len(ids), slices.IsSorted(ids), err, written)
			}
			if got, err := queryValues(c, `SELECT VALUE c.id FROM c WHERE c.pk = "k3"`); err != nil || len(got) != (written+5)/9 {
				return fmt.Errorf("k3 has %v, %v", got, err)
			}
			n := 0
			for tok := ""; ; {
				page, err := c.ReadFeed(epk.All, tok, 7)
				if err != nil {
					return err
				}
				n += len(page.Docs)
				if tok = page.Next; tok == "" {
					break
				}
			}
			if n != written {
				return fmt.Errorf("the read feed has %d items, want %d", n, written)
			}
			return nil
		})
	}

	where := settled(1, 2, 3, 4)
	for node := 1; node <= 4; node++ {
		writeThrough(node, 9)
	}
	for node := 1; node <= 4; node++ {
		checkThrough(node)
	}
	spare := 0
	for node := 1; node <= 4; node++ {
		if held(where, node) < 2 {
			spare = node
		}
	}
	if spare == 0 {
		t.Fatalf("every node holds both partitions: %v", where)
	}

	// Patches, batches and procedures on partitions a node does not hold, through it.
	for node := 1; node <= 4; node++ {
		c := tc.containerOn(node)
		for k := range 9 {
			pk := fmt.Sprint("k", k)
			id := fmt.Sprint(k) // item k is in partition key k
			eventually(t, fmt.Sprintf("patch %s through node %d", id, node), func() error {
				_, err := c.PatchItem(key(pk), id, Patch{Ops: []document.PatchOp{{Op: "incr", Path: "/n", Value: []byte("1")}}}, ItemOptions{})
				return err
			})
			eventually(t, fmt.Sprintf("procedure on %s through node %d", pk, node), func() error {
				_, err := c.ExecuteProcedure("bump", []byte(`["`+id+`"]`), ProcedureOptions{PartitionKey: key(pk)})
				return err
			})
			eventually(t, fmt.Sprintf("batch on %s through node %d", pk, node), func() error {
				res, failed, err := c.ExecuteBatch(context.Background(), key(pk), []BatchOp{
					{Kind: OpPatch, ID: id, Patch: Patch{Ops: []document.PatchOp{{Op: "incr", Path: "/n", Value: []byte("1")}}}},
					{Kind: OpRead, ID: id},
				})
				if err == nil && failed >= 0 {
					err = res[failed].Err
				}
				return err
			})
		}
	}
	// A split asked through a node that holds no replica of the partition: a node that holds
	// it splits it, and every node routes to the children.
	var elsewhere uint32
	for part, vs := range where {
		if !slices.Contains(vs, replication.NodeID(spare)) {
			elsewhere = part
		}
	}
	if _, err := tc.node(spare).SplitPartition("db", "c", elsewhere, nil); err != nil {
		t.Fatalf("split partition %d through node %d: %v", elsewhere, spare, err)
	}
	for node := 1; node <= 4; node++ {
		eventually(t, fmt.Sprintf("node %d routes to three partitions", node), func() error {
			if ids := tc.partitionIDs(node); len(ids) != 3 || slices.Contains(ids, elsewhere) {
				return fmt.Errorf("partitions %v", ids)
			}
			return nil
		})
		checkThrough(node)
	}
	for k := range 9 {
		r, err := c1.ReadItem(key(fmt.Sprint("k", k)), fmt.Sprint(k))
		if err != nil {
			t.Fatal(err)
		}
		if v, _ := value.Parse(r.Doc); v.Get("n").Num() != 12 {
			t.Errorf("item %d: n = %v after 4 patches, 4 procedures and 4 batches", k, v.Get("n"))
		}
	}

	// A node holding replicas dies: after DeadAfter its replicas are made again elsewhere.
	victim := 0
	for node := 2; node <= 4 && victim == 0; node++ {
		if held(where, node) > 0 {
			victim = node
		}
	}
	tc.stop(victim)
	var live []int
	for node := 1; node <= 4; node++ {
		if node != victim {
			live = append(live, node)
		}
	}
	settled(live...) // the dead node's replicas made again on the others
	writeThrough(live[0], 9)
	for _, node := range live {
		checkThrough(node)
	}

	// A fifth node takes its share; a drained node gives its replicas away.
	tc.start(5)
	live = append(live, 5)
	eventually(t, "node 5 gets replicas", func() error {
		if n := held(settled(live...), 5); n == 0 {
			return errors.New("node 5 holds none")
		}
		return nil
	})
	if _, err := tc.node(5).Drain("1", true); err != nil {
		t.Fatal(err)
	}
	live = slices.DeleteFunc(live, func(n int) bool { return n == 1 })
	eventually(t, "node 1 gives its replicas away", func() error {
		if n := held(settled(live...), 1); n > 0 {
			return fmt.Errorf("node 1 holds %d", n)
		}
		return nil
	})
	writeThrough(5, 9)
	for _, node := range append(live, 1) {
		checkThrough(node) // node 1, drained, still serves through the others
	}
	t.Logf("%d items; replicas at the end: %v", written, settled(live...))
}

// bumpProcedure increments an item's n.
const bumpProcedure = `function bump(id) {
	var coll = getContext().getCollection();
	coll.readDocument(coll.getAltLink() + "/docs/" + id, {}, function(err, doc) {
		if (err) throw err;
		doc.n += 1;
		coll.replaceDocument(doc._self, doc, {}, function(err) { if (err) throw err; });
	});
}`

// containerOn is container "c" as node id sees it, once it does.
func (tc *testCluster) containerOn(id int) *Container {
	tc.t.Helper()
	var c *Container
	eventually(tc.t, fmt.Sprintf("node %d opens the container", id), func() error {
		var err error
		c, err = tc.node(id).Container("db", "c")
		return err
	})
	return c
}

// queryValues runs a query over the whole container, page by page, and returns its results
// as JSON texts.
func queryValues(c *Container, text string) ([]string, error) {
	p, err := query.Prepare(text)
	if err != nil {
		return nil, err
	}
	var out []string
	for cont := ""; ; {
		res, err := c.Query(p, epk.All, query.Options{MaxItems: 10, Continuation: cont})
		if err != nil {
			return nil, err
		}
		for _, v := range res.Results {
			out = append(out, string(value.AppendJSON(nil, v)))
		}
		if cont = res.Next; cont == "" {
			return out, nil
		}
	}
}

// partitionIDs are the ids of container "c"'s partitions as node id routes to them.
func (tc *testCluster) partitionIDs(id int) []uint32 {
	var ids []uint32
	for _, p := range tc.containerOn(id).info().Partitions {
		ids = append(ids, p.ID)
	}
	return ids
}
