package raftrpc

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/partita-db/partita/internal/replication"
	"github.com/partita-db/partita/internal/storage"
)

// Streamed snapshots (replication.SnapshotStreamer). A snapshot goes on a stream of its own,
// on a connection of its own, so that the envelopes between the two nodes (heartbeats,
// appends, votes) never wait behind it, and its bytes in chunks of at most a fragment, so
// that neither end holds more than a few of them: the sender blocks in gRPC's flow control
// while the receiver is behind, and the receiver's window (serverWindow) bounds what waits
// for it unread. One stream, its messages frames (the tag is the first byte of a frame's
// data):
//
//	sender:   header | sst chunk | data chunk... | sst chunk | data chunk... | end
//	receiver:          go                                                           verdict
//
//	header:  snapshotStreamVersion | envelope (envelope.go, the MsgSnap, no snapshot) |
//	         meta | span count | per span: start end
//	sst:     the first bytes of an sstable; data: more bytes of the current one
//	end:     sstable count | byte count (the receiver checks both)
//	go:      the receiving host checked the header and reads the data
//	verdict: why the host did not take the snapshot, empty once it took it
//
// The sender waits for go before it sends data, so that a snapshot the receiver refuses (it
// overlaps a replica there, say) costs one round trip, not its size.
const snapshotStreamVersion = 1

const (
	tagHeader  = 1
	tagSST     = 2
	tagData    = 3
	tagEnd     = 4
	tagGo      = 5
	tagVerdict = 6
)

// admitWithin bounds how long a receiver waits for its host to take up a snapshot's header
// (read it, or refuse it): a node whose engine is not open yet drops what it is delivered.
// A variable for tests.
var admitWithin = 10 * time.Second

// goAheadWithin bounds how long a sender waits for the receiver's go.
const goAheadWithin = 20 * time.Second

// inlineFor is how long a node that answered a stream with Unimplemented (a release that only
// takes snapshots inline) gets its snapshots inline, whatever StreamSnapshots says.
const inlineFor = time.Minute

// maxStreamsOut and maxStreamsIn bound the snapshots a node streams, and receives, at once:
// each costs a chunk and an sstable writer's state on the sender, a chunk and a window on the
// receiver, so that a node receiving the replicas of many groups (a new node, or one back from
// a wipe) holds a few megabytes for all of them. A sender waits for its turn; a receiver
// refuses a snapshot beyond its bound, which Raft sends again later.
const (
	maxStreamsOut = 4
	maxStreamsIn  = 8
)

// serverWindow is the flow-control window of every stream a node receives, and of each
// connection: what a sender may have in flight unread. Fixed rather than grown with the
// bandwidth-delay product (gRPC's default, up to 16 MB), so that a streamed snapshot's
// receiver holds a megabyte of it at most; at a millisecond's round trip it still passes a
// gigabyte a second.
const serverWindow = 1 << 20

var _ replication.SnapshotStreamer = (*Transport)(nil)

