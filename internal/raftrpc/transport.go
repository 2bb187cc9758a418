package raftrpc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"

	"github.com/partita-db/partita/internal/nodetls"
	"github.com/partita-db/partita/internal/replication"
)

// Config is what a Transport needs.
type Config struct {
	// Node is this node's id; envelopes for it are not sent anywhere.
	Node replication.NodeID
	// TLS is the node's identity in its cluster: both ends of every stream show one.
	TLS *nodetls.Identity
	// Resolve gives a node's cluster address, or false while it is not known (its envelopes
	// are dropped, as Raft expects of a network).
	Resolve func(replication.NodeID) (string, bool)
	// Deliver hands an envelope that arrived to this node's host (replication.Host.Deliver).
	Deliver func(*replication.Envelope)
	// Serve answers another node's Call (the engine's forwarded writes); nil refuses calls.
	Serve func(req []byte) []byte
	// StreamSnapshots, when set and true, sends snapshots on a stream of their own
	// (snapstream.go), rather than inline in their MsgSnap's envelope. A node of an earlier
	// release takes them only inline, so a cluster turns streams on once every node runs a
	// release that receives them (its active version). nil or false: inline. Streamed or not,
	// every node of this release receives both.
	StreamSnapshots func() bool
	// Version is the newest cluster version this node's release knows, which every stream and
	// call it opens carries (version.go); Admit, when set, refuses a sender of an older one
	// with the error it returns.
	Version uint32
	Admit   func(peerVersion uint32) error
	Logger  *slog.Logger
}

// Transport carries replication envelopes between the nodes of a cluster: Send queues an
// envelope on the stream to its node, Serve accepts other nodes' streams. It implements
// replication.Transport.
type Transport struct {
	cfg    Config
	ctx    context.Context
	cancel context.CancelFunc
	srv    *grpc.Server

	mu     sync.Mutex
	peers  map[replication.NodeID]*peer
	calls  map[replication.NodeID]*callConn // the connections Call uses, by node
	closed bool
	wg     sync.WaitGroup

	// inlineOnly are the nodes that answered a snapshot's stream with Unimplemented, and until
	// when their snapshots go inline (snapstream.go). Guarded by mu.
	inlineOnly map[replication.NodeID]time.Time
	// snapConns are the connections snapshots are streamed on, by node. Guarded by mu.
	snapConns map[replication.NodeID]*callConn
	// streamsOut and streamsIn hold a token per snapshot streamed, and received, now.
	streamsOut, streamsIn chan struct{}
	// snapSent and snapReceived count the snapshots streamed whole; maxChunk is the largest
	// chunk of one sent or received.
	snapSent, snapReceived atomic.Uint64
	maxChunk               atomic.Int64

	// refusals rate-limits the log of refused peers (version.go).
	refusals refusals

	// Dropped counts envelopes that were not sent: a full queue, an unknown or unreachable
	// node. Raft sends again what it still needs.
	Dropped atomic.Uint64
}

// queueLen bounds the envelopes waiting for one node: past it, new ones are dropped rather
// than blocking the host, which sends from its only goroutine.
const queueLen = 4096

// fragment is the most an envelope's frame carries; a larger envelope (a snapshot) goes in
// several frames, each within gRPC's default message limit.
const fragment = 1 << 20

// maxEnvelope bounds what a receiver reassembles.
const maxEnvelope = 2 << 30

// reconnectAfter is how long a node whose stream failed is left alone before the next try.
const reconnectAfter = 200 * time.Millisecond

// reconnect is how a connection to a node that went away tries again: an attempt gives up
// after 2 s, and the next comes within a second. With gRPC's defaults an attempt made while
// the node was cut off (its packets vanish) waited 20 s before it failed, and the backoff
// between attempts grows to two minutes: a node back from a cut could stay unreachable from
// its peers for as long, its replicas hearing from no leader. Raft traffic is cheap to retry;
// being unreachable is not.
var reconnect = grpc.WithConnectParams(grpc.ConnectParams{
	Backoff:           backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: time.Second},
	MinConnectTimeout: 2 * time.Second,
})

