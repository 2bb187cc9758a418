package partition

import (
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/storage"
)

// ItemPos is a place in the (EPK, id) order of items, the order of the item key family: the
// order in which a CQL table's rows are kept (tokens, then partition keys, then clustering).
type ItemPos struct {
	EPK epk.EPK
	ID  string
}

// ScanItems calls fn for the partition's live items from lo (inclusive) to hi (exclusive) in
// (EPK, id) order, or in the reverse order when reverse is set, until fn returns false. The
// bounds are clipped to the partition's range. The slices passed to fn are only valid during
// the call. Unlike Scan, which follows creation order, it reads one item key per item and
// the documents in key order, so a bounded span costs only what it returns.
func (p *Partition) ScanItems(lo, hi ItemPos, reverse bool, fn func(d Doc) bool) error {
	return p.scanItems(Consistency{}, lo, hi, reverse, fn)
}

func (p *Partition) scanItems(cons Consistency, lo, hi ItemPos, reverse bool, fn func(d Doc) bool) error {
	if lo.EPK < p.rng.Min {
		lo = ItemPos{EPK: p.rng.Min}
	}
	if hi.EPK >= p.rng.Max {
		hi = ItemPos{EPK: p.rng.Max}
	}
	if err := p.await(cons); err != nil {
		return err
	}
	start := storage.ItemKey(nil, p.container, string(lo.EPK), lo.ID)
	end := storage.ItemKey(nil, p.container, string(hi.EPK), hi.ID)
	if string(start) >= string(end) {
		return nil
	}
	snap, err := p.snapshot()
	if err != nil {
		return err
	}
	defer snap.Close()
	docs, err := p.docReader(snap)
	if err != nil {
		return err
	}
	defer docs.close()
	it, err := snap.NewIter(start, end)
	if err != nil {
		return err
	}
	defer it.Close()
	step, valid := it.Next, it.First()
	if reverse {
		step, valid = it.Prev, it.Last()
	}
	var e []byte
	for ; valid; valid = step() {
		seq, err := storage.DecodeSeq(it.Value())
		if err == nil {
			e, err = storage.AppendItemEPK(e[:0], it.Key())
		}
		if err != nil {
			return err
		}
		if more, err := docs.visit(e, seq, fn); !more || err != nil {
			return err
		}
	}
	return it.Error()
}
