package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/partita-db/partita/internal/catalog"
	"github.com/partita-db/partita/internal/clusterversion"
	"github.com/partita-db/partita/internal/controlplane"
	"github.com/partita-db/partita/internal/controlplane/controlplanetest"
	"github.com/partita-db/partita/internal/distribution"
	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/nodecall"
	"github.com/partita-db/partita/internal/nodemsg"
	"github.com/partita-db/partita/internal/replica"
	"github.com/partita-db/partita/internal/replication"
)

// testCluster is n engines in one process as the nodes of a cluster: one etcd (a control plane
// of one member) holds their catalog, envelopes and forwarded writes go straight to the engine
// they are for, and a node that is down receives nothing.
type testCluster struct {
	t     *testing.T
	cp    *controlplane.ControlPlane
	mu    sync.Mutex
	nodes []*Engine // by node id - 1; nil while down
	dirs  []string
	// draining are the nodes being drained, by cluster address (the node id in decimal).
	draining map[string]bool
	// deadAfter is the nodes' Cluster.DeadAfter; maxPartitionBytes their
	// Options.MaxPartitionBytes (0: the default).
	deadAfter         time.Duration
	maxPartitionBytes int64
	staleness         Staleness // their Options.Staleness
	// replicas is the nodes' Cluster.Replicas; groups their Cluster.Groups.
	replicas int
	groups   *memGroups
	// isolated are the nodes cut off from the others: no replication message reaches them or
	// leaves them (forwarded requests still do).
	isolated map[int]bool
	// active is the nodes' Cluster.Active (0: clusterversion.Latest, where a cluster of this
	// release goes); rateLimit their Options.RateLimit.
	active    clusterversion.Version
	rateLimit bool
	// typed and untyped count the requests forwarded as typed messages and as JSON.
	typed, untyped atomic.Int64
}

// memGroups is a GroupMap in memory, shared by a test cluster's nodes.
type memGroups struct {
	mu   sync.Mutex
	recs map[replication.GroupID]distribution.GroupRecord
}

func (m *memGroups) Put(_ context.Context, g replication.GroupID, r distribution.GroupRecord) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.recs[g] = r
	return nil
}

func (m *memGroups) Get(_ context.Context, g replication.GroupID) (distribution.GroupRecord, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.recs[g]
	return r, ok, nil
}

func (m *memGroups) All(context.Context) (map[replication.GroupID]distribution.GroupRecord, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.recs), nil
}

// startTestCluster starts a cluster of n nodes.
func startTestCluster(t *testing.T, n int) *testCluster {
	t.Helper()
	tc := newTestCluster(t, n)
	for i := range n {
		tc.start(i + 1)
	}
	return tc
}

// newTestCluster makes room for n nodes, none started.
func newTestCluster(t *testing.T, n int) *testCluster {
	t.Helper()
	cp := controlplanetest.Start(t)
	tc := &testCluster{t: t, cp: cp, nodes: make([]*Engine, n), draining: map[string]bool{}, isolated: map[int]bool{},
		groups: &memGroups{recs: map[replication.GroupID]distribution.GroupRecord{}}}
	for range n {
		tc.dirs = append(tc.dirs, t.TempDir())
	}
	t.Cleanup(func() {
		for i := range tc.nodes {
			tc.stop(i + 1)
		}
	})
	return tc
}

func (tc *testCluster) node(id int) *Engine {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	return tc.nodes[id-1]
}

// start opens node id's engine on its directory.
func (tc *testCluster) start(id int) {
	tc.t.Helper()
	active := cmp.Or(tc.active, clusterversion.Latest)
	cl := &Cluster{
		Node:      replication.NodeID(id),
		Transport: clusterTransport{tc},
		Catalog:   catalog.NewEtcd(tc.cp.Client(), "/test/catalog/"),
		Nodes:     tc.live,
		Drain: func(addr string, on bool) error {
			tc.mu.Lock()
			defer tc.mu.Unlock()
			tc.draining[addr] = on
			return nil
		},
		DeadAfter: tc.deadAfter,
		Replicas:  tc.replicas,
		Groups:    tc.groups,
		// Calls travel as between processes: framed by the cluster's version, served in
		// the framing they came in.
		Call: func(_ context.Context, node replication.NodeID, req *nodecall.Request) (nodecall.Answer, error) {
			e := tc.node(int(node))
			if e == nil {
				return nodecall.Answer{}, fmt.Errorf("%w: node %d is down", distribution.ErrNotSent, node)
			}
			raw, err := nodemsg.Marshal(req, active)
			if err != nil {
				return nodecall.Answer{}, err
			}
			if nodemsg.Typed(raw) {
				tc.typed.Add(1)
			} else {
				tc.untyped.Add(1)
			}
			return nodemsg.UnmarshalAnswer(nodemsg.Serve(raw, e.ServeCall))
		},
		Active: func() clusterversion.Version { return active },
	}
	e, err := Open(Options{Dir: tc.dirs[id-1], Cluster: cl, MinPartitions: 2, MaxPartitionBytes: tc.maxPartitionBytes, Staleness: tc.staleness,
		RateLimit: tc.rateLimit, Logger: testLogger(id)})
	if err != nil {
		tc.t.Fatal(err)
	}
	tc.mu.Lock()
	tc.nodes[id-1] = e
	tc.mu.Unlock()
}

