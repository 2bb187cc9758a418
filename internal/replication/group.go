package replication

import (
	"encoding/json"
	"fmt"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/partita-db/partita/internal/storage"
)

// group is this node's replica of one Raft group. Only the host's goroutine touches it, but
// for the fields a Handle reads (leader, term), which are atomic in Handle.
type group struct {
	id     GroupID
	self   ReplicaID
	rn     *raft.RawNode
	log    *logStore
	sm     StateMachine // nil until a snapshot initializes a replica created by a message
	meta   []byte       // what opens sm
	desc   *Descriptor  // as of the last entry applied
	handle *Handle
	// peers are the places of replicas learned from the envelopes they sent, for replicas the
	// descriptor does not name yet (a replica created by a message knows no descriptor).
	peers map[ReplicaID]Member
	// leading and term are what sm was last told (StateMachine.Leader).
	leading bool
	term    uint64
	// applied is the index of the last entry applied.
	applied uint64
	// quiesced groups are not ticked (quiesce.go); idle counts the ticks a leader found
	// nothing to do.
	quiesced bool
	idle     int
	// reads are the ReadIndex requests in flight, by the context raft echoes.
	reads map[string]chan readResult
	// confs are the configuration changes in flight, by the id in their context.
	confs map[uint64]chan error
	// outgoing are the snapshots made for followers, by index, until they are sent.
	outgoing map[uint64]*storage.Snapshot
	// incoming is the state a MsgSnap stepped into rn describes, until Ready hands it over.
	incoming *SnapshotData
	// sinceTruncation counts the entries applied since the log was last truncated.
	sinceTruncation int
	// removed is set once the replica applied its own removal: it is destroyed after the
	// Ready that applied it.
	removed bool
	// overlapped is set when a snapshot of a descendant was first refused for overlapping
	// this replica, and set again whenever it has applied more since (stranded).
	overlapped *overlapMark
}

// overlapMark is the host's tick and the replica's applied index when a descendant's snapshot
// was refused for overlapping it.
type overlapMark struct {
	tick    int64
	applied uint64
}

type readResult struct {
	index uint64
	err   error
}

// replicaRecord is what a node keeps of its replica of a group (storage.RaftReplica): enough to
// open it again after a restart.
type replicaRecord struct {
	Replica ReplicaID `json:"replica"`
	Meta    []byte    `json:"meta,omitempty"`
	// Desc is the group's descriptor the replica's state machine starts from when it applied
	// nothing yet: a group's first replicas and a split's children start from a log that
	// begins after an entry nobody applied (initialIndex), with this configuration.
	Desc []byte `json:"desc,omitempty"`
}

// The log of a group created without a snapshot (Bootstrap, or a split's child) begins after
// an entry of this index and term that was never written: a replica that joins later must get
// a snapshot, as it could not rebuild the state from the log, which does not begin at 1.
const (
	initialIndex = 10
	initialTerm  = 5
)

func (h *Host) putReplicaRecord(b *storage.Batch, g GroupID, rec replicaRecord) error {
	v, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return b.Set(storage.RaftKey(nil, uint64(g), storage.RaftReplica, 0), v)
}

// raftConfig is the Raft configuration of every group.
func (h *Host) raftConfig(id ReplicaID, s *logStore, applied uint64) *raft.Config {
	return &raft.Config{
		ID:                        uint64(id),
		ElectionTick:              h.cfg.ElectionTicks,
		HeartbeatTick:             h.cfg.HeartbeatTicks,
		Storage:                   s,
		Applied:                   applied,
		MaxSizePerMsg:             1 << 20,
		MaxCommittedSizePerReady:  8 << 20,
		MaxUncommittedEntriesSize: 64 << 20,
		MaxInflightMsgs:           256,
		CheckQuorum:               true,
		PreVote:                   true,
		ReadOnlyOption:            raft.ReadOnlySafe,
		// Only a leader's state machine proposes; a follower's proposal is refused at once
		// rather than forwarded, so that the one who decided it is the one who leads.
		DisableProposalForwarding: true,
		StepDownOnRemoval:         true,
		Logger:                    quietLogger{},
	}
}

