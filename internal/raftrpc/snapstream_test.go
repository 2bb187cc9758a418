package raftrpc

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"sync/atomic"
	"testing"
	"time"

	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/partita-db/partita/internal/nodetls"
	"github.com/partita-db/partita/internal/replication"
	"github.com/partita-db/partita/internal/storage"
)

// streamPair starts two transports with streams on, a sending to b, whose Deliver is receive.
func streamPair(t *testing.T, receive func(env *replication.Envelope)) (a, b *Transport) {
	t.Helper()
	id, err := nodetls.New([]byte("one cluster's secret"))
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	resolve := func(n replication.NodeID) (string, bool) { return l.Addr().String(), n == 2 }
	on := func() bool { return true }
	a = New(Config{Node: 1, TLS: id, Resolve: resolve, Deliver: func(*replication.Envelope) {}, StreamSnapshots: on})
	b = New(Config{Node: 2, TLS: id, Resolve: resolve, Deliver: receive, StreamSnapshots: on})
	served := make(chan error, 1)
	go func() { served <- b.Serve(l) }()
	t.Cleanup(func() {
		a.Close()
		b.Close()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return a, b
}

// snapEnvelope is a MsgSnap from node 1 to node 2 naming spans, its sstables to be streamed.
func snapEnvelope(spans int) *replication.Envelope {
	env := &replication.Envelope{Group: 9, From: replication.Member{Replica: 1, Node: 1, Store: 11},
		To: replication.Member{Replica: 3, Node: 2, Store: 22},
		Msg: &pb.Message{Type: pb.MsgSnap.Enum(), To: new(uint64(3)), From: new(uint64(1)), Term: new(uint64(4)),
			Snapshot: &pb.Snapshot{Data: []byte("meta"), Metadata: &pb.SnapshotMetadata{Index: new(uint64(77)), Term: new(uint64(4))}}},
		Snapshot: &replication.SnapshotData{Meta: []byte("meta")}}
	for i := range spans {
		env.Snapshot.Spans = append(env.Snapshot.Spans, storage.Span{Start: []byte{'a' + byte(i)}, End: []byte{'a' + byte(i) + 1}})
	}
	return env
}

// received is what a receiving end read from a stream.
type received struct {
	env  *replication.Envelope
	ssts [][]byte
	err  error
}

// reader is a host's side of streams: it reads every sstable and takes the snapshot.
func reader(got chan<- received) func(env *replication.Envelope) {
	return func(env *replication.Envelope) {
		go func() {
			r := received{env: env}
			st := env.Snapshot.Stream
			for {
				p, first, err := st.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					r.err = err
					break
				}
				if first {
					r.ssts = append(r.ssts, nil)
				}
				r.ssts[len(r.ssts)-1] = append(r.ssts[len(r.ssts)-1], p...)
			}
			st.Done(r.err)
			got <- r
		}()
	}
}

// A streamed snapshot's sstables arrive whole, each as written, in chunks of a fragment at
// most, after a header that carries the MsgSnap, the meta and the spans.
func TestSnapshotStreamArrives(t *testing.T) {
	got := make(chan received, 1)
	a, b := streamPair(t, reader(got))
	if !a.StreamsSnapshots(2) {
		t.Fatal("the hook is on, and the node answered nothing yet")
	}
	if off := (&Transport{cfg: Config{StreamSnapshots: func() bool { return false }}}); off.StreamsSnapshots(2) {
		t.Fatal("the hook is off, and snapshots go streamed")
	}
	rng := rand.New(rand.NewPCG(1, 1))
	var ssts [][]byte
	for _, n := range []int{5<<20 + 3, 10, 0, 1<<20 + 1} {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		ssts = append(ssts, b)
	}
	env := snapEnvelope(2)
	err := a.StreamSnapshot(t.Context(), env, func(next func() (io.Writer, error)) error {
		for _, sst := range ssts {
			w, err := next()
			if err != nil {
				return err
			}
			for p := sst; len(p) > 0; { // in pieces of odd sizes, as an sstable writer writes
				k := min(len(p), 1+rng.IntN(300_000))
				if _, err := w.Write(p[:k]); err != nil {
					return err
				}
				p = p[k:]
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	r := <-got
	if r.err != nil {
		t.Fatal(r.err)
	}
	e := r.env
	if e.Group != env.Group || e.From != env.From || e.To != env.To || e.Msg.GetType() != pb.MsgSnap ||
		e.Msg.GetSnapshot().GetMetadata().GetIndex() != 77 || string(e.Snapshot.Meta) != "meta" || len(e.Snapshot.Spans) != 2 ||
		string(e.Snapshot.Spans[1].Start) != "b" || string(e.Snapshot.Spans[1].End) != "c" || e.Snapshot.SSTs != nil {
		t.Fatalf("the header arrived as %+v / %+v", e, e.Snapshot)
	}
	if len(r.ssts) != len(ssts) {
		t.Fatalf("%d sstables arrived, %d sent", len(r.ssts), len(ssts))
	}
	for i := range ssts {
		if !bytes.Equal(r.ssts[i], ssts[i]) {
			t.Fatalf("sstable %d arrived as %d bytes, sent %d", i, len(r.ssts[i]), len(ssts[i]))
		}
	}
	for _, tr := range []*Transport{a, b} {
		if _, _, maxChunk := tr.StreamedSnapshots(); maxChunk > fragment {
			t.Fatalf("a chunk of %d bytes", maxChunk)
		}
	}
	if sent, _, _ := a.StreamedSnapshots(); sent != 1 {
		t.Fatalf("%d sent", sent)
	}
	if _, recv, _ := b.StreamedSnapshots(); recv != 1 {
		t.Fatalf("%d received", recv)
	}
}

// A snapshot the receiving host refuses on its header costs no data: the sender never writes.
func TestSnapshotStreamRefusedOnItsHeader(t *testing.T) {
	a, _ := streamPair(t, func(env *replication.Envelope) {
		env.Snapshot.Stream.Done(errors.New("it overlaps another replica"))
	})
	err := a.StreamSnapshot(t.Context(), snapEnvelope(1), func(func() (io.Writer, error)) error {
		t.Error("the sender wrote a refused snapshot")
		return nil
	})
	if !errors.Is(err, ErrSnapshotRefused) || !bytes.Contains([]byte(err.Error()), []byte("overlaps")) {
		t.Fatalf("StreamSnapshot: %v", err)
	}
}

// A receiver whose host never takes up the header (its engine is not open yet) refuses the
// snapshot after a while.
func TestSnapshotStreamNotTakenUp(t *testing.T) {
	defer func(d time.Duration) { admitWithin = d }(admitWithin)
	admitWithin = 100 * time.Millisecond
	a, _ := streamPair(t, func(*replication.Envelope) {})
	err := a.StreamSnapshot(t.Context(), snapEnvelope(1), func(func() (io.Writer, error)) error {
		t.Error("the sender wrote a snapshot nobody took up")
		return nil
	})
	if !errors.Is(err, ErrSnapshotRefused) {
		t.Fatalf("StreamSnapshot: %v", err)
	}
}

// A sender that stops midway (its snapshot failed, its node stops): the receiver's Next fails,
// never ends as if the snapshot were whole.
func TestSnapshotStreamBrokenMidway(t *testing.T) {
	got := make(chan received, 1)
	a, _ := streamPair(t, reader(got))
	broken := errors.New("the sender's iterator failed")
	err := a.StreamSnapshot(t.Context(), snapEnvelope(1), func(next func() (io.Writer, error)) error {
		w, err := next()
		if err != nil {
			return err
		}
		w.Write(bytes.Repeat([]byte("x"), 3<<20))
		return broken
	})
	if !errors.Is(err, broken) {
		t.Fatalf("StreamSnapshot: %v", err)
	}
	r := <-got
	if r.err == nil {
		t.Fatalf("the receiver read %d sstables to their end from a broken stream", len(r.ssts))
	}
}

// A node of the release before knows no snapshot stream: the sender hears Unimplemented and
// sends that node its snapshots inline for a while.
func TestSnapshotStreamToAnOlderRelease(t *testing.T) {
	id, err := nodetls.New([]byte("one cluster's secret"))
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	old := grpc.NewServer(grpc.Creds(credentials.NewTLS(id.Server())), grpc.ForceServerCodecV2(frameCodec{}))
	desc := serviceDesc
	desc.Streams = desc.Streams[:1] // Send only, as the release before served
	old.RegisterService(&desc, New(Config{Node: 2, TLS: id, Deliver: func(*replication.Envelope) {}}))
	go old.Serve(l)
	defer old.Stop()
	a := New(Config{Node: 1, TLS: id, Resolve: func(replication.NodeID) (string, bool) { return l.Addr().String(), true },
		Deliver: func(*replication.Envelope) {}, StreamSnapshots: func() bool { return true }})
	defer a.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := a.StreamSnapshot(ctx, snapEnvelope(1), func(func() (io.Writer, error)) error { return nil }); err == nil {
		t.Fatal("a node without the stream took a snapshot on it")
	}
	if a.StreamsSnapshots(2) {
		t.Fatal("snapshots still go streamed to a node that answered Unimplemented")
	}
	if !a.StreamsSnapshots(3) {
		t.Fatal("another node's snapshots no longer go streamed")
	}
}

// The header of a streamed snapshot decodes to what was encoded, and garbage is refused.
func TestSnapshotHeader(t *testing.T) {
	env := snapEnvelope(3)
	b, err := appendSnapshotHeader(nil, env)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeSnapshotHeader(b)
	if err != nil {
		t.Fatal(err)
	}
	if got.Group != env.Group || len(got.Snapshot.Spans) != 3 || got.Msg.GetSnapshot().GetMetadata().GetIndex() != 77 {
		t.Fatalf("decoded %+v", got)
	}
	for i := range b {
		if _, err := decodeSnapshotHeader(b[:i]); err == nil {
			t.Fatalf("a header cut to %d bytes decoded", i)
		}
	}
	if _, err := decodeSnapshotHeader(append([]byte{2}, b[1:]...)); err == nil {
		t.Fatal("an unknown version decoded")
	}
	inline := snapEnvelope(1)
	inline.Snapshot.SSTs = [][]byte{[]byte("sst")}
	if _, err := appendSnapshotHeader(nil, inline); err == nil {
		t.Fatal("a header with its sstables inline encoded")
	}
}

// While a receiver reads nothing of a snapshot, its sender is held back (it has written at
// most a few megabytes of the 64 it would), and the envelopes between the two nodes still
// arrive: the snapshot is on a connection of its own.
func TestSnapshotStreamBackpressure(t *testing.T) {
	in := newInbox()
	stalled, release := make(chan struct{}), make(chan struct{})
	total := make(chan int, 1)
	a, _ := streamPair(t, func(env *replication.Envelope) {
		if env.Snapshot == nil || env.Snapshot.Stream == nil {
			in.deliver(env)
			return
		}
		go func() {
			st := env.Snapshot.Stream
			n := 0
			for {
				p, _, err := st.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Error(err)
					break
				}
				if n == 0 {
					close(stalled) // the first chunk came; nothing more is read until release
					<-release
				}
				n += len(p)
			}
			st.Done(nil)
			total <- n
		}()
	})
	var written atomic.Int64
	const size = 64 << 20
	done := make(chan error, 1)
	go func() {
		done <- a.StreamSnapshot(t.Context(), snapEnvelope(1), func(next func() (io.Writer, error)) error {
			w, err := next()
			if err != nil {
				return err
			}
			chunk := bytes.Repeat([]byte("y"), 64<<10)
			for written.Load() < size {
				if _, err := w.Write(chunk); err != nil {
					return err
				}
				written.Add(int64(len(chunk)))
			}
			return nil
		})
	}()
	<-stalled
	for i := range 20 {
		a.Send(&replication.Envelope{Group: replication.GroupID(100 + i), From: replication.Member{Replica: 1, Node: 1, Store: 1},
			To: replication.Member{Replica: 2, Node: 2, Store: 1}})
	}
	in.wait(t, 20)
	time.Sleep(200 * time.Millisecond) // room for a sender without backpressure to run far ahead
	t.Logf("the sender wrote %.1f MB before it was held back", float64(written.Load())/(1<<20))
	if w := written.Load(); w > 8<<20 {
		t.Fatalf("the sender wrote %d MB while the receiver read one chunk", w>>20)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := <-total; n != size {
		t.Fatalf("%d bytes arrived, %d sent", n, size)
	}
}