// StreamsSnapshots implements replication.SnapshotStreamer: Config.StreamSnapshots says so,
// and node did not answer lately that it does not know the stream.
func (t *Transport) StreamsSnapshots(node replication.NodeID) bool {
	if t.cfg.StreamSnapshots == nil || !t.cfg.StreamSnapshots() {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return time.Now().After(t.inlineOnly[node])
}

// StreamedSnapshots counts the snapshots this transport streamed and received whole, and
// MaxChunk is the largest chunk of one it held (sent or received), for tests and figures.
func (t *Transport) StreamedSnapshots() (sent, received uint64, maxChunk int) {
	return t.snapSent.Load(), t.snapReceived.Load(), int(t.maxChunk.Load())
}

func (t *Transport) chunkSeen(n int) {
	for {
		m := t.maxChunk.Load()
		if int64(n) <= m || t.maxChunk.CompareAndSwap(m, int64(n)) {
			return
		}
	}
}

// StreamSnapshot implements replication.SnapshotStreamer.
func (t *Transport) StreamSnapshot(ctx context.Context, env *replication.Envelope, write func(next func() (io.Writer, error)) error) error {
	node := env.To.Node
	addr, ok := t.cfg.Resolve(node)
	if !ok {
		return fmt.Errorf("raftrpc: the address of node %d is not known", node)
	}
	header, err := appendSnapshotHeader([]byte{tagHeader}, env)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(t.ctx, cancel) // the transport closing ends the stream
	defer stop()
	select {
	case t.streamsOut <- struct{}{}:
		defer func() { <-t.streamsOut }()
	case <-ctx.Done():
		return ctx.Err()
	}
	conn, err := t.snapshotConn(node, addr)
	if err != nil {
		return err
	}
	s, err := conn.NewStream(ctx, &serviceDesc.Streams[1], snapshotMethod, grpc.ForceCodecV2(frameCodec{}))
	if err != nil {
		return t.streamFailed(node, err)
	}
	if err := s.SendMsg(&frame{data: header}); err != nil {
		return t.streamFailed(node, recvStatus(s, err))
	}
	// Wait for go, or the refusal.
	timer := time.AfterFunc(goAheadWithin, cancel)
	var f frame
	err = s.RecvMsg(&f)
	timer.Stop()
	if err != nil {
		return t.streamFailed(node, err)
	}
	switch {
	case len(f.data) > 0 && f.data[0] == tagVerdict:
		return verdict(f.data[1:])
	case len(f.data) != 1 || f.data[0] != tagGo:
		return fmt.Errorf("%w: an answer to a snapshot's header", ErrMalformed)
	}
	out := &chunker{t: t, s: s, buf: make([]byte, 1, 1+fragment)}
	if err := write(out.next); err != nil {
		return err // canceling ctx ends the stream: the receiver drops what it has
	}
	if err := out.flush(); err != nil {
		return t.streamFailed(node, recvStatus(s, err))
	}
	end := binary.AppendUvarint([]byte{tagEnd}, uint64(out.ssts))
	end = binary.AppendUvarint(end, uint64(out.bytes))
	if err := s.SendMsg(&frame{data: end}); err != nil {
		return t.streamFailed(node, recvStatus(s, err))
	}
	if err := s.CloseSend(); err != nil {
		return err
	}
	if err := s.RecvMsg(&f); err != nil {
		return t.streamFailed(node, err)
	}
	if len(f.data) == 0 || f.data[0] != tagVerdict {
		return fmt.Errorf("%w: an answer to a snapshot", ErrMalformed)
	}
	if err := verdict(f.data[1:]); err != nil {
		return err
	}
	t.snapSent.Add(1)
	return nil
}

// snapshotConn is the connection snapshots to node go on, made at its first: a connection of
// its own, since on the envelopes' one the snapshots' bytes would share a TCP stream (and its
// losses) with the heartbeats.
func (t *Transport) snapshotConn(node replication.NodeID, addr string) (*grpc.ClientConn, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, errors.New("raftrpc: the transport is closed")
	}
	c := t.snapConns[node]
	if c != nil && c.addr == addr {
		return c.conn, nil
	}
	if c != nil {
		c.conn.Close() // streams on it end: their snapshots fail, and go again
	}
	conn, err := t.dial(addr, pinged)
	if err != nil {
		return nil, err
	}
	t.snapConns[node] = &callConn{addr: addr, conn: conn}
	return conn, nil
}

// recvStatus is why a stream that refused a message broke: gRPC tells it to RecvMsg.
func recvStatus(s grpc.ClientStream, err error) error {
	if errors.Is(err, io.EOF) {
		var f frame
		if rerr := s.RecvMsg(&f); rerr != nil && !errors.Is(rerr, io.EOF) {
			return rerr
		}
		if len(f.data) > 0 && f.data[0] == tagVerdict {
			if v := verdict(f.data[1:]); v != nil {
				return v
			}
		}
	}
	return err
}

// streamFailed notes a node that does not know the stream (a release before it), whose
// snapshots then go inline for a while, and returns err.
func (t *Transport) streamFailed(node replication.NodeID, err error) error {
	if status.Code(err) == codes.Unimplemented {
		t.mu.Lock()
		t.inlineOnly[node] = time.Now().Add(inlineFor)
		t.mu.Unlock()
		t.cfg.Logger.Info("raftrpc: a node takes no streamed snapshots; they go inline to it for a while", "node", node)
	}
	return err
}

// ErrSnapshotRefused is what StreamSnapshot returns when the receiving host did not take the
// snapshot; the error says why.
var ErrSnapshotRefused = errors.New("raftrpc: the receiving node did not take the snapshot")

func verdict(why []byte) error {
	if len(why) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrSnapshotRefused, why)
}

