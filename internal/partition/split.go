package partition

import (
	"fmt"
	"slices"
	"time"

	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/storage"
)

// Split divides a partition in two at an EPK while the partition keeps serving. It is a
// small state machine that owns its own cleanup:
//
//	s, err := p.StartSplit(at, left, right) // snapshot, and capture of later index changes
//	if err != nil { ... }
//	defer s.Abort()                         // undoes what is not committed; no-op after Commit
//	err = s.Backfill()                      // copies the snapshot's index to the children
//	err = s.Commit(addCatalog)              // closes p; one synced batch switches to the children
//
// Documents never move: they are keyed by their container and creation sequence, and item
// keys by EPK, which the children's ranges divide. Only what is kept per physical partition,
// its creation order and its index, is copied: from a snapshot while writes go on
// (Backfill), then the changes of the commands committed since the snapshot are replayed, in
// rounds while the partition still serves (Backfill) and the last few in Commit's batch.
type Split struct {
	p           *Partition
	at          epk.EPK
	left, right uint32
	state       splitState
	// snap is the view Backfill copies; held from StartSplit until Backfill ends or Abort.
	snap *storage.Snapshot
}

type splitState uint8

const (
	splitStarted    splitState = iota // capturing; the snapshot is held
	splitBackfilled                   // the children's index holds the snapshot's entries
	splitCommitted                    // the children exist in storage; the partition is closed
	splitAborted                      // nothing of the split is left
)

// capture is the order and index changes of the commands committed during a split's
// backfill. Owned by the writer goroutine until the partition is closed.
type capture struct {
	changes []indexChange
}

type indexChange struct {
	epk      string
	seq      uint64
	new, del bool // the item was created (its order entry added) or deleted (removed)
	terms    struct{ del, add [][]byte }
}

func (c *capture) record(cmd *Command) {
	for _, ch := range cmd.Changes {
		if ch.New || ch.Delete || len(ch.IndexDel) > 0 || len(ch.IndexAdd) > 0 {
			x := indexChange{epk: ch.EPK, seq: ch.Seq, new: ch.New, del: ch.Delete}
			x.terms.del, x.terms.add = ch.IndexDel, ch.IndexAdd
			c.changes = append(c.changes, x)
		}
	}
}

// take removes and returns what the capture holds so far, on the writer.
func (p *Partition) takeCapture() ([]indexChange, error) {
	var taken []indexChange
	err := p.control(func() {
		taken, p.capture.changes = p.capture.changes, nil
	})
	return taken, err
}

// control runs fn on the writer between two groups of commands.
func (p *Partition) control(fn func()) error {
	r := &request{control: fn, done: make(chan struct{})}
	p.closeMu.RLock()
	if p.closed {
		p.closeMu.RUnlock()
		return errClosed
	}
	p.queue <- r
	p.closeMu.RUnlock()
	<-r.done
	return nil
}

