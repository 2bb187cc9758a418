package replicationtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/partition"
	"github.com/partita-db/partita/internal/replica"
	"github.com/partita-db/partita/internal/replication"
	"github.com/partita-db/partita/internal/rid"
	"github.com/partita-db/partita/internal/storage"
)

// Harness runs a cluster of nodes in one process: each node has its own Pebble on its own
// in-memory file system (which remembers what was synced, so that the power can be cut), its
// own replication host, and its replicas of physical partitions as state machines. A network
// with faults (Network) carries what they send, and a manual clock drives Raft's ticks and the
// partitions' time. A background pump processes every host and delivers the network's
// envelopes; the test ticks, cuts links, crashes and restarts nodes, and runs operations on
// whichever replica holds a group's lease.
type Harness struct {
	Net *Network
	// Clock is the partitions' time in Unix seconds (items' _ts); it moves only when the test
	// moves it.
	Clock atomic.Int64
	log   *slog.Logger

	mu    sync.Mutex
	nodes map[replication.NodeID]*Node
	kick  chan struct{}
	stop  chan struct{}
	done  chan struct{}
	// busy counts pump rounds that did work, quiet those that did not.
	rounds atomic.Uint64
	quiet  atomic.Uint64
	// dir, when set, holds the nodes' stores on disk (NewOnDisk).
	dir string
	// transport, when set, gives each node the transport its host sends with, in place of Net
	// (NewOverTransport).
	transport TransportFunc
}

// TransportFunc makes the transport a node's host sends with, at each start of the node;
// deliver hands what arrives for the node to its host.
type TransportFunc func(node replication.NodeID, deliver func(*replication.Envelope)) replication.Transport

// Node is one node of the harness.
type Node struct {
	ID   replication.NodeID
	h    *Harness
	fs   *storage.MemFS
	db   *storage.DB
	Host *replication.Host
	// parts are the node's open replicas, by group.
	mu    sync.Mutex
	parts map[replication.GroupID]*partition.Partition
	up    bool
	// running is held while the pump processes the node's host, and by whoever stops it.
	running sync.Mutex
	// calls is held shared by clients while they call into the node's replicas, and
	// exclusively to close its store, which they read.
	calls sync.RWMutex
}

// The harness's one container: its number, and what items' _rid and _self extend.
const (
	Container  = 7
	databaseNo = 3
)

var containerRID = rid.ForContainer(rid.ForDatabase(databaseNo), Container)

// Group is the group of the container's partition id.
func Group(id uint32) replication.GroupID {
	return replication.GroupID(uint64(Container)<<32 | uint64(id))
}

// PartitionOf is the partition id of a group.
func PartitionOf(g replication.GroupID) uint32 { return uint32(g) }

// meta is what opens a replica's partition: its id and range (the rest is the container's).
type meta struct {
	ID  uint32 `json:"id"`
	Min string `json:"min"`
	Max string `json:"max"`
}

// New starts a harness of n nodes, numbered from 1; seed drives the network's random faults.
func New(n int, seed uint64, log *slog.Logger) (*Harness, error) {
	return newHarness(n, seed, log, "", nil)
}

// NewOnDisk starts a harness whose nodes keep their stores in directories under dir, on the
// machine's disk, where a sync costs what it costs (benchmarks); their power cannot be cut.
func NewOnDisk(n int, dir string, log *slog.Logger) (*Harness, error) {
	return newHarness(n, 1, log, dir, nil)
}

// NewOverTransport starts a harness of n nodes whose hosts send with the transports tf makes
// (a real network, say) instead of the harness's network, whose faults then do nothing.
func NewOverTransport(n int, tf TransportFunc, log *slog.Logger) (*Harness, error) {
	return newHarness(n, 1, log, "", tf)
}

