package raftrpc

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/partita-db/partita/internal/nodetls"
	"github.com/partita-db/partita/internal/replication"
	"github.com/partita-db/partita/internal/storage"
)

// inbox collects what a transport delivers.
type inbox struct {
	mu   sync.Mutex
	envs []*replication.Envelope
	more chan struct{}
}

func newInbox() *inbox { return &inbox{more: make(chan struct{}, 1)} }

func (in *inbox) deliver(env *replication.Envelope) {
	in.mu.Lock()
	in.envs = append(in.envs, env)
	in.mu.Unlock()
	select {
	case in.more <- struct{}{}:
	default:
	}
}

// wait returns once n envelopes arrived, or fails the test after a while.
func (in *inbox) wait(t *testing.T, n int) []*replication.Envelope {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		in.mu.Lock()
		got := append([]*replication.Envelope(nil), in.envs...)
		in.mu.Unlock()
		if len(got) >= n {
			return got
		}
		select {
		case <-in.more:
		case <-deadline:
			t.Fatalf("%d envelopes arrived, want %d", len(got), n)
		}
	}
}

// node is a transport serving on loopback.
type node struct {
	id    replication.NodeID
	t     *Transport
	in    *inbox
	addr  string
	serve chan error
}

// startNodes starts transports for the given secrets, each able to reach the others.
func startNodes(t *testing.T, secrets ...string) []*node {
	t.Helper()
	return startNodesWith(t, nil, secrets...)
}