// StartSplit begins splitting the partition at at into the new partitions left (EPKs below
// at) and right: it takes a snapshot between two groups of commands, so the snapshot holds
// every command committed so far, and records the index changes of every later one.
func (p *Partition) StartSplit(at epk.EPK, left, right uint32) (*Split, error) {
	if at <= p.rng.Min || at >= p.rng.Max {
		return nil, fault.New(fault.Internal, "split point %s is not inside %v", at.Hex(), p.rng)
	}
	s := &Split{p: p, at: at, left: left, right: right}
	// A split cut short by a crash (no Abort ran) leaves its children's entries behind, and
	// the next attempt reuses the child ids (they are taken only when a split commits), maybe
	// with another split point: entries left in the wrong child would list items twice.
	// Clearing the children's spans first makes every attempt start from nothing. The batch
	// precedes the backfill's in the write-ahead log, so a crash cannot keep one without the
	// other.
	b := p.db.NewBatch()
	defer b.Close()
	for _, id := range []uint32{left, right} {
		if err := deletePartitionEntries(b, p.container, id); err != nil {
			return nil, err
		}
	}
	if err := b.Commit(); err != nil {
		return nil, fault.New(fault.Unavailable, "Storage failed to commit: %v", err)
	}
	err := p.control(func() {
		p.capture = &capture{}
		s.snap = p.db.NewSnapshot()
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// The backfill writes in batches of backfillBatch bytes, paced to backfillRate bytes per
// second, so that the foreground writes keep the disk, the write-ahead log and the memtables:
// unpaced, a 1 GB split delayed a concurrent write by up to 1.9 s, and at 64 MB/s the backfill
// still held a core and writes waited up to 150 ms (docs/benchmarks.md). A partition of 1 GB of
// 1 KB items has about 170 MB of order and index entries: about 11 s at this rate.
const (
	backfillBatch = 256 << 10
	backfillRate  = 16 << 20
	// backfillChunk bounds the creation sequences held in memory at once (8 bytes each): a
	// larger partition's index is read once per chunk.
	backfillChunk = 1 << 20
	// catchUpDone is how many captured changes are left for Commit's batch, which writes stop
	// for; Backfill replays the rest in rounds while the partition serves.
	catchUpDone = 512
	// catchUpRounds bounds the rounds, should writes keep pace with the replay.
	catchUpRounds = 16
)

// Backfill copies the snapshot's order and index entries of the partition to the children,
// then replays the changes committed since, in rounds, until few are left for Commit. Its
// batches are not synced: Commit's synced batch makes them durable with the rest of the split.
// The partition serves reads and writes meanwhile.
func (s *Split) Backfill() error {
	if s.state != splitStarted {
		return fault.New(fault.Internal, "split backfill in state %d", s.state)
	}
	w := &pacedWriter{db: s.p.db, start: time.Now()}
	err := s.backfill(w)
	s.snap.Close()
	s.snap = nil
	for round := 0; err == nil && round < catchUpRounds; round++ {
		var taken []indexChange
		if taken, err = s.p.takeCapture(); err != nil {
			break
		}
		err = s.replay(w, taken)
		if len(taken) < catchUpDone {
			break
		}
	}
	if err == nil {
		err = w.flush()
	}
	w.close()
	if err != nil {
		return fmt.Errorf("split of partition %d: backfill: %w", s.p.id, err)
	}
	s.state = splitBackfilled
	return nil
}

// entryWriter is where a split writes the children's entries.
type entryWriter interface {
	set(key, value []byte) error
	delete(key []byte) error
}

// batchWriter writes into one batch.
type batchWriter struct{ b *storage.Batch }

func (w batchWriter) set(key, value []byte) error { return w.b.Set(key, value) }
func (w batchWriter) delete(key []byte) error     { return w.b.Delete(key) }

// pacedWriter writes unsynced batches at no more than backfillRate bytes per second.
type pacedWriter struct {
	db      *storage.DB
	b       *storage.Batch
	pending int
	written int64
	start   time.Time
}

func (w *pacedWriter) set(key []byte, value []byte) error {
	if w.b == nil {
		w.b = w.db.NewBatch()
	}
	w.pending += len(key) + len(value)
	if err := w.b.Set(key, value); err != nil {
		return err
	}
	return w.maybeFlush()
}

func (w *pacedWriter) delete(key []byte) error {
	if w.b == nil {
		w.b = w.db.NewBatch()
	}
	w.pending += len(key)
	if err := w.b.Delete(key); err != nil {
		return err
	}
	return w.maybeFlush()
}

func (w *pacedWriter) maybeFlush() error {
	if w.pending < backfillBatch {
		return nil
	}
	if err := w.flush(); err != nil {
		return err
	}
	if ahead := time.Duration(w.written)*time.Second/backfillRate - time.Since(w.start); ahead > 0 {
		time.Sleep(ahead)
	}
	return nil
}

func (w *pacedWriter) flush() error {
	if w.b == nil {
		return nil
	}
	err := w.b.CommitUnsynced()
	w.b.Close()
	w.b, w.written, w.pending = nil, w.written+int64(w.pending), 0
	return err
}

func (w *pacedWriter) close() {
	if w.b != nil {
		w.b.Close()
		w.b = nil
	}
}

// backfill copies the snapshot's order entries, and with them learns which child each
// creation sequence goes to, then its index entries, a chunk of sequences at a time.
func (s *Split) backfill(w *pacedWriter) error {
	p := s.p
	ostart, oend := storage.OrderPartitionSpan(p.container, p.id)
	for {
		left, right, next, done, err := s.copyOrder(w, ostart, oend)
		if err != nil {
			return err
		}
		if len(left)+len(right) > 0 {
			if err := s.copyIndex(w, left, right); err != nil {
				return err
			}
		}
		if done {
			return nil
		}
		ostart = next
	}
}

// copyOrder copies up to backfillChunk order entries from start and returns the sequences
// each child got (ascending), and where the next chunk starts.
func (s *Split) copyOrder(w *pacedWriter, start, end []byte) (left, right []uint64, next []byte, done bool, err error) {
	it, err := s.snap.NewIter(start, end)
	if err != nil {
		return nil, nil, nil, false, err
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		if len(left)+len(right) == backfillChunk {
			return left, right, append([]byte(nil), it.Key()...), false, nil
		}
		seq, err := storage.SeqOf(it.Key())
		if err != nil {
			return nil, nil, nil, false, err
		}
		child := s.child(epk.EPK(it.Value()))
		if child == s.left {
			left = append(left, seq)
		} else {
			right = append(right, seq)
		}
		if err := w.set(storage.IndexKeyForPartition(it.Key(), child), it.Value()); err != nil {
			return nil, nil, nil, false, err
		}
	}
	return left, right, nil, true, it.Error()
}

// copyIndex copies the snapshot's index entries of the items in left and right.
func (s *Split) copyIndex(w *pacedWriter, left, right []uint64) error {
	p := s.p
	start, end := storage.IndexPartitionSpan(p.container, p.id)
	it, err := s.snap.NewIter(start, end)
	if err != nil {
		return err
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		seq, err := storage.SeqOf(it.Key())
		if err != nil {
			return err
		}
		child := s.left
		if _, found := slices.BinarySearch(left, seq); !found {
			if _, found := slices.BinarySearch(right, seq); !found {
				continue // another chunk's
			}
			child = s.right
		}
		if err := w.set(storage.IndexKeyForPartition(it.Key(), child), nil); err != nil {
			return err
		}
	}
	return it.Error()
}

// replay applies captured changes to the children's order and index.
func (s *Split) replay(w entryWriter, changes []indexChange) error {
	p := s.p
	var key []byte
	for _, ch := range changes {
		child := s.child(epk.EPK(ch.epk))
		var err error
		switch {
		case ch.del:
			err = w.delete(storage.OrderKey(key[:0], p.container, child, ch.seq))
		case ch.new:
			err = w.set(storage.OrderKey(key[:0], p.container, child, ch.seq), []byte(ch.epk))
		}
		if err != nil {
			return err
		}
		for _, t := range ch.terms.del {
			if err := w.delete(storage.IndexKey(key[:0], p.container, child, t, ch.seq)); err != nil {
				return err
			}
		}
		for _, t := range ch.terms.add {
			if err := w.set(storage.IndexKey(key[:0], p.container, child, t, ch.seq), nil); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *Split) child(e epk.EPK) uint32 {
	if e < s.at {
		return s.left
	}
	return s.right
}

// Commit ends the split. It closes the partition, whose writer first finishes every queued
// command; the caller must have stopped new requests from reaching it. Then one synced batch
// replays the index changes captured since the snapshot onto the children, writes the
// children's state (the LSN carries on in both), removes the parent's index and state, and
// holds whatever with adds to it (the catalog's record of the new ranges). After Commit the
// partition serves no more writes, whether it succeeded or not: on failure the split is
// aborted and the caller reopens the container's partitions from its catalog.
func (s *Split) Commit(with func(*storage.Batch) error) error {
	if s.state != splitBackfilled {
		return fault.New(fault.Internal, "split commit in state %d", s.state)
	}
	p := s.p
	p.Close()
	b := p.db.NewBatch()
	defer b.Close()
	err := s.finish(b)
	if err == nil && with != nil {
		err = with(b)
	}
	if err == nil {
		err = b.Commit()
	}
	if err != nil {
		s.Abort()
		return fmt.Errorf("split of partition %d: %w", p.id, err)
	}
	s.state = splitCommitted
	return nil
}

// finish adds the switch to the children to b. The partition is closed, so its capture is
// complete and no longer changes.
func (s *Split) finish(b *storage.Batch) error {
	p := s.p
	if err := s.replay(batchWriter{b}, p.capture.changes); err != nil {
		return err
	}
	st := *p.published.Load()
	for _, ch := range []Child{{s.left, epk.Range{Min: p.rng.Min, Max: s.at}}, {s.right, epk.Range{Min: s.at, Max: p.rng.Max}}} {
		c, err := p.sumLogical(ch.Range)
		if err != nil {
			return err
		}
		if err := b.Set(storage.PartitionKey(p.container, ch.ID), encodeState(nil, state{LSN: st.LSN, counts: c, Seq: st.Seq})); err != nil {
			return err
		}
		// The children's index is a copy of the parent's, so a rebuild in flight goes on in them.
		if err := p.inheritIndexState(b, ch.ID, c.Items, st.Items); err != nil {
			return err
		}
	}
	if err := deletePartitionEntries(b, p.container, p.id); err != nil {
		return err
	}
	return b.Delete(storage.PartitionKey(p.container, p.id))
}

// Abort abandons a split that is not committed: it stops the capture, releases the snapshot
// and removes what the backfill wrote for the children. It may be called in any state, more
// than once; after Commit succeeded it does nothing. The partition itself goes on serving
// unless Commit already closed it.
func (s *Split) Abort() error {
	if s.state == splitCommitted || s.state == splitAborted {
		return nil
	}
	s.state = splitAborted
	if s.snap != nil {
		s.snap.Close()
		s.snap = nil
	}
	p := s.p
	if err := p.control(func() { p.capture = nil }); err != nil {
		<-p.stopped // closing: once the writer has drained its queue, nothing else reads capture
		p.capture = nil
	}
	b := p.db.NewBatch()
	defer b.Close()
	for _, id := range []uint32{s.left, s.right} {
		if err := deletePartitionEntries(b, p.container, id); err != nil {
			return err
		}
	}
	return b.Commit()
}

// deletePartitionEntries adds to b the removal of a partition's creation order and index,
// with the record of an index rebuild in flight.
func deletePartitionEntries(b *storage.Batch, container, id uint32) error {
	start, end := storage.OrderPartitionSpan(container, id)
	if err := b.DeleteRange(start, end); err != nil {
		return err
	}
	if err := b.Delete(storage.ReindexKey(container, id)); err != nil {
		return err
	}
	start, end = storage.IndexPartitionSpan(container, id)
	return b.DeleteRange(start, end)
}

// Child describes one of the two partitions a split makes.
type Child struct {
	ID    uint32
	Range epk.Range
}

// SplitPoint is the EPK that best halves the partition's bytes without cutting a logical
// partition: the start of the first logical partition past the middle. ok is false when the
// partition holds fewer than two logical partitions.
func (p *Partition) SplitPoint() (at epk.EPK, ok bool, err error) {
	lo, hi := storage.LogicalSpan(p.container, string(p.rng.Min), string(p.rng.Max))
	it, err := p.db.NewIter(lo, hi)
	if err != nil {
		return "", false, err
	}
	defer it.Close()
	type lp struct {
		e     epk.EPK
		bytes int64
	}
	var lps []lp
	var total int64
	for it.First(); it.Valid(); it.Next() {
		e, err := storage.ParseLogicalKey(it.Key())
		if err != nil {
			return "", false, err
		}
		c, _, err := decodeCounts(it.Value())
		if err != nil {
			return "", false, err
		}
		lps = append(lps, lp{epk.EPK(e), c.Bytes})
		total += c.Bytes
	}
	if err := it.Error(); err != nil || len(lps) < 2 {
		return "", false, err
	}
	var sum int64
	for i := 0; i < len(lps)-1; i++ {
		sum += lps[i].bytes
		if 2*sum >= total {
			return lps[i+1].e, true, nil
		}
	}
	return lps[len(lps)-1].e, true, nil
}

// sumLogical totals the logical partitions within r.
func (p *Partition) sumLogical(r epk.Range) (counts, error) {
	lo, hi := storage.LogicalSpan(p.container, string(r.Min), string(r.Max))
	it, err := p.db.NewIter(lo, hi)
	if err != nil {
		return counts{}, err
	}
	defer it.Close()
	var total counts
	for it.First(); it.Valid(); it.Next() {
		c, _, err := decodeCounts(it.Value())
		if err != nil {
			return counts{}, err
		}
		total = total.add(c.Items, c.Bytes)
	}
	return total, it.Error()
}
