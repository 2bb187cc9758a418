package controlplane

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"

	"github.com/partita-db/partita/internal/nodetls"
)

// Config is what Start needs.
type Config struct {
	// Dir holds the etcd member's data and the TLS files it reads.
	Dir string
	// Addr is this node's cluster address, host:port.
	Addr string
	// Join are the cluster addresses of the founding nodes, the same list on every node.
	Join []string
	TLS  *nodetls.Identity
	// Logger tells the operator when this node's registration lapses and comes back.
	Logger *slog.Logger
	// HasData asks the node of cluster address addr whether its etcd member has data: how a
	// founding node without data tells a cluster that is forming (no founding node has data)
	// from one whose running members it cannot reach (member.go). It answers only from a
	// process that runs, before its member starts; nil: never known.
	HasData func(ctx context.Context, addr string) (bool, error)
}

// The etcd members' limits on one transaction: operations, and bytes.
const (
	MaxTxnOps       = 4096
	MaxRequestBytes = 8 << 20
)

// LeaseTTL is how long a node's record outlives the node.
const LeaseTTL = 5 * time.Second

// Keep-alive pings on the connections between the etcd clients and members, both ways: a
// connection whose packets vanish (a peer paused, or cut off without a reset) is found dead
// within seconds and replaced, rather than left to hold a watch or a lease's renewals, which
// then wait on it until TCP gives up (minutes).
const (
	keepAliveTime    = 2 * time.Second
	keepAliveTimeout = 2 * time.Second
)

// ControlPlane is a node's part in the control plane: its etcd member, if it runs one, and its
// client.
type ControlPlane struct {
	etcd   *embed.Etcd // nil on a node that is not on the join list
	client *clientv3.Client
	log    *slog.Logger
	// reg is this node's registration once Register ran; nil before (registration.go).
	reg    atomic.Pointer[registration]
	closed sync.Once
}

// ErrBadAddress is what Start returns for an address that is not host:port with a port that
// leaves room for the two derived from it.
var ErrBadAddress = errors.New("controlplane: a cluster address must be host:port, with a port below 65534")

// ports derives the etcd member's peer and client addresses from a cluster address.
func ports(addr string) (peer, client string, err error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", "", fmt.Errorf("%w: %q", ErrBadAddress, addr)
	}
	n, err := strconv.Atoi(p)
	if err != nil || n <= 0 || n >= 65534 {
		return "", "", fmt.Errorf("%w: %q", ErrBadAddress, addr)
	}
	return net.JoinHostPort(host, strconv.Itoa(n+1)), net.JoinHostPort(host, strconv.Itoa(n+2)), nil
}

// memberName is the etcd member name of a founding node: its cluster address, the same on
// every node's list.
func memberName(addr string) string {
	return strings.NewReplacer(":", "_", "[", "", "]", "").Replace(addr)
}

// Start starts this node's part of the control plane and returns once the etcd cluster
// answers (a majority of the join list is up), or ctx ends.
func Start(ctx context.Context, cfg Config) (*ControlPlane, error) {
	if len(cfg.Join) == 0 {
		return nil, errors.New("controlplane: an empty join list")
	}
	var clientURLs []string
	var initial []string
	for _, a := range cfg.Join {
		peer, client, err := ports(a)
		if err != nil {
			return nil, err
		}
		clientURLs = append(clientURLs, "https://"+client)
		initial = append(initial, memberName(a)+"=https://"+peer)
	}
	cp := &ControlPlane{log: cfg.Logger}
	if cp.log == nil {
		cp.log = slog.New(slog.DiscardHandler)
	}
	if slices.Contains(cfg.Join, cfg.Addr) {
		e, err := startFoundingMember(ctx, cfg, clientURLs, strings.Join(initial, ","), cp.log)
		if err != nil {
			return nil, err
		}
		cp.etcd = e
	}
	client, err := clientv3.New(clientv3.Config{Endpoints: clientURLs, TLS: cfg.TLS.Client(), DialTimeout: 5 * time.Second,
		DialKeepAliveTime: keepAliveTime, DialKeepAliveTimeout: keepAliveTimeout, PermitWithoutStream: true,
		MaxCallSendMsgSize: MaxRequestBytes + 1<<20, Logger: quietLogger()})
	if err != nil {
		cp.Close()
		return nil, err
	}
	cp.client = client
	// Ready once the cluster answers a linearizable read: a majority of the members is up.
	for {
		c, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := client.Get(c, "/partita/ready")
		cancel()
		if err == nil {
			return cp, nil
		}
		if ctx.Err() != nil {
			cp.Close()
			return nil, fmt.Errorf("controlplane: the cluster did not answer: %w", err)
		}
	}
}

