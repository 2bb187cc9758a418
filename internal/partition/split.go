package partition

import (
	"github.com/cockroachdb/pebble/v2"

	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/storage"
)

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

// Child describes one of the two partitions a split makes.
type Child struct {
	ID    uint32
	Range epk.Range
}

// WriteSplit adds to b everything that turns this (closed) partition into two children at
// the EPK at: each child's index entries (copied from this partition's, under the child's
// prefix), each child's state record (this partition's LSN, and the totals of the logical
// partitions it now owns), and the removal of this partition's index and state. Items do not
// move: they are keyed by EPK, which the children's ranges simply divide.
func (p *Partition) WriteSplit(b *pebble.Batch, at epk.EPK, left, right uint32) error {
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
	it, err := p.db.NewIter(&pebble.IterOptions{LowerBound: start, UpperBound: end})
	if err != nil {
		return err
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		e, err := storage.IndexEntryEPK(it.Key())
		if err != nil {
			return err
		}
		child := left
		if epk.EPK(e) >= at {
			child = right
		}
		if err := b.Set(storage.IndexKeyForPartition(it.Key(), child), nil, nil); err != nil {
			return err
		}
	}
	if err := it.Error(); err != nil {
		return err
	}
	if err := b.DeleteRange(start, end, nil); err != nil {
		return err
	}
	return b.Delete(storage.PartitionKey(p.container, p.id), nil)
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
