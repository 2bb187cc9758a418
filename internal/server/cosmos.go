package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/partita-db/partita/internal/api/cosmos"
	"github.com/partita-db/partita/internal/engine"
	"github.com/partita-db/partita/internal/faultinject"
	"github.com/partita-db/partita/web"
)

// cosmosFrontend serves the Cosmos DB REST API, with Prometheus's /metrics beside it, over
// plain HTTP or over HTTPS (and so HTTP/2).
type cosmosFrontend struct {
	log  *slog.Logger
	http *http.Server
	tls  bool
	// inflight counts requests being handled, so that storage is never closed under one.
	inflight *tracked
}

// tracked counts the requests it is serving, and routes them: GET /metrics to Prometheus,
// /_explorer/ to the explorer's files, everything else to the gateway. (An http.ServeMux did
// the routing before; matching its patterns cost 2% of a point read.)
type tracked struct {
	metrics, explorer, gateway http.Handler
	engine                     *engine.Engine
	wg                         sync.WaitGroup
}

func (t *tracked) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	t.wg.Add(1)
	defer t.wg.Done()
	if r.URL.Path == "/metrics" && r.Method == http.MethodGet {
		t.metrics.ServeHTTP(w, r)
		return
	}
	if r.URL.Path == "/ready" && r.Method == http.MethodGet {
		serveReady(w, t.engine)
		return
	}
	if web.Serves(r.URL.Path) {
		t.explorer.ServeHTTP(w, r)
		return
	}
	t.gateway.ServeHTTP(w, r)
}

// serveReady answers GET /ready, unauthenticated as probes are: 200 once the node is ready to
// serve (engine.Ready: registered in its cluster, and its replicas caught up with their
// groups since it started), 503 with the reason before.
func serveReady(w http.ResponseWriter, eng *engine.Engine) {
	ok, why := eng.Ready()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if !ok {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	json.NewEncoder(w).Encode(struct {
		Ready  bool   `json:"ready"`
		Reason string `json:"reason,omitempty"`
	}{ok, why})
}

// newCosmosFrontend makes the Cosmos front end for eng. With TLS it loads or creates the
// certificate now, so that it exists before the port opens and a client that waits for the
// port can read it.
func newCosmosFrontend(cfg Config, eng *engine.Engine, log *slog.Logger) (*cosmosFrontend, error) {
	faults := faultinject.NewSet(nil) // the management API's fault rules (internal/api/cosmos/manage.go)
	handler, err := cosmos.NewHandler(eng, cosmos.Options{Key: cfg.Key, ReadOnlyKey: cfg.ReadOnlyKey, Logger: log, Consistency: cfg.Consistency, Priority: cfg.DefaultPriority, Faults: faults})
	if err != nil {
		return nil, err
	}
	// /metrics is Prometheus's, unauthenticated as scrape endpoints are, and so is /ready; /_explorer/ the
	// explorer's static files, which hold no data (the page signs its own requests to the
	// gateway); everything else is the Cosmos gateway.
	reg := prometheus.NewRegistry()
	reg.MustRegister(collector{engine: eng, log: log}, nodeCollector{engine: eng}, faultCollector{set: faults}, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	f := &cosmosFrontend{log: log, tls: cfg.TLS}
	f.inflight = &tracked{metrics: promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), explorer: web.Handler(), gateway: handler, engine: eng}
	f.http = &http.Server{
		Handler:           f.inflight,
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
	// The certificate (cert.go): nil with --tls=false.
	if f.http.TLSConfig, err = serverTLS(cfg, log); err != nil {
		return nil, err
	}
	return f, nil
}

func (f *cosmosFrontend) name() string { return "cosmos" }

// endpoint is the "endpoint" a Cosmos SDK is configured with.
func (f *cosmosFrontend) endpoint(addr net.Addr) slog.Attr {
	scheme := "http"
	if f.tls {
		scheme = "https"
	}
	return slog.String("endpoint", fmt.Sprintf("%s://%s/", scheme, addr))
}

func (f *cosmosFrontend) serve(ln net.Listener) error {
	if f.tls {
		return f.http.ServeTLS(ln, "", "") // negotiates HTTP/2, which the Go SDK prefers
	}
	return f.http.Serve(ln)
}

func (f *cosmosFrontend) shutdown(ctx context.Context) error {
	err := f.http.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		f.log.Warn("requests still running at the shutdown deadline; closing their connections")
		f.http.Close()
	}
	f.inflight.wg.Wait() // handlers whose connections were closed still finish their storage work
	return err
}
