package partition

import (
	"github.com/cockroachdb/pebble/v2"

	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/storage"
)

// A split of a partition into two children at an EPK happens in two phases, so that writes
// go on while the children's index is built:
//
//  1. BeginCapture takes a snapshot between two groups of commands and starts recording the
//     index changes of every later command; BackfillIndex copies the snapshot's index entries
//     to the children, while the partition keeps serving.
//  2. With the partition closed (no more commands), FinishSplit replays the recorded changes
//     onto the children's index, writes their state records and removes the parent's index
//     and state, all in the caller's batch, which the caller commits with the catalog change.
//
// Items never move: they are keyed by EPK, and the children's ranges divide the parent's.

// capture is the index changes of the commands committed during a split's backfill.
type capture struct {
	changes []indexChange
}

type indexChange struct {
	epk, id  string
	del, add [][]byte
}

func (c *capture) record(cmd *Command) {
	for _, op := range cmd.Ops {
		if len(op.IndexDel) > 0 || len(op.IndexAdd) > 0 {
			c.changes = append(c.changes, indexChange{op.EPK, op.ID, op.IndexDel, op.IndexAdd})
		}
	}
}

// control runs fn on the writer between two groups of commands.
func (p *Partition) control(fn func()) error {
	r := &request{control: fn, done: make(chan struct{})}
	p.closeMu.RLock()
	if p.closed {
		p.closeMu.RUnlock()
		return fault.New(fault.Unavailable, "The partition is shutting down")
	}
	p.queue <- r
	p.closeMu.RUnlock()
	<-r.done
	return nil
}

// BeginCapture starts phase 1 of a split: it returns a snapshot that holds every command
// committed so far, and records the index changes of every command committed after it.
func (p *Partition) BeginCapture() (*pebble.Snapshot, error) {
	var snap *pebble.Snapshot
	err := p.control(func() {
		p.capture = &capture{}
		snap = p.db.NewSnapshot()
	})
	return snap, err
}

// EndCapture stops recording, for a split that was abandoned.
func (p *Partition) EndCapture() { p.control(func() { p.capture = nil }) }

// backfillBatch is how many index entries a backfill writes per batch.
const backfillBatch = 10000

// BackfillIndex copies the snapshot's index entries of this partition to the children left
// (EPKs below at) and right, in batches that are not synced: FinishSplit's synced batch makes
// them durable with the rest of the split.
func (p *Partition) BackfillIndex(snap *pebble.Snapshot, at epk.EPK, left, right uint32) error {
	start, end := storage.IndexPartitionSpan(p.container, p.id)
	it, err := snap.NewIter(&pebble.IterOptions{LowerBound: start, UpperBound: end})
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
		if err := b.Set(storage.IndexKeyForPartition(it.Key(), childOf(epk.EPK(e), at, left, right)), nil, nil); err != nil {
			return err
		}
		if b.Count() >= backfillBatch {
			if err := b.Commit(pebble.NoSync); err != nil {
				return err
			}
			b.Close()
			b = p.db.NewBatch()
		}
	}
	if err := it.Error(); err != nil {
		return err
	}
	return b.Commit(pebble.NoSync)
}

func childOf(e, at epk.EPK, left, right uint32) uint32 {
	if e < at {
		return left
	}
	return right
}

// FinishSplit adds phase 2 of a split to b. The partition must be closed. Its LSN carries on
// in both children.
func (p *Partition) FinishSplit(b *pebble.Batch, at epk.EPK, left, right uint32) error {
	if p.capture == nil {
		return fault.New(fault.Internal, "split of partition %d finished without a capture", p.id)
	}
	var key []byte
	for _, ch := range p.capture.changes {
		child := childOf(epk.EPK(ch.epk), at, left, right)
		for _, t := range ch.del {
			if err := b.Delete(storage.IndexKey(key[:0], p.container, child, t, ch.epk, ch.id), nil); err != nil {
				return err
			}
		}
		for _, t := range ch.add {
			if err := b.Set(storage.IndexKey(key[:0], p.container, child, t, ch.epk, ch.id), nil, nil); err != nil {
				return err
			}
		}
	}
	p.capture = nil
	st := *p.published.Load()
	for _, ch := range []Child{{left, epk.Range{Min: p.rng.Min, Max: at}}, {right, epk.Range{Min: at, Max: p.rng.Max}}} {
		c, err := p.sumLogical(ch.Range)
		if err != nil {
			return err
		}
		if err := b.Set(storage.PartitionKey(p.container, ch.ID), encodeState(nil, state{LSN: st.LSN, counts: c}), nil); err != nil {
			return err
		}
	}
	start, end := storage.IndexPartitionSpan(p.container, p.id)
	if err := b.DeleteRange(start, end, nil); err != nil {
		return err
	}
	return b.Delete(storage.PartitionKey(p.container, p.id), nil)
}

// DropChildIndexes removes what a backfill wrote for children that will not exist, after a
// split was abandoned.
func (p *Partition) DropChildIndexes(left, right uint32) error {
	b := p.db.NewBatch()
	defer b.Close()
	for _, id := range []uint32{left, right} {
		start, end := storage.IndexPartitionSpan(p.container, id)
		if err := b.DeleteRange(start, end, nil); err != nil {
			return err
		}
	}
	return b.Commit(storage.Sync)
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
	it, err := p.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
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
	it, err := p.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
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
