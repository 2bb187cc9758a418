package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/partita-db/partita/internal/catalog"
	"github.com/partita-db/partita/internal/clusterversion"
	"github.com/partita-db/partita/internal/controlplane"
	"github.com/partita-db/partita/internal/distribution"
	"github.com/partita-db/partita/internal/engine"
	"github.com/partita-db/partita/internal/nodecall"
	"github.com/partita-db/partita/internal/nodemsg"
	"github.com/partita-db/partita/internal/nodetls"
	"github.com/partita-db/partita/internal/raftrpc"
	"github.com/partita-db/partita/internal/replication"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// catalogPrefix is where the cluster's catalog lives in its etcd.
const catalogPrefix = "/partita/catalog/"

// clusterNode is this process's part in a cluster (Config.ClusterAddr): its control plane
// (an etcd member on the founding nodes, a client elsewhere), the transport that carries
// replication envelopes and forwarded writes on the cluster address, and the engine's view
// of both (engine.Cluster).
type clusterNode struct {
	cfg Config
	log *slog.Logger
	id  replication.NodeID
	cp  *controlplane.ControlPlane
	tr  *raftrpc.Transport
	ln  net.Listener
	// engine is set once it is open: envelopes and calls that come before are dropped.
	engine atomic.Pointer[engine.Engine]
	// cpUp is set once cp is: the transport resolves addresses before, from the join list.
	cpUp atomic.Bool
	// addrs caches the live nodes' cluster addresses by node id (resolve).
	mu      sync.Mutex
	addrs   map[replication.NodeID]string
	fetched time.Time
	served  chan error
	// replicas is the cluster's replica count (Config.Replicas as the cluster fixed it).
	replicas int
	// gate is the cluster's active version as this node follows it; stopGate ends that.
	gate     *clusterversion.Gate
	stopGate context.CancelFunc
}

// nodeID is a node's id in the cluster: a hash of its cluster address, so that a node keeps
// its id across restarts and every node computes the same one for it.
func nodeID(addr string) replication.NodeID {
	h := fnv.New64a()
	h.Write([]byte(addr))
	return replication.NodeID(h.Sum64() | 1)
}