// dial makes a connection to a node: with the cluster's TLS, reconnecting soon after an
// outage, every stream and call carrying this node's version (version.go), and opts.
func (t *Transport) dial(addr string, opts ...grpc.DialOption) (*grpc.ClientConn, error) {
	return grpc.NewClient(addr, append([]grpc.DialOption{grpc.WithTransportCredentials(credentials.NewTLS(t.cfg.TLS.Client())), reconnect,
		t.versioned(), t.versionedCalls()}, opts...)...)
}

// pinged keeps a connection whose packets vanish from being held for long: it is found dead
// by its pings.
var pinged = grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: 10 * time.Second, Timeout: 5 * time.Second, PermitWithoutStream: true})

// New returns a transport; Serve makes it accept other nodes' streams.
func New(cfg Config) *Transport {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t := &Transport{cfg: cfg, ctx: ctx, cancel: cancel, peers: map[replication.NodeID]*peer{}, calls: map[replication.NodeID]*callConn{},
		inlineOnly: map[replication.NodeID]time.Time{}, snapConns: map[replication.NodeID]*callConn{},
		streamsOut: make(chan struct{}, maxStreamsOut), streamsIn: make(chan struct{}, maxStreamsIn)}
	t.srv = grpc.NewServer(
		grpc.Creds(credentials.NewTLS(cfg.TLS.Server())),
		grpc.MaxRecvMsgSize(maxCall), grpc.MaxSendMsgSize(maxCall),
		grpc.InitialWindowSize(serverWindow), grpc.InitialConnWindowSize(serverWindow),
		grpc.ForceServerCodecV2(frameCodec{}),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 5 * time.Second, PermitWithoutStream: true}),
		t.admitting(), t.admittingCalls(),
	)
	t.srv.RegisterService(&serviceDesc, t)
	return t
}

// Serve accepts other nodes' streams on l until Close.
func (t *Transport) Serve(l net.Listener) error {
	err := t.srv.Serve(l)
	if errors.Is(err, grpc.ErrServerStopped) {
		return nil
	}
	return err
}

// Send queues env for its node; it never blocks.
func (t *Transport) Send(env *replication.Envelope) {
	to := env.To.Node
	if to == t.cfg.Node {
		t.cfg.Deliver(env)
		return
	}
	t.mu.Lock()
	p := t.peers[to]
	if p == nil && !t.closed {
		p = &peer{t: t, node: to, queue: make(chan *replication.Envelope, queueLen)}
		t.peers[to] = p
		t.wg.Add(1)
		go p.run()
	}
	t.mu.Unlock()
	if p == nil {
		t.Dropped.Add(1)
		return
	}
	select {
	case p.queue <- env:
	default:
		t.Dropped.Add(1)
	}
}

// Close stops sending and accepting; envelopes still queued are dropped.
func (t *Transport) Close() {
	t.mu.Lock()
	t.closed = true
	for _, c := range t.calls {
		c.conn.Close()
	}
	for _, c := range t.snapConns {
		c.conn.Close()
	}
	t.calls, t.snapConns = nil, nil
	t.mu.Unlock()
	t.cancel()
	t.srv.Stop()
	t.wg.Wait()
}

// peer sends the envelopes queued for one node, over one stream at a time.
type peer struct {
	t     *Transport
	node  replication.NodeID
	queue chan *replication.Envelope
}

