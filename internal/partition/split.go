package partition

import (
	"fmt"

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
// Items never move: they are keyed by EPK, and the children's ranges divide the parent's. Only
// the index, which is kept per physical partition, is copied: from a snapshot while writes go
// on (Backfill), then the index changes of the commands committed since the snapshot are
// replayed (Commit).
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

// capture is the index changes of the commands committed during a split's backfill. Owned by
// the writer goroutine until the partition is closed.
type capture struct {
	changes []indexChange
}

type indexChange struct {
	epk, id  string
	del, add [][]byte
}

func (c *capture) record(cmd *Command) {
	for _, ch := range cmd.Changes {
		if len(ch.IndexDel) > 0 || len(ch.IndexAdd) > 0 {
			c.changes = append(c.changes, indexChange{ch.EPK, ch.ID, ch.IndexDel, ch.IndexAdd})
		}
	}
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
	err := p.control(func() {
		p.capture = &capture{}
		s.snap = p.db.NewSnapshot()
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// backfillBatch is how many index entries a backfill writes per batch.
const backfillBatch = 10000

// Backfill copies the snapshot's index entries of the partition to the children, in batches
// that are not synced: Commit's synced batch makes them durable with the rest of the split.
// The partition serves reads and writes meanwhile.
func (s *Split) Backfill() error {
	if s.state != splitStarted {
		return fault.New(fault.Internal, "split backfill in state %d", s.state)
	}
	err := s.backfill()
	s.snap.Close()
	s.snap = nil
	if err != nil {
		return fmt.Errorf("split of partition %d: backfill: %w", s.p.id, err)
	}
	s.state = splitBackfilled
	return nil
}

func (s *Split) backfill() error {
	p := s.p
	start, end := storage.IndexPartitionSpan(p.container, p.id)
	it, err := s.snap.NewIter(start, end)
	if err != nil {
		return err
	}
	defer it.Close()
	b := p.db.NewBatch()
	defer func() { b.Close() }()
	for it.First(); it.Valid(); it.Next() {
		e, err := storage.IndexEntryEPK(it.Key())
		if err != nil {
			return err
		}
		if err := b.Set(storage.IndexKeyForPartition(it.Key(), s.child(epk.EPK(e))), nil); err != nil {
			return err
		}
		if b.Count() >= backfillBatch {
			if err := b.CommitUnsynced(); err != nil {
				return err
			}
			b.Close()
			b = p.db.NewBatch()
		}
	}
	if err := it.Error(); err != nil {
		return err
	}
	return b.CommitUnsynced()
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
	var key []byte
	for _, ch := range p.capture.changes {
		child := s.child(epk.EPK(ch.epk))
		for _, t := range ch.del {
			if err := b.Delete(storage.IndexKey(key[:0], p.container, child, t, ch.epk, ch.id)); err != nil {
				return err
			}
		}
		for _, t := range ch.add {
			if err := b.Set(storage.IndexKey(key[:0], p.container, child, t, ch.epk, ch.id), nil); err != nil {
				return err
			}
		}
	}
	st := *p.published.Load()
	for _, ch := range []Child{{s.left, epk.Range{Min: p.rng.Min, Max: s.at}}, {s.right, epk.Range{Min: s.at, Max: p.rng.Max}}} {
		c, err := p.sumLogical(ch.Range)
		if err != nil {
			return err
		}
		if err := b.Set(storage.PartitionKey(p.container, ch.ID), encodeState(nil, state{LSN: st.LSN, counts: c})); err != nil {
			return err
		}
	}
	start, end := storage.IndexPartitionSpan(p.container, p.id)
	if err := b.DeleteRange(start, end); err != nil {
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
		start, end := storage.IndexPartitionSpan(p.container, id)
		if err := b.DeleteRange(start, end); err != nil {
			return err
		}
	}
	return b.Commit()
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