// joinCluster starts the control plane (waiting for a majority of the founding nodes) and the
// transport; the engine opens with what cluster returns, and register follows.
func joinCluster(cfg Config, log *slog.Logger) (*clusterNode, error) {
	host, _, err := net.SplitHostPort(cfg.ClusterAddr)
	if err != nil {
		return nil, err
	}
	tlsID, err := nodetls.New(cfg.ClusterSecret, host)
	if err != nil {
		return nil, err
	}
	n := &clusterNode{cfg: cfg, log: log, id: nodeID(cfg.ClusterAddr), addrs: map[replication.NodeID]string{}, served: make(chan error, 1)}
	for _, a := range cfg.Join { // addressed before the control plane answers (hasData)
		n.addrs[nodeID(a)] = a
	}
	if n.ln, err = net.Listen("tcp", cfg.ClusterAddr); err != nil {
		return nil, err
	}
	n.gate = clusterversion.NewGate(versionStore{n}, log)
	n.tr = raftrpc.New(raftrpc.Config{Node: n.id, TLS: tlsID, Resolve: n.resolve, Logger: log,
		Version: uint32(clusterversion.Latest), Admit: n.admitPeer,
		StreamSnapshots: func() bool { return n.gate.Enabled(clusterversion.StreamedSnapshots) },
		Deliver: func(env *replication.Envelope) {
			if e := n.engine.Load(); e != nil {
				e.Deliver(env)
			}
		},
		Serve: func(req []byte) []byte {
			if bytes.Equal(req, hasDataProbe) {
				return n.answerHasData()
			}
			if e := n.engine.Load(); e != nil {
				return nodemsg.Serve(req, e.ServeCall)
			}
			return nodemsg.NotReady()
		},
	})
	go func() { n.served <- n.tr.Serve(n.ln) }()
	log.Info("joining the cluster", "cluster-addr", cfg.ClusterAddr, "join", cfg.Join, "node", fmt.Sprintf("%x", uint64(n.id)))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	n.cp, err = controlplane.Start(ctx, controlplane.Config{Dir: n.controlPlaneDir(), Addr: cfg.ClusterAddr, Join: cfg.Join, TLS: tlsID, Logger: log,
		HasData: n.hasData})
	if err != nil {
		n.tr.Close()
		return nil, err
	}
	n.cpUp.Store(true)
	// The replica count is the cluster's, fixed by the first node that starts. A cluster
	// formed by a release without the setting kept a replica on every node, and keeps doing so.
	err = untilAnswered(ctx, func(ctx context.Context) error {
		proposed := cfg.Replicas
		resp, err := n.cp.Client().Get(ctx, catalogPrefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
		if err == nil && resp.Count > 0 {
			proposed = 0
		}
		fixed := ""
		if err == nil {
			fixed, err = n.cp.Setting(ctx, "replicas", strconv.Itoa(proposed))
		}
		if err == nil {
			n.replicas, err = strconv.Atoi(fixed)
		}
		return err
	})
	if err != nil {
		n.close()
		return nil, fmt.Errorf("reading the cluster's replica count: %w", err)
	}
	// A node of a release older than the cluster's active version is refused before it opens
	// anything: its peers send what it does not know.
	var tooOld error
	err = untilAnswered(ctx, func(ctx context.Context) error {
		err := n.gate.Step(ctx)
		if errors.As(err, new(*clusterversion.TooOldError)) {
			tooOld, err = err, nil
		}
		return err
	})
	if err == nil {
		err = tooOld
	}
	if err != nil {
		n.close()
		return nil, fmt.Errorf("reading the cluster's version: %w", err)
	}
	if n.replicas != cfg.Replicas {
		log.Warn("the cluster's replica count was fixed when it formed; this node follows it, not --replicas", "cluster", n.replicas, "flag", cfg.Replicas)
	}
	return n, nil
}

// untilAnswered calls ask, each call given a few seconds, until it succeeds or ctx ends: a
// node starting while the control plane loses its leader, or while the connection to one of
// its members is dead, waits for it rather than exit.
func untilAnswered(ctx context.Context, ask func(context.Context) error) error {
	for {
		c, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := ask(c)
		cancel()
		if err == nil || ctx.Err() != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// cluster is what the engine needs of the cluster.
func (n *clusterNode) cluster() *engine.Cluster {
	return &engine.Cluster{
		Node: n.id, Transport: n.tr,
		Catalog: catalog.NewEtcd(n.cp.Client(), catalogPrefix),
		Nodes: func(ctx context.Context) ([]engine.ClusterNode, error) {
			nodes, err := n.nodes(ctx)
			var out []engine.ClusterNode
			for _, nd := range nodes {
				out = append(out, engine.ClusterNode{ID: nd.ID, Store: nd.Store, Addr: nd.Addr, API: nd.API, CQL: nd.CQL, Draining: nd.Draining, Version: nd.Version})
			}
			return out, err
		},
		Members: func(ctx context.Context) ([]engine.ClusterNode, error) {
			ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
			defer cancel()
			members, err := n.cp.Members(ctx)
			var out []engine.ClusterNode
			for _, nd := range members {
				out = append(out, engine.ClusterNode{ID: nd.ID, Store: nd.Store, Addr: nd.Addr, API: nd.API, CQL: nd.CQL, Draining: nd.Draining, Version: nd.Version})
			}
			return out, err
		},
		Registered: func() bool { return n.cp.Registered().Live },
		Drain: func(addr string, on bool) error {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			return n.cp.Drain(ctx, addr, on)
		},
		DeadAfter: n.cfg.DeadAfter,
		Replicas:  n.replicas,
		Groups:    groupMap{n.cp},
		Active:    n.gate.Active,
		Call: func(ctx context.Context, node replication.NodeID, req *nodecall.Request) (nodecall.Answer, error) {
			raw, err := nodemsg.Marshal(req, n.gate.Active())
			if err != nil {
				return nodecall.Answer{}, err
			}
			out, err := n.tr.Call(ctx, node, raw)
			if errors.Is(err, raftrpc.ErrNotSent) {
				return nodecall.Answer{}, fmt.Errorf("%w: %v", distribution.ErrNotSent, err)
			}
			if err != nil {
				return nodecall.Answer{}, err
			}
			return nodemsg.UnmarshalAnswer(out)
		},
	}
}

// register records this node as live, with its addresses and identity, once its engine is
// open.
func (n *clusterNode) register(e *engine.Engine, api, cql string) error {
	n.engine.Store(e)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	err := untilAnswered(ctx, func(ctx context.Context) error {
		return n.cp.Register(ctx, controlplane.Node{Addr: n.cfg.ClusterAddr, API: api, CQL: cql, ID: uint64(n.id), Store: uint64(e.Store()),
			Version: uint32(clusterversion.Latest)})
	})
	if err != nil {
		return err
	}
	gctx, stop := context.WithCancel(context.Background())
	n.stopGate = stop
	go n.gate.Run(gctx, versionInterval, func(err error) { n.log.Error("cluster version", "err", err) })
	return nil
}

// versionInterval is how often a node reads the cluster's active version and tries to raise
// it: an upgrade's last node brings the new version into use within about this long.
const versionInterval = 2 * time.Second

func (n *clusterNode) nodes(ctx context.Context) ([]controlplane.Node, error) {
	// Short: the placement loop asks every second, and a node that stops waits for it (its
	// engine cancels ctx then).
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	nodes, err := n.cp.Nodes(ctx)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(nodes, func(a, b controlplane.Node) int { return strings.Compare(a.Addr, b.Addr) })
	n.mu.Lock()
	for _, nd := range nodes {
		n.addrs[replication.NodeID(nd.ID)] = nd.Addr
	}
	n.fetched = time.Now()
	n.mu.Unlock()
	return nodes, nil
}

// resolve is a node's cluster address: from the live nodes' records, read again at most once
// a second when a node is not known, or else from the directory of every node that ever
// registered (a node that is down, or alive but not registered again yet, is still addressed:
// its replicas are reached as soon as it is reachable).
func (n *clusterNode) resolve(id replication.NodeID) (string, bool) {
	n.mu.Lock()
	addr, ok := n.addrs[id]
	stale := time.Since(n.fetched) > time.Second
	n.mu.Unlock()
	if ok || !stale || !n.cpUp.Load() {
		return addr, ok
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if _, err := n.nodes(ctx); err != nil {
		return "", false
	}
	if members, err := n.cp.Members(ctx); err == nil {
		n.mu.Lock()
		for _, m := range members {
			n.addrs[replication.NodeID(m.ID)] = m.Addr
		}
		n.mu.Unlock()
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	addr, ok = n.addrs[id]
	return addr, ok
}

// hasDataProbe asks a node's process whether its control-plane member has data
// (controlplane.Config.HasData); it comes before the engine's requests, even before the node's
// control plane or engine started. A node of a release that does not know it answers as to a
// forwarded request, which tells nothing.
var hasDataProbe = []byte(`{"probe":"control-plane-data"}`)

type hasDataAnswer struct {
	Probe   string `json:"probe"` // "control-plane-data": an answer to the probe
	HasData bool   `json:"hasData"`
}

func (n *clusterNode) controlPlaneDir() string { return filepath.Join(n.cfg.DataDir, "controlplane") }

func (n *clusterNode) answerHasData() []byte {
	b, _ := json.Marshal(hasDataAnswer{Probe: "control-plane-data", HasData: controlplane.HasMemberData(n.controlPlaneDir())}) // cannot fail
	return b
}

// hasData asks the node of cluster address addr whether its control-plane member has data.
func (n *clusterNode) hasData(ctx context.Context, addr string) (bool, error) {
	b, err := n.tr.Call(ctx, nodeID(addr), hasDataProbe)
	if err != nil {
		return false, err
	}
	var ans hasDataAnswer
	if err := json.Unmarshal(b, &ans); err != nil || ans.Probe != "control-plane-data" {
		return false, fmt.Errorf("node %s does not answer whether it has control-plane data (an older release?)", addr)
	}
	return ans.HasData, nil
}

// close leaves the cluster: the transport stops, and the node's record goes with its lease.
func (n *clusterNode) close() {
	if n.stopGate != nil {
		n.stopGate()
	}
	n.tr.Close()
	<-n.served
	n.cp.Close()
}

// groupMap keeps the engine's group records in the control plane.
type groupMap struct{ cp *controlplane.ControlPlane }

// groupTimeout bounds a group record's read or write: the placement loop and requests wait
// for it.
const groupTimeout = 3 * time.Second

func (m groupMap) Put(ctx context.Context, g replication.GroupID, r distribution.GroupRecord) error {
	ctx, cancel := context.WithTimeout(ctx, groupTimeout)
	defer cancel()
	return m.cp.PutGroup(ctx, uint64(g), controlplane.Group{Voters: nodeIDs(r.Voters), Learners: nodeIDs(r.Learners), Leader: uint64(r.Leader)})
}

func (m groupMap) Get(ctx context.Context, g replication.GroupID) (distribution.GroupRecord, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, groupTimeout)
	defer cancel()
	rec, ok, err := m.cp.GroupOf(ctx, uint64(g))
	return groupRecord(rec), ok, err
}

func (m groupMap) All(ctx context.Context) (map[replication.GroupID]distribution.GroupRecord, error) {
	ctx, cancel := context.WithTimeout(ctx, groupTimeout)
	defer cancel()
	all, err := m.cp.Groups(ctx)
	out := make(map[replication.GroupID]distribution.GroupRecord, len(all))
	for id, rec := range all {
		out[replication.GroupID(id)] = groupRecord(rec)
	}
	return out, err
}

func groupRecord(g controlplane.Group) distribution.GroupRecord {
	r := distribution.GroupRecord{Leader: replication.NodeID(g.Leader)}
	for _, n := range g.Voters {
		r.Voters = append(r.Voters, replication.NodeID(n))
	}
	for _, n := range g.Learners {
		r.Learners = append(r.Learners, replication.NodeID(n))
	}
	return r
}

func nodeIDs(ns []replication.NodeID) []uint64 {
	out := make([]uint64, len(ns))
	for i, n := range ns {
		out[i] = uint64(n)
	}
	return out
}