func (p *peer) run() {
	defer p.t.wg.Done()
	var (
		conn   *grpc.ClientConn
		addr   string
		stream grpc.ClientStream
		retry  time.Time // no new stream before then
		buf    []byte
	)
	defer func() {
		if conn != nil {
			conn.Close()
		}
	}()
	for {
		var env *replication.Envelope
		select {
		case <-p.t.ctx.Done():
			return
		case env = <-p.queue:
		}
		if stream == nil {
			if time.Now().Before(retry) {
				p.t.Dropped.Add(1)
				continue
			}
			a, ok := p.t.cfg.Resolve(p.node)
			if !ok {
				p.t.Dropped.Add(1)
				continue
			}
			if conn == nil || a != addr {
				if conn != nil {
					conn.Close()
				}
				var err error
				conn, err = p.t.dial(a, pinged)
				if err != nil {
					p.t.cfg.Logger.Warn("raftrpc: a node's address", "node", p.node, "addr", a, "err", err)
					conn, retry = nil, time.Now().Add(reconnectAfter)
					p.t.Dropped.Add(1)
					continue
				}
				addr = a
			}
			s, err := conn.NewStream(p.t.ctx, &serviceDesc.Streams[0], sendMethod, grpc.ForceCodecV2(frameCodec{}))
			if err != nil {
				retry = time.Now().Add(reconnectAfter)
				p.t.Dropped.Add(1)
				continue
			}
			stream = s
		}
		var err error
		if buf, err = appendEnvelope(buf[:0], env); err != nil {
			p.t.cfg.Logger.Error("raftrpc: an envelope that does not encode", "node", p.node, "err", err)
			p.t.Dropped.Add(1)
			continue
		}
		if err := sendFrames(stream, buf); err != nil {
			// The stream is broken (the node went away, or refused us): drop it, and this
			// envelope; the next one tries a new stream once reconnectAfter has passed.
			if p.t.ctx.Err() == nil {
				p.t.cfg.Logger.Debug("raftrpc: sending to a node", "node", p.node, "err", err)
			}
			stream, retry = nil, time.Now().Add(reconnectAfter)
			p.t.Dropped.Add(1)
		}
		if cap(buf) > 4*fragment {
			buf = nil // a snapshot's buffer is not kept
		}
	}
}

// sendFrames sends an encoded envelope as frames of at most fragment bytes, each but the
// last marked as continued.
func sendFrames(s grpc.ClientStream, b []byte) error {
	for {
		n := min(len(b), fragment)
		f := frame{more: n < len(b), data: b[:n]}
		if err := s.SendMsg(&f); err != nil {
			return err
		}
		b = b[n:]
		if len(b) == 0 {
			return nil
		}
	}
}

// receive reads a node's stream: frames joined into envelopes, each delivered to the host.
func (t *Transport) receive(s grpc.ServerStream) error {
	var pending []byte
	for {
		var f frame
		if err := s.RecvMsg(&f); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if len(pending)+len(f.data) > maxEnvelope {
			return fmt.Errorf("raftrpc: an envelope over %d bytes", maxEnvelope)
		}
		if f.more || pending != nil {
			pending = append(pending, f.data...)
		}
		if f.more {
			continue
		}
		b := f.data
		if pending != nil {
			b, pending = pending, nil
		}
		env, err := decodeEnvelope(b)
		if err != nil {
			return err // a peer that sends garbage loses its stream
		}
		t.cfg.Deliver(env)
	}
}

// maxCall bounds a call's request and answer: a forwarded write carries at most a
// transactional batch, whose items the service caps at 2 MB in all.
const maxCall = 16 << 20

// callConn is the connection Call uses to a node, and the address it was made for.
type callConn struct {
	addr string
	conn *grpc.ClientConn
}

