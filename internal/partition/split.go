package partition

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/storage"
)

// Split divides a partition in two at an EPK while the partition keeps serving. It is three
// entries of the partition's log, so that every replica splits at the same place in it:
//
//	s, err := p.StartSplit(at, left, right) // split-start: each replica builds the children
//	if err != nil { ... }
//	defer s.Abort()                         // split-abort unless committed; a no-op after Commit
//	err = s.Backfill()                      // waits for this replica's build
//	err = s.Commit(with)                    // split-commit: the children own the items
//
// Items never move: documents, item keys, the log, logical partition statistics and unique
// key entries are keyed by EPK, which the children's ranges divide. Only what is kept per
// physical partition is built for the children: its creation order, its index and its changes
// (the log in LSN order). That is derived data, the same on every replica, so each replica
// builds it itself when it applies split-start (never shipped): it copies the entries of a
// snapshot taken there to the child that owns each one, while it records (captures) what every
// later entry changes in them, and replays the capture onto the children, in rounds while the
// partition serves and the last few in split-commit's batch. split-commit then writes the
// children's state records, drops the parent's own entries, and closes the parent: every
// later entry to it is refused, and its callers retry on the child that owns their key.
type Split struct {
	p           *Partition
	at          epk.EPK
	left, right uint32
	state       splitState
}

type splitState uint8

const (
	splitStarted   splitState = iota // split-start applied: the children are being built
	splitCommitted                   // the children own the items; the partition is closed
	splitAborted                     // nothing of the split is left
)

// splitter is a replica's part in a split: the build of the children's entries, and the
// capture of what the entries applied since its snapshot change in them.
type splitter struct {
	mu   sync.Mutex
	plan *splitPlan // nil when no split is in flight
	// captured are the entries applied since the build's snapshot (*Command, *reindexStep,
	// *purgeStep, or dropIndex), in order, until the build or the commit replays them.
	captured []any
	// stop asks the build to end early; done is closed when it has, with err its outcome.
	stop chan struct{}
	done chan struct{}
	err  error
	// with is the proposer's addition to split-commit's batch (the engine's catalog record),
	// on a single node only; nil elsewhere.
	with func(*storage.Batch) error
}

// dropIndex is captured when a policy that indexes nothing drops the index.
type dropIndex struct{}

// capture records x for the build in flight, if any.
func (p *Partition) capture(x any) {
	s := &p.split
	s.mu.Lock()
	if s.plan != nil {
		s.captured = append(s.captured, x)
	}
	s.mu.Unlock()
}

// captureCommand records a command's changes to the order, index and changes, if a build runs.
func (p *Partition) captureCommand(c *Command) { p.capture(c) }

// takeCaptured removes and returns what the capture holds so far.
func (p *Partition) takeCaptured() []any {
	s := &p.split
	s.mu.Lock()
	defer s.mu.Unlock()
	taken := s.captured
	s.captured = nil
	return taken
}

// ErrSplitting is why a split is refused (a Conflict) while another split of the partition is in
// flight. In a cluster that may be one its former leader started and left when it lost the
// leadership; the new leader aborts it (the engine's abortOrphanSplits), and the split asked for
// can be tried again.
var ErrSplitting = errors.New("a split is in flight already")

// StartSplit begins splitting the partition at at into the new partitions left (EPKs below
// at) and right, whose ids must be larger than the partition's (creation sequences grow with
// ids). It returns once split-start is applied on this replica, whose build then runs.
func (p *Partition) StartSplit(at epk.EPK, left, right uint32) (*Split, error) {
	if at <= p.rng.Min || at >= p.rng.Max {
		return nil, fault.New(fault.Internal, "split point %s is not inside %v", at.Hex(), p.rng)
	}
	if left <= p.id || right <= p.id || left == right || max(left, right) > MaxID {
		return nil, fault.New(fault.Internal, "partition %d cannot split into %d and %d", p.id, left, right)
	}
	plan := &splitPlan{At: at, Left: left, Right: right}
	err := p.propose(func(st state, _ *indexState) (*entry, error) {
		switch {
		case st.Split == nil:
			return &entry{kind: entrySplitStart, split: plan, sync: true}, nil
		case *st.Split == *plan:
			return nil, nil // in flight already (a restart resumed it): go on with it
		}
		return nil, fault.New(fault.Conflict, "partition %d: %w at %s", p.id, ErrSplitting, st.Split.At.Hex())
	})
	if err != nil {
		return nil, err
	}
	return &Split{p: p, at: at, left: left, right: right}, nil
}

