package server

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync"
	"time"

	"github.com/partita-db/partita/internal/script"

	"github.com/partita-db/partita/internal/engine"
)

// A frontend serves one protocol on its own listener. Making one only prepares it: Start binds
// the listeners, so that a front end holds nothing that must be released if another fails to
// bind.
type frontend interface {
	name() string
	// endpoint is how clients reach the front end listening on addr, for the start-up log line.
	endpoint(addr net.Addr) slog.Attr
	// serve blocks until the listener fails or shutdown is called.
	serve(ln net.Listener) error
	// shutdown stops accepting and waits for in-flight requests (up to ctx, then cutting them
	// off), so that storage can be closed after it returns.
	shutdown(ctx context.Context) error
}

// listener is a front end and where it listens.
type listener struct {
	fe   frontend
	addr string // from Config
	ln   net.Listener
}

// frontends makes the node's front ends, each with the address it listens on. A new protocol
// is one more entry here, with its address in Config and its flag in cmd/partita/serve.go.
func frontends(cfg Config, eng *engine.Engine, log *slog.Logger) ([]listener, error) {
	cosmos, err := newCosmosFrontend(cfg, eng, log)
	if err != nil {
		return nil, err
	}
	ls := []listener{{fe: cosmos, addr: cfg.CosmosAddr}}
	if cfg.CQLAddr != "" {
		cql, err := newCQLFrontend(cfg, eng, log)
		if err != nil {
			return nil, err
		}
		ls = append(ls, listener{fe: cql, addr: cfg.CQLAddr})
	}
	return ls, nil
}

// Server is a running node.
type Server struct {
	cfg       Config
	log       *slog.Logger
	engine    *engine.Engine
	cluster   *clusterNode // nil on a node alone
	listeners []listener
	served    chan error

	stopOnce sync.Once
	stopErr  error
}

// Start opens the engine and starts serving; it returns once every front end's listener is
// bound. If one cannot be, it closes what it opened and returns the error.
func Start(cfg Config, log *slog.Logger) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	started := time.Now()
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return nil, err
	}
	if cfg.Key == EmulatorKey {
		log.Warn("using the emulator's well-known account key; anyone can sign requests. Set --key for anything but local development")
	}
	opts := engine.Options{
		Dir: cfg.DataDir, CacheSize: cfg.CacheSize, MaxLogicalPartitionBytes: cfg.MaxLogicalPartitionBytes,
		RateLimit: cfg.RateLimit, BurstCapacity: cfg.BurstCapacity, MaxPartitionBytes: cfg.MaxPartitionBytes,
		ChangeFeedRetention: cfg.ChangeFeedRetention,
		Scripts:             script.Limits{Timeout: cfg.ScriptTimeout, MaxOperations: cfg.ScriptMaxOperations},
		Logger:              log,
		MinPartitions:       cfg.MinPartitions,
		Staleness:           cfg.Staleness,
	}
	var cn *clusterNode
	if cfg.ClusterAddr != "" {
		var err error
		if cn, err = joinCluster(cfg, log); err != nil {
			return nil, err
		}
		opts.Cluster = cn.cluster()
	}
	eng, err := engine.Open(opts)
	if err != nil {
		if cn != nil {
			cn.close()
		}
		return nil, err
	}
	closeAll := func() {
		eng.Close()
		if cn != nil {
			cn.close()
		}
	}
	ls, err := frontends(cfg, eng, log)
	if err != nil {
		closeAll()
		return nil, err
	}
	if err := bind(ls); err != nil {
		closeAll()
		return nil, err
	}
	s := &Server{cfg: cfg, log: log, engine: eng, cluster: cn, listeners: ls, served: make(chan error, 1)}
	if cn != nil {
		var api, cql string
		for _, l := range ls {
			switch l.fe.name() {
			case "cosmos":
				api = l.ln.Addr().String()
			case "cql":
				cql = l.ln.Addr().String()
			}
		}
		if err := cn.register(eng, api, cql); err != nil {
			for _, l := range ls {
				l.ln.Close()
			}
			closeAll()
			return nil, err
		}
	}
	attrs := make([]any, 0, len(ls)+2)
	for _, l := range ls {
		go s.run(l)
		attrs = append(attrs, l.fe.endpoint(l.ln.Addr()))
	}
	attrs = append(attrs, "data", cfg.DataDir, "startup", time.Since(started).Round(time.Millisecond))
	log.Info("partita is serving", attrs...)
	return s, nil
}

// bind opens every listener before any serves, so that a failed bind leaves no request
// running; it closes those it opened when one fails.
func bind(ls []listener) error {
	for i := range ls {
		ln, err := net.Listen("tcp", ls[i].addr)
		if err != nil {
			for _, l := range ls[:i] {
				l.ln.Close()
			}
			return err
		}
		ls[i].ln = ln
	}
	return nil
}

// run serves l until it stops, and reports the first front end to stop on Done.
func (s *Server) run(l listener) {
	err := l.fe.serve(l.ln)
	if err != nil {
		err = fmt.Errorf("%s: %w", l.fe.name(), err)
	}
	select {
	case s.served <- err:
	default: // another front end stopped first
	}
}

// Addr is the address the Cosmos DB API listens on.
func (s *Server) Addr() net.Addr { return s.Addrs()["cosmos"] }

// Addrs are the addresses the front ends listen on, by front end name.
func (s *Server) Addrs() map[string]net.Addr {
	m := make(map[string]net.Addr, len(s.listeners))
	for _, l := range s.listeners {
		m[l.fe.name()] = l.ln.Addr()
	}
	return m
}

// Done yields the error of the first front end to stop serving: before Shutdown, one whose
// listener failed on its own.
func (s *Server) Done() <-chan error { return s.served }

// Shutdown stops every front end accepting connections, waits for their in-flight requests
// (up to ctx), then closes the engine, so every acknowledged write is on disk and none is cut
// in half. Calling it again returns the first call's result.
func (s *Server) Shutdown(ctx context.Context) error {
	s.stopOnce.Do(func() { s.stopErr = s.shutdown(ctx) })
	return s.stopErr
}

func (s *Server) shutdown(ctx context.Context) error {
	// Concurrently, so that no front end takes new requests while another drains.
	errs := make([]error, len(s.listeners))
	var wg sync.WaitGroup
	for i, l := range s.listeners {
		wg.Go(func() { errs[i] = l.fe.shutdown(ctx) })
	}
	wg.Wait()
	var err error
	for _, e := range errs {
		if e != nil {
			err = e
			break
		}
	}
	if cerr := s.engine.Close(); cerr != nil && err == nil {
		err = cerr
	}
	if s.cluster != nil {
		s.cluster.close()
	}
	s.log.Info("partita stopped")
	return err
}