// startMember starts this node's etcd member.
func startMember(cfg Config, state, initialCluster string) (*embed.Etcd, error) {
	peer, client, err := ports(cfg.Addr)
	if err != nil {
		return nil, err
	}
	files, err := cfg.TLS.WriteFiles(cfg.Dir + "/tls")
	if err != nil {
		return nil, err
	}
	ec := embed.NewConfig()
	ec.Name = memberName(cfg.Addr)
	ec.Dir = cfg.Dir + "/etcd"
	peerURL, err := url.Parse("https://" + peer)
	if err != nil {
		return nil, err
	}
	clientURL, err := url.Parse("https://" + client)
	if err != nil {
		return nil, err
	}
	ec.ListenPeerUrls, ec.AdvertisePeerUrls = []url.URL{*peerURL}, []url.URL{*peerURL}
	ec.ListenClientUrls, ec.AdvertiseClientUrls = []url.URL{*clientURL}, []url.URL{*clientURL}
	ec.InitialCluster, ec.ClusterState = initialCluster, state
	// Nodes of another cluster, or started with another join list, do not form one with ours.
	ec.InitialClusterToken = "partita-" + cfg.TLS.Authority()
	ec.PeerTLSInfo.CertFile, ec.PeerTLSInfo.KeyFile, ec.PeerTLSInfo.TrustedCAFile = files.Cert, files.Key, files.Authority
	ec.PeerTLSInfo.ClientCertAuth = true
	ec.ClientTLSInfo.CertFile, ec.ClientTLSInfo.KeyFile, ec.ClientTLSInfo.TrustedCAFile = files.Cert, files.Key, files.Authority
	ec.ClientTLSInfo.ClientCertAuth = true
	// A peer is known by the cluster's authority, not by its address: etcd's default check
	// that a client certificate names the address it connects from refuses a node whose
	// connections leave from another address than its certificate's (several nodes on one
	// host's loopback addresses all connect from 127.0.0.1; NAT; hosts with several
	// addresses), and refused some of etcd's own streams between such nodes.
	ec.PeerTLSInfo.SkipClientSANVerify, ec.ClientTLSInfo.SkipClientSANVerify = true, true
	ec.GRPCKeepAliveMinTime = keepAliveTime / 2 // the clients' pings are welcome
	ec.GRPCKeepAliveInterval, ec.GRPCKeepAliveTimeout = keepAliveTime, keepAliveTimeout
	// The catalog's changes are transactions (internal/catalog): a database's deletion holds
	// one operation per container and user it deletes, and a container's record holds its
	// scripts. Both limits are raised from etcd's defaults (128 operations, 1.5 MiB) to what
	// the catalog may need.
	ec.MaxTxnOps = MaxTxnOps
	ec.MaxRequestBytes = MaxRequestBytes
	// etcd's own log, warnings and errors, stays beside its data for the operator.
	ec.LogLevel = "warn"
	ec.LogOutputs = []string{cfg.Dir + "/etcd.log"}
	e, err := embed.StartEtcd(ec)
	if err != nil {
		return nil, fmt.Errorf("controlplane: starting etcd: %w", err)
	}
	return e, nil
}

// Node is what a node registers about itself.
type Node struct {
	Addr string `json:"addr"` // cluster address
	API  string `json:"api"`  // Cosmos REST address
	CQL  string `json:"cql,omitempty"`
	// ID and Store are the node's replication identity: its node id and its store's.
	ID    uint64 `json:"id,omitempty"`
	Store uint64 `json:"store,omitempty"`
	// Version is the newest cluster version the node's release knows (package
	// clusterversion); 0 in the records of releases that kept none.
	Version uint32 `json:"version,omitempty"`
	// Draining is set by Nodes for a node an operator is draining (Drain); it is not part of
	// the node's own record.
	Draining bool `json:"-"`
}

