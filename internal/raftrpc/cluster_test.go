package raftrpc_test

import (
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/nodetls"
	"github.com/partita-db/partita/internal/partition"
	"github.com/partita-db/partita/internal/raftrpc"
	"github.com/partita-db/partita/internal/replication"
	"github.com/partita-db/partita/internal/replication/replicationtest"
)

// Replicas of a partition on four nodes that talk over loopback TCP with mutual TLS: three
// replicate writes, and a fourth added as a learner after the log was compacted catches up by
// a snapshot sent over the wire: inline in its envelope, or streamed once the cluster allows.
func TestReplicasOverTLS(t *testing.T) {
	t.Run("inline", func(t *testing.T) { replicasOverTLS(t, false) })
	t.Run("streamed", func(t *testing.T) { replicasOverTLS(t, true) })
}

func replicasOverTLS(t *testing.T, stream bool) {
	var (
		mu         sync.Mutex
		addrs      = map[replication.NodeID]string{}
		transports []*raftrpc.Transport
	)
	resolve := func(id replication.NodeID) (string, bool) {
		mu.Lock()
		defer mu.Unlock()
		a, ok := addrs[id]
		return a, ok
	}
	tf := func(node replication.NodeID, deliver func(*replication.Envelope)) replication.Transport {
		id, err := nodetls.New([]byte("a secret the four nodes share"))
		if err != nil {
			t.Fatal(err)
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		tr := raftrpc.New(raftrpc.Config{Node: node, TLS: id, Resolve: resolve, Deliver: deliver,
			StreamSnapshots: func() bool { return stream }})
		go tr.Serve(l)
		mu.Lock()
		addrs[node] = l.Addr().String()
		transports = append(transports, tr)
		mu.Unlock()
		return tr
	}
	h, err := replicationtest.NewOverTransport(4, tf, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		h.Close()
		for _, tr := range transports {
			tr.Close()
		}
	})
	g := replicationtest.Group(1)
	if err := h.StartGroup(1, epk.All, 1, 2, 3); err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		id := fmt.Sprint("item", i)
		item, key, err := document.Parse([]byte(fmt.Sprintf(`{"id":%q,"pk":"k%d","n":%d}`, id, i%5, i)), [][]string{{"pk"}})
		if err != nil {
			t.Fatal(err)
		}
		op := partition.Operation{Kind: partition.Create, EPK: epk.SchemeV2.Hash(key), ID: id, Item: item}
		if _, err := h.Execute(g, 20*time.Second, op); err != nil {
			t.Fatalf("create %d: %v", i, err)
		}
	}
	leader := h.Leader(g)
	if leader == nil {
		t.Fatal("no leader after the writes")
	}
	if err := leader.Host.CompactLog(g); err != nil {
		t.Fatal(err)
	}
	learner := h.Node(4)
	if _, err := leader.Host.ChangeMembers(g, []replication.Change{{Kind: replication.AddLearner, Node: 4, Store: learner.Member().Store}}); err != nil {
		t.Fatal(err)
	}
	// Every replica, the learner's included, ends at the leader's applied index with the same
	// state.
	deadline := time.Now().Add(30 * time.Second)
	for {
		h.Tick(1)
		hashes := map[uint64]bool{}
		var applied []uint64
		for _, n := range h.Nodes() {
			hash, a, ok, err := n.StateHash(g)
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				hashes[hash] = true
				applied = append(applied, a)
			}
		}
		if len(applied) == 4 && len(hashes) == 1 && applied[0] == applied[3] {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("replicas did not agree: applied %v, %d states", applied, len(hashes))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, installed := learner.Host.Snapshots(); installed == 0 {
		t.Fatal("the learner caught up without a snapshot")
	}
	var streamed uint64
	for _, tr := range transports {
		_, received, _ := tr.StreamedSnapshots()
		streamed += received
	}
	if (streamed > 0) != stream {
		t.Fatalf("%d snapshots streamed with StreamSnapshots %v", streamed, stream)
	}
}
