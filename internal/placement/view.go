package placement

import "github.com/partita-db/partita/internal/replication"

// Node is a live node as placement sees it.
type Node struct {
	// Store is the node's store: a node whose disk was wiped comes back with another, and
	// the replicas on its old store are lost. 0 for a node that has none yet; it takes none.
	Store replication.StoreID
	// Draining is set while the node's replicas and leaderships move away.
	Draining bool
}

// View is the cluster as a pass sees it.
type View struct {
	// Live are the nodes registered in the control plane, of a release the cluster's version
	// admits.
	Live map[replication.NodeID]Node
	// Gone are the nodes missing from the control plane for longer than the cluster's
	// dead-after. A node neither live nor gone is missing for now: it may come back with its
	// replicas, and they are kept.
	Gone map[replication.NodeID]bool
}

// Policy is what a pass decides by; Next updates Load and Moves with what it decides.
type Policy struct {
	// Replicas is how many voters a group should have; 0 for one on every live node.
	Replicas int
	// Load is what the voters each node holds weigh (with Replicas only); Weight is the
	// weight of the group at hand.
	Load   map[replication.NodeID]float64
	Weight float64
	// Moves is how many replicas the pass may still move to even out the load: one in this
	// node's turn, none otherwise.
	Moves int
}

// Decision is what a group's leader does next: a change of its membership, or the replica to
// hand its leadership to first; neither when the group is as it should be.
type Decision struct {
	Changes    []replication.Change
	TransferTo replication.ReplicaID
}

// None reports whether d asks for nothing.
func (d Decision) None() bool { return len(d.Changes) == 0 && d.TransferTo == 0 }
