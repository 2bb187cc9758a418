package replication

import (
	"encoding/json"
	"fmt"
	"math"

	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/partita-db/partita/internal/storage"
)

// Splits. A state machine that splits in two (a physical partition) does it while it applies
// one entry, on every replica at the same index: its Apply calls SplitGroup, which adds to the
// same batch the first Raft state of this node's replicas of the two new groups (the same
// replica ids and members as the parent, a log that starts after initialIndex) and removes
// the parent's. Once Apply returns, the host opens the children; the replica that led the
// parent campaigns in both at once, so they need not wait for an election timeout. A replica
// that lags applies the split later and catches up from its new leaders; until then, the
// children's messages to it create empty replicas, which do not vote, and whose snapshots its
// replica of the parent refuses. One that missed the split for good (nobody holds the
// parent's group any more to send it the entry) is dropped for those snapshots once it has
// applied nothing for a while (stranded, snapshot.go). Children's group ids are larger than
// their parent's, which is how an overlapping replica tells an ancestor from a descendant.

// ChildGroup is a group a split makes, and what opens its state machine.
type ChildGroup struct {
	Group GroupID
	Meta  []byte
}

// pendingSplit is a split applied in a batch not yet finished.
type pendingSplit struct {
	parent   GroupID
	children []ChildGroup
	campaign bool
}

// SplitGroup adds to b the first state of this node's replicas of children, and the removal of
// its replica of parent, whose state machine is applying the entry that splits it; the host
// opens the children once the state machine's Apply returns, and closes the parent. It must be
// called from that Apply (on the host's goroutine). It returns the index and term the
// children's logs start after: their state machines start there, and apply nothing before.
func (h *Host) SplitGroup(b *storage.Batch, parent GroupID, children []ChildGroup) (index, term uint64, err error) {
	gr := h.groups[parent]
	if gr == nil {
		return 0, 0, fmt.Errorf("replication: no replica of group %d to split", parent)
	}
	desc := gr.desc.encode()
	for _, c := range children {
		if c.Group <= parent {
			return 0, 0, fmt.Errorf("replication: child group %d is not above its parent %d", c.Group, parent) // see stranded
		}
		if h.groups[c.Group] != nil && h.groups[c.Group].sm != nil {
			return 0, 0, fmt.Errorf("replication: group %d exists already on node %d", c.Group, h.cfg.Node)
		}
		if err := h.initialState(b, c.Group, replicaRecord{Replica: gr.self, Meta: c.Meta, Desc: desc}); err != nil {
			return 0, 0, err
		}
	}
	if err := h.clearGroup(b, parent, math.MaxUint64); err != nil {
		return 0, 0, err
	}
	h.splits = append(h.splits, pendingSplit{parent: parent, children: children, campaign: gr.leading})
	return initialIndex, initialTerm, nil
}

// initialState adds to b the Raft state of a replica whose log starts after initialIndex: its
// record, its hard state, and its truncated state. A replica a message created before (of a
// split's child) may have a hard state already: its term and vote are kept, since they may
// not go back.
func (h *Host) initialState(b *storage.Batch, g GroupID, rec replicaRecord) error {
	hard := &pb.HardState{Term: new(uint64(initialTerm)), Commit: new(uint64(initialIndex))}
	v, err := h.cfg.DB.GetCopy(nil, storage.RaftKey(nil, uint64(g), storage.RaftHardState, 0))
	switch {
	case err == nil:
		old := &pb.HardState{}
		if err := proto.Unmarshal(v, old); err != nil {
			return err
		}
		if old.GetTerm() > initialTerm {
			hard.Term, hard.Vote = old.Term, old.Vote
		}
	case !storage.IsNotFound(err):
		return err
	}
	hv, err := proto.Marshal(hard)
	if err != nil {
		return err
	}
	span := storage.RaftLogSpan(uint64(g), 0, math.MaxUint64)
	if err := b.DeleteRange(span.Start, span.End); err != nil {
		return err
	}
	if err := b.Set(storage.RaftKey(nil, uint64(g), storage.RaftHardState, 0), hv); err != nil {
		return err
	}
	if err := b.Set(storage.RaftKey(nil, uint64(g), storage.RaftTruncated, 0), truncatedValue(initialIndex, initialTerm)); err != nil {
		return err
	}
	return h.putReplicaRecord(b, g, rec)
}

// finishSplits closes the parents of the splits applied, and opens their children.
func (h *Host) finishSplits() {
	splits := h.splits
	h.splits = nil
	for _, s := range splits {
		if gr := h.groups[s.parent]; gr != nil {
			gr.failWaiters(ErrNotLeader)
			h.releaseOutgoing(gr)
			if gr.sm != nil {
				gr.sm.Close()
			}
			delete(h.groups, s.parent)
			delete(h.awake, s.parent)
			delete(h.dirty, s.parent)
		}
		for _, c := range s.children {
			if old := h.groups[c.Group]; old != nil { // an empty replica a message created
				delete(h.groups, c.Group)
			}
			v, err := h.cfg.DB.GetCopy(nil, storage.RaftKey(nil, uint64(c.Group), storage.RaftReplica, 0))
			var rec replicaRecord
			if err == nil {
				err = json.Unmarshal(v, &rec)
			}
			var gr *group
			if err == nil {
				gr, err = h.openGroup(c.Group, rec)
			}
			if err != nil {
				panic(fmt.Sprintf("replication: node %d: opening group %d, a child of %d: %v", h.cfg.Node, c.Group, s.parent, err))
			}
			h.addGroup(gr)
			if s.campaign {
				gr.rn.Campaign()
			}
			h.replayEarlyVotes(c.Group)
		}
		h.cfg.Logger.Info("replication: group split", "parent", s.parent, "children", len(s.children))
	}
}

// earlyVote is a vote request for a group this node does not hold yet, and the tick it came at.
type earlyVote struct {
	env  *Envelope
	tick int64
}

// Early votes are kept for earlyTicks ticks, at most earlyVotes per group: long enough for a
// node that lags a little to apply the split that creates the group, so that the campaign of
// the split's leader in the children does not have to wait for an election timeout.
const (
	earlyTicks = 3
	earlyVotes = 8
)

// replayEarlyVotes hands the group g, just opened, the vote requests kept for it.
func (h *Host) replayEarlyVotes(g GroupID) {
	for _, v := range h.early[g] {
		h.receive(v.env)
	}
	delete(h.early, g)
}

// keepEarlyVote keeps a vote request for a group this node does not hold.
func (h *Host) keepEarlyVote(env *Envelope) {
	if len(h.early[env.Group]) < earlyVotes {
		h.early[env.Group] = append(h.early[env.Group], earlyVote{env, h.live.ticks})
	}
}

// dropEarlyVotes forgets the early votes kept for more than earlyTicks ticks.
func (h *Host) dropEarlyVotes() {
	for g, vs := range h.early {
		if h.live.ticks-vs[0].tick > earlyTicks {
			delete(h.early, g)
		}
	}
}
