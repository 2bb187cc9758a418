package server

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/partita-db/partita/internal/engine"
)

// EmulatorKey is the Cosmos DB emulator's well-known, public account key. It is the default so
// that tools configured for the emulator work unchanged; it protects nothing.
const EmulatorKey = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="

// Config is everything `partita serve` can be told.
type Config struct {
	DataDir string // holds the database and the TLS certificate
	// One listen address, host:port, per front end.
	CosmosAddr string // the Cosmos DB REST API (--addr)
	CQLAddr    string // the Cassandra API, CQL native protocol v4 (--cql-addr); empty: not served
	TLS        bool   // serve both APIs over TLS with the certificate in DataDir
	Key        string // the account's primary (read-write) key, base64
	// ReadOnlyKey, when set, is a second key that may only read.
	ReadOnlyKey string
	// TLSCert and TLSKey, when set, are the certificate (PEM: the node's, then intermediates)
	// and key both APIs serve with TLS instead of the one the node makes (--tls-cert,
	// --tls-key); TLSCA is the authority that issued them (--tls-ca), copied to
	// DataDir/tls-ca.pem for clients (cert.go).
	TLSCert  string
	TLSKey   string
	TLSCA    string
	LogLevel slog.Level
	// CacheSize is the read cache in bytes (hot items and storage blocks).
	CacheSize int64
	// MaxLogicalPartitionBytes caps one logical partition.
	MaxLogicalPartitionBytes int64
	// MaxPartitionBytes is the stored size past which a physical partition splits.
	MaxPartitionBytes int64
	// RateLimit enforces each partition's request-unit budget with 429s.
	RateLimit bool
	// BurstCapacity lets partitions under 3,000 RU/s spend what they left idle (engine
	// Options.BurstCapacity).
	BurstCapacity bool
	// ChangeFeedRetention is how far back the all-versions-and-deletes change feed reaches;
	// zero keeps no replaced or deleted versions and refuses that mode.
	ChangeFeedRetention time.Duration
	// Consistency is the account's default consistency level, which requests may weaken.
	Consistency string
	// DefaultPriority is the priority level, Low or High, of requests that name none ("":
	// High).
	DefaultPriority string
	// Staleness bounds Bounded Staleness reads (zero fields: engine.DefaultStaleness).
	Staleness engine.Staleness
	// ScriptTimeout is the time one call of a stored procedure, trigger or UDF may take.
	ScriptTimeout time.Duration
	// ScriptMaxOperations is how many document operations one script call may make before
	// they are no longer accepted.
	ScriptMaxOperations int
	// MinPartitions is the fewest physical partitions every new container starts with
	// (1..engine.MaxMinPartitions; 0 or 1: as many as its throughput gives).
	MinPartitions int
	// ClusterAddr, when set, makes the node a member of a cluster: the address other nodes
	// reach it on (--cluster-addr); the two ports after it are its etcd member's, on the
	// nodes of Join (cluster.go).
	ClusterAddr string
	// Join are the cluster addresses of the cluster's founding nodes, the same on every node.
	Join []string
	// ClusterSecret is the secret every node of the cluster holds (at least 16 bytes): from
	// PARTITA_CLUSTER_SECRET or --cluster-secret-file, never a flag.
	ClusterSecret []byte
	// DeadAfter is how long a node of the cluster may be gone before the leaders of its
	// partitions remove its replicas (--dead-after; 0: engine.DefaultDeadAfter).
	DeadAfter time.Duration
	// Replicas is how many replicas each partition has in a cluster (--replicas), fixed by
	// the cluster's first node; 0 puts one on every node.
	Replicas int
}

// Validate reports the first thing wrong with c.
func (c Config) Validate() error {
	if c.DataDir == "" {
		return errors.New("--data must name a directory")
	}
	if c.Replicas < 0 {
		return errors.New("--replicas must be 0 (a replica on every node) or more")
	}
	if c.ChangeFeedRetention < 0 {
		return errors.New("--change-feed-retention must not be negative")
	}
	if c.ScriptTimeout < 0 || c.ScriptMaxOperations < 0 {
		return errors.New("--script-timeout and --script-max-operations must not be negative")
	}
	if err := c.Staleness.Check(); err != nil {
		return errors.New("--max-staleness-prefix / --max-staleness-interval: " + err.Error())
	}
	if c.MinPartitions < 0 || c.MinPartitions > engine.MaxMinPartitions {
		return fmt.Errorf("--min-partitions must be from 1 to %d", engine.MaxMinPartitions)
	}
	if err := checkAddr("--addr", c.CosmosAddr, "127.0.0.1:8081"); err != nil {
		return err
	}
	if c.CQLAddr != "" {
		if err := checkAddr("--cql-addr", c.CQLAddr, "127.0.0.1:9042"); err != nil {
			return err
		}
	}
	if c.Key == "" {
		return errors.New("--key must not be empty")
	}
	if c.ClusterAddr == "" && len(c.Join) > 0 {
		return errors.New("--join needs --cluster-addr, this node's address in the cluster")
	}
	if c.ClusterAddr != "" {
		if err := checkAddr("--cluster-addr", c.ClusterAddr, "127.0.0.1:7001"); err != nil {
			return err
		}
		if len(c.Join) == 0 {
			return errors.New("--cluster-addr needs --join, the founding nodes' cluster addresses")
		}
		if len(c.ClusterSecret) < 16 {
			return errors.New("a cluster needs its secret, at least 16 bytes, in PARTITA_CLUSTER_SECRET or the file --cluster-secret-file names")
		}
	}
	return nil
}

// checkAddr checks a front end's listen address, which flag names.
func checkAddr(flag, addr, example string) error {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return errors.New(flag + " must be HOST:PORT, e.g. " + example)
	}
	return nil
}