// stageSplitStart records the split in the state; the build starts once the batch commits.
func (a *applyBatch) stageSplitStart(plan *splitPlan) error {
	if a.st.Split != nil {
		return refuse(fault.New(fault.Conflict, "partition %d: %w", a.p.id, ErrSplitting))
	}
	a.st.Split = plan
	p := a.p
	a.effects = append(a.effects, func() { p.startBuild(plan) })
	return nil
}

// resumeSplit restarts the build of a split that was in flight when the partition was last
// closed: whatever it had built is dropped and built again.
func (p *Partition) resumeSplit(plan *splitPlan) { p.startBuild(plan) }

// startBuild starts building the children of plan, on the goroutine that applies entries:
// the capture starts before the next entry is applied, and the snapshot holds every entry
// applied so far (entries of the same batch after split-start are also captured, and
// replaying them again is harmless: the replay sets and deletes keys in order).
func (p *Partition) startBuild(plan *splitPlan) {
	s := &p.split
	s.mu.Lock()
	s.plan, s.captured, s.err = plan, nil, nil
	s.stop, s.done = make(chan struct{}), make(chan struct{})
	s.mu.Unlock()
	snap := p.db.NewSnapshot()
	go func() {
		defer close(s.done)
		defer snap.Close()
		err := p.build(plan, snap, s.stop)
		s.mu.Lock()
		s.err = err
		s.mu.Unlock()
	}()
}

// stopBuild ends the build in flight, if any, and waits for it.
func (p *Partition) stopBuild() {
	s := &p.split
	s.mu.Lock()
	stop, done := s.stop, s.done
	if stop != nil {
		select { // closed under the lock: Close and split-abort may both stop it
		case <-stop:
		default:
			close(stop)
		}
	}
	s.mu.Unlock()
	if stop != nil {
		<-done
	}
}

// The build writes in batches of backfillBatch bytes, paced to backfillRate bytes per
// second, so that the foreground writes keep the disk, the write-ahead log and the memtables:
// unpaced, a 1 GB split delayed a concurrent write by up to 1.9 s, and at 64 MB/s the build
// still held a core and writes waited up to 150 ms (docs/benchmarks.md). A partition of 1 GB of
// 1 KB items has about 170 MB of order and index entries: about 11 s at this rate.
const (
	backfillBatch = 256 << 10
	backfillRate  = 16 << 20
	// backfillChunk bounds the creation sequences held in memory at once (8 bytes each): a
	// larger partition's index is read once per chunk.
	backfillChunk = 1 << 20
	// catchUpDone is how many captured entries are left for split-commit's batch, which the
	// partition's writes wait for; the build replays the rest in rounds while it serves.
	catchUpDone = 512
	// catchUpRounds bounds the rounds, should writes keep pace with the replay.
	catchUpRounds = 16
)

// errBuildStopped ends a build that was asked to stop.
var errBuildStopped = errors.New("partition: split build stopped")

// build clears the children's entries, copies the snapshot's to them, then replays what was
// captured since, in rounds, until few are left for split-commit. Its batches are not synced:
// split-commit's batch follows them in the write-ahead log, so a crash keeps them whenever it
// keeps the commit.
func (p *Partition) build(plan *splitPlan, snap *storage.Snapshot, stop <-chan struct{}) error {
	w := &pacedWriter{db: p.db, start: time.Now(), stop: stop}
	defer w.close()
	s := &childWriter{p: p, plan: plan, w: w}
	for _, id := range []uint32{plan.Left, plan.Right} {
		for _, span := range storage.PartitionOwnSpans(p.container, id) {
			if err := w.deleteRange(span.Start, span.End); err != nil {
				return err
			}
		}
	}
	err := s.copySnapshot(snap)
	for round := 0; err == nil && round < catchUpRounds; round++ {
		taken := p.takeCaptured()
		err = s.replay(taken)
		if len(taken) < catchUpDone {
			break
		}
	}
	if err == nil {
		err = w.flush()
	}
	if err != nil {
		return fmt.Errorf("split of partition %d: build: %w", p.id, err)
	}
	return nil
}

