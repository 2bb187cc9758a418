package engine

import (
	"sort"

	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/replication"
)

// NodeStatus is what a node says of itself and of its replicas (partita cluster status). On a
// node alone Node is 0 and every partition is its own.
type NodeStatus struct {
	Node     uint64          `json:"node"`
	Store    uint64          `json:"store"`
	Nodes    []ClusterNode   `json:"nodes,omitempty"` // the live nodes, as the control plane knows them
	Replicas []ReplicaStatus `json:"replicas"`
	// Elsewhere are the partitions this node holds no replica of (a cluster with --replicas),
	// where their groups' records place them.
	Elsewhere []ReplicaStatus `json:"elsewhere,omitempty"`
}

// ClusterNode is a live node of the cluster.
type ClusterNode struct {
	ID       uint64 `json:"id"`
	Store    uint64 `json:"store"` // the node's store (a wiped node comes back with another)
	Addr     string `json:"addr"`  // cluster address
	API      string `json:"api"`   // Cosmos DB API address
	CQL      string `json:"cql,omitempty"`
	Draining bool   `json:"draining,omitempty"`
}

// ReplicaStatus is this node's replica of one physical partition.
type ReplicaStatus struct {
	Database  string `json:"database"`
	Container string `json:"container"`
	Partition uint32 `json:"partition"`
	Leading   bool   `json:"leading"`
	Leader    uint64 `json:"leader"` // the node that leads the partition's group, as this node knows; 0: none known
	// Voters and Learners are the nodes of the group's replicas, as this replica knows the
	// group's membership (a cluster's only).
	Voters   []uint64 `json:"voters,omitempty"`
	Learners []uint64 `json:"learners,omitempty"`
	PartitionStats
}

// ClusterNodes lists the live nodes of the cluster and this node's id; nothing on a node
// alone.
func (e *Engine) ClusterNodes() (self uint64, nodes []ClusterNode, err error) {
	if e.cluster == nil {
		return 0, nil, nil
	}
	nodes, err = e.cluster.Nodes(e.stopped)
	return uint64(e.cluster.Node), nodes, err
}

// Status describes this node and its replicas.
func (e *Engine) Status() (NodeStatus, error) {
	var st NodeStatus
	if e.cluster != nil {
		st.Node, st.Store = uint64(e.cluster.Node), uint64(e.Store())
		nodes, err := e.cluster.Nodes(e.stopped)
		if err != nil {
			return st, err
		}
		st.Nodes = nodes
	}
	var elsewhere []replication.GroupID // of st.Elsewhere's partitions, in order
	e.mu.RLock()
	for _, dbID := range sortedKeys(e.dbs) {
		d := e.dbs[dbID]
		for _, id := range sortedKeys(d.containers) {
			c := d.containers[id]
			for _, p := range c.routes.Load().parts {
				r := ReplicaStatus{Database: dbID, Container: id, Partition: p.ID(), Leading: e.cluster == nil || p.Leading()}
				if e.replicas != nil {
					g := groupOf(c.num, p.ID())
					r.Leader = uint64(e.replicas.leaderNode(g))
					if e.cluster != nil {
						gs, ok := e.replicas.host.Status(g)
						if !ok {
							continue // removed from this node (drained), or not received yet
						}
						r.Voters, r.Learners = nodesOf(gs.Descriptor, gs.Descriptor.Voters), nodesOf(gs.Descriptor, gs.Descriptor.Learners)
					}
				}
				r.PartitionStats = statsOf(p)
				st.Replicas = append(st.Replicas, r)
			}
			for _, rr := range c.routes.Load().remote {
				st.Elsewhere = append(st.Elsewhere, ReplicaStatus{Database: dbID, Container: id, Partition: rr.id})
				elsewhere = append(elsewhere, groupOf(c.num, rr.id))
			}
		}
	}
	e.mu.RUnlock()
	if len(elsewhere) > 0 {
		// Where their groups' records place them: read once, without the engine's lock.
		recs, err := e.cluster.Groups.All(e.stopped)
		if err != nil {
			return st, err
		}
		for i, g := range elsewhere {
			rec := recs[g]
			st.Elsewhere[i].Leader, st.Elsewhere[i].Voters, st.Elsewhere[i].Learners = uint64(rec.Leader), uint64s(rec.Voters), uint64s(rec.Learners)
		}
	}
	sort.SliceStable(st.Nodes, func(i, j int) bool { return st.Nodes[i].Addr < st.Nodes[j].Addr })
	return st, nil
}

// nodesOf are the nodes of replicas, as d places them.
func nodesOf(d replication.Descriptor, replicas []replication.ReplicaID) []uint64 {
	var out []uint64
	for _, r := range replicas {
		for _, m := range d.Members {
			if m.Replica == r {
				out = append(out, uint64(m.Node))
			}
		}
	}
	return out
}

func uint64s(ns []replication.NodeID) []uint64 {
	out := make([]uint64, len(ns))
	for i, n := range ns {
		out[i] = uint64(n)
	}
	return out
}

// RangeLeader is the node that leads the partition of a range, as this node knows it (0:
// none known).
type RangeLeader struct {
	Range  epk.Range
	Leader uint64
}

// Leaders lists a container's partitions, those held here and those held elsewhere, each
// with its leader: for the tokens CQL's system tables give each node. Nothing on a node
// alone.
func (e *Engine) Leaders(dbID, id string) ([]RangeLeader, error) {
	if e.cluster == nil {
		return nil, nil
	}
	e.mu.RLock()
	c, err := e.container(dbID, id)
	e.mu.RUnlock()
	if err != nil {
		return nil, err
	}
	rt := c.routes.Load()
	var out []RangeLeader
	for _, p := range rt.parts {
		out = append(out, RangeLeader{Range: p.Range(), Leader: uint64(e.replicas.leaderNode(groupOf(c.num, p.ID())))})
	}
	for _, rr := range rt.remote {
		l := RangeLeader{Range: rr.r}
		if hs := c.holders(rr); len(hs) > 0 {
			l.Leader = uint64(hs[0])
		}
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Range.Min < out[j].Range.Min })
	return out, nil
}
