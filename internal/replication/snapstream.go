package replication

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"go.etcd.io/raft/v3"

	"github.com/partita-db/partita/internal/storage"
)

// Streamed snapshots. A snapshot sent inline is built whole in memory on the sender and
// reassembled whole on the receiver, and its envelope holds up every other envelope between
// the two nodes while it travels: a large replica costs its size in memory on both sides.
// When the transport streams snapshots to the receiving node (SnapshotStreamer), the sender
// instead writes the sstables from the Pebble snapshot as it iterates, an sstable ending at
// streamedSSTBytes, and the transport sends their bytes in chunks on a stream of their own
// (with the stream's flow control as backpressure: iteration waits while the receiver is
// behind). The MsgSnap is the stream's header, so the receiver can refuse before any data:
// it checks the snapshot as acceptSnapshot will, then appends the chunks to files of an
// SSTDir in its store. Once the last arrived, the host steps the MsgSnap with the files in
// its SnapshotData, and installs it as any snapshot (one atomic ingestion, with the Raft
// state's sstable), so nothing is half-applied whatever breaks.
//
// The sender reports the snapshot to Raft as finished once the receiver answers that it
// stepped it, and as failed otherwise (the stream broke, either node stopped, the receiver
// refused it), so that Raft sends it again later. The receiver removes the files of a
// snapshot that failed, that Raft did not take, or that was replaced; a store's leftovers
// from a process that stopped meanwhile are removed when a host opens it (New).

// streamedSSTBytes is about the most a streamed snapshot's sstable holds: the sender's sstable
// writer keeps one sstable's index and bloom filter in memory until the sstable ends (some
// hundreds of kilobytes at this size), while smaller sstables would only make more files.
const streamedSSTBytes = 32 << 20

// errSnapshotRefused is what the sender of a streamed snapshot hears when the receiving host
// did not take it (not yet openable, overlapping, stale, for a replica it no longer holds).
var errSnapshotRefused = errors.New("replication: the receiver did not take the snapshot")

// streamSnapshot sends a MsgSnap's snapshot on a stream of its own, off the host's goroutine;
// Raft learns the outcome once the receiver answers, or the stream fails. snap is the Pebble
// snapshot the MsgSnap's metadata describes; it is closed once the sstables are written.
func (h *Host) streamSnapshot(st SnapshotStreamer, gr *group, env *Envelope, snap *storage.Snapshot) {
	spans, g, to := gr.sm.Spans(), gr.id, uint64(env.To.Replica)
	env.Snapshot = &SnapshotData{Meta: gr.meta, Spans: spans}
	h.sending.Add(1)
	go func() {
		defer h.sending.Done()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() { // the host closing ends the stream
			select {
			case <-h.gone:
				cancel()
			case <-ctx.Done():
			}
		}()
		start := time.Now()
		var (
			bytes int64
			ssts  int
		)
		err := st.StreamSnapshot(ctx, env, func(next func() (io.Writer, error)) error {
			counted := func() (io.Writer, error) {
				w, err := next()
				ssts++
				return countingWriter{w, &bytes}, err
			}
			for _, s := range spans {
				if err := snap.WriteSpanSSTs(h.cfg.DB, s, streamedSSTBytes, counted); err != nil {
					return err
				}
			}
			return nil
		})
		snap.Close()
		status := raft.SnapshotFinish
		if err != nil {
			status = raft.SnapshotFailure
			h.cfg.Logger.Info("replication: streaming a snapshot failed; Raft sends it again later", "group", g, "to", env.To.Node,
				"err", err)
		} else {
			h.snapshotsSent.Add(1)
			h.cfg.Logger.Info("replication: snapshot streamed", "group", g, "to", env.To.Node, "bytes", bytes, "sstables", ssts,
				"took", time.Since(start).Round(time.Millisecond))
		}
		h.enqueue(func() {
			if gr := h.groups[g]; gr != nil {
				gr.rn.ReportSnapshot(to, status)
				h.dirty[g] = true
			}
		})
	}()
}