// stop closes node id's engine, as a process that exits.
func (tc *testCluster) stop(id int) {
	tc.mu.Lock()
	e := tc.nodes[id-1]
	tc.nodes[id-1] = nil
	tc.mu.Unlock()
	if e != nil {
		e.Close()
	}
}

// live are the nodes that are up, with their stores.
func (tc *testCluster) live(context.Context) ([]ClusterNode, error) {
	var out []ClusterNode
	for i := range tc.nodes {
		e := tc.node(i + 1)
		if e == nil {
			continue
		}
		h := e.replicas.hostOf()
		if h == nil {
			return nil, errors.New("a node is starting")
		}
		addr := fmt.Sprint(i + 1)
		tc.mu.Lock()
		out = append(out, ClusterNode{ID: uint64(i + 1), Store: uint64(h.Store()), Addr: addr, Draining: tc.draining[addr],
			Version: uint32(clusterversion.Latest)})
		tc.mu.Unlock()
	}
	return out, nil
}

// createContainer creates database "db" and its container "c" through node 1, partitioned on
// /pk (version 2), with the indexing policy given (nil: the default).
func (tc *testCluster) createContainer(indexing json.RawMessage) {
	tc.t.Helper()
	if _, err := tc.node(1).CreateDatabase("db", nil); err != nil {
		tc.t.Fatal(err)
	}
	spec := ContainerSpec{ID: "c", PartitionKey: PartitionKeyDef{Paths: []string{"/pk"}, Version: 2}, Indexing: indexing}
	if _, err := tc.node(1).CreateContainer("db", spec); err != nil {
		tc.t.Fatal(err)
	}
}

// wipe empties node id's directory, as a disk that was replaced (the node must be down).
func (tc *testCluster) wipe(id int) {
	tc.dirs[id-1] = tc.t.TempDir()
}

type clusterTransport struct{ tc *testCluster }

func (t clusterTransport) Send(env *replication.Envelope) {
	t.tc.mu.Lock()
	cut := t.tc.isolated[int(env.To.Node)] || t.tc.isolated[int(env.From.Node)]
	t.tc.mu.Unlock()
	if cut {
		return
	}
	if e := t.tc.node(int(env.To.Node)); e != nil {
		e.Deliver(env)
	}
}

