package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/partita-db/partita/internal/engine"
	"github.com/partita-db/partita/internal/gcpace"
	"github.com/partita-db/partita/internal/script"
	"github.com/partita-db/partita/internal/server"
	"github.com/partita-db/partita/internal/storage"
	"github.com/partita-db/partita/internal/tracing"
	"github.com/spf13/cobra"
)

// Unless GOGC is set, the garbage collector lets the heap grow by gcHeadroom bytes over what
// is live between collections, or by Go's default of 100% when that is more
// (docs/running.md#memory).
const (
	gcHeadroom     = 64 << 20
	gcFloorPercent = 100
)

func serveCommand() *cobra.Command {
	cfg := server.Config{}
	var logLevel string
	var shutdownTimeout time.Duration
	var debugAddr, secretFile, otlpEndpoint string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the server",
		Long: `Run a Partita server on one data directory. Every flag can also be set in the
environment as PARTITA_<FLAG>, e.g. PARTITA_DATA=/var/lib/partita.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var level slog.Level
			if err := level.UnmarshalText([]byte(logLevel)); err != nil {
				return fmt.Errorf("--log-level: %w", err)
			}
			log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
			if os.Getenv("GOGC") == "" {
				gcpace.Start(gcHeadroom, gcFloorPercent)
			}
			if debugAddr != "" {
				serveDebug(debugAddr, log)
			}
			if cfg.ClusterAddr != "" {
				secret, err := clusterSecret(secretFile)
				if err != nil {
					return err
				}
				cfg.ClusterSecret = secret
			}
			node := cfg.ClusterAddr
			if node == "" {
				node = cfg.CosmosAddr
			}
			stopTracing, err := tracing.Setup(context.Background(), tracing.Config{Endpoint: otlpEndpoint, Node: node, Version: buildVersion()})
			if err != nil {
				return fmt.Errorf("--otlp-endpoint: %w", err)
			}
			if tracing.Enabled() {
				log.Info("exporting traces over OTLP", "endpoint", cmp.Or(otlpEndpoint, "from OTEL_EXPORTER_OTLP_*"))
			}
			err = serve(cfg, log, shutdownTimeout)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if terr := stopTracing(ctx); terr != nil {
				log.Warn("flushing traces", "err", terr)
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.DataDir, "data", "./partita-data", "data directory (created if missing)")
	// One listen address per front end (internal/server).
	f.StringVar(&cfg.CosmosAddr, "addr", "127.0.0.1:8081", "address the Cosmos DB API listens on, HOST:PORT")
	f.StringVar(&cfg.CQLAddr, "cql-addr", "127.0.0.1:9042", "address the Cassandra API (CQL native protocol v4) listens on, HOST:PORT; empty: not served. Drivers sign in with username \""+server.AccountName+"\" and an account key as password")
	f.BoolVar(&cfg.TLS, "tls", true, "serve HTTPS (and the Cassandra API over TLS) with a certificate kept in the data directory: self-signed on a node alone, issued by the cluster's authority in a cluster; clients trust DATA/tls-ca.pem. --tls=false serves plain HTTP and CQL")
	f.StringVar(&cfg.TLSCert, "tls-cert", "", "PEM file of the certificate to serve instead of the one the node makes (the node's first, then any intermediates); needs --tls-key")
	f.StringVar(&cfg.TLSKey, "tls-key", "", "PEM file of --tls-cert's private key")
	f.StringVar(&cfg.TLSCA, "tls-ca", "", "PEM file of the authority that issued --tls-cert: checked against it, and copied to DATA/tls-ca.pem for clients")
	f.StringVar(&cfg.Key, "key", server.EmulatorKey, "account key (base64); the default is the emulator's public key")
	f.StringVar(&cfg.ReadOnlyKey, "read-only-key", "", "optional second key that may only read")
	f.StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn or error")
	f.Int64Var(&cfg.CacheSize, "cache-size", storage.DefaultCacheSize, "read cache in bytes: 1/32 keeps hot items whole, the rest caches storage blocks")
	f.Int64Var(&cfg.MaxLogicalPartitionBytes, "logical-partition-max-bytes", engine.DefaultMaxLogicalPartitionBytes, "size cap of one logical partition in bytes")
	f.Int64Var(&cfg.MaxPartitionBytes, "partition-max-bytes", engine.DefaultMaxPartitionBytes, "stored size past which a physical partition splits in two")
	f.BoolVar(&cfg.BurstCapacity, "burst-capacity", false, "let a partition under 3,000 RU/s bank the request units it leaves idle (up to 300 seconds of its rate) and spend them, up to 3,000 RU/s, on requests its rate would refuse: the service's burst capacity")
	f.BoolVar(&cfg.RateLimit, "rate-limit", true, "answer 429 when a partition has spent its share of the provisioned throughput for the second; --rate-limit=false only computes and reports charges")
	f.DurationVar(&cfg.ChangeFeedRetention, "change-feed-retention", engine.DefaultChangeFeedRetention, "how far back the all-versions-and-deletes change feed reaches (replaced and deleted versions are kept that long); 0 keeps none and refuses that mode")
	f.StringVar(&cfg.DefaultPriority, "default-priority-level", "High", "the priority level (High or Low) of requests that do not send x-ms-cosmos-priority-level: when a partition's requests want more than its throughput, Low ones are refused first (the service's defaultPriorityLevel)")
	f.StringVar(&cfg.Consistency, "consistency", "Session", "the account's default consistency level (Strong, BoundedStaleness, Session, ConsistentPrefix or Eventual); requests may ask for a weaker one. On one node every level reads every acknowledged write; in a cluster the level decides which replica serves a read (docs/consistency.md)")
	f.Uint64Var(&cfg.Staleness.Versions, "max-staleness-prefix", engine.DefaultStaleness.Versions, "Bounded Staleness: how many writes a read may lag behind (1 to 2147483647)")
	f.DurationVar(&cfg.Staleness.Interval, "max-staleness-interval", engine.DefaultStaleness.Interval, "Bounded Staleness: how long a read may lag behind, in whole seconds (5s to 24h)")
	f.DurationVar(&cfg.ScriptTimeout, "script-timeout", script.DefaultTimeout, "time one call of a stored procedure, trigger or UDF may take before it is stopped and rolled back")
	f.IntVar(&cfg.ScriptMaxOperations, "script-max-operations", script.DefaultMaxOperations, "document operations one script call may make; past it the server-side API answers false (not accepted) and the script should return and resume in a next call")
	f.IntVar(&cfg.MinPartitions, "min-partitions", 1, fmt.Sprintf("every new container starts with at least this many physical partitions (1 to %d), the hash space split evenly, so that local tests exercise cross-partition paths", engine.MaxMinPartitions))
	f.DurationVar(&shutdownTimeout, "shutdown-timeout", 30*time.Second, "how long in-flight requests may run after SIGINT/SIGTERM")
	f.StringVar(&cfg.ClusterAddr, "cluster-addr", "", "this node's address in a cluster, HOST:PORT, for node-to-node traffic; the two ports after it are taken by the control plane on the founding nodes (docs/cluster.md). Empty: a node alone")
	f.StringSliceVar(&cfg.Join, "join", nil, "the cluster addresses of the cluster's founding nodes, comma-separated, the same list on every node; the cluster forms once a majority of them is up")
	f.IntVar(&cfg.Replicas, "replicas", 3, "in a cluster, how many replicas each partition has, each on its own node (4 gives Cosmos DB's replica sets, with a quorum of 3); 0 keeps one on every node. Fixed when the cluster forms")
	f.DurationVar(&cfg.DeadAfter, "dead-after", engine.DefaultDeadAfter, "in a cluster, how long a node may be gone before its replicas are removed from their groups (it gets new ones if it comes back)")
	f.StringVar(&secretFile, "cluster-secret-file", "", "file holding the cluster's secret (at least 16 bytes, the same on every node); or set PARTITA_CLUSTER_SECRET. Never a flag, so that it does not show in ps")
	f.StringVar(&otlpEndpoint, "otlp-endpoint", "", "URL of an OpenTelemetry collector (OTLP over gRPC) to send traces to, e.g. http://127.0.0.1:4317 (https:// for TLS); empty: the OTEL_EXPORTER_OTLP_ENDPOINT variable, and no tracing when that is unset")
	f.StringVar(&debugAddr, "debug-addr", "", "if set, serve Go's profiler (/debug/pprof/) on this HOST:PORT, without authentication; keep it on loopback")
	return cmd
}

// serveDebug exposes net/http/pprof on its own listener, so that profiles of a running server
// can be taken (go tool pprof http://ADDR/debug/pprof/profile) without opening the profiler
// on the database's port.
func serveDebug(addr string, log *slog.Logger) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	go func() {
		log.Info("profiler listening", "addr", addr)
		if err := http.ListenAndServe(addr, mux); err != nil {
			log.Error("profiler listener failed", "err", err)
		}
	}()
}

func serve(cfg server.Config, log *slog.Logger, shutdownTimeout time.Duration) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	s, err := server.Start(cfg, log)
	if err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		log.Info("shutting down", "signal", context.Cause(ctx))
	case err := <-s.Done():
		log.Error("listener failed", "err", err)
	}
	stop() // a second signal kills the process at once
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	return s.Shutdown(sctx)
}

// clusterSecret is the cluster's secret: the file's content (one trailing newline dropped), or
// else PARTITA_CLUSTER_SECRET.
func clusterSecret(file string) ([]byte, error) {
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("--cluster-secret-file: %w", err)
		}
		return bytes.TrimSuffix(b, []byte("\n")), nil
	}
	if v := os.Getenv("PARTITA_CLUSTER_SECRET"); v != "" {
		return []byte(v), nil
	}
	return nil, errors.New("a cluster node needs the cluster's secret: set PARTITA_CLUSTER_SECRET or --cluster-secret-file")
}

// buildVersion is the module version the binary was built from ("(devel)" from a checkout).
func buildVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		return bi.Main.Version
	}
	return "unknown"
}
