package replication

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// Membership. A replica is added as a learner (it receives the log, or a snapshot, and does
// not vote), promoted to a voter once caught up, and removed; several changes at once go
// through a joint configuration (Raft's ConfChangeV2), which the leader leaves by itself
// once it is committed. Each change is a log entry: every replica applies it at the same
// index, and the group's descriptor (where each replica lives) changes with it.

// ChangeKind is what a Change does.
type ChangeKind uint8

const (
	AddLearner ChangeKind = iota + 1 // a new replica, on Node/Store, that does not vote
	AddVoter                         // a voter: a learner promoted, or a new replica
	Remove                           // Replica leaves the group
)

// Change is one change of a group's membership.
type Change struct {
	Kind    ChangeKind
	Replica ReplicaID // for a promotion or a removal; new replicas get the group's next id
	Node    NodeID    // for a new replica
	Store   StoreID
}

// confContext is what a configuration change entry carries besides the change itself.
type confContext struct {
	ID    uint64   `json:"id"`
	Added []Member `json:"added,omitempty"`
}

var confIDs atomic.Uint64

// confTimeout bounds the wait for a configuration change.
const confTimeout = 10 * time.Second

// ErrConfChange: the group refused the change as asked (a change already in flight, a replica
// that is not a learner, ...).
var ErrConfChange = errors.New("replication: configuration change refused")

// ChangeMembers proposes changes to g's membership on its leader here and returns once they
// are applied there, joint configuration left (the replicas added, in the order given).
func (h *Host) ChangeMembers(g GroupID, changes []Change) ([]Member, error) {
	type result struct {
		added []Member
		done  chan error
	}
	res := make(chan result, 1)
	err := h.enqueue(func() {
		gr := h.groups[g]
		if gr == nil || !gr.leading {
			res <- result{done: failed(ErrNotLeader)}
			return
		}
		if gr.desc.AutoLeave || len(gr.desc.VotersOutgoing) > 0 {
			res <- result{done: failed(fmt.Errorf("%w: group %d is in a joint configuration", ErrConfChange, g))}
			return
		}
		ctx := confContext{ID: confIDs.Add(1)}
		cc := &pb.ConfChangeV2{}
		next := gr.desc.Next
		for _, c := range changes {
			var typ pb.ConfChangeType
			id := c.Replica
			switch c.Kind {
			case AddLearner, AddVoter:
				typ = pb.ConfChangeType_ConfChangeAddLearnerNode
				if c.Kind == AddVoter {
					typ = pb.ConfChangeType_ConfChangeAddNode
				}
				if id == 0 {
					id = next
					next++
					ctx.Added = append(ctx.Added, Member{Replica: id, Node: c.Node, Store: c.Store})
				}
			case Remove:
				typ = pb.ConfChangeType_ConfChangeRemoveNode
			}
			cc.Changes = append(cc.Changes, &pb.ConfChangeSingle{Type: typ.Enum(), NodeId: new(uint64(id))})
		}
		if len(changes) > 1 {
			cc.Transition = pb.ConfChangeTransition_ConfChangeTransitionJointImplicit.Enum()
		}
		var err error
		if cc.Context, err = json.Marshal(ctx); err != nil {
			res <- result{done: failed(err)}
			return
		}
		done := make(chan error, 1)
		h.wakeGroup(gr)
		if err := gr.rn.ProposeConfChange(cc); err != nil {
			if errors.Is(err, raft.ErrProposalDropped) {
				err = ErrNotLeader
			}
			res <- result{done: failed(err)}
			return
		}
		gr.confs[ctx.ID] = done
		h.dirty[g] = true
		res <- result{added: ctx.Added, done: done}
	})
	if err != nil {
		return nil, err
	}
	var r result
	select {
	case r = <-res:
	case <-h.gone:
		return nil, errStopped
	}
	select {
	case err := <-r.done:
		return r.added, err
	case <-h.gone:
		return r.added, errStopped
	case <-time.After(confTimeout):
		return r.added, ErrTimeout
	}
}

func failed(err error) chan error {
	ch := make(chan error, 1)
	ch <- err
	return ch
}

