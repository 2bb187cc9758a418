package engine

import (
	"slices"
	"sort"

	"github.com/partita-db/partita/internal/clusterversion"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/replica"
	"github.com/partita-db/partita/internal/replication"
)

// NodeStatus is what a node says of itself and of its replicas (partita cluster status). On a
// node alone Node is 0 and every partition is its own.
type NodeStatus struct {
	Node  uint64 `json:"node"`
	Store uint64 `json:"store"`
	// Registered says whether this node is live in the control plane now (a node alive but
	// not registered is not addressed by placement; it registers again by itself); Ready and
	// NotReady are what GET /ready answers (Engine.Ready). A cluster's only.
	Registered bool   `json:"registered,omitempty"`
	Ready      bool   `json:"ready,omitempty"`
	NotReady   string `json:"notReady,omitempty"`
	// Nodes are every node of the cluster the control plane knows: the live ones, and those
	// that registered once and are not live now (Down).
	Nodes []ClusterNode `json:"nodes,omitempty"`
	// ControlPlane says why the nodes, or where the partitions held elsewhere are, are missing:
	// the control plane did not answer (the node still describes its own replicas).
	ControlPlane string `json:"controlPlane,omitempty"`
	// ClusterVersion is the cluster's active version as this node last read it, and
	// KnownVersion the newest this node's release knows (package clusterversion).
	ClusterVersion uint32          `json:"clusterVersion,omitempty"`
	KnownVersion   uint32          `json:"knownVersion,omitempty"`
	Replicas       []ReplicaStatus `json:"replicas"`
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
	// Version is the newest cluster version the node's release knows (package
	// clusterversion); 0 for a release that states none (Base).
	Version uint32 `json:"version,omitempty"`
	// Down is set by Status for a node that registered once and is not live now: stopped,
	// paused, cut off from the control plane, or alive but not registered again yet.
	Down bool `json:"down,omitempty"`
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
	// Members are the group's replicas as this replica knows them, those on nodes that are
	// down included; on the leader each with how far it has caught up.
	Members []GroupMember `json:"members,omitempty"`
	// Quorum is, on the leader, how the group stands: "healthy", or "at risk" when the
	// failure of one more voter would leave it without a majority; on a follower, "no leader"
	// while it knows none.
	Quorum string `json:"quorum,omitempty"`
	PartitionStats
}

