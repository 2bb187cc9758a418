package replication

import (
	"encoding/json"
	"fmt"
	"slices"

	pb "go.etcd.io/raft/v3/raftpb"
)

// NodeID names a node of the cluster.
type NodeID uint64

// StoreID names one life of a node's store: a random number chosen when its data directory
// was created. A node whose disk was wiped comes back with another, so that messages meant for
// the replicas it held before (whose votes and log it lost) never reach the new ones.
type StoreID uint64

// GroupID names a Raft group: a replicated state machine (a physical partition).
type GroupID uint64

// ReplicaID names a replica within its group. Ids are never reused within a group: a replica
// added again after it was removed gets a new one, so that Raft never mistakes it for the
// replica that voted before.
type ReplicaID uint64

// Member is where one replica of a group lives.
type Member struct {
	Replica ReplicaID `json:"replica"`
	Node    NodeID    `json:"node"`
	Store   StoreID   `json:"store"`
}

// Descriptor is a group's membership, as of an applied index: the Raft configuration and where
// each replica of it lives. It is part of the group's replicated state: the state machine keeps
// it (opaque) with what it applies, so that a replica that restarts, or receives a snapshot,
// learns it with the state it belongs to.
type Descriptor struct {
	Members []Member `json:"members"`
	// Next is the replica id the next replica added gets.
	Next ReplicaID `json:"next"`
	// The Raft configuration (raftpb.ConfState).
	Voters         []ReplicaID `json:"voters,omitempty"`
	Learners       []ReplicaID `json:"learners,omitempty"`
	VotersOutgoing []ReplicaID `json:"votersOutgoing,omitempty"`
	LearnersNext   []ReplicaID `json:"learnersNext,omitempty"`
	AutoLeave      bool        `json:"autoLeave,omitempty"`
}

// encode is the descriptor as state machines keep it.
func (d *Descriptor) encode() []byte {
	b, err := json.Marshal(d)
	if err != nil {
		panic(err) // a struct of numbers always marshals
	}
	return b
}

func decodeDescriptor(b []byte) (*Descriptor, error) {
	d := &Descriptor{}
	if len(b) == 0 {
		return d, nil
	}
	if err := json.Unmarshal(b, d); err != nil {
		return nil, fmt.Errorf("replication: group descriptor: %w", err)
	}
	return d, nil
}

// Member is the replica id's member, if any.
func (d *Descriptor) Member(id ReplicaID) (Member, bool) {
	for _, m := range d.Members {
		if m.Replica == id {
			return m, true
		}
	}
	return Member{}, false
}

func ids(rs []ReplicaID) []uint64 {
	out := make([]uint64, len(rs))
	for i, r := range rs {
		out[i] = uint64(r)
	}
	return out
}

func replicaIDs(us []uint64) []ReplicaID {
	if len(us) == 0 {
		return nil
	}
	out := make([]ReplicaID, len(us))
	for i, u := range us {
		out[i] = ReplicaID(u)
	}
	return out
}

// confState is the descriptor's Raft configuration.
func (d *Descriptor) confState() *pb.ConfState {
	return &pb.ConfState{Voters: ids(d.Voters), Learners: ids(d.Learners), VotersOutgoing: ids(d.VotersOutgoing),
		LearnersNext: ids(d.LearnersNext), AutoLeave: new(d.AutoLeave)}
}

// withConf is the descriptor after a configuration change that left cs, with the members that
// are no longer in it removed.
func (d *Descriptor) withConf(cs *pb.ConfState, added []Member) *Descriptor {
	n := &Descriptor{Next: d.Next, Voters: replicaIDs(cs.GetVoters()), Learners: replicaIDs(cs.GetLearners()),
		VotersOutgoing: replicaIDs(cs.GetVotersOutgoing()), LearnersNext: replicaIDs(cs.GetLearnersNext()),
		AutoLeave: cs.GetAutoLeave()}
	in := map[ReplicaID]bool{}
	for _, l := range [][]ReplicaID{n.Voters, n.Learners, n.VotersOutgoing, n.LearnersNext} {
		for _, r := range l {
			in[r] = true
		}
	}
	for _, m := range append(slices.Clone(d.Members), added...) {
		if in[m.Replica] && !slices.ContainsFunc(n.Members, func(x Member) bool { return x.Replica == m.Replica }) {
			n.Members = append(n.Members, m)
			n.Next = max(n.Next, m.Replica+1)
		}
	}
	slices.SortFunc(n.Members, func(a, b Member) int { return int(a.Replica) - int(b.Replica) })
	return n
}
