package partition

import (
	"bytes"
	"slices"
	"strings"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fulltext"
	"github.com/partita-db/partita/internal/indexing"
	"github.com/partita-db/partita/internal/searchpolicy"
	"github.com/partita-db/partita/internal/storage"
	"github.com/partita-db/partita/internal/value"
)

// IndexTerms returns the range index terms of an item body under an indexing policy: one per
// primitive value at each path the policy indexes (see value.Terms), and the full-text terms
// of each path with a full-text index (fullTextTerms), whose language ft (the container's
// full-text policy, which never changes) gives; encoded as storage.IndexTerm, sorted and
// without duplicates. System properties are not indexed.
func IndexTerms(body []byte, pol *indexing.Policy, ft *searchpolicy.FullTextPolicy) ([][]byte, error) {
	if pol.IndexesNothing() {
		return nil, nil
	}
	v, err := value.Parse(body)
	if err != nil {
		return nil, err
	}
	return TermsOf(v, pol, ft), nil
}

// TermsOf is IndexTerms of an item already parsed. Under a manual policy an item is kept out
// of the index unless its write says otherwise (IncludedTerms).
func TermsOf(v value.Value, pol *indexing.Policy, ft *searchpolicy.FullTextPolicy) [][]byte {
	if pol.Manual() {
		return NotIndexed()
	}
	return termsOf(v, pol, ft)
}

// termsOf are the terms of the paths pol indexes.
func termsOf(v value.Value, pol *indexing.Policy, ft *searchpolicy.FullTextPolicy) [][]byte {
	if pol.IndexesNothing() {
		return nil
	}
	var terms [][]byte
	var ord []byte
	value.Terms(v, func(path string, leaf value.Value) {
		if isSystemPath(path) || !pol.Indexes(path) {
			return
		}
		var ok bool
		if ord, ok = value.AppendIndexed(ord[:0], leaf); !ok {
			ord = append(ord[:0], value.OrderedMarker(leaf.Kind()))
		}
		terms = append(terms, storage.IndexTerm(nil, path, ord))
	})
	for _, fi := range pol.FullTextIndexes() {
		terms = appendFullTextTerms(terms, v, fi, ft)
	}
	slices.SortFunc(terms, bytes.Compare)
	out := terms[:0]
	for i, t := range terms {
		if i == 0 || !bytes.Equal(t, terms[i-1]) {
			out = append(out, t)
		}
	}
	return out
}

// appendFullTextTerms appends the full-text terms of the text at fi's path in v (see
// indexing.FullTextTermPath): one per distinct token, and the token count, 0 when there is no
// string there, so that every indexed item counts in the statistics. A path ft does not
// declare (the engine refuses such policies) has none.
func appendFullTextTerms(terms [][]byte, v value.Value, fi indexing.FullTextIndex, ft *searchpolicy.FullTextPolicy) [][]byte {
	tp, ok := ft.LookupPath(fi.Path)
	if !ok {
		return terms
	}
	path := indexing.FullTextTermPath(value.TermPath(tp.Segs))
	text := v
	for _, seg := range tp.Segs {
		text = text.Get(seg)
	}
	var n uint32
	if text.Kind() == value.String {
		seen := map[string]bool{}
		fulltext.Each(tp.Language, text.Str(), func(tok string) {
			n++
			if !seen[tok] {
				seen[tok] = true
				terms = append(terms, storage.IndexTerm(nil, path, indexing.FullTextToken(tok)))
			}
		})
	}
	return append(terms, storage.IndexTerm(nil, path, indexing.FullTextLength(n)))
}

// isSystemPath reports whether a term path is a system property, which is not indexed.
func isSystemPath(path string) bool {
	return strings.HasPrefix(path, "/_") && strings.Count(path, "/") == 1 && document.IsSystemProperty(path[1:])
}

// termDiff returns the terms only in old (to delete) and only in new (to add); both lists are
// sorted, so unchanged values cost nothing.
func termDiff(old, new [][]byte) (del, add [][]byte) {
	i, j := 0, 0
	for i < len(old) || j < len(new) {
		switch {
		case j == len(new) || i < len(old) && bytes.Compare(old[i], new[j]) < 0:
			del = append(del, old[i])
			i++
		case i == len(old) || bytes.Compare(old[i], new[j]) > 0:
			add = append(add, new[j])
			j++
		default:
			i++
			j++
		}
	}
	return del, add
}