// Backfill waits until this replica has built the children's entries, then replays what was
// captured meanwhile, in rounds, leaving the last few entries to split-commit. The partition
// serves reads and writes meanwhile.
func (s *Split) Backfill() error {
	if s.state != splitStarted {
		return fault.New(fault.Internal, "split backfill in state %d", s.state)
	}
	p := s.p
	sp := &p.split
	sp.mu.Lock()
	done, plan := sp.done, sp.plan
	sp.mu.Unlock()
	if done == nil {
		return fault.New(fault.Internal, "partition %d: no split build runs", p.id)
	}
	<-done
	sp.mu.Lock()
	err := sp.err
	sp.mu.Unlock()
	if err != nil {
		return err
	}
	w := &pacedWriter{db: p.db, start: time.Now()}
	defer w.close()
	cw := &childWriter{p: p, plan: plan, w: w}
	for round := 0; round < catchUpRounds; round++ {
		taken := p.takeCaptured()
		if err := cw.replay(taken); err != nil {
			return err
		}
		if len(taken) < catchUpDone {
			break
		}
	}
	return w.flush()
}

// Commit ends the split: the writer finishes every queued command, then split-commit replays
// what was captured since the build onto the children, writes the children's state (the LSN
// carries on in both), removes the parent's own entries, and adds whatever with adds to the
// batch (the catalog's record of the new ranges). The caller must have stopped new requests
// from reaching the partition. After Commit the partition serves no more writes; on failure
// the split is aborted and the partition goes on serving.
func (s *Split) Commit(with func(*storage.Batch) error) error {
	if s.state != splitStarted {
		return fault.New(fault.Internal, "split commit in state %d", s.state)
	}
	p := s.p
	err := p.propose(func(st state, _ *indexState) (*entry, error) {
		if st.Split == nil || st.Split.At != s.at || st.Split.Left != s.left || st.Split.Right != s.right {
			return nil, fault.New(fault.Conflict, "partition %d: the split to commit is not the one in flight", p.id)
		}
		p.split.mu.Lock()
		p.split.with = with
		p.split.mu.Unlock()
		return &entry{kind: entrySplitCommit, sync: true}, nil
	})
	if err != nil {
		s.Abort()
		return fmt.Errorf("split of partition %d: %w", p.id, err)
	}
	s.state = splitCommitted
	return nil
}

// stageSplitCommit writes the switch to the children. It stands alone in its batch (see
// aloneInBatch), so the logical partition statistics it sums are those of every entry before it.
func (a *applyBatch) stageSplitCommit() error {
	p := a.p
	plan := a.st.Split
	if plan == nil {
		return refuse(fault.New(fault.Conflict, "partition %d has no split in flight to commit", p.id))
	}
	s := &p.split
	s.mu.Lock()
	done, with := s.done, s.with
	s.with = nil
	s.mu.Unlock()
	if done == nil {
		return fault.New(fault.Internal, "partition %d: no split build runs", p.id)
	}
	<-done // the build of a replica that lags behind is finished here
	s.mu.Lock()
	err := s.err
	s.plan = nil // nothing more is captured: the partition applies nothing after this
	taken := s.captured
	s.captured = nil
	s.mu.Unlock()
	if err != nil {
		return err // this replica cannot build the children: it stops applying (Partition.fail)
	}
	cw := &childWriter{p: p, plan: plan, w: batchWriter{a.b}}
	if err := cw.replay(taken); err != nil {
		return err
	}
	a.dropCounts() // the parent's index is deleted below
	children := plan.children(p.rng)
	for _, ch := range children {
		c, err := p.sumLogical(ch.Range)
		if err != nil {
			return err
		}
		cst := state{LSN: a.st.LSN, counts: c, Seq: a.st.Seq, Purged: a.st.Purged, Group: a.st.Group}
		if err := a.b.Set(storage.PartitionKey(p.container, ch.ID), encodeState(nil, cst)); err != nil {
			return err
		}
		// The children's index is a copy of the parent's, so a rebuild in flight goes on in them.
		if err := a.ix.inherit(a.b, p.container, ch.ID, c.Items, a.st.Items); err != nil {
			return err
		}
	}
	for _, span := range storage.PartitionOwnSpans(p.container, p.id) {
		if err := a.b.DeleteRange(span.Start, span.End); err != nil {
			return err
		}
	}
	if p.onSplit != nil {
		if err := p.onSplit(a.b, children); err != nil {
			return err
		}
	}
	if with != nil {
		if err := with(a.b); err != nil {
			return err
		}
	}
	a.st.Split, a.st.Closed = nil, true
	return nil
}