// chunker sends the sstables' bytes as the sender writes them, in chunks of a fragment at most;
// its buffer is the one chunk it holds (the tag byte, then the bytes).
type chunker struct {
	t     *Transport
	s     grpc.ClientStream
	buf   []byte
	first bool // buf holds the start of an sstable
	ssts  int
	bytes int64
	err   error
}

// next begins an sstable.
func (c *chunker) next() (io.Writer, error) {
	if err := c.flush(); err != nil {
		return nil, err
	}
	c.first = true
	c.ssts++
	return c, nil
}

func (c *chunker) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		if c.err != nil {
			return 0, c.err
		}
		k := min(len(p), 1+fragment-len(c.buf))
		c.buf = append(c.buf, p[:k]...)
		p = p[k:]
		if len(c.buf) == 1+fragment {
			c.flush()
		}
	}
	c.bytes += int64(n)
	return n, c.err
}

// flush sends what buf holds, if anything.
func (c *chunker) flush() error {
	if c.err != nil || len(c.buf) == 1 && !c.first {
		return c.err
	}
	c.buf[0] = tagData
	if c.first {
		c.buf[0] = tagSST
	}
	c.t.chunkSeen(len(c.buf) - 1)
	if err := c.s.SendMsg(&frame{data: c.buf}); err != nil { // blocks while the receiver is behind
		c.err = err
		return err
	}
	c.buf, c.first = c.buf[:1], false
	return nil
}

// appendSnapshotHeader appends the header of env's streamed snapshot to dst.
func appendSnapshotHeader(dst []byte, env *replication.Envelope) ([]byte, error) {
	s := env.Snapshot
	if env.Msg == nil || s == nil || len(s.SSTs) != 0 || len(s.Spans) > maxSpans {
		return nil, errors.New("raftrpc: a streamed snapshot is a MsgSnap naming its spans, without sstables")
	}
	bare := *env
	bare.Snapshot = nil
	e, err := appendEnvelope(nil, &bare)
	if err != nil {
		return nil, err
	}
	dst = append(dst, snapshotStreamVersion)
	dst = appendBytes(dst, e)
	dst = appendBytes(dst, s.Meta)
	dst = binary.AppendUvarint(dst, uint64(len(s.Spans)))
	for _, sp := range s.Spans {
		dst = appendBytes(dst, sp.Start)
		dst = appendBytes(dst, sp.End)
	}
	return dst, nil
}

// decodeSnapshotHeader decodes a streamed snapshot's header: its envelope, whose Snapshot names
// the meta and spans.
func decodeSnapshotHeader(b []byte) (*replication.Envelope, error) {
	d := decoder{b: b}
	if v := d.byte(); v != snapshotStreamVersion {
		if d.err != nil {
			return nil, d.err
		}
		return nil, fmt.Errorf("%w: snapshot stream version %d", ErrMalformed, v)
	}
	e := d.bytes()
	s := &replication.SnapshotData{Meta: d.bytes()}
	n := d.uvarint()
	if n > maxSpans {
		return nil, fmt.Errorf("%w: %d spans", ErrMalformed, n)
	}
	for range n {
		s.Spans = append(s.Spans, storage.Span{Start: d.bytes(), End: d.bytes()})
	}
	if d.err == nil && len(d.b) != 0 {
		d.err = fmt.Errorf("%w: %d bytes after a snapshot's header", ErrMalformed, len(d.b))
	}
	if d.err != nil {
		return nil, d.err
	}
	env, err := decodeEnvelope(e)
	if err != nil {
		return nil, err
	}
	if env.Msg == nil || env.Snapshot != nil {
		return nil, fmt.Errorf("%w: a snapshot's header without its message", ErrMalformed)
	}
	env.Snapshot = s
	return env, nil
}