// IndexScan calls fn, in creation order and once each, with the items of the partition whose
// EPK is in one of ranges (sorted, disjoint), whose creation sequence is at least from, and
// that have an index entry at path with an encoded value in [lo, hi).
func (p *Partition) IndexScan(path string, lo, hi []byte, ranges []epk.Range, from uint64, fn func(d Doc) bool) error {
	return p.indexScan(Consistency{}, path, lo, hi, ranges, from, fn)
}

func (p *Partition) indexScan(cons Consistency, path string, lo, hi []byte, ranges []epk.Range, from uint64, fn func(d Doc) bool) error {
	return p.indexScanSpans(cons, path, []valueSpan{{lo, hi}}, ranges, from, fn)
}

// IndexScanValues is IndexScan of the items with an index entry at path whose encoded value
// is one of values (exactly): each comes once, in creation order, whichever values it has.
func (p *Partition) IndexScanValues(path string, values [][]byte, ranges []epk.Range, from uint64, fn func(d Doc) bool) error {
	return p.indexScanValues(Consistency{}, path, values, ranges, from, fn)
}

func (p *Partition) indexScanValues(cons Consistency, path string, values [][]byte, ranges []epk.Range, from uint64, fn func(d Doc) bool) error {
	spans := make([]valueSpan, len(values))
	for i, v := range values {
		spans[i] = valueSpan{v, append(v[:len(v):len(v)], 0xFF)}
	}
	return p.indexScanSpans(cons, path, spans, ranges, from, fn)
}

// valueSpan is a range [lo, hi) of encoded values.
type valueSpan struct{ lo, hi []byte }

// indexScanSpans is indexScan of the items with a value in any of spans.
func (p *Partition) indexScanSpans(cons Consistency, path string, spans []valueSpan, ranges []epk.Range, from uint64, fn func(d Doc) bool) error {
	clipped := p.clip(ranges)
	if len(clipped) == 0 || len(spans) == 0 {
		return nil
	}
	if err := p.await(cons); err != nil {
		return err
	}
	whole := len(clipped) == 1 && clipped[0] == p.rng
	prefix := storage.IndexPathPrefix(path)
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
	orders, err := p.orderReader(snap)
	if err != nil {
		return err
	}
	defer orders.close()
	// visit hands fn the item of sequence seq when it is in the ranges; false once fn has
	// enough.
	visit := func(seq uint64) (bool, error) {
		e, ok, err := orders.epk(seq)
		if err != nil || !ok || !whole && !inRanges(clipped, epk.EPK(e)) {
			return err == nil, err
		}
		return docs.visit(e, seq, fn)
	}
	bound := func(v []byte) []byte {
		return storage.IndexBound(p.container, p.id, append(prefix[:len(prefix):len(prefix)], v...))
	}
	if lo, hi := spans[0].lo, spans[0].hi; len(spans) == 1 && len(hi) == len(lo)+1 && hi[len(lo)] == 0xFF && bytes.HasPrefix(hi, lo) {
		return indexScanValue(snap, p.container, p.id, prefix, lo, bound(hi), from, visit)
	}
	var seqs []uint64
	for _, sp := range spans {
		it, err := snap.NewIter(bound(sp.lo), bound(sp.hi))
		if err != nil {
			return err
		}
		for it.First(); it.Valid(); it.Next() {
			_, seq, err := storage.ParseIndexEntry(it.Key(), len(prefix))
			if err != nil {
				it.Close()
				return err
			}
			if seq >= from {
				seqs = append(seqs, seq)
			}
		}
		if err := it.Close(); err != nil {
			return err
		}
	}
	slices.Sort(seqs)
	for _, seq := range slices.Compact(seqs) {
		if more, err := visit(seq); !more || err != nil {
			return err
		}
	}
	return nil
}

// indexScanValue is indexScan of one value (an equality: hi is lo and 0xFF), whose entries
// the index lists in creation order already: it starts at the entry of sequence from and
// stops when visit has enough, so a page costs what it reads, not every item with the value.
func indexScanValue(snap *storage.Snapshot, container, partition uint32, prefix, value, end []byte, from uint64,
	visit func(seq uint64) (bool, error)) error {
	term := append(prefix[:len(prefix):len(prefix)], value...)
	it, err := snap.NewIter(storage.IndexKey(nil, container, partition, term, from), end)
	if err != nil {
		return err
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		v, seq, err := storage.ParseIndexEntry(it.Key(), len(prefix))
		if err != nil {
			return err
		}
		if !bytes.Equal(v, value) {
			continue // a longer value with this one as its prefix: never equal to it
		}
		if more, err := visit(seq); !more || err != nil {
			return err
		}
	}
	return it.Error()
}

