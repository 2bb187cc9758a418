package replication_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/partita-db/partita/internal/nodetls"
	"github.com/partita-db/partita/internal/raftrpc"
	"github.com/partita-db/partita/internal/replication"
	"github.com/partita-db/partita/internal/storage"
)

// A cluster for snapshot tests: nodes in this process, each with its own store on disk (so
// that the heap holds only what the code under test keeps), replication host and raftrpc
// transport over loopback TLS, replicating a key-value state machine (kv) as large as a test
// makes it.

const testGroup replication.GroupID = 1

type kvCluster struct {
	t      *testing.T
	dir    string
	stream bool // the transports' StreamSnapshots
	mu     sync.Mutex
	addrs  map[replication.NodeID]string
	nodes  map[replication.NodeID]*kvNode
	// fault, when set, wraps the write of every snapshot node 1 streams (see faultyStreamer).
	fault func(attempt int, w io.Writer) io.Writer
}

type kvNode struct {
	c    *kvCluster
	id   replication.NodeID
	db   *storage.DB
	tr   *raftrpc.Transport
	host *replication.Host
	up   bool
	// streamer is node 1's transport as its host sees it.
	streamer *faultyStreamer
}

func newKVCluster(t *testing.T, stream bool) *kvCluster {
	c := &kvCluster{t: t, dir: t.TempDir(), stream: stream, addrs: map[replication.NodeID]string{}, nodes: map[replication.NodeID]*kvNode{}}
	t.Cleanup(func() {
		for _, n := range c.all() {
			n.stop()
		}
	})
	return c
}

func (c *kvCluster) all() []*kvNode {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*kvNode
	for _, n := range c.nodes {
		out = append(out, n)
	}
	return out
}

func (c *kvCluster) resolve(id replication.NodeID) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a, ok := c.addrs[id]
	return a, ok
}

// start starts node id on its store (a new one the first time, what it left otherwise).
func (c *kvCluster) start(id replication.NodeID) *kvNode {
	t := c.t
	t.Helper()
	db, err := storage.Open(fmt.Sprintf("%s/n%d", c.dir, id), storage.Options{CacheSize: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	tls, err := nodetls.New([]byte("the secret of the snapshot tests' cluster"))
	if err != nil {
		t.Fatal(err)
	}
	n := &kvNode{c: c, id: id, db: db}
	c.mu.Lock()
	addr := c.addrs[id]
	c.mu.Unlock()
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	var hostReady sync.WaitGroup
	hostReady.Add(1)
	n.tr = raftrpc.New(raftrpc.Config{Node: id, TLS: tls, Resolve: c.resolve,
		Deliver: func(env *replication.Envelope) {
			hostReady.Wait()
			if n.host != nil {
				n.host.Deliver(env)
			}
		},
		StreamSnapshots: func() bool { return c.stream },
	})
	go n.tr.Serve(l)
	var tr replication.Transport = n.tr
	if id == 1 {
		n.streamer = &faultyStreamer{Transport: n.tr, c: c}
		tr = n.streamer
	}
	n.host, err = replication.New(replication.Config{Node: id, DB: db, Transport: tr, TickInterval: 10 * time.Millisecond,
		Open: func(g replication.GroupID, meta []byte, hd *replication.Handle) (replication.StateMachine, error) {
			kvMu.Lock()
			kvHandles[db] = hd // for the test to propose through
			kvMu.Unlock()
			return openKV(db)
		}})
	hostReady.Done()
	if err != nil {
		t.Fatal(err)
	}
	n.host.Start()
	n.up = true
	c.mu.Lock()
	c.addrs[id] = l.Addr().String()
	c.nodes[id] = n
	c.mu.Unlock()
	return n
}

// reopen opens node id's store while the node is down.
func reopen(c *kvCluster, id replication.NodeID) (*storage.DB, error) {
	return storage.Open(fmt.Sprintf("%s/n%d", c.dir, id), storage.Options{CacheSize: 8 << 20})
}

// stop stops the node as a process that exits.
func (n *kvNode) stop() {
	if !n.up {
		return
	}
	n.up = false
	n.tr.Close()
	n.host.Close()
	n.db.Close()
}

// faultyStreamer is node 1's transport: it counts the snapshots it streams, and lets a test
// break them (kvCluster.fault).
type faultyStreamer struct {
	*raftrpc.Transport
	c        *kvCluster
	mu       sync.Mutex
	attempts int
}

func (f *faultyStreamer) StreamSnapshot(ctx context.Context, env *replication.Envelope, write func(next func() (io.Writer, error)) error) error {
	f.mu.Lock()
	f.attempts++
	attempt := f.attempts
	f.mu.Unlock()
	if f.c.fault == nil {
		return f.Transport.StreamSnapshot(ctx, env, write)
	}
	return f.Transport.StreamSnapshot(ctx, env, func(next func() (io.Writer, error)) error {
		return write(func() (io.Writer, error) {
			w, err := next()
			if err != nil {
				return nil, err
			}
			return f.c.fault(attempt, w), nil
		})
	})
}

func (f *faultyStreamer) streamed() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.attempts
}

// bootstrap makes the test group on node 1 alone, and waits for it to lead.
func (c *kvCluster) bootstrap(n *kvNode) {
	t := c.t
	t.Helper()
	if err := n.host.Bootstrap(testGroup, []byte("kv"), []replication.Member{{Replica: 1, Node: n.id, Store: n.host.Store()}}, 1); err != nil {
		t.Fatal(err)
	}
	if err := n.host.Campaign(testGroup); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "node 1 to lead", func() bool {
		st, ok := n.host.Status(testGroup)
		return ok && st.Leading
	})
}

