package replication

import (
	"bytes"
	"encoding/json"
	"fmt"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/partita-db/partita/internal/storage"
)

// Snapshots. When a follower needs entries its leader's log no longer holds (it is new, wiped,
// or fell far behind), Raft asks the leader's storage for a snapshot. The host answers with
// the state machine's applied index, term and configuration, and takes a Pebble snapshot at
// that point; the MsgSnap that Raft then emits carries only those and the state machine's
// meta. The host sends the state machine's key spans with it, as sstables written from the
// Pebble snapshot off its goroutine, in one of two ways: inline, one sstable per span built in
// memory and sent inside the MsgSnap's envelope (what every release understands), or streamed,
// written as the sender iterates and sent in chunks on a stream of their own (snapstream.go),
// once the transport says the receiving node takes streams.
//
// The receiver refuses a snapshot whose spans overlap another replica it holds (a split's
// child arriving before the local parent split): the leader sends it again later. Otherwise it
// steps the message; when Raft hands the snapshot over in a Ready, the host ingests the
// state machine's sstables and one more that replaces the replica's Raft state (log, hard
// state, truncated state, replica record) in one ingestion, so a crash keeps all of it or
// none, and reopens the state machine on what it ingested. A snapshot that Raft did not hand
// over in the Ready after it was stepped (it was stale) is dropped.

// makeSnapshot is the group's raft.Storage.Snapshot.
func (h *Host) makeSnapshot(gr *group) (*pb.Snapshot, error) {
	if gr.sm == nil {
		return nil, raft.ErrSnapshotTemporarilyUnavailable
	}
	index, term, desc := gr.sm.Applied()
	d, err := decodeDescriptor(desc)
	if err != nil {
		return nil, err
	}
	if _, ok := gr.outgoing[index]; !ok {
		gr.outgoing[index] = h.cfg.DB.NewSnapshot()
	}
	return &pb.Snapshot{Data: gr.meta, Metadata: &pb.SnapshotMetadata{Index: new(index), Term: new(term), ConfState: d.confState()}}, nil
}

// sendSnapshot writes the sstables of a MsgSnap's snapshot and sends it, off the host's
// goroutine; Raft learns that it went (or failed) once it is sent.
func (h *Host) sendSnapshot(gr *group, env *Envelope) {
	index := env.Msg.GetSnapshot().GetMetadata().GetIndex()
	snap := gr.outgoing[index]
	delete(gr.outgoing, index)
	to := uint64(env.To.Replica)
	if snap == nil || gr.sm == nil {
		gr.rn.ReportSnapshot(to, raft.SnapshotFailure)
		return
	}
	if st, ok := h.cfg.Transport.(SnapshotStreamer); ok && st.StreamsSnapshots(env.To.Node) {
		h.streamSnapshot(st, gr, env, snap)
		return
	}
	spans, meta := gr.sm.Spans(), gr.meta
	g := gr.id
	h.sending.Add(1)
	go func() {
		defer h.sending.Done()
		data := &SnapshotData{Meta: meta, Spans: spans}
		var err error
		for _, s := range spans {
			select {
			case <-h.gone:
				err = errStopped // Close waits for this goroutine before the store closes
			default:
			}
			if err != nil {
				break
			}
			var sst []byte
			if sst, err = snap.SpanSST(h.cfg.DB, s); err != nil {
				break
			}
			data.SSTs = append(data.SSTs, sst)
		}
		snap.Close()
		status := raft.SnapshotFinish
		if err != nil {
			if err != errStopped {
				h.cfg.Logger.Error("replication: making a snapshot", "group", g, "err", err)
			}
			status = raft.SnapshotFailure
		} else {
			env.Snapshot = data
			h.cfg.Transport.Send(env)
			h.snapshotsSent.Add(1)
		}
		h.enqueue(func() {
			if gr := h.groups[g]; gr != nil {
				gr.rn.ReportSnapshot(to, status)
				h.dirty[g] = true
			}
		})
	}()
}

// releaseOutgoing closes the Pebble snapshots taken for snapshots that were not sent; and, as
// whoever lets a replica go calls it, drops the snapshot it received and did not install.
func (h *Host) releaseOutgoing(gr *group) {
	for i, s := range gr.outgoing {
		s.Close()
		delete(gr.outgoing, i)
	}
	h.dropIncoming(gr)
}

// dropIncoming forgets the snapshot gr received and did not install, and removes its files.
func (h *Host) dropIncoming(gr *group) {
	if gr.incoming != nil && gr.incoming.dir != nil {
		if err := gr.incoming.dir.Remove(); err != nil {
			h.cfg.Logger.Warn("replication: removing a snapshot's files", "group", gr.id, "err", err)
		}
	}
	gr.incoming = nil
}

// acceptSnapshot checks an incoming snapshot before Raft steps it, and keeps its data for the
// Ready that installs it.
func (h *Host) acceptSnapshot(gr *group, env *Envelope) bool {
	data := env.Snapshot
	switch {
	case data == nil:
		return false
	case data.Stream != nil && data.dir == nil: // streamed, and not read: never stepped so
		return false
	case data.Stream == nil && len(data.SSTs) != len(data.Spans):
		return false
	}
	index := env.Msg.GetSnapshot().GetMetadata().GetIndex()
	if gr.incoming != nil && gr.incoming.index >= index {
		// Stepped in this round already, and not older: Raft ignores this one, and the Ready
		// must find the data of the one it took.
		return false
	}
	refused, drop := h.snapshotRefused(gr.id, data)
	if refused != "" {
		h.cfg.Logger.Debug("replication: a snapshot refused", "group", gr.id, "why", refused)
		return false // Raft sends it again
	}
	for _, other := range drop {
		h.cfg.Logger.Info("replication: a replica its group's split left behind is dropped for a child's snapshot", "group", other.id, "child", gr.id)
		h.destroy(other)
	}
	h.dropIncoming(gr)
	data.index = index
	gr.incoming = data
	return true
}