// Call sends req to node's Config.Serve and returns its answer. An error leaves unknown
// whether node received the request.
func (t *Transport) Call(ctx context.Context, node replication.NodeID, req []byte) ([]byte, error) {
	addr, ok := t.cfg.Resolve(node)
	if !ok {
		return nil, fmt.Errorf("raftrpc: the address of node %d is not known", node)
	}
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil, errors.New("raftrpc: the transport is closed")
	}
	c := t.calls[node]
	if c == nil || c.addr != addr {
		if c != nil {
			c.conn.Close()
		}
		conn, err := t.dial(addr, grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxCall), grpc.MaxCallSendMsgSize(maxCall)))
		if err != nil {
			t.mu.Unlock()
			return nil, err
		}
		c = &callConn{addr: addr, conn: conn}
		t.calls[node] = c
	}
	t.mu.Unlock()
	var out frame
	if err := c.conn.Invoke(ctx, callMethod, &frame{data: req}, &out, grpc.ForceCodecV2(frameCodec{})); err != nil {
		if status.Code(err) == codes.Unavailable && strings.Contains(err.Error(), "while dialing") {
			return nil, fmt.Errorf("%w: %v", ErrNotSent, err)
		}
		return nil, err
	}
	return out.data, nil
}

// ErrNotSent is a Call that failed before its request left: no connection to the node could
// be made (it is down, or not yet up). Any other error of a Call leaves unknown whether the
// node received the request.
var ErrNotSent = errors.New("raftrpc: the call was not sent")

// The service: one client stream of frames per sending node, calls of one frame each way, and
// a stream per streamed snapshot (snapstream.go; a node of an earlier release answers it with
// Unimplemented).
const (
	sendMethod     = "/partita.raft.v1.Raft/Send"
	callMethod     = "/partita.raft.v1.Raft/Call"
	snapshotMethod = "/partita.raft.v1.Raft/Snapshot"
)

var serviceDesc = grpc.ServiceDesc{
	ServiceName: "partita.raft.v1.Raft",
	HandlerType: (*any)(nil),
	Methods: []grpc.MethodDesc{{
		MethodName: "Call",
		Handler: func(srv any, ctx context.Context, dec func(any) error, intercept grpc.UnaryServerInterceptor) (any, error) {
			t := srv.(*Transport)
			var f frame
			if err := dec(&f); err != nil {
				return nil, err
			}
			serve := func(context.Context, any) (any, error) {
				if t.cfg.Serve == nil {
					return nil, errors.New("raftrpc: this node takes no calls")
				}
				return &frame{data: t.cfg.Serve(f.data)}, nil
			}
			if intercept == nil {
				return serve(ctx, &f)
			}
			return intercept(ctx, &f, &grpc.UnaryServerInfo{Server: srv, FullMethod: callMethod}, serve)
		},
	}},
	Streams: []grpc.StreamDesc{{
		StreamName:    "Send",
		ClientStreams: true,
		Handler: func(srv any, s grpc.ServerStream) error {
			return srv.(*Transport).receive(s)
		},
	}, {
		StreamName:    "Snapshot",
		ClientStreams: true,
		ServerStreams: true,
		Handler: func(srv any, s grpc.ServerStream) error {
			return srv.(*Transport).receiveSnapshot(s)
		},
	}},
}

// frame is one message of a stream: a whole envelope, or a part of one with more set on
// every part but the last. On the wire: a flag byte (1: more), then the bytes.
type frame struct {
	more bool
	data []byte
}

// frameCodec is gRPC's codec for frames, which are bytes already: no protobuf between.
type frameCodec struct{}

func (frameCodec) Name() string { return "partita-frame" }

func (frameCodec) Marshal(v any) (mem.BufferSlice, error) {
	f, ok := v.(*frame)
	if !ok {
		return nil, fmt.Errorf("raftrpc: cannot send a %T", v)
	}
	b := make([]byte, 1+len(f.data))
	if f.more {
		b[0] = 1
	}
	copy(b[1:], f.data)
	return mem.BufferSlice{mem.SliceBuffer(b)}, nil
}

func (frameCodec) Unmarshal(data mem.BufferSlice, v any) error {
	f, ok := v.(*frame)
	if !ok {
		return fmt.Errorf("raftrpc: cannot receive a %T", v)
	}
	b := data.Materialize()
	if len(b) == 0 || b[0] > 1 {
		return fmt.Errorf("%w: a frame without its flag", ErrMalformed)
	}
	f.more, f.data = b[0] == 1, b[1:]
	return nil
}