// load writes items of valueSize random bytes through the group's leader on n, until the
// state holds about total bytes, and waits for them to apply.
func (c *kvCluster) load(n *kvNode, total, valueSize int) {
	t := c.t
	t.Helper()
	hd := n.handle()
	rng := rand.New(rand.NewPCG(7, 7))
	var batch [][]byte
	written := 0
	for i := 0; written < total; i++ {
		e := make([]byte, 8+valueSize)
		binary.BigEndian.PutUint64(e, uint64(i))
		for j := 8; j < len(e); j++ {
			e[j] = byte(rng.Uint32())
		}
		batch = append(batch, e)
		written += len(e)
		if len(batch) == 256 || written >= total {
			for len(batch) > 0 {
				taken, err := hd.Propose(batch...)
				if err != nil {
					t.Fatal(err)
				}
				batch = batch[taken:]
			}
			// Keep the log's uncommitted tail within Raft's bound.
			c.waitApplied(n, 0)
		}
	}
	c.waitApplied(n, 0)
}

// handle is the state machine's handle to the group on n.
func (n *kvNode) handle() *replication.Handle {
	kvMu.Lock()
	defer kvMu.Unlock()
	return kvHandles[n.db]
}

// waitApplied waits until n's replica applied what its group committed, and at least index.
func (c *kvCluster) waitApplied(n *kvNode, index uint64) uint64 {
	c.t.Helper()
	var applied uint64
	waitFor(c.t, fmt.Sprintf("node %d to apply", n.id), func() bool {
		st, ok := n.host.Status(testGroup)
		applied = st.Applied
		return ok && st.Applied >= st.Commit && st.Applied >= index
	})
	return applied
}

// addLearner adds a replica on learner through the leader on n and compacts the leader's log,
// so that the learner starts from a snapshot.
func (c *kvCluster) addLearner(n, learner *kvNode) {
	t := c.t
	t.Helper()
	if err := n.host.CompactLog(testGroup); err != nil {
		t.Fatal(err)
	}
	if _, err := n.host.ChangeMembers(testGroup, []replication.Change{{Kind: replication.AddLearner, Node: learner.id, Store: learner.host.Store()}}); err != nil {
		t.Fatal(err)
	}
}

