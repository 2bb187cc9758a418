package replication

import (
	"context"
	"io"

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
// spans of the state machine, and what the receiver needs to open it. The sstables travel
// inline (SSTs, in the envelope, as every release sends them) or streamed (Stream, on a stream
// of their own; see snapstream.go); exactly one of the two is set on a received snapshot.
type SnapshotData struct {
	Meta  []byte
	Spans []storage.Span
	SSTs  [][]byte // inline: one per span, in the order of Spans
	// Stream, on the receiving side of a streamed snapshot, yields its sstables as they
	// arrive; the host reads them into files of its store.
	Stream SnapshotStream
	// dir holds a streamed snapshot's sstables once they all arrived, until they are ingested
	// (or the snapshot is dropped, which removes it).
	dir *storage.SSTDir
	// index is the snapshot's index, once the receiver accepted it (acceptSnapshot).
	index uint64
}

// SnapshotStreamer is a Transport that can also send a snapshot's sstables on a stream of
// their own, as they are written, rather than inline in the MsgSnap's envelope: neither end
// then holds more than a few megabytes of it, whatever the replica's size, and the envelopes
// between the two nodes (heartbeats, appends) do not wait behind it.
type SnapshotStreamer interface {
	Transport
	// StreamsSnapshots says whether snapshots for node go streamed. False keeps them inline:
	// a node of an earlier release knows only that way, so a cluster streams only once every
	// node runs a release that receives streams.
	StreamsSnapshots(node NodeID) bool
	// StreamSnapshot sends env, a MsgSnap whose Snapshot names Meta and Spans but holds no
	// sstables, then the sstables that write produces: write calls next to begin each
	// sstable and writes its bytes to what next returns, which blocks while the receiver is
	// behind (backpressure). It returns nil once the receiving host took the whole snapshot
	// (stepped it into Raft), or why not: the stream broke, the receiver refused it, ctx
	// ended.
	StreamSnapshot(ctx context.Context, env *Envelope, write func(next func() (io.Writer, error)) error) error
}

// SnapshotStream is the receiving end of a streamed snapshot, as the transport hands it to
// Deliver in its envelope's SnapshotData. The host calls Next until io.EOF or an error, then
// Done once; or only Done, to refuse the snapshot before any of it came.
type SnapshotStream interface {
	// Next returns the next piece of the sstables, which stays valid until the next call;
	// first is set on the first piece of each sstable. io.EOF follows the last piece of the
	// last sstable; any other error means the stream broke, and the snapshot is lost.
	Next() (p []byte, first bool, err error)
	// Done tells the sender what became of the snapshot: nil once the host stepped it, else
	// why it did not. The transport releases the stream.
	Done(err error)
}

// heartbeat is a node's heartbeat envelope.
func heartbeat(from, to Member) *Envelope { return &Envelope{From: from, To: to} }

func (e *Envelope) isHeartbeat() bool { return e.Msg == nil }