// children are the two partitions plan makes of the range r.
func (plan *splitPlan) children(r epk.Range) [2]Child {
	return [2]Child{{plan.Left, epk.Range{Min: r.Min, Max: plan.At}}, {plan.Right, epk.Range{Min: plan.At, Max: r.Max}}}
}

// Abort abandons a split that is not committed: split-abort stops the build and removes what
// it wrote for the children. It may be called in any state, more than once; after Commit
// succeeded it does nothing. The partition itself goes on serving.
func (s *Split) Abort() error {
	if s.state != splitStarted {
		return nil
	}
	s.state = splitAborted
	return s.p.abortSplit()
}

// abortSplit commits split-abort, when a split is in flight. A closed partition is left as it
// is: it resumes the split when it opens again, and its opener decides.
func (p *Partition) abortSplit() error {
	err := p.propose(func(st state, _ *indexState) (*entry, error) {
		if st.Split == nil {
			return nil, nil
		}
		return &entry{kind: entrySplitAbort, sync: true}, nil
	})
	if err == errClosed {
		return nil
	}
	return err
}

// SplitInFlight reports the split started and neither committed nor aborted, if any: a restart
// leaves one when it came in the middle of a split.
func (p *Partition) SplitInFlight() (at epk.EPK, left, right uint32, ok bool) {
	st := p.published.Load()
	if st.Split == nil {
		return "", 0, 0, false
	}
	return st.Split.At, st.Split.Left, st.Split.Right, true
}

// AbortSplit abandons the split in flight, if any (see SplitInFlight).
func (p *Partition) AbortSplit() error { return p.abortSplit() }

// stageSplitAbort stops the build and removes the children's entries.
func (a *applyBatch) stageSplitAbort() error {
	plan := a.st.Split
	if plan == nil {
		return nil
	}
	p := a.p
	p.stopBuild()
	s := &p.split
	s.mu.Lock()
	s.plan, s.captured, s.stop, s.done, s.with = nil, nil, nil, nil, nil
	s.mu.Unlock()
	for _, id := range []uint32{plan.Left, plan.Right} {
		for _, span := range storage.PartitionOwnSpans(p.container, id) {
			if err := a.b.DeleteRange(span.Start, span.End); err != nil {
				return err
			}
		}
	}
	a.st.Split = nil
	return nil
}

// entryWriter is where a split writes the children's entries.
type entryWriter interface {
	set(key, value []byte) error
	delete(key []byte) error
	deleteRange(start, end []byte) error
}

// batchWriter writes into one batch.
type batchWriter struct{ b *storage.Batch }

func (w batchWriter) set(key, value []byte) error         { return w.b.Set(key, value) }
func (w batchWriter) delete(key []byte) error             { return w.b.Delete(key) }
func (w batchWriter) deleteRange(start, end []byte) error { return w.b.DeleteRange(start, end) }

// pacedWriter writes unsynced batches at no more than backfillRate bytes per second, until
// stop is closed.
type pacedWriter struct {
	db      *storage.DB
	b       *storage.Batch
	pending int
	written int64
	start   time.Time
	stop    <-chan struct{}
}

