package partition

import (
	"fmt"
	"slices"

	"github.com/partita-db/partita/internal/storage"
)

// CheckIndex verifies, as of one snapshot, the invariant queries rely on: every item's index
// entries are exactly its terms under the partition's policy, or under one of the earlier
// policies a rebuild in flight lists, and no entry names an item the partition does not hold.
// It reads the whole partition; it is for tests and consistency checks, not for requests.
func (p *Partition) CheckIndex() error {
	st := p.ix.Load()
	snap := p.db.NewSnapshot()
	defer snap.Close()
	entries := map[uint64][]string{}
	start, end := storage.IndexPartitionSpan(p.container, p.id)
	it, err := snap.NewIter(start, end)
	if err != nil {
		return err
	}
	for it.First(); it.Valid(); it.Next() {
		k := it.Key()
		seq, err := storage.SeqOf(k)
		if err != nil {
			it.Close()
			return err
		}
		entries[seq] = append(entries[seq], string(k[9:len(k)-8]))
	}
	if err := it.Close(); err != nil {
		return err
	}
	docs, err := p.docReader(snap)
	if err != nil {
		return err
	}
	defer docs.close()
	docs.live = liveness{}
	err = p.scanOrder(snap, docs, 0, func(e []byte, seq uint64) (bool, error) {
		d, ok, err := docs.get(e, seq)
		if err != nil || !ok {
			return false, fmt.Errorf("partition %d: order names item %d, which is not stored (%v)", p.id, seq, err)
		}
		have := entries[seq]
		slices.Sort(have)
		delete(entries, seq)
		// An item kept out of the index holds the marker alone, under any policy.
		match := len(have) == 1 && have[0] == string(unindexedTerm)
		for _, pol := range append(slices.Clone(st.prevs), st.pol) {
			want, err := IndexTerms(d.json, pol, p.fullText)
			if err != nil {
				return false, err
			}
			if slices.EqualFunc(want, have, func(a []byte, b string) bool { return string(a) == b }) {
				match = true
				break
			}
		}
		if !match {
			return false, fmt.Errorf("partition %d: item %d (%s) has %d index entries that follow none of the %d policies in flight", p.id, seq, d.id, len(have), len(st.prevs)+1)
		}
		return true, nil
	})
	if err != nil {
		return err
	}
	for seq := range entries {
		return fmt.Errorf("partition %d: index entries name item %d, which the partition does not hold", p.id, seq)
	}
	return nil
}