// snapshotRefused says why this node cannot take a snapshot of g now ("" if it can), and which
// replicas it must drop to take it (stranded ones).
func (h *Host) snapshotRefused(g GroupID, data *SnapshotData) (why string, drop []*group) {
	if h.cfg.CanOpen != nil && !h.cfg.CanOpen(g, data.Meta) {
		return "this node cannot open it yet", nil
	}
	for _, other := range h.groups {
		if other.id == g || other.sm == nil || !overlap(data.Spans, other.sm.Spans()) {
			continue
		}
		if !h.stranded(other, g) {
			return fmt.Sprintf("it overlaps the replica of group %d", other.id), nil
		}
		drop = append(drop, other)
	}
	return "", drop
}

// overlap reports whether a span of a meets a span of b.
func overlap(a, b []storage.Span) bool {
	for _, x := range a {
		for _, y := range b {
			if bytes.Compare(x.Start, y.End) < 0 && bytes.Compare(y.Start, x.End) < 0 {
				return true
			}
		}
	}
	return false
}

// strandedTicks is how long a replica that a descendant's snapshot overlaps may apply nothing
// before it counts as stranded: far longer than a replica that lags a little takes to apply
// its group's split by itself.
const strandedTicks = 30

// stranded reports whether old, a replica that a snapshot for child overlaps, missed its
// group's split and will never apply it: child's group id is larger (a split's children have
// larger ids than their parent, so old holds an ancestor's range), and old applied nothing
// for strandedTicks ticks since such a snapshot was first refused. Once the parent's other
// replicas have split, none holds the parent's group to send old the entry that splits it
// (old was cut off, or a learner whose snapshot came from before the split), and the
// children's leaders, which count old's replica among theirs, can only bring it up to date
// with their snapshots. A snapshot of an ancestor (the smaller id) is the stale one, and is
// refused.
func (h *Host) stranded(old *group, child GroupID) bool {
	if old.id >= child {
		return false
	}
	if old.overlapped == nil || old.overlapped.applied != old.applied {
		old.overlapped = &overlapMark{tick: h.live.ticks, applied: old.applied}
		return false
	}
	return h.live.ticks-old.overlapped.tick >= strandedTicks
}

// installSnapshot replaces gr's state with the snapshot Raft handed over in a Ready.
func (h *Host) installSnapshot(gr *group, snap *pb.Snapshot) error {
	data := gr.incoming
	gr.incoming = nil
	md := snap.GetMetadata()
	index, term := md.GetIndex(), md.GetTerm()
	if data == nil || data.index != index {
		return fmt.Errorf("a snapshot without its data")
	}
	hard := proto.Clone(gr.log.hard).(*pb.HardState)
	hard.Commit = new(max(hard.GetCommit(), index))
	hv, err := proto.Marshal(hard)
	if err != nil {
		return err
	}
	rv, err := json.Marshal(replicaRecord{Replica: gr.self, Meta: data.Meta})
	if err != nil {
		return err
	}
	g := uint64(gr.id)
	raftSST, err := h.cfg.DB.BuildSST(storage.RaftGroupSpan(g), []storage.KV{
		{Key: storage.RaftKey(nil, g, storage.RaftHardState, 0), Value: hv},
		{Key: storage.RaftKey(nil, g, storage.RaftReplica, 0), Value: rv},
		{Key: storage.RaftKey(nil, g, storage.RaftTruncated, 0), Value: truncatedValue(index, term)},
	})
	if err != nil {
		return err
	}
	if gr.sm != nil {
		gr.sm.Discard()
		gr.sm = nil
	}
	if data.dir != nil {
		err = data.dir.Ingest([][]byte{raftSST})
		if rerr := data.dir.Remove(); rerr != nil {
			h.cfg.Logger.Warn("replication: removing a snapshot's files", "group", gr.id, "err", rerr)
		}
	} else {
		err = h.cfg.DB.Ingest(append(append([][]byte(nil), data.SSTs...), raftSST))
	}
	if err != nil {
		return err
	}
	// The row cache may hold items as this node last had them: a replica that was here
	// before, or this one before it fell behind.
	h.cfg.DB.Rows.Forget(data.Spans)
	gr.log.hard = hard
	gr.log.restart(index, term)
	gr.meta = data.Meta
	if err := h.openStateMachine(gr, nil); err != nil {
		return err
	}
	if gr.applied != index {
		return fmt.Errorf("the snapshot's state machine applied %d, its metadata says %d", gr.applied, index)
	}
	if gr.leading || gr.sm != nil {
		gr.sm.Leader(gr.leading, gr.term)
	}
	h.snapshotsIn.Add(1)
	h.cfg.Logger.Info("replication: snapshot installed", "group", gr.id, "index", index)
	return nil
}
