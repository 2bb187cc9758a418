package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/partita-db/partita/internal/api/cosmos"
	"github.com/partita-db/partita/internal/engine"
)

// Server is a running node.
type Server struct {
	cfg    Config
	log    *slog.Logger
	engine *engine.Engine
	ln     net.Listener
	http   *http.Server
	served chan error
	// inflight counts requests being handled, so that storage is never closed under one.
	inflight *tracked
}

// tracked counts the requests it is serving, and routes them: GET /metrics to Prometheus,
// everything else to the gateway. (An http.ServeMux did the routing before; matching its
// patterns cost 2% of a point read.)
type tracked struct {
	metrics, gateway http.Handler
	wg               sync.WaitGroup
}

func (t *tracked) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	t.wg.Add(1)
	defer t.wg.Done()
	if r.URL.Path == "/metrics" && r.Method == http.MethodGet {
		t.metrics.ServeHTTP(w, r)
		return
	}
	t.gateway.ServeHTTP(w, r)
}

// Start opens the engine and starts serving; it returns once the listener is bound.
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
	eng, err := engine.Open(engine.Options{
		Dir: cfg.DataDir, CacheSize: cfg.CacheSize, MaxLogicalPartitionBytes: cfg.MaxLogicalPartitionBytes,
		RateLimit: cfg.RateLimit, MaxPartitionBytes: cfg.MaxPartitionBytes,
		Logger: log,
	})
	if err != nil {
		return nil, err
	}
	handler, err := cosmos.NewHandler(eng, cosmos.Options{Key: cfg.Key, ReadOnlyKey: cfg.ReadOnlyKey, Logger: log})
	if err != nil {
		eng.Close()
		return nil, err
	}
	s := &Server{cfg: cfg, log: log, engine: eng, served: make(chan error, 1)}
	// /metrics is Prometheus's, unauthenticated as scrape endpoints are; everything else is
	// the Cosmos gateway.
	reg := prometheus.NewRegistry()
	reg.MustRegister(collector{engine: eng, log: log}, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	s.inflight = &tracked{metrics: promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), gateway: handler}
	s.http = &http.Server{
		Handler:           s.inflight,
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
	scheme := "http"
	if cfg.TLS {
		// The certificate exists before the port opens, so a client that waits for the port
		// can read it.
		cert, created, err := loadOrCreateCert(cfg.DataDir)
		if err != nil {
			eng.Close()
			return nil, err
		}
		if created {
			log.Info("created a self-signed TLS certificate", "file", filepath.Join(cfg.DataDir, CertFile))
		}
		s.http.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		scheme = "https"
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		eng.Close()
		return nil, err
	}
	s.ln = ln
	go func() {
		if cfg.TLS {
			s.served <- s.http.ServeTLS(ln, "", "") // negotiates HTTP/2, which the Go SDK prefers
		} else {
			s.served <- s.http.Serve(ln)
		}
	}()
	log.Info("partita is serving", "endpoint", fmt.Sprintf("%s://%s/", scheme, ln.Addr()), "data", cfg.DataDir,
		"startup", time.Since(started).Round(time.Millisecond))
	return s, nil
}

// Addr is the address the server listens on.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Done is closed with the serving error when the listener fails on its own.
func (s *Server) Done() <-chan error { return s.served }

// Shutdown stops accepting connections, waits for in-flight requests (up to ctx), then
// closes the engine, so every acknowledged write is on disk and none is cut in half.
func (s *Server) Shutdown(ctx context.Context) error {
	err := s.http.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		s.log.Warn("requests still running at the shutdown deadline; closing their connections")
		s.http.Close()
	}
	s.inflight.wg.Wait() // handlers whose connections were closed still finish their storage work
	if cerr := s.engine.Close(); cerr != nil && err == nil {
		err = cerr
	}
	s.log.Info("partita stopped")
	return err
}