// receiveSnapshot serves a streamed snapshot: the header goes to the host (Deliver), which
// reads the sstables through the stream (inStream) and says what became of them.
func (t *Transport) receiveSnapshot(s grpc.ServerStream) error {
	var f frame
	if err := s.RecvMsg(&f); err != nil {
		return err
	}
	if len(f.data) == 0 || f.data[0] != tagHeader {
		return fmt.Errorf("%w: a snapshot stream without its header", ErrMalformed)
	}
	env, err := decodeSnapshotHeader(f.data[1:])
	if err != nil {
		return err
	}
	select {
	case t.streamsIn <- struct{}{}:
		defer func() { <-t.streamsIn }()
	default:
		return sendVerdict(s, fmt.Errorf("node %d receives %d snapshots already", t.cfg.Node, maxStreamsIn))
	}
	in := &inStream{t: t, s: s, begun: make(chan struct{}), done: make(chan error, 1)}
	env.Snapshot.Stream = in
	t.cfg.Deliver(env)
	admit := time.NewTimer(admitWithin)
	defer admit.Stop()
	select {
	case <-in.begun:
	case err := <-in.done: // refused before it began
		return sendVerdict(s, err)
	case <-admit.C:
		if !in.refuseUnlessBegun() {
			return sendVerdict(s, errors.New("the node did not take up the snapshot in time"))
		}
		// It began as the time ran out.
	case <-s.Context().Done():
		in.abandon()
		return s.Context().Err()
	}
	if err := s.SendMsg(&frame{data: []byte{tagGo}}); err != nil {
		in.abandon()
		return err
	}
	select {
	case err := <-in.done:
		if err == nil {
			t.snapReceived.Add(1)
		}
		return sendVerdict(s, err)
	case <-s.Context().Done():
		in.abandon()
		return s.Context().Err()
	}
}

func sendVerdict(s grpc.ServerStream, err error) error {
	v := []byte{tagVerdict}
	if err != nil {
		v = append(v, err.Error()...)
		if len(v) == 1 {
			v = append(v, "refused"...)
		}
	}
	return s.SendMsg(&frame{data: v})
}

// inStream is the receiving end of a streamed snapshot, as the host reads it
// (replication.SnapshotStream); receiveSnapshot serves the stream meanwhile.
type inStream struct {
	t *Transport
	s grpc.ServerStream
	// begun is closed by the first Next: the host reads the snapshot. done gets Done's error.
	begun chan struct{}
	done  chan error
	// mu guards started and over: once the server gives up the stream (over), Next must not
	// read it.
	mu      sync.Mutex
	started bool
	over    atomic.Bool
	once    sync.Once
	// ssts and bytes are what arrived, checked against the sender's end.
	ssts  int
	bytes int64
	f     frame
}

var _ replication.SnapshotStream = (*inStream)(nil)

// abandon ends the stream for Next: the server gives it up.
func (in *inStream) abandon() {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.over.Store(true)
}

// refuseUnlessBegun ends the stream for Next if the host has not begun reading it, and reports
// whether it had.
func (in *inStream) refuseUnlessBegun() (begun bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if !in.started {
		in.over.Store(true)
	}
	return in.started
}

var errStreamOver = errors.New("raftrpc: the snapshot's stream is over")

func (in *inStream) Next() ([]byte, bool, error) {
	in.mu.Lock()
	if !in.started && !in.over.Load() {
		in.started = true
		close(in.begun)
	}
	in.mu.Unlock()
	if in.over.Load() {
		return nil, false, errStreamOver
	}
	in.f = frame{}
	if err := in.s.RecvMsg(&in.f); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF // the sender stopped before the end
		}
		return nil, false, err
	}
	b := in.f.data
	if len(b) == 0 {
		return nil, false, fmt.Errorf("%w: an empty snapshot chunk", ErrMalformed)
	}
	switch b[0] {
	case tagSST, tagData:
		if b[0] == tagSST {
			in.ssts++
		} else if in.ssts == 0 {
			return nil, false, fmt.Errorf("%w: snapshot data before its first sstable", ErrMalformed)
		}
		in.bytes += int64(len(b) - 1)
		in.t.chunkSeen(len(b) - 1)
		return b[1:], b[0] == tagSST, nil
	case tagEnd:
		d := decoder{b: b[1:]}
		ssts, n := d.uvarint(), d.uvarint()
		if d.err != nil {
			return nil, false, d.err
		}
		if ssts != uint64(in.ssts) || n != uint64(in.bytes) {
			return nil, false, fmt.Errorf("%w: %d sstables of %d bytes arrived, the sender sent %d of %d", ErrMalformed, in.ssts, in.bytes, ssts, n)
		}
		return nil, false, io.EOF
	}
	return nil, false, fmt.Errorf("%w: a snapshot chunk tagged %d", ErrMalformed, b[0])
}

func (in *inStream) Done(err error) {
	in.once.Do(func() { in.done <- err })
}
