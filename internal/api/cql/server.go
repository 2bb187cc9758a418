package cql

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/frame"
	"github.com/partita-db/partita/internal/cql"
	"github.com/partita-db/partita/internal/cqlexec"
)

// Executor runs statements: *cqlexec.Executor in the server, a fake in tests.
type Executor interface {
	Prepare(s *cqlexec.Session, text string) (*cqlexec.Prepared, error)
	Execute(s *cqlexec.Session, p *cqlexec.Prepared, o cqlexec.Options) (*cqlexec.Result, error)
	Batch(s *cqlexec.Session, kind cql.BatchKind, entries []cqlexec.BatchEntry, o cqlexec.Options) (*cqlexec.Result, error)
	// Watch calls fn after each schema change until stop is called.
	Watch(fn func(cqlexec.SchemaChange)) (stop func())
}

// Defaults of Options.
const (
	DefaultMaxFrameSize     = 256 << 20 // Cassandra 3's native_transport_max_frame_size
	DefaultMaxInFlight      = 256       // requests one connection may have running at once
	DefaultPreparedCapacity = 10000     // prepared statements kept, least recently used dropped
)

// Options configure a Server.
type Options struct {
	// Username is the account name drivers sign in with; Key the password of a read-write
	// session and ReadOnlyKey, when not empty, that of a read-only one.
	Username, Key, ReadOnlyKey string
	Logger                     *slog.Logger
	// MaxFrameSize bounds a request frame's body; bigger frames close the connection.
	MaxFrameSize int
	// MaxInFlight bounds the requests one connection runs at once; the connection is not read
	// further until one finishes.
	MaxInFlight int
	// PreparedCapacity bounds the prepared statements kept for all connections.
	PreparedCapacity int
	// Peers, on a node of a cluster, lists the Cassandra API addresses of the other live
	// nodes; the server watches it and sends TOPOLOGY_CHANGE and STATUS_CHANGE events when
	// they change (topology.go). Nil on a node alone.
	Peers func() ([]netip.AddrPort, error)
	// PeersEvery is how often Peers is read (0: a second).
	PeersEvery time.Duration
}

// ErrServerClosed is what Serve returns after Shutdown.
var ErrServerClosed = errors.New("cql: server closed")

// Server serves the native protocol to any number of connections.
type Server struct {
	exec     Executor
	opts     Options
	log      *slog.Logger
	prepared *preparedCache
	stop     func() // ends the schema watch
	// plain and lz4 encode and decode frames, without and with compression.
	plain, lz4 frame.RawCodec

	mu sync.Mutex
	// closing is set once by Shutdown; no listener or connection is added after it.
	closing   bool
	listeners map[net.Listener]struct{}
	conns     map[*conn]struct{}
	// connsDone counts connections; a connection is done once its requests are, which keep
	// running after it is cut (the executor cannot be interrupted).
	connsDone sync.WaitGroup
}

// New returns a server running statements on exec.
func New(exec Executor, o Options) *Server {
	if o.MaxFrameSize <= 0 {
		o.MaxFrameSize = DefaultMaxFrameSize
	}
	if o.MaxInFlight <= 0 {
		o.MaxInFlight = DefaultMaxInFlight
	}
	if o.PreparedCapacity <= 0 {
		o.PreparedCapacity = DefaultPreparedCapacity
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{
		exec: exec, opts: o, log: o.Logger, prepared: newPreparedCache(o.PreparedCapacity),
		listeners: map[net.Listener]struct{}{}, conns: map[*conn]struct{}{},
		plain: frame.NewRawCodec(),
		lz4:   frame.NewRawCodecWithCompression(lz4Body{max: o.MaxFrameSize}),
	}
	stopSchema := exec.Watch(s.broadcast)
	stopPeers := s.watchPeers()
	s.stop = func() { stopSchema(); stopPeers() }
	return s
}

// Serve accepts connections on ln until it fails or Shutdown is called (ErrServerClosed).
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		ln.Close()
		return ErrServerClosed
	}
	s.listeners[ln] = struct{}{}
	s.mu.Unlock()
	var delay time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			s.mu.Lock()
			closing := s.closing
			s.mu.Unlock()
			if closing {
				return ErrServerClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				// Out of file descriptors and the like: back off as net/http does.
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				s.log.Warn("cql: accept failed; retrying", "err", err, "in", delay)
				time.Sleep(delay)
				continue
			}
			return err
		}
		delay = 0
		c := newConn(s, nc)
		s.mu.Lock()
		if s.closing {
			s.mu.Unlock()
			nc.Close()
			return ErrServerClosed
		}
		s.conns[c] = struct{}{}
		s.connsDone.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.connsDone.Done()
			c.serve()
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
		}()
	}
}

// Shutdown stops accepting, stops reading new requests, lets the running ones answer (up to
// ctx, then closing their connections), and returns once no request is running, so that the
// storage can be closed after it.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closing = true
	for ln := range s.listeners {
		ln.Close()
	}
	for c := range s.conns {
		c.stopReading()
	}
	s.mu.Unlock()
	s.stop()

	done := make(chan struct{})
	go func() { s.connsDone.Wait(); close(done) }()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = ctx.Err()
		s.log.Warn("cql: requests still running at the shutdown deadline; closing their connections")
		s.mu.Lock()
		for c := range s.conns {
			c.nc.Close()
		}
		s.mu.Unlock()
		<-done // requests whose connections were cut still finish their storage work
	}
	return err
}

// isClosing reports whether Shutdown was called.
func (s *Server) isClosing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closing
}
