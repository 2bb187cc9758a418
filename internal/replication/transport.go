package replication

import (
	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/partita-db/partita/internal/storage"
)

// Transport carries envelopes between hosts. Send must not block for long and may lose,
// delay, duplicate or reorder envelopes (Raft copes with each); it must not change them.
// The receiving side hands each envelope to its host's Deliver.
type Transport interface {
	Send(env *Envelope)
}

// Envelope is what travels between hosts: a Raft message of one group, or, with no group, a
// node's heartbeat, which tells the other nodes that it is alive (see quiesce.go).
type Envelope struct {
	Group GroupID
	// From and To name the sending and receiving replicas' places; for a heartbeat only the
	// nodes and stores are set.
	From, To Member
	Msg      *pb.Message
	// Snapshot is the state a MsgSnap describes.
	Snapshot *SnapshotData
	// Quiesce, with no Msg, is a leader's notice that every replica has every entry of its
	// term Term, up to Commit, and nothing is proposed: the follower stops ticking the group.
	Quiesce      bool
	Term, Commit uint64
}

// SnapshotData is a replica's state as of a snapshot's index: sstables that replace the key
// spans of the state machine, and what the receiver needs to open it.
type SnapshotData struct {
	Meta  []byte
	Spans []storage.Span
	SSTs  [][]byte // one per span, in the order of Spans
}

// heartbeat is a node's heartbeat envelope.
func heartbeat(from, to Member) *Envelope { return &Envelope{From: from, To: to} }

func (e *Envelope) isHeartbeat() bool { return e.Msg == nil }