// startNodesWith is startNodes with node i's configuration changed by tweak, when set.
func startNodesWith(t *testing.T, tweak func(i int, c *Config), secrets ...string) []*node {
	t.Helper()
	addrs := map[replication.NodeID]string{}
	var mu sync.Mutex
	resolve := func(id replication.NodeID) (string, bool) {
		mu.Lock()
		defer mu.Unlock()
		a, ok := addrs[id]
		return a, ok
	}
	var nodes []*node
	for i, secret := range secrets {
		id, err := nodetls.New([]byte(secret))
		if err != nil {
			t.Fatal(err)
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		n := &node{id: replication.NodeID(i + 1), in: newInbox(), addr: l.Addr().String(), serve: make(chan error, 1)}
		cfg := Config{Node: n.id, TLS: id, Resolve: resolve, Deliver: n.in.deliver,
			Serve: func(req []byte) []byte { return append([]byte(fmt.Sprintf("node %d answers ", n.id)), req...) }}
		if tweak != nil {
			tweak(i, &cfg)
		}
		n.t = New(cfg)
		mu.Lock()
		addrs[n.id] = n.addr
		mu.Unlock()
		go func() { n.serve <- n.t.Serve(l) }()
		t.Cleanup(func() {
			n.t.Close()
			if err := <-n.serve; err != nil {
				t.Errorf("node %d: serve: %v", n.id, err)
			}
		})
		nodes = append(nodes, n)
	}
	return nodes
}

func to(from, dst *node, group replication.GroupID) *replication.Envelope {
	return &replication.Envelope{Group: group, From: replication.Member{Replica: 1, Node: from.id, Store: 1},
		To: replication.Member{Replica: 2, Node: dst.id, Store: 1}}
}

// Envelopes arrive whole and in order, a snapshot of several megabytes included.
func TestEnvelopesArrive(t *testing.T) {
	nodes := startNodes(t, "one cluster's secret", "one cluster's secret")
	a, b := nodes[0], nodes[1]
	var sent []*replication.Envelope
	for i := range 50 {
		env := to(a, b, replication.GroupID(i))
		env.Term, env.Commit = uint64(i), uint64(2*i)
		if i == 20 {
			sst := bytes.Repeat([]byte("sstable bytes "), 400_000) // 5.6 MB: six frames
			env.Snapshot = &replication.SnapshotData{Meta: []byte("meta"),
				Spans: []storage.Span{{Start: []byte("a"), End: []byte("z")}}, SSTs: [][]byte{sst}}
		}
		sent = append(sent, env)
		a.t.Send(env)
	}
	got := b.in.wait(t, len(sent))
	for i := range sent {
		if !equalEnvelopes(got[i], sent[i]) {
			t.Fatalf("envelope %d arrived as %+v, sent %+v", i, got[i].Group, sent[i].Group)
		}
	}
	// To itself, a node delivers at once.
	a.t.Send(to(a, a, 7))
	if got := a.in.wait(t, 1); got[0].Group != 7 {
		t.Fatalf("delivered to itself: %+v", got[0])
	}
}

// A process with another secret reaches no node, and no node sends it anything.
func TestOtherSecretCutOff(t *testing.T) {
	nodes := startNodes(t, "one cluster's secret", "another cluster's secret")
	member, stranger := nodes[0], nodes[1]
	for _, pair := range [][2]*node{{stranger, member}, {member, stranger}} {
		from, dst := pair[0], pair[1]
		deadline := time.Now().Add(20 * time.Second)
		for from.t.Dropped.Load() == 0 {
			if time.Now().After(deadline) {
				t.Fatalf("node %d kept sending to node %d of another cluster without a failure", from.id, dst.id)
			}
			from.t.Send(to(from, dst, 1))
			time.Sleep(50 * time.Millisecond)
		}
	}
	for _, n := range nodes {
		n.in.mu.Lock()
		got := len(n.in.envs)
		n.in.mu.Unlock()
		if got != 0 {
			t.Fatalf("node %d received %d envelopes from another cluster", n.id, got)
		}
	}
}

// A call reaches the other node's Serve and brings back its answer, a large one included; a
// node of another cluster cannot call, nor be called.
func TestCall(t *testing.T) {
	ns := startNodes(t, "the cluster's secret", "the cluster's secret", "another cluster's secret")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	big := bytes.Repeat([]byte("x"), 3<<20)
	for _, req := range [][]byte{[]byte("hello"), big} {
		got, err := ns[0].t.Call(ctx, ns[1].id, req)
		if err != nil {
			t.Fatal(err)
		}
		if want := append([]byte("node 2 answers "), req...); !bytes.Equal(got, want) {
			t.Fatalf("answer of %d bytes, want %d", len(got), len(want))
		}
	}
	short, cancel2 := context.WithTimeout(ctx, 2*time.Second)
	defer cancel2()
	if _, err := ns[0].t.Call(short, ns[2].id, []byte("hello")); err == nil {
		t.Fatal("a node of another cluster answered a call")
	}
	if _, err := ns[2].t.Call(short, ns[1].id, []byte("hello")); err == nil {
		t.Fatal("a node of another cluster was answered")
	}
}

// A node that was unreachable for a while is reached within about a second of coming back:
// the connection to it tries again every second at most (reconnect). It guards the bound; a
// refused connection was retried soon enough with gRPC's defaults too (2.2 s after 45 s
// down), but an attempt to a node cut off waited out gRPC's 20 s connect timeout, and its
// backoff grows to two minutes.
func TestReconnectsSoonAfterAnOutage(t *testing.T) {
	secret := []byte("one cluster's secret")
	// b's address, reserved and not listened on for the outage.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addrB := l.Addr().String()
	l.Close()
	resolve := func(id replication.NodeID) (string, bool) { return addrB, id == 2 }
	idA, _ := nodetls.New(secret)
	a := New(Config{Node: 1, TLS: idA, Resolve: resolve, Deliver: func(*replication.Envelope) {}})
	defer a.Close()
	env := &replication.Envelope{Group: 1, From: replication.Member{Replica: 1, Node: 1, Store: 1}, To: replication.Member{Replica: 2, Node: 2, Store: 1}}
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); {
		a.Send(env)
		time.Sleep(100 * time.Millisecond)
	}
	in := newInbox()
	idB, _ := nodetls.New(secret)
	b := New(Config{Node: 2, TLS: idB, Resolve: resolve, Deliver: in.deliver})
	if l, err = net.Listen("tcp", addrB); err != nil {
		t.Skipf("b's port was taken meanwhile: %v", err)
	}
	served := make(chan error, 1)
	go func() { served <- b.Serve(l) }()
	defer func() {
		b.Close()
		<-served
	}()
	back := time.Now()
	for {
		a.Send(env)
		in.mu.Lock()
		got := len(in.envs)
		in.mu.Unlock()
		if got > 0 {
			t.Logf("reached %v after the node came back", time.Since(back).Round(time.Millisecond))
			return
		}
		if time.Since(back) > 3*time.Second {
			t.Fatal("the node was not reached 3 s after it came back")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