// openGroup opens this node's replica of g from what storage holds of it.
func (h *Host) openGroup(g GroupID, rec replicaRecord) (*group, error) {
	s, err := loadLogStore(h.cfg.DB, uint64(g))
	if err != nil {
		return nil, err
	}
	gr := &group{id: g, self: rec.Replica, log: s, meta: rec.Meta, desc: &Descriptor{}, peers: map[ReplicaID]Member{},
		reads: map[string]chan readResult{}, confs: map[uint64]chan error{}, outgoing: map[uint64]*storage.Snapshot{}}
	gr.handle = &Handle{h: h, g: g}
	s.snapshot = func() (*pb.Snapshot, error) { return h.makeSnapshot(gr) }
	if rec.Meta != nil {
		if err := h.openStateMachine(gr, rec.Desc); err != nil {
			return nil, err
		}
	}
	gr.rn, err = raft.NewRawNode(h.raftConfig(gr.self, s, gr.applied))
	if err != nil {
		if gr.sm != nil {
			gr.sm.Close()
		}
		return nil, fmt.Errorf("group %d: %w", g, err)
	}
	return gr, nil
}

// openStateMachine opens gr's state machine and learns from it what it applied. A state
// machine that applied less than the log's start (a new group's, or a split child's) first
// applies the start itself with initial, the descriptor its replica was created with.
func (h *Host) openStateMachine(gr *group, initial []byte) error {
	sm, err := h.cfg.Open(gr.id, gr.meta, gr.handle)
	if err != nil {
		return fmt.Errorf("group %d: opening its state machine: %w", gr.id, err)
	}
	index, _, desc := sm.Applied()
	if start := gr.log.first - 1; index < start {
		if err := sm.Apply([]Committed{{Index: start, Term: gr.log.prevTerm, Desc: initial}}); err != nil {
			sm.Close()
			return fmt.Errorf("group %d: starting its state machine: %w", gr.id, err)
		}
		index, desc = start, initial
	}
	d, err := decodeDescriptor(desc)
	if err != nil {
		sm.Close()
		return err
	}
	gr.sm, gr.desc, gr.applied = sm, d, index
	gr.log.conf = d.confState()
	return nil
}

// member is where replica id of gr lives, if known.
func (gr *group) member(id ReplicaID) (Member, bool) {
	if m, ok := gr.desc.Member(id); ok {
		return m, true
	}
	m, ok := gr.peers[id]
	return m, ok
}

// inConfig reports whether gr's replica is part of its configuration, as a voter or learner.
func (gr *group) inConfig() bool {
	for _, l := range [][]ReplicaID{gr.desc.Voters, gr.desc.Learners, gr.desc.VotersOutgoing, gr.desc.LearnersNext} {
		for _, r := range l {
			if r == gr.self {
				return true
			}
		}
	}
	return false
}

// failWaiters ends every read and configuration change in flight with err.
func (gr *group) failWaiters(err error) {
	for k, ch := range gr.reads {
		ch <- readResult{err: err}
		delete(gr.reads, k)
	}
	for k, ch := range gr.confs {
		ch <- err
		delete(gr.confs, k)
	}
}

// quietLogger drops Raft's log lines: its warnings are about peers that the host's own
// logging names better, and it logs every election at info.
type quietLogger struct{}

func (quietLogger) Debug(...any)                   {}
func (quietLogger) Debugf(string, ...any)          {}
func (quietLogger) Error(...any)                   {}
func (quietLogger) Errorf(string, ...any)          {}
func (quietLogger) Info(...any)                    {}
func (quietLogger) Infof(string, ...any)           {}
func (quietLogger) Warning(...any)                 {}
func (quietLogger) Warningf(string, ...any)        {}
func (quietLogger) Fatal(v ...any)                 { panic(fmt.Sprint(v...)) }
func (quietLogger) Fatalf(format string, v ...any) { panic(fmt.Sprintf(format, v...)) }
func (quietLogger) Panic(v ...any)                 { panic(fmt.Sprint(v...)) }
func (quietLogger) Panicf(format string, v ...any) { panic(fmt.Sprintf(format, v...)) }