// nodesPrefix holds the live nodes' records, each under its lease; drainingPrefix the nodes
// being drained, by cluster address, which outlive the nodes' lives: a drained node that
// starts again holds nothing until its drain is cancelled.
const (
	nodesPrefix    = "/partita/nodes/"
	drainingPrefix = "/partita/draining/"
)

// Nodes lists the live nodes, by cluster address, each marked when it is being drained.
func (cp *ControlPlane) Nodes(ctx context.Context) ([]Node, error) {
	return cp.records(ctx, nodesPrefix)
}

// records reads the node records under prefix and the drains as of one revision, and marks
// each node being drained.
func (cp *ControlPlane) records(ctx context.Context, prefix string) ([]Node, error) {
	resp, err := cp.client.Txn(ctx).Then(clientv3.OpGet(prefix, clientv3.WithPrefix()),
		clientv3.OpGet(drainingPrefix, clientv3.WithPrefix(), clientv3.WithKeysOnly())).Commit()
	if err != nil {
		return nil, err
	}
	draining := map[string]bool{}
	for _, kv := range resp.Responses[1].GetResponseRange().Kvs {
		draining[strings.TrimPrefix(string(kv.Key), drainingPrefix)] = true
	}
	kvs := resp.Responses[0].GetResponseRange().Kvs
	out := make([]Node, 0, len(kvs))
	for _, kv := range kvs {
		var n Node
		if err := json.Unmarshal(kv.Value, &n); err != nil {
			return nil, fmt.Errorf("controlplane: node record %s: %w", kv.Key, err)
		}
		n.Draining = draining[n.Addr]
		out = append(out, n)
	}
	return out, nil
}

// Drain marks the node of cluster address addr as being drained (on), or no longer (off):
// the leaders of its partitions move its replicas and leaderships to the other nodes, and no
// new replica is placed on it.
func (cp *ControlPlane) Drain(ctx context.Context, addr string, on bool) error {
	var err error
	if on {
		_, err = cp.client.Put(ctx, drainingPrefix+addr, "")
	} else {
		_, err = cp.client.Delete(ctx, drainingPrefix+addr)
	}
	return err
}

// Member reports whether this node runs an etcd member (it is on the join list).
func (cp *ControlPlane) Member() bool { return cp.etcd != nil }

// Client is the node's etcd client, for the stores kept in the control plane (the catalog).
func (cp *ControlPlane) Client() *clientv3.Client { return cp.client }

// Close stops keeping this node registered and stops its etcd member, if any. It may be
// called more than once.
func (cp *ControlPlane) Close() {
	cp.closed.Do(func() {
		if r := cp.reg.Load(); r != nil {
			r.stop()
		}
		if cp.client != nil {
			cp.client.Close()
		}
		if cp.etcd != nil {
			// A member that never became ready (it lost its quorum before it could publish
			// itself) must be stopped first: embed's Close waits for its client servers,
			// which wait for the member to be ready or stopping, and would wait forever.
			select {
			case <-cp.etcd.Server.ReadyNotify():
				// Hand its leadership to another member, stop its Raft, close its storage.
				cp.etcd.Server.Stop()
			default:
				cp.etcd.Server.HardStop()
			}
			// Close then waits, up to etcd's request timeout (7 s), for the streams other
			// nodes' clients hold open on the member (watches, lease keep-alives), which end
			// only when those nodes go: every node but the last would take 8 s to stop. The
			// member is stopped and its storage closed already, so the node waits no longer
			// than memberCloseWait for the rest (its ports are free once that is done, or the
			// process has exited).
			closed := make(chan struct{})
			go func() {
				cp.etcd.Close()
				close(closed)
			}()
			select {
			case <-closed:
			case <-time.After(memberCloseWait):
			}
		}
	})
}

// memberCloseWait bounds how long Close waits for the etcd member's client servers once the
// member has stopped.
const memberCloseWait = time.Second