// applyConfChange applies a committed configuration change to Raft and returns the group's
// new descriptor. The proposer's wait ends once the joint configuration, if any, is left.
func (h *Host) applyConfChange(gr *group, e *pb.Entry) (*Descriptor, error) {
	var cc pb.ConfChangeI
	if e.GetType() == pb.EntryConfChange {
		c := &pb.ConfChange{}
		if err := proto.Unmarshal(e.GetData(), c); err != nil {
			return nil, err
		}
		cc = c
	} else {
		c := &pb.ConfChangeV2{}
		if err := proto.Unmarshal(e.GetData(), c); err != nil {
			return nil, err
		}
		cc = c
	}
	v2 := cc.AsV2()
	var ctx confContext
	if len(v2.GetContext()) > 0 {
		if err := json.Unmarshal(v2.GetContext(), &ctx); err != nil {
			return nil, fmt.Errorf("configuration change context: %w", err)
		}
	}
	cs := gr.rn.ApplyConfChange(cc)
	gr.desc = gr.desc.withConf(cs, ctx.Added)
	gr.log.conf = cs
	if !gr.inConfig() && gr.sm != nil {
		gr.removed = true
	}
	if ch, ok := gr.confs[ctx.ID]; ok && ctx.ID != 0 {
		if _, joint := v2.EnterJoint(); !joint {
			ch <- nil
			delete(gr.confs, ctx.ID)
		} else {
			gr.confs[0] = ch // answered when the joint configuration is left
			delete(gr.confs, ctx.ID)
		}
	} else if ch, ok := gr.confs[0]; ok && v2.LeaveJoint() {
		ch <- nil
		delete(gr.confs, 0)
	}
	return gr.desc, nil
}

// TransferLeader asks g's leader here to hand its leadership to replica to. It returns once
// Raft took the request; the transfer itself takes a round of messages (or is given up after
// an election timeout), which Status shows.
func (h *Host) TransferLeader(g GroupID, to ReplicaID) error {
	return h.do(func() error {
		gr := h.groups[g]
		if gr == nil || !gr.leading {
			return ErrNotLeader
		}
		h.wakeGroup(gr)
		gr.rn.TransferLeader(uint64(to))
		h.dirty[g] = true
		return nil
	})
}

// Drop destroys this node's replica of g as a replica that applied its own removal is: its
// state machine is closed, its data and Raft state deleted, and a tombstone left. It is for a
// group that ends on every node at once (its partition's container was deleted); a replica
// leaves a group that goes on through ChangeMembers.
func (h *Host) Drop(g GroupID) error {
	return h.do(func() error {
		if gr := h.groups[g]; gr != nil {
			h.destroy(gr)
		}
		return nil
	})
}

// Campaign makes this node's replica of g stand for election now (tests, and a split's
// children, whose parent's leader campaigns for them).
func (h *Host) Campaign(g GroupID) error {
	return h.enqueue(func() {
		if gr := h.groups[g]; gr != nil {
			h.wakeGroup(gr)
			gr.rn.Campaign()
			h.dirty[g] = true
		}
	})
}

// Bootstrap creates this node's replica self of a new group whose replicas are members, all
// voters; meta opens its state machine. Every member must be bootstrapped alike; then one of
// them campaigns (or elections start once the group is ticked).
func (h *Host) Bootstrap(g GroupID, meta []byte, members []Member, self ReplicaID) error {
	d := &Descriptor{}
	for _, m := range members {
		d.Members = append(d.Members, m)
		d.Voters = append(d.Voters, m.Replica)
		d.Next = max(d.Next, m.Replica+1)
	}
	return h.do(func() error { return h.bootstrap(g, meta, d, self) })
}

func (h *Host) bootstrap(g GroupID, meta []byte, d *Descriptor, self ReplicaID) error {
	if h.tombstone(g) != 0 {
		// This node held a replica of the group and left it (removed, or the group split):
		// bootstrapping it again would make a replica that claims votes and entries it lost.
		return fmt.Errorf("%w: group %d on node %d", ErrRemoved, g, h.cfg.Node)
	}
	if gr := h.groups[g]; gr != nil {
		if gr.sm != nil {
			return fmt.Errorf("%w: group %d on node %d", ErrExists, g, h.cfg.Node)
		}
		// An empty replica that a message of the group created before this node bootstrapped
		// it: the bootstrap replaces it (keeping the term and vote it may hold).
		delete(h.groups, g)
		delete(h.awake, g)
		delete(h.dirty, g)
	}
	b := h.cfg.DB.NewBatch()
	defer b.Close()
	rec := replicaRecord{Replica: self, Meta: meta, Desc: d.encode()}
	if err := h.initialState(b, g, rec); err != nil {
		return err
	}
	if err := b.Commit(); err != nil {
		return err
	}
	gr, err := h.openGroup(g, rec)
	if err != nil {
		return err
	}
	h.addGroup(gr)
	h.replayEarlyVotes(g) // a member that bootstrapped first may be campaigning already
	return nil
}

// ErrExists refuses to bootstrap a group this node holds a replica of already.
var ErrExists = errors.New("replication: the group exists on this node")

// ErrRemoved refuses to bootstrap a group this node held a replica of before: only a leader
// adding a new replica (ChangeMembers) brings the group back here.
var ErrRemoved = errors.New("replication: this node's replica of the group was removed")
