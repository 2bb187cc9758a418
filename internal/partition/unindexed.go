package partition

import (
	"bytes"

	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/indexing"
	"github.com/partita-db/partita/internal/searchpolicy"
	"github.com/partita-db/partita/internal/storage"
	"github.com/partita-db/partita/internal/value"
)

// unindexedTerm is the one index term of an item kept out of the index: written with the
// indexing directive Exclude, or under a manual policy without Include. Its path is empty,
// which no property path is, so no read of a path's entries ever meets it; a split copies it
// with the rest of the index. Queries skip the items it marks (ScanIndexed), as Cosmos's
// queries do not return items that are not indexed; point reads and feeds still do.
var unindexedTerm = storage.IndexTerm(nil, "", []byte{0})

// NotIndexed are the terms of an item kept out of the index, for Operation.Terms.
func NotIndexed() [][]byte { return [][]byte{unindexedTerm} }

// IncludedTerms are the terms of an item written with the indexing directive Include: those
// of the policy's paths, even under a manual policy. Never nil, so that the writer does not
// compute terms of its own.
func IncludedTerms(v value.Value, pol *indexing.Policy, ft *searchpolicy.FullTextPolicy) [][]byte {
	t := termsOf(v, pol, ft)
	if t == nil {
		t = [][]byte{}
	}
	return t
}

func isNotIndexed(terms [][]byte) bool {
	return len(terms) == 1 && bytes.Equal(terms[0], unindexedTerm)
}

// storedTerms are the index terms of a stored version (seq, json): the marker when it was kept
// out of the index, its terms under pol otherwise.
func (p *Partition) storedTerms(json []byte, seq uint64, pol *indexing.Policy) ([][]byte, error) {
	if unindexed, err := p.isUnindexed(p.db.GetLikelyAbsent, seq); unindexed || err != nil {
		return NotIndexed(), err
	}
	if pol.IndexesNothing() {
		return nil, nil
	}
	v, err := value.Parse(json)
	if err != nil {
		return nil, err
	}
	return withTS(termsOf(v, pol, p.fullText), v.Get("_ts"), pol), nil
}

// isUnindexed reports whether item seq carries the marker, as get (of the database or of a
// snapshot) reads it.
func (p *Partition) isUnindexed(get func(dst, key []byte) ([]byte, error), seq uint64) (bool, error) {
	if !p.mayUnindexed.Load() {
		return false, nil
	}
	_, err := get(nil, storage.IndexKey(nil, p.container, p.id, unindexedTerm, seq))
	if storage.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

// unindexedSpan bounds the partition's unindexed markers.
func (p *Partition) unindexedSpan() (start, end []byte) {
	prefix := storage.IndexPathPrefix("")
	return p.indexBound(prefix, nil), p.indexBound(prefix, []byte{0xFF})
}

// loadUnindexed notes, when the partition opens, whether any of its items is kept out of the
// index; only then do writes and scans need to look for markers.
func (p *Partition) loadUnindexed() error {
	start, end := p.unindexedSpan()
	it, err := p.db.NewIter(start, end)
	if err != nil {
		return err
	}
	if it.First() {
		p.mayUnindexed.Store(true)
	}
	return it.Close()
}

// unindexedSeqs are the creation sequences of the items kept out of the index.
func (p *Partition) unindexedSeqs() (map[uint64]bool, error) {
	if !p.mayUnindexed.Load() {
		return nil, nil
	}
	start, end := p.unindexedSpan()
	it, err := p.db.NewIter(start, end)
	if err != nil {
		return nil, err
	}
	set := map[uint64]bool{}
	n := len(storage.IndexPathPrefix(""))
	for it.First(); it.Valid(); it.Next() {
		_, seq, err := storage.ParseIndexEntry(it.Key(), n)
		if err != nil {
			it.Close()
			return nil, err
		}
		set[seq] = true
	}
	return set, it.Close()
}

// ScanIndexed is Scan without the items kept out of the index: what a query may read.
func (p *Partition) ScanIndexed(ranges []epk.Range, from uint64, fn func(d Doc) bool) error {
	return p.At(Consistency{}).ScanIndexed(ranges, from, fn)
}

// ScanIndexed is Partition.ScanIndexed at rd's consistency.
func (rd Reader) ScanIndexed(ranges []epk.Range, from uint64, fn func(d Doc) bool) error {
	skip, err := rd.p.unindexedSeqs()
	if err != nil {
		return err
	}
	if len(skip) == 0 {
		return rd.Scan(ranges, from, fn)
	}
	return rd.Scan(ranges, from, func(d Doc) bool { return skip[d.Seq] || fn(d) })
}

// AllIndexed reports whether every item of the partition is in its index, so that its item
// count is what a query that counts sees.
func (p *Partition) AllIndexed() bool { return !p.mayUnindexed.Load() }
