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

// OrderedRead is what IndexOrdered reads: the items of the partition whose EPK is in Range,
// in the order of their value at Path (descending when Desc).
type OrderedRead struct {
	Path  string
	Range epk.Range
	Desc  bool
	// From and To, when From is not nil, bound the encoded values read to [From, To): a filter
	// on Path excludes every other item, so the read need not be complete (below).
	From, To []byte
	// Resume, when not nil, is the encoded value a previous page stopped at: the read starts
	// there (ends there, descending), values equal to it included. Unlike From and To it
	// leaves the rule on completeness as it is.
	Resume []byte
	// Need is how many items the caller wants at most (0: all), to choose how to read a part
	// of the partition (orderedCheaper).
	Need int
}

// IndexOrdered calls fn with the items of r, in order, with the encoded value each entry
// records. Values the index records equally (long strings cut to the same prefix) come in
// creation order; the caller orders them by their full value.
//
// Without From, ok is false and fn is not called when the index cannot give the full order:
// some item has no value at the path, or an array or object there (those order by content,
// which the index does not keep); or r.Range is a small part of the partition (see
// orderedCheaper), whose items cost less to read and sort than the index to pass.
func (p *Partition) IndexOrdered(r OrderedRead, fn func(d Doc, value []byte) bool) (ok bool, err error) {
	return p.indexOrdered(Consistency{}, r, fn)
}

func (p *Partition) indexOrdered(cons Consistency, r OrderedRead, fn func(d Doc, value []byte) bool) (ok bool, err error) {
	clipped := p.clip([]epk.Range{r.Range})
	if len(clipped) == 0 {
		return true, nil
	}
	if err := p.await(cons); err != nil {
		return false, err
	}
	whole := clipped[0] == p.rng
	prefix := storage.IndexPathPrefix(r.Path)
	bounded := r.From != nil
	from, to := r.From, r.To
	if !bounded {
		from, to = nil, []byte{0xFF}
	}
	if r.Resume != nil {
		if !r.Desc && bytes.Compare(r.Resume, from) > 0 {
			from = r.Resume
		}
		// Past every entry of the value: an entry is the value, then 8 bytes of sequence.
		if end := append(r.Resume[:len(r.Resume):len(r.Resume)], 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF); r.Desc && bytes.Compare(end, to) < 0 {
			to = end
		}
	}
	start := storage.IndexBound(p.container, p.id, append(prefix[:len(prefix):len(prefix)], from...))
	end := storage.IndexBound(p.container, p.id, append(prefix[:len(prefix):len(prefix)], to...))
	snap, err := p.snapshot()
	if err != nil {
		return false, err
	}
	defer snap.Close()
	if !bounded {
		st, err := p.snapshotState(snap, 0)
		if err != nil {
			return false, err
		}
		if !whole {
			if ok, err := p.orderedCheaper(snap, clipped[0], st.Items, r.Need); !ok || err != nil {
				return false, err
			}
		}
		// Complete over the partition is complete over any part of it.
		if ok, err := p.indexComplete(snap, prefix, st.Items); !ok || err != nil {
			return false, err
		}
	}
	it, err := snap.NewIter(start, end)
	if err != nil {
		return false, err
	}
	defer it.Close()
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
		if r.Desc {
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
	if r.Desc {
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

// indexComplete reports whether every one of the partition's items (items of them) has a
// primitive value at the path whose terms start with prefix.
func (p *Partition) indexComplete(snap *storage.Snapshot, prefix []byte, items int64) (bool, error) {
	it, err := snap.NewIter(storage.IndexBound(p.container, p.id, prefix), storage.IndexBound(p.container, p.id, append(prefix[:len(prefix):len(prefix)], 0xFF)))
	if err != nil {
		return false, err
	}
	defer it.Close()
	var n int64
	for it.First(); it.Valid(); it.Next() {
		v, _, err := storage.ParseIndexEntry(it.Key(), len(prefix))
		if err != nil {
			return false, err
		}
		if v[0] >= 0x06 {
			return false, nil // an array or object at path
		}
		n++
	}
	return n == items, it.Error() // fewer: some item has no value at path
}

// Relative costs of the two ways to read part of a partition in ORDER BY order, per item or
// entry, in units of one index entry passed by indexComplete (about 0.15 µs), as measured by
// the engine's BenchmarkCostAgainstLogicalSize: reading, parsing and sorting an item of the
// part costs about a hundred; an index entry read in order costs about ten, for the lookup of
// the EPK that says whether its item is in the part.
const (
	orderedSortCost  = 100
	orderedEntryCost = 10
)

// orderedCheaper reports whether r, a part of the partition, which holds items items, is read
// in ORDER BY order more cheaply from the partition's index than by reading and sorting its own
// items: the index is passed once whole (indexComplete), then in order until need items of r
// have come, which takes about need/share entries when r holds that share of the items.
func (p *Partition) orderedCheaper(snap *storage.Snapshot, r epk.Range, items int64, need int) (bool, error) {
	if items <= 0 {
		return false, nil
	}
	// More than this in r and the index is cheaper whatever the order passes.
	enough := uint64(items*(1+orderedEntryCost)/orderedSortCost) + 1
	in, err := p.itemsIn(snap, r.Min, r.Max, enough)
	if err != nil || in == 0 {
		return false, err
	}
	passed := items
	if need > 0 {
		passed = min(items, int64(need)*items/int64(in))
	}
	return items+orderedEntryCost*passed < orderedSortCost*int64(in), nil
}