func (w *pacedWriter) batch() *storage.Batch {
	if w.b == nil {
		w.b = w.db.NewBatch()
	}
	return w.b
}

func (w *pacedWriter) set(key []byte, value []byte) error {
	w.pending += len(key) + len(value)
	if err := w.batch().Set(key, value); err != nil {
		return err
	}
	return w.maybeFlush()
}

func (w *pacedWriter) delete(key []byte) error {
	w.pending += len(key)
	if err := w.batch().Delete(key); err != nil {
		return err
	}
	return w.maybeFlush()
}

func (w *pacedWriter) deleteRange(start, end []byte) error {
	w.pending += len(start) + len(end)
	if err := w.batch().DeleteRange(start, end); err != nil {
		return err
	}
	return w.maybeFlush()
}

func (w *pacedWriter) maybeFlush() error {
	select {
	case <-w.stop:
		return errBuildStopped
	default:
	}
	if w.pending < backfillBatch {
		return nil
	}
	if err := w.flush(); err != nil {
		return err
	}
	if ahead := time.Duration(w.written)*time.Second/backfillRate - time.Since(w.start); ahead > 0 {
		select {
		case <-time.After(ahead):
		case <-w.stop:
			return errBuildStopped
		}
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

// childWriter writes a split's entries to the child that owns each.
type childWriter struct {
	p    *Partition
	plan *splitPlan
	w    entryWriter
	key  []byte
}

func (s *childWriter) child(e epk.EPK) uint32 {
	if e < s.plan.At {
		return s.plan.Left
	}
	return s.plan.Right
}

// copySnapshot copies the snapshot's log entries, then its order entries, learning from them
// which child each creation sequence goes to, then its index entries, a chunk of sequences at a
// time.
func (s *childWriter) copySnapshot(snap *storage.Snapshot) error {
	p := s.p
	lstart, lend := storage.LogSpan(p.container, p.id, 0)
	if err := s.copyLog(snap, lstart, lend); err != nil {
		return err
	}
	ostart, oend := storage.OrderPartitionSpan(p.container, p.id)
	for {
		left, right, next, done, err := s.copyOrder(snap, ostart, oend)
		if err != nil {
			return err
		}
		if len(left)+len(right) > 0 {
			if err := s.copyIndex(snap, left, right); err != nil {
				return err
			}
		}
		if done {
			return nil
		}
		ostart = next
	}
}

// copyLog copies every log entry of [start, end) to the child that owns its item's EPK.
func (s *childWriter) copyLog(snap *storage.Snapshot, start, end []byte) error {
	it, err := snap.NewIter(start, end)
	if err != nil {
		return err
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		e, err := decodeEntry(it.Value())
		if err != nil {
			return err
		}
		if err := s.w.set(storage.ForPartition(it.Key(), s.child(epk.EPK(e.epk))), it.Value()); err != nil {
			return err
		}
	}
	return it.Error()
}

// copyOrder copies up to backfillChunk order entries from start and returns the sequences
// each child got (ascending), and where the next chunk starts.
func (s *childWriter) copyOrder(snap *storage.Snapshot, start, end []byte) (left, right []uint64, next []byte, done bool, err error) {
	it, err := snap.NewIter(start, end)
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
		if child == s.plan.Left {
			left = append(left, seq)
		} else {
			right = append(right, seq)
		}
		if err := s.w.set(storage.ForPartition(it.Key(), child), it.Value()); err != nil {
			return nil, nil, nil, false, err
		}
	}
	return left, right, nil, true, it.Error()
}

// copyIndex copies the snapshot's index entries of the items in left and right.
func (s *childWriter) copyIndex(snap *storage.Snapshot, left, right []uint64) error {
	p := s.p
	start, end := storage.IndexPartitionSpan(p.container, p.id)
	it, err := snap.NewIter(start, end)
	if err != nil {
		return err
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		seq, err := storage.SeqOf(it.Key())
		if err != nil {
			return err
		}
		child := s.plan.Left
		if _, found := slices.BinarySearch(left, seq); !found {
			if _, found := slices.BinarySearch(right, seq); !found {
				continue // another chunk's
			}
			child = s.plan.Right
		}
		if err := s.w.set(storage.ForPartition(it.Key(), child), nil); err != nil {
			return err
		}
	}
	return it.Error()
}

// replay applies captured entries' changes to the children's order, index and changes.
func (s *childWriter) replay(captured []any) error {
	for _, x := range captured {
		var err error
		switch x := x.(type) {
		case *Command:
			err = s.replayCommand(x)
		case *reindexStep:
			for _, it := range x.Items {
				if err = s.replayTerms(it.EPK, it.Seq, it.Del, it.Add); err != nil {
					break
				}
			}
		case *purgeStep:
			for _, r := range x.Refs {
				s.key = storage.LogKey(s.key[:0], s.p.container, s.child(epk.EPK(r.EPK)), r.lsn, r.i)
				if err = s.w.delete(s.key); err != nil {
					break
				}
			}
		case dropIndex:
			for _, id := range []uint32{s.plan.Left, s.plan.Right} {
				start, end := storage.IndexPartitionSpan(s.p.container, id)
				if err = s.w.deleteRange(start, end); err != nil {
					break
				}
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (s *childWriter) replayCommand(c *Command) error {
	p := s.p
	for i := range c.Changes {
		ch := &c.Changes[i]
		child := s.child(epk.EPK(ch.EPK))
		s.key = storage.LogKey(s.key[:0], p.container, child, c.LSN, uint16(i))
		n := len(s.key)
		s.key = entryOf(s.key, c, i)
		if err := s.w.set(s.key[:n], s.key[n:]); err != nil {
			return err
		}
		if ch.dropPrev {
			s.key = storage.LogKey(s.key[:0], p.container, child, ch.Prev.lsn, ch.Prev.i)
			if err := s.w.delete(s.key); err != nil {
				return err
			}
		}
		var err error
		switch {
		case ch.Delete:
			err = s.w.delete(storage.OrderKey(s.key[:0], p.container, child, ch.Seq))
		case ch.New:
			err = s.w.set(storage.OrderKey(s.key[:0], p.container, child, ch.Seq), []byte(ch.EPK))
		}
		if err != nil {
			return err
		}
		if err := s.replayTerms(ch.EPK, ch.Seq, ch.IndexDel, ch.IndexAdd); err != nil {
			return err
		}
	}
	return nil
}

func (s *childWriter) replayTerms(e string, seq uint64, del, add [][]byte) error {
	child := s.child(epk.EPK(e))
	for _, t := range del {
		if err := s.w.delete(storage.IndexKey(s.key[:0], s.p.container, child, t, seq)); err != nil {
			return err
		}
	}
	for _, t := range add {
		if err := s.w.set(storage.IndexKey(s.key[:0], s.p.container, child, t, seq), nil); err != nil {
			return err
		}
	}
	return nil
}

// SplitPoint is the EPK that best halves the partition's bytes without cutting a logical
// partition: the start of the first logical partition past the middle. ok is false when the
// partition holds fewer than two logical partitions.
func (p *Partition) SplitPoint() (at epk.EPK, ok bool, err error) {
	var lps []LogicalStat
	var total int64
	err = eachLogical(p.db, p.container, p.rng, func(ls LogicalStat) {
		lps = append(lps, ls)
		total += ls.Bytes
	})
	if err != nil || len(lps) < 2 {
		return "", false, err
	}
	var sum int64
	for i := 0; i < len(lps)-1; i++ {
		sum += lps[i].Bytes
		if 2*sum >= total {
			return lps[i+1].EPK, true, nil
		}
	}
	return lps[len(lps)-1].EPK, true, nil
}

// sumLogical totals the logical partitions within r.
func (p *Partition) sumLogical(r epk.Range) (counts, error) {
	var total counts
	err := eachLogical(p.db, p.container, r, func(ls LogicalStat) { total = total.add(ls.Items, ls.Bytes) })
	return total, err
}