// caughtUp waits until learner's replica applied what the leader on n did, and holds the same
// state.
func (c *kvCluster) caughtUp(n, learner *kvNode, within time.Duration) {
	t := c.t
	t.Helper()
	want := c.waitApplied(n, 0)
	deadline := time.Now().Add(within)
	for {
		st, ok := learner.host.Status(testGroup)
		if ok && st.Applied >= want {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the learner on node %d applied %d after %v, the leader %d", learner.id, st.Applied, within, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
	a, b := stateOf(t, n.db), stateOf(t, learner.db)
	t.Logf("the learner caught up: %s", b)
	if a != b {
		t.Fatalf("the learner's state differs from the leader's: %s against %s", b, a)
	}
}

// noLeftovers waits until n's store holds no sstables of a snapshot being received.
func noLeftovers(t *testing.T, n *kvNode) {
	t.Helper()
	waitFor(t, fmt.Sprintf("node %d's snapshot files to go", n.id), func() bool {
		dirs, err := n.db.SSTDirs()
		if err != nil {
			t.Fatal(err)
		}
		return len(dirs) == 0
	})
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited too long for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// The key-value state machine: every entry's data is one item, keyed by its first eight bytes;
// what was applied is recorded beside the items, in a span of its own.

var (
	kvMu      sync.Mutex
	kvHandles = map[*storage.DB]*replication.Handle{}
)

type kv struct {
	db          *storage.DB
	index, term uint64
	desc        []byte
}

type kvApplied struct {
	Index, Term uint64
	Desc        []byte
}

var (
	kvStateKey  = []byte("T/applied")
	kvStateSpan = storage.Span{Start: []byte("T/applied"), End: []byte("T/applied\x00")}
	kvItemSpan  = storage.Span{Start: []byte("T/item/"), End: []byte("T/item0")}
)

func openKV(db *storage.DB) (replication.StateMachine, error) {
	m := &kv{db: db}
	v, err := db.GetCopy(nil, kvStateKey)
	if err == nil {
		var a kvApplied
		if err := json.Unmarshal(v, &a); err != nil {
			return nil, err
		}
		m.index, m.term, m.desc = a.Index, a.Term, a.Desc
	} else if !storage.IsNotFound(err) {
		return nil, err
	}
	return m, nil
}

func (m *kv) Applied() (uint64, uint64, []byte) { return m.index, m.term, m.desc }

func (m *kv) Apply(ents []replication.Committed) error {
	b := m.db.NewBatch()
	defer b.Close()
	for _, e := range ents {
		if len(e.Data) >= 8 {
			if err := b.Set(append(bytes.Clone(kvItemSpan.Start), e.Data[:8]...), e.Data[8:]); err != nil {
				return err
			}
		}
		if e.Desc != nil {
			m.desc = e.Desc
		}
		m.index, m.term = e.Index, e.Term
	}
	v, err := json.Marshal(kvApplied{m.index, m.term, m.desc})
	if err != nil {
		return err
	}
	if err := b.Set(kvStateKey, v); err != nil {
		return err
	}
	return b.CommitUnsynced()
}

func (m *kv) Spans() []storage.Span { return []storage.Span{kvStateSpan, kvItemSpan} }
func (m *kv) Leader(bool, uint64)   {}
func (m *kv) Close()                {}
func (m *kv) Discard()              {}

// stateOf is a digest of the items a store holds: their count, bytes and hash.
func stateOf(t *testing.T, db *storage.DB) string {
	t.Helper()
	it, err := db.NewIter(kvItemSpan.Start, kvItemSpan.End)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	h := fnv.New64a()
	n, size := 0, 0
	for it.First(); it.Valid(); it.Next() {
		h.Write(it.Key())
		h.Write(it.Value())
		n++
		size += len(it.Value())
	}
	return fmt.Sprintf("%d items of %d bytes, hash %x", n, size, h.Sum64())
}