// inRanges reports whether e lies in one of ranges.
func inRanges(ranges []epk.Range, e epk.EPK) bool {
	for _, r := range ranges {
		if r.Contains(e) {
			return true
		}
	}
	return false
}

// IndexOrdered calls fn with the items of the partition whose EPK is in r, in the order of
// their value at path (descending when desc), with the encoded value each entry records.
// Values the index records equally (long strings cut to the same prefix) come in creation
// order; the caller orders them by their full value.
//
// With bounds (encoded values [from, to)), only those entries are listed: the caller's filter
// excludes every other item. Without, ok is false and fn is not called when the index cannot
// give the full order: r does not cover the partition, or some item has no value at path, or
// an array or object there (those order by content, which the index does not keep).
func (p *Partition) IndexOrdered(path string, from, to []byte, r epk.Range, desc bool, fn func(d Doc, value []byte) bool) (ok bool, err error) {
	return p.indexOrdered(Consistency{}, path, from, to, r, desc, fn)
}

func (p *Partition) indexOrdered(cons Consistency, path string, from, to []byte, r epk.Range, desc bool, fn func(d Doc, value []byte) bool) (ok bool, err error) {
	clipped := p.clip([]epk.Range{r})
	if len(clipped) == 0 {
		return true, nil
	}
	if err := p.await(cons); err != nil {
		return false, err
	}
	whole := clipped[0] == p.rng
	prefix := storage.IndexPathPrefix(path)
	bounded := from != nil
	if !bounded {
		if !whole {
			return false, nil
		}
		from, to = nil, []byte{0xFF}
	}
	start := storage.IndexBound(p.container, p.id, append(prefix[:len(prefix):len(prefix)], from...))
	end := storage.IndexBound(p.container, p.id, append(prefix[:len(prefix):len(prefix)], to...))
	snap, err := p.snapshot()
	if err != nil {
		return false, err
	}
	defer snap.Close()
	it, err := snap.NewIter(start, end)
	if err != nil {
		return false, err
	}
	defer it.Close()
	if !bounded {
		if ok, err := p.indexComplete(snap, it, len(prefix)); !ok || err != nil {
			return false, err
		}
	}
	live := p.liveness()
	docs, err := p.docReader(snap)
	if err != nil {
		return false, err
	}
	defer docs.close()
	docs.live = liveness{}
	orders, err := p.orderReader(snap)
	if err != nil {
		return false, err
	}
	defer orders.close()
	var run []uint64 // the sequences of a run of equal values, which the index lists ascending
	var runValue []byte
	var ferr error
	emit := func() bool {
		if desc {
			slices.Sort(run)
		}
		for _, seq := range run {
			e, ok, err := orders.epk(seq)
			if err == nil && ok && (whole || clipped[0].Contains(epk.EPK(e))) {
				var d stored
				if d, ok, err = docs.get(e, seq); err == nil && ok && !live.expired(d.json) && !fn(d.doc(e, seq), runValue) {
					return false
				}
			}
			if err != nil {
				ferr = err
				return false
			}
		}
		run = run[:0]
		return true
	}
	next, valid := it.Next, it.First
	if desc {
		next, valid = it.Prev, it.Last
	}
	for valid(); it.Valid(); next() {
		v, seq, err := storage.ParseIndexEntry(it.Key(), len(prefix))
		if err != nil {
			return true, err
		}
		if len(run) > 0 && !bytes.Equal(v, runValue) {
			if !emit() {
				return true, ferr
			}
		}
		if len(run) == 0 {
			runValue = append(runValue[:0], v...)
		}
		run = append(run, seq)
	}
	if len(run) > 0 {
		emit()
	}
	if ferr != nil {
		return true, ferr
	}
	return true, it.Error()
}

// indexComplete reports whether every item of the partition, as of the snapshot, has a
// primitive value in the index range it iterates.
func (p *Partition) indexComplete(snap *storage.Snapshot, it *storage.Iter, prefixLen int) (bool, error) {
	v, err := snap.Get(nil, storage.PartitionKey(p.container, p.id))
	var st state
	switch {
	case err == nil:
		if st, err = decodeState(v); err != nil {
			return false, err
		}
	case !storage.IsNotFound(err):
		return false, err
	}
	var n int64
	for it.First(); it.Valid(); it.Next() {
		v, _, err := storage.ParseIndexEntry(it.Key(), prefixLen)
		if err != nil {
			return false, err
		}
		if v[0] >= 0x06 {
			return false, nil // an array or object at path
		}
		n++
	}
	return n == st.Items, it.Error() // fewer: some item has no value at path
}