// eventually retries fn until it succeeds or 20 seconds pass.
func eventually(t *testing.T, what string, fn func() error) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := fn()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Three engines are one database: what one creates the others find, writes on any node land
// on the partition's leaseholder and every node reads them, a patch made on a node that does
// not lead is applied once, and with a node stopped the two others go on.
func TestClusterOfThree(t *testing.T) {
	tc := startTestCluster(t, 3)
	if _, err := tc.node(1).CreateDatabase("db", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := tc.node(2).CreateContainer("db", ContainerSpec{ID: "c", PartitionKey: PartitionKeyDef{Paths: []string{"/pk"}, Version: 2}}); err != nil {
		t.Fatal(err)
	}
	if _, err := tc.node(3).CreateDatabase("db", nil); !errors.Is(err, fault.Conflict) {
		t.Fatalf("a database created on another node is created again: %v", err)
	}
	containers := make([]*Container, 3)
	for i := range containers {
		c, err := tc.node(i+1).Container("db", "c")
		if err != nil {
			t.Fatalf("node %d: %v", i+1, err)
		}
		containers[i] = c
		if n := len(c.routes.Load().parts); n != 2 {
			t.Fatalf("node %d has %d partitions", i+1, n)
		}
	}
	for i := range 60 {
		c := containers[i%3]
		body := item(fmt.Sprint(i), fmt.Sprint("k", i%6), fmt.Sprintf(`,"n":%d`, i))
		eventually(t, fmt.Sprintf("create %d on node %d", i, i%3+1), func() error {
			_, err := c.CreateItem(body, ItemOptions{})
			if errors.Is(err, fault.Conflict) {
				return nil // an earlier try was applied after all
			}
			return err
		})
	}
	for n, c := range containers {
		for i := range 60 {
			r, err := c.ReadItem(key(fmt.Sprint("k", i%6)), fmt.Sprint(i))
			if err != nil {
				t.Fatalf("node %d reads item %d: %v", n+1, i, err)
			}
			var doc struct{ N int }
			if err := json.Unmarshal(r.Doc, &doc); err != nil || doc.N != i {
				t.Fatalf("node %d reads item %d as %s", n+1, i, r.Doc)
			}
		}
	}
	// Concurrent increments from every node: each applied once.
	var wg sync.WaitGroup
	for n, c := range containers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10 {
				eventually(t, fmt.Sprintf("patch on node %d", n+1), func() error {
					_, err := c.PatchItem(key("k0"), "0", Patch{Ops: []document.PatchOp{{Op: "incr", Path: "/n", Value: json.RawMessage("1")}}}, ItemOptions{})
					return err
				})
			}
		}()
	}
	wg.Wait()
	r, err := containers[0].ReadItem(key("k0"), "0")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ N int }
	if json.Unmarshal(r.Doc, &doc); doc.N != 30 {
		t.Fatalf("30 increments of 0 from three nodes gave %d", doc.N)
	}
	// A stored procedure's read-modify-write, run concurrently through every node: on the
	// leaseholder's node under its lock, elsewhere from its own reads and committed only if
	// nothing changed meanwhile (run again otherwise). Every increment is applied once.
	if _, err := containers[0].CreateScript(sproc("incr", `function (id) {
		var c = getContext().getCollection();
		c.readDocument(c.getAltLink() + "/docs/" + id, function (err, doc) {
			if (err) throw err;
			doc.n += 1;
			c.replaceDocument(doc._self, doc, function (err) { if (err) throw err; });
		});
	}`)); err != nil {
		t.Fatal(err)
	}
	for n, c := range containers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10 {
				eventually(t, fmt.Sprintf("procedure on node %d", n+1), func() error {
					_, err := c.ExecuteProcedure("incr", []byte(`["0"]`), ProcedureOptions{PartitionKey: key("k0")})
					return err
				})
			}
		}()
	}
	wg.Wait()
	if r, err = containers[1].ReadItem(key("k0"), "0"); err != nil {
		t.Fatal(err)
	}
	if json.Unmarshal(r.Doc, &doc); doc.N != 60 {
		t.Fatalf("30 increments by stored procedure after 30 by patch gave %d", doc.N)
	}
	// A transactional batch from a node that may not lead.
	res, _, err := containers[2].ExecuteBatch(context.Background(), key("k1"), []BatchOp{
		{Kind: OpCreate, Item: document.FromJSON(item("b1", "k1", ""))},
		{Kind: OpReplace, ID: "1", Item: document.FromJSON(item("1", "k1", `,"n":100`))},
	})
	if err != nil || res[0].Err != nil || res[1].Err != nil {
		t.Fatalf("batch: %v %+v", err, res)
	}

	// The node that leads k0's partition stops: the two others elect a leader, and go on.
	e0, _ := containers[0].EPK(key("k0"))
	p0 := containers[0].routes.Load().lookup(e0)
	down := int(tc.node(1).replicas.leaderOf(replica.Group(containers[0].num, p0.ID())))
	if down == 0 {
		t.Fatal("no leader known for k0's partition")
	}
	tc.stop(down)
	var up []*Container
	for n, c := range containers {
		if n+1 != down {
			up = append(up, c)
		}
	}
	start := time.Now()
	for i := 100; i < 130; i++ {
		c := up[i%2]
		eventually(t, fmt.Sprintf("create %d with node %d down", i, down), func() error {
			_, err := c.CreateItem(item(fmt.Sprint(i), "k0", ""), ItemOptions{})
			if errors.Is(err, fault.Conflict) {
				return nil
			}
			return err
		})
		if i == 100 {
			t.Logf("the first write to k0 after its leader's node stopped (handing its leadership off) took %v", time.Since(start))
		}
	}
	// It comes back and catches up.
	tc.start(down)
	cd, err := tc.node(down).Container("db", "c")
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the restarted node reads what was written while it was down", func() error {
		_, err := cd.ReadItem(key("k0"), "129")
		return err
	})
	if u := cd.Usage(); u.Items != 60+1+30 {
		t.Fatalf("the restarted node holds %d items, want 91", u.Items)
	}
	// A container deleted on one node is gone from every node.
	other := down%3 + 1
	if err := tc.node(other).DeleteContainer("db", "c", ""); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the deletion reaches the restarted node", func() error {
		if _, err := tc.node(down).Container("db", "c"); !errors.Is(err, fault.NotFound) {
			return fmt.Errorf("still there: %v", err)
		}
		return nil
	})
}

func testLogger(id int) *slog.Logger {
	if os.Getenv("PARTITA_TEST_LOG") == "" {
		return nil
	}
	return slog.New(slog.NewTextHandler(os.Stderr, nil)).With("node", id)
}