func newHarness(n int, seed uint64, log *slog.Logger, dir string, tf TransportFunc) (*Harness, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	h := &Harness{Net: NewNetwork(seed), log: log, nodes: map[replication.NodeID]*Node{}, dir: dir, transport: tf,
		kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	h.Clock.Store(1_780_000_000)
	for i := 1; i <= n; i++ {
		if _, err := h.AddNode(replication.NodeID(i)); err != nil {
			h.Close()
			return nil, err
		}
	}
	go h.pump()
	return h, nil
}

// AddNode starts a new, empty node.
func (h *Harness) AddNode(id replication.NodeID) (*Node, error) {
	node := &Node{ID: id, h: h, fs: storage.NewMemFS(), parts: map[replication.GroupID]*partition.Partition{}}
	if err := node.start(); err != nil {
		return nil, err
	}
	h.mu.Lock()
	h.nodes[id] = node
	h.mu.Unlock()
	return node, nil
}

// start opens the node's store and host on its file system.
func (node *Node) start() error {
	path, fs := "/node/db", node.fs
	if node.h.dir != "" {
		path, fs = fmt.Sprintf("%s/n%d", node.h.dir, node.ID), nil
	}
	db, err := storage.Open(path, storage.Options{FS: fs, CacheSize: 8 << 20})
	if err != nil {
		return err
	}
	node.db = db
	var tr replication.Transport = node.h.Net
	if node.h.transport != nil {
		tr = node.h.transport(node.ID, node.deliver)
	}
	host, err := replication.New(replication.Config{
		Node: node.ID, DB: db, Transport: tr, Open: node.open, Logger: node.h.log,
		Notify: node.h.notify,
	})
	if err != nil {
		db.Close()
		return err
	}
	node.mu.Lock()
	node.Host, node.up = host, true
	node.mu.Unlock()
	node.h.Net.attach(node.ID, host)
	return nil
}

// deliver hands env to the node's host, if it is up.
func (node *Node) deliver(env *replication.Envelope) {
	node.mu.Lock()
	host, up := node.Host, node.up
	node.mu.Unlock()
	if up {
		host.Deliver(env)
	}
}

func (h *Harness) notify() {
	select {
	case h.kick <- struct{}{}:
	default:
	}
}

// Node returns node id.
func (h *Harness) Node(id replication.NodeID) *Node {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.nodes[id]
}

// Nodes lists the nodes, by id.
func (h *Harness) Nodes() []*Node {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []*Node
	for _, n := range h.nodes {
		out = append(out, n)
	}
	slices.SortFunc(out, func(a, b *Node) int { return int(a.ID) - int(b.ID) })
	return out
}

// pump processes every live host and delivers the network's envelopes, round after round,
// until the harness closes.
func (h *Harness) pump() {
	defer close(h.done)
	for {
		select {
		case <-h.stop:
			return
		default:
		}
		work := false
		for _, n := range h.Nodes() {
			n.running.Lock()
			n.mu.Lock()
			host, up := n.Host, n.up
			n.mu.Unlock()
			if up {
				for host.Process() {
					work = true
				}
			}
			n.running.Unlock()
		}
		delivered, pending := h.Net.deliver()
		work = work || delivered
		h.rounds.Add(1)
		if work || pending {
			h.quiet.Store(0)
			continue
		}
		h.quiet.Add(1)
		select {
		case <-h.kick:
		case <-time.After(time.Millisecond):
		case <-h.stop:
			return
		}
	}
}

// Stabilize waits until the cluster is quiet: every host idle and nothing in flight on the
// network, for several rounds in a row.
func (h *Harness) Stabilize() {
	h.quiet.Store(0) // only rounds from now count: work handed over before may not be seen yet
	h.notify()
	for h.quiet.Load() < 5 {
		time.Sleep(200 * time.Microsecond)
	}
}

// Tick advances Raft's clock on every live node by n ticks, letting the cluster react to each.
func (h *Harness) Tick(n int) {
	for range n {
		h.TickAsync()
		h.Stabilize()
	}
}

// TickAsync advances Raft's clock on every live node by one tick without waiting for the
// cluster to settle (for runs with clients at work, which it never does).
func (h *Harness) TickAsync() {
	for _, node := range h.Nodes() {
		node.mu.Lock()
		if node.up {
			node.Host.Tick()
		}
		node.mu.Unlock()
	}
	h.notify()
}

// Close stops every node and the pump.
func (h *Harness) Close() {
	close(h.stop)
	<-h.done
	for _, n := range h.Nodes() {
		n.stopProcess()
	}
}

// stopProcess stops the node as a process that exits: its host and store close.
func (node *Node) stopProcess() { node.die(nil) }

// die stops the node at once: the pump stops processing it and the network stops carrying
// what it sends, so that nothing it does after the instant of its death reaches anyone; then
// at returns what its disk holds at that instant (nil: everything it wrote), and its host and
// store are closed (they write to the disk that died, not to what at returned).
func (node *Node) die(at func() *storage.MemFS) {
	node.running.Lock()
	defer node.running.Unlock()
	node.mu.Lock()
	up, host, db := node.up, node.Host, node.db
	node.up = false
	node.mu.Unlock()
	if !up {
		return
	}
	node.h.Net.attach(node.ID, nil)
	var survived *storage.MemFS
	if at != nil {
		survived = at()
	}
	host.Close() // clients waiting on its replicas give up
	node.calls.Lock()
	db.Close()
	node.calls.Unlock()
	if survived != nil {
		node.fs = survived
	}
}

// Crash stops the node as a process killed at once: what it wrote survives, synced or not
// (keep 100), or as a machine that lost its power: what was synced survives, and of the rest
// each block with a chance of keep percent, drawn from seed.
func (node *Node) Crash(keep int, seed uint64) {
	if keep >= 100 {
		node.die(nil)
		return
	}
	node.die(func() *storage.MemFS { return node.fs.Crash(keep, rand.New(rand.NewPCG(seed, uint64(node.ID)))) })
}

// Restart starts a crashed (or stopped) node again on what its disk holds.
func (node *Node) Restart() error { return node.start() }

// Wipe stops the node and loses its disk: it starts again empty, with another store
// identity, so its replicas must be replaced.
func (node *Node) Wipe() error {
	node.stopProcess()
	node.fs = storage.NewMemFS()
	return node.start()
}

// Up reports whether the node runs.
func (node *Node) Up() bool {
	node.mu.Lock()
	defer node.mu.Unlock()
	return node.up
}

// Member is the node's place, for membership changes.
func (node *Node) Member() replication.Member {
	node.mu.Lock()
	defer node.mu.Unlock()
	return replication.Member{Node: node.ID, Store: node.Host.Store()}
}

// Replica is the node's open replica of g, if any.
func (node *Node) Replica(g replication.GroupID) *partition.Partition {
	node.mu.Lock()
	defer node.mu.Unlock()
	if !node.up {
		return nil
	}
	return node.parts[g]
}

// open is the node's replication.Opener: it opens a partition replica.
func (node *Node) open(g replication.GroupID, raw []byte, hd *replication.Handle) (replication.StateMachine, error) {
	id, r, err := ParseMeta(raw)
	if err != nil {
		return nil, err
	}
	h := node.h
	p, err := partition.Open(partition.Config{
		DB: node.db, Container: Container, ID: id, Range: r, ContainerRID: containerRID,
		SelfPrefix:      "dbs/" + rid.ForDatabase(databaseNo).String() + "/colls/" + containerRID.String() + "/docs/",
		MaxLogicalBytes: 1 << 30, KeepImages: true, Now: h.Clock.Load, Replica: hd,
		OnSplit: func(b *storage.Batch, children [2]partition.Child) error {
			var cs []replication.ChildGroup
			for _, c := range children {
				cs = append(cs, replication.ChildGroup{Group: Group(c.ID), Meta: MetaOf(c.ID, c.Range)})
			}
			_, _, err := node.Host.SplitGroup(b, g, cs)
			return err
		},
	})
	if err != nil {
		return nil, err
	}
	node.mu.Lock()
	node.parts[g] = p
	node.mu.Unlock()
	return closing{replica.Of(p), func() { node.forget(g, p) }}, nil
}

// closing is a replica's state machine that the node forgets once it is closed or discarded.
type closing struct {
	replication.StateMachine
	forget func()
}

func (c closing) Close() {
	c.forget()
	c.StateMachine.Close()
}

func (c closing) Discard() {
	c.forget()
	c.StateMachine.Discard()
}

// forget removes p, the replica of g, from the node's open replicas.
func (node *Node) forget(g replication.GroupID, p *partition.Partition) {
	node.mu.Lock()
	if node.parts[g] == p {
		delete(node.parts, g)
	}
	node.mu.Unlock()
}

// MetaOf is what opens a replica of partition id of range r (replication.Host.Bootstrap's
// meta); ParseMeta reads it back.
func MetaOf(id uint32, r epk.Range) []byte {
	b, _ := json.Marshal(meta{ID: id, Min: r.Min.Hex(), Max: r.Max.Hex()}) // cannot fail
	return b
}

// ParseMeta reads what MetaOf wrote.
func ParseMeta(raw []byte) (id uint32, r epk.Range, err error) {
	var m meta
	if err := json.Unmarshal(raw, &m); err != nil {
		return 0, epk.Range{}, err
	}
	if r.Min, err = epk.ParseHex(m.Min); err != nil {
		return 0, epk.Range{}, err
	}
	if r.Max, err = epk.ParseHex(m.Max); err != nil {
		return 0, epk.Range{}, err
	}
	return m.ID, r, nil
}

// Bootstrap creates a group for partition id over r on nodes, replicas 1, 2... in that order.
// Nobody campaigns: elections start once the group is ticked (or see StartGroup).
func (h *Harness) Bootstrap(id uint32, r epk.Range, nodes ...replication.NodeID) error {
	var members []replication.Member
	for i, n := range nodes {
		m := h.Node(n).Member()
		m.Replica = replication.ReplicaID(i + 1)
		members = append(members, m)
	}
	for i, n := range nodes {
		if err := h.Node(n).Host.Bootstrap(Group(id), MetaOf(id, r), members, replication.ReplicaID(i+1)); err != nil {
			return err
		}
	}
	return nil
}

// StartGroup bootstraps a group as Bootstrap does and has its first node campaign, without
// waiting for the election (Stabilize does).
func (h *Harness) StartGroup(id uint32, r epk.Range, nodes ...replication.NodeID) error {
	if err := h.Bootstrap(id, r, nodes...); err != nil {
		return err
	}
	return h.Node(nodes[0]).Host.Campaign(Group(id))
}

// Leader is the node whose replica of g leads, or nil: of those that think they lead (one
// cut off may not know yet that another was elected), the one of the highest term.
func (h *Harness) Leader(g replication.GroupID) *Node {
	var best *Node
	var bestTerm uint64
	for _, n := range h.leaders(g) {
		if st, ok := n.Host.Status(g); ok && st.Leading && (best == nil || st.Term > bestTerm) {
			best, bestTerm = n, st.Term
		}
	}
	return best
}

// leaders are the nodes whose replicas of g think they lead, the highest term first.
func (h *Harness) leaders(g replication.GroupID) []*Node {
	type cand struct {
		n    *Node
		term uint64
	}
	var cs []cand
	for _, n := range h.Nodes() {
		if p := n.Replica(g); p != nil && p.Leading() {
			st, _ := n.Host.Status(g)
			cs = append(cs, cand{n, st.Term})
		}
	}
	slices.SortStableFunc(cs, func(a, b cand) int { return int(b.term) - int(a.term) })
	out := make([]*Node, len(cs))
	for i, c := range cs {
		out[i] = c.n
	}
	return out
}

// WaitLeader ticks until a replica of g leads (at most maxTicks), and returns its node.
func (h *Harness) WaitLeader(g replication.GroupID, maxTicks int) *Node {
	for range maxTicks {
		if n := h.Leader(g); n != nil {
			return n
		}
		h.Tick(1)
	}
	return h.Leader(g)
}

// errNoLeader is what Execute and Read return when no replica of the group took the request
// in time.
var errNoLeader = errors.New("replicationtest: no leaseholder took the operation in time")

// Execute runs ops on g's leaseholder, looking for it, and trying again elsewhere as long as
// replicas refuse them without applying them, for up to timeout.
func (h *Harness) Execute(g replication.GroupID, timeout time.Duration, ops ...partition.Operation) (res []partition.Result, err error) {
	err = h.onLeaseholder(g, timeout, func(p *partition.Partition) (err error) {
		res, err = p.Execute(ops...)
		return err
	})
	return res, err
}

// Read reads item (e, id) on g's leaseholder, looking for it as Execute does.
func (h *Harness) Read(g replication.GroupID, timeout time.Duration, e epk.EPK, id string) (d partition.Doc, err error) {
	err = h.onLeaseholder(g, timeout, func(p *partition.Partition) (err error) {
		d, err = p.Read(e, id, nil)
		return err
	})
	return d, err
}

// onLeaseholder runs fn on the replica of g that leads in the highest term, and on the others
// that lead, and again, for up to timeout, as long as fn fails without having done anything.
func (h *Harness) onLeaseholder(g replication.GroupID, timeout time.Duration, fn func(*partition.Partition) error) error {
	deadline := time.Now().Add(timeout)
	for {
		var tried bool
		for _, n := range h.leaders(g) {
			err := n.call(g, func(p *partition.Partition) error {
				tried = true
				return fn(p)
			})
			if err == errNotHere {
				continue
			}
			if err == nil || !retryable(err) {
				return err
			}
		}
		if time.Now().After(deadline) {
			if tried {
				return partition.ErrNotLeaseholder
			}
			return errNoLeader
		}
		time.Sleep(time.Millisecond)
	}
}

// errNotHere: the node holds no replica of the group that leads.
var errNotHere = errors.New("replicationtest: no leading replica here")

// call runs fn on the node's replica of g if it leads, while the node cannot die under it.
func (node *Node) call(g replication.GroupID, fn func(p *partition.Partition) error) error {
	node.calls.RLock()
	defer node.calls.RUnlock()
	p := node.Replica(g)
	if p == nil || !p.Leading() {
		return errNotHere
	}
	err := fn(p)
	if !node.Up() && err != nil {
		return partition.ErrAmbiguous // it died under the call: the outcome is not known
	}
	return err
}

// retryable reports whether err left nothing applied and another replica may do better.
func retryable(err error) bool {
	return partition.Retriable(err)
}

// StateHash is a hash of what node's replica of g holds in its key spans: replicas that applied
// the same entries hold the same bytes, so the same hash. ok is false when the node holds no
// replica of g.
func (node *Node) StateHash(g replication.GroupID) (hash uint64, applied uint64, ok bool, err error) {
	p := node.Replica(g)
	if p == nil {
		return 0, 0, false, nil
	}
	applied, _, _ = p.AppliedIndex()
	f := fnv.New64a()
	snap := node.db.NewSnapshot()
	defer snap.Close()
	for _, s := range p.Spans() {
		it, err := snap.NewIter(s.Start, s.End)
		if err != nil {
			return 0, 0, false, err
		}
		for it.First(); it.Valid(); it.Next() {
			fmt.Fprintf(f, "%x=%x;", it.Key(), it.Value())
		}
		if err := it.Close(); err != nil {
			return 0, 0, false, err
		}
	}
	return f.Sum64(), applied, true, nil
}