// GroupMember is one replica of a group.
type GroupMember struct {
	Node    uint64 `json:"node"`
	Replica uint64 `json:"replica"`
	Learner bool   `json:"learner,omitempty"`
	// Down: its node is not live in the control plane.
	Down bool `json:"down,omitempty"`
	// On the leader only: Match is the last log index known to be on the replica, Lag how
	// many committed entries it lacks, Active whether the leader heard from it within the
	// last election timeout.
	Match  uint64 `json:"match,omitempty"`
	Lag    uint64 `json:"lag,omitempty"`
	Active bool   `json:"active,omitempty"`
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

// Status describes this node and its replicas; what the control plane did not answer is left
// out, and NodeStatus.ControlPlane says why.
func (e *Engine) Status() NodeStatus {
	var st NodeStatus
	live := map[uint64]bool{}
	if e.cluster != nil {
		st.Node, st.Store = uint64(e.cluster.Node), uint64(e.Store())
		st.Registered = e.cluster.Registered == nil || e.cluster.Registered()
		st.Ready, st.NotReady = e.Ready()
		st.ClusterVersion, st.KnownVersion = uint32(e.cluster.active()), uint32(clusterversion.Latest)
		nodes, err := e.cluster.Nodes(e.stopped)
		var members []ClusterNode
		if err == nil && e.cluster.Members != nil {
			members, err = e.cluster.Members(e.stopped)
		}
		if err != nil {
			st.ControlPlane = "The cluster's control plane did not answer: " + err.Error()
			live = nil // not known
		} else {
			for _, n := range nodes {
				live[n.ID] = true
			}
			st.Nodes = nodes
			for _, m := range members {
				if !live[m.ID] {
					m.Down = true
					st.Nodes = append(st.Nodes, m)
				}
			}
		}
	}
	var elsewhere []replication.GroupID // of st.Elsewhere's partitions, in order
	e.mu.RLock()
	for _, dbID := range sortedKeys(e.dbs) {
		d := e.dbs[dbID]
		for _, id := range sortedKeys(d.containers) {
			c := d.containers[id]
			for _, p := range c.routes.Load().parts {
				r := ReplicaStatus{Database: dbID, Container: id, Partition: p.ID(), Leading: e.cluster == nil || p.Leading()}
				g := replica.Group(c.num, p.ID())
				r.Leader = uint64(e.hold.leaderOf(g))
				if e.cluster != nil {
					gs, ok := e.replicas.host.Status(g)
					if !ok {
						continue // removed from this node (drained), or not received yet
					}
					r.Voters, r.Learners = nodesOf(gs.Descriptor, gs.Descriptor.Voters), nodesOf(gs.Descriptor, gs.Descriptor.Learners)
					r.Members, r.Quorum = groupMembers(gs, live)
				}
				r.PartitionStats = statsOf(p)
				st.Replicas = append(st.Replicas, r)
			}
			for _, rr := range c.routes.Load().remote {
				st.Elsewhere = append(st.Elsewhere, ReplicaStatus{Database: dbID, Container: id, Partition: rr.id})
				elsewhere = append(elsewhere, replica.Group(c.num, rr.id))
			}
		}
	}
	e.mu.RUnlock()
	if len(elsewhere) > 0 {
		// Where their groups' records place them: read once, without the engine's lock.
		recs, err := e.cluster.Groups.All(e.stopped)
		if err != nil {
			st.ControlPlane = "The cluster's control plane did not answer: " + err.Error()
		}
		for i, g := range elsewhere {
			rec := recs[g]
			st.Elsewhere[i].Leader, st.Elsewhere[i].Voters, st.Elsewhere[i].Learners = uint64(rec.Leader), uint64s(rec.Voters), uint64s(rec.Learners)
		}
	}
	sort.SliceStable(st.Nodes, func(i, j int) bool { return st.Nodes[i].Addr < st.Nodes[j].Addr })
	return st
}

// groupMembers are the members of a group as its status gs shows them, live saying which
// nodes are live (nil: not known), and how its quorum stands (see ReplicaStatus.Quorum).
func groupMembers(gs replication.Status, live map[uint64]bool) ([]GroupMember, string) {
	var out []GroupMember
	up := 0 // voters the leader hears from
	for _, m := range gs.Descriptor.Members {
		gm := GroupMember{Node: uint64(m.Node), Replica: uint64(m.Replica), Down: live != nil && !live[uint64(m.Node)],
			Learner: slices.Contains(gs.Descriptor.Learners, m.Replica)}
		if gs.Leading {
			gm.Match, gm.Active = gs.Match[m.Replica], gs.Active[m.Replica]
			if gs.Commit > gm.Match {
				gm.Lag = gs.Commit - gm.Match
			}
			if gm.Active && slices.Contains(gs.Descriptor.Voters, m.Replica) {
				up++
			}
		}
		out = append(out, gm)
	}
	switch {
	case gs.Leading && up-1 > len(gs.Descriptor.Voters)/2:
		return out, "healthy"
	case gs.Leading:
		return out, "at risk"
	case gs.Leader == 0:
		return out, "no leader"
	}
	return out, ""
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
		out = append(out, RangeLeader{Range: p.Range(), Leader: uint64(e.replicas.leaderOf(replica.Group(c.num, p.ID())))})
	}
	for _, rr := range rt.remote {
		l := RangeLeader{Range: rr.r}
		if hs := c.holders(rr); len(hs) > 0 {
			l.Leader = uint64(hs[0]) // its leader, as recorded, or else a node that holds it
		}
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Range.Min < out[j].Range.Min })
	return out, nil
}