// countingWriter adds to n what it writes.
type countingWriter struct {
	w io.Writer
	n *int64
}

func (c countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	*c.n += int64(n)
	return n, err
}

// deliverStreamed takes a streamed snapshot's envelope from the transport: the host checks it,
// reads its sstables into files off its goroutine, then steps it. The stream is told the
// outcome (SnapshotStream.Done) whatever happens, even if the host closed.
func (h *Host) deliverStreamed(env *Envelope) {
	st := env.Snapshot.Stream
	err := h.enqueue(func() {
		if err := h.admitStreamed(env); err != nil {
			st.Done(err)
			return
		}
		go h.download(env)
	})
	if err != nil {
		st.Done(err)
	}
}

// admitStreamed says whether the host would take a streamed snapshot now, before any of its
// data comes: what receive and acceptSnapshot would refuse is refused here, without their
// effects (a replica created, another dropped), which wait for the data.
func (h *Host) admitStreamed(env *Envelope) error {
	if env.To.Node != h.self.Node || env.To.Store != h.self.Store || env.Msg == nil {
		return fmt.Errorf("%w: for another life of this node's store", errSnapshotRefused)
	}
	index := env.Msg.GetSnapshot().GetMetadata().GetIndex()
	gr := h.groups[env.Group]
	switch {
	case gr == nil && (!createsReplica(env) || uint64(env.To.Replica) < h.tombstone(env.Group)):
		return fmt.Errorf("%w: for a replica this node will not hold", errSnapshotRefused)
	case gr != nil && gr.self > env.To.Replica:
		return fmt.Errorf("%w: for a replica this node no longer holds", errSnapshotRefused)
	case gr != nil && gr.self == env.To.Replica && index <= gr.rn.BasicStatus().GetCommit():
		return fmt.Errorf("%w: the replica has index %d already", errSnapshotRefused, index)
	}
	if why, _ := h.snapshotRefused(env.Group, env.Snapshot); why != "" {
		return fmt.Errorf("%w: %s", errSnapshotRefused, why)
	}
	return nil
}

// download reads a streamed snapshot's sstables into a new SSTDir, then steps its MsgSnap on
// the host's goroutine. On any failure the files go, and the stream hears why.
func (h *Host) download(env *Envelope) {
	st := env.Snapshot.Stream
	dir, err := h.cfg.DB.NewSSTDir()
	if err == nil {
		err = h.readSSTs(st, dir, len(env.Snapshot.Spans))
	}
	if err == nil {
		err = h.enqueue(func() {
			env.Snapshot.dir = dir
			h.receive(env)
			if gr := h.groups[env.Group]; gr != nil && gr.incoming == env.Snapshot {
				st.Done(nil) // installed at the next Ready, or dropped if Raft did not take it
				return
			}
			dir.Remove()
			st.Done(errSnapshotRefused)
		})
	}
	if err != nil {
		if dir != nil {
			dir.Remove()
		}
		h.cfg.Logger.Info("replication: receiving a streamed snapshot failed", "group", env.Group, "from", env.From.Node, "err", err)
		st.Done(err)
	}
}

// readSSTs appends what st yields to the files of dir, an sstable to a file, and syncs them;
// a snapshot of spans has at least one sstable per span.
func (h *Host) readSSTs(st SnapshotStream, dir *storage.SSTDir, spans int) (err error) {
	var f io.WriteCloser
	defer func() {
		if f != nil {
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
	}()
	for {
		select {
		case <-h.gone:
			return errStopped
		default:
		}
		p, first, err := st.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if first {
			if f != nil {
				err, f = f.Close(), nil
				if err != nil {
					return err
				}
			}
			if f, err = dir.Create(); err != nil {
				return err
			}
		}
		if f == nil {
			return errors.New("replication: a streamed snapshot's bytes before its first sstable")
		}
		if _, err := f.Write(p); err != nil {
			return err
		}
	}
	if dir.Files() < spans {
		return fmt.Errorf("replication: a streamed snapshot of %d spans in %d sstables", spans, dir.Files())
	}
	return nil
}
