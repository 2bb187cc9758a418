package partition

import (
	"bytes"
	"encoding/binary"
	"math"
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

// IndexTerms returns the range index terms of a stored item (body, system properties
// included) under an indexing policy: one per primitive value at each path the policy indexes
// (see value.Terms), and the full-text terms of each path with a full-text index
// (fullTextTerms), whose language ft (the container's full-text policy, which never changes)
// gives; encoded as storage.IndexTerm, sorted and without duplicates. Of the system
// properties only _ts is indexed (withTS), as the policy says.
func IndexTerms(body []byte, pol *indexing.Policy, ft *searchpolicy.FullTextPolicy) ([][]byte, error) {
	if pol.IndexesNothing() {
		return nil, nil
	}
	v, err := value.Parse(body)
	if err != nil {
		return nil, err
	}
	terms := TermsOf(v, pol, ft)
	if isNotIndexed(terms) {
		return terms, nil
	}
	return withTS(terms, v.Get("_ts"), pol), nil
}

// TermsOf is IndexTerms of an item body as a client sent it, whose _ts is not yet decided
// (and whose system properties, if it carries any, are not the item's): the writer adds the
// _ts it stamps (withTS). Under a manual policy an item is kept out of the index unless its
// write says otherwise (IncludedTerms).
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

// tsPath is the term path of an item's _ts, the one system property the index records.
const tsPath = "/_ts"

// withTS returns terms (sorted, as IndexTerms gives them) with the entry of the item's _ts
// ts added in its place, when pol indexes _ts (every policy of this build but indexingMode
// none); a new slice, terms unchanged. The writer adds it to the terms the caller computed
// from the body a client sent (TermsOf), the _ts the write stamps; IndexTerms adds it from a
// stored item's JSON: both make the same entry of the same second.
func withTS(terms [][]byte, ts value.Value, pol *indexing.Policy) [][]byte {
	if ts.Kind() != value.Number || !pol.Indexes(tsPath) {
		return terms
	}
	// The term is the escaped path and the value's encoding (storage.IndexTerm), built in one
	// allocation: this runs for every write.
	t, ok := value.AppendIndexed(storage.IndexTerm(make([]byte, 0, 24), tsPath, nil), ts)
	if !ok {
		return terms
	}
	i, found := slices.BinarySearchFunc(terms, t, bytes.Compare)
	if found {
		return terms
	}
	out := make([][]byte, 0, len(terms)+1)
	out = append(append(append(out, terms[:i]...), t), terms[i:]...)
	return out
}

// isSystemPath reports whether a term path is a system property: not in the walk of an item's
// values (value.Terms); withTS adds the one the index records.
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
	if lo, hi := spans[0].lo, spans[0].hi; len(spans) == 1 && len(hi) == len(lo)+1 && hi[len(lo)] == 0xFF && bytes.HasPrefix(hi, lo) {
		return indexScanValue(snap, p.container, p.id, prefix, lo, p.indexBound(prefix, hi), from, visit)
	}
	return p.gatherSpans(snap, docs, path, prefix, spans, clipped, from, visit, fn)
}

// indexBound is the key before every index entry of the partition whose term is prefix (a
// path's) followed by v or more.
func (p *Partition) indexBound(prefix, v []byte) []byte {
	return storage.IndexBound(p.container, p.id, append(prefix[:len(prefix):len(prefix)], v...))
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
	// Passed, with Resume, leaves out the items of value Resume whose creation sequence is at
	// most Passed, which the previous pages returned (an item's sequence is at least 1: 0
	// leaves out none, math.MaxUint64 all). Within a value, items come in creation order.
	Passed uint64
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
// which the index does not keep: the path's entries are counted, see ordercount.go); or
// r.Range is a small part of the partition (see orderedCheaper), whose items cost less to
// read and sort than the index to pass.
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
	// The entries of a value v are esc(path) v seq, 8 bytes of sequence: v past (pastValue)
	// sorts after every one of them, and v seq(n+1) after those of sequences up to n.
	var resumeAt []byte // the first entry of r.Resume's run to read (both orders read it forward)
	if r.Resume != nil {
		v := r.Resume[:len(r.Resume):len(r.Resume)]
		switch {
		case r.Passed == math.MaxUint64:
			resumeAt = append(v, pastValue...)
		case r.Passed > 0:
			resumeAt = binary.BigEndian.AppendUint64(v, r.Passed+1)
		default:
			resumeAt = v
		}
		if !r.Desc && bytes.Compare(resumeAt, from) > 0 {
			from = resumeAt
		}
		end := append(v, pastValue...)
		if r.Passed == math.MaxUint64 {
			end = v // every item of the value came
		}
		if r.Desc && bytes.Compare(end, to) < 0 {
			to = end
		}
	}
	start, end := p.indexBound(prefix, from), p.indexBound(prefix, to)
	var k *counting
	if !bounded {
		k = p.counts.begin(prefix) // before the snapshot the count is read from
		defer p.counts.abandon(k)
	}
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
		values, others, counted := p.counts.lookup(prefix, st.LSN)
		if !whole {
			if ok, err := p.orderedCheaper(snap, clipped[0], st.Items, r.Need, counted); !ok || err != nil {
				return false, err
			}
		}
		if counted && verifyCounts.Load() {
			p.verifyCount(snap, prefix, st.LSN, values, others)
		}
		if !counted {
			if values, others, err = countEntries(snap, p.container, p.id, prefix); err != nil {
				return false, err
			}
			p.counts.finish(k, st.LSN, values, others)
		}
		// Every item has a value at the path, and none an array or object: the index gives
		// the whole order. Complete over the partition is complete over any part of it.
		if others != 0 || values != st.Items {
			return false, nil
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
	var ferr error
	// emit passes the item of sequence seq, whose entry records value, to fn when it is one
	// of r.Range's and is live; false once fn wants no more or a read failed.
	emit := func(seq uint64, value []byte) bool {
		e, ok, err := orders.epk(seq)
		if err == nil && ok && (whole || clipped[0].Contains(epk.EPK(e))) {
			var d stored
			if d, ok, err = docs.get(e, seq); err == nil && ok && !live.expired(e, d) && !fn(d.doc(e, seq), value) {
				return false
			}
		}
		if err != nil {
			ferr = err
			return false
		}
		return true
	}
	var value []byte // the value of the entry at it, copied by read
	read := func() (uint64, error) {
		v, seq, err := storage.ParseIndexEntry(it.Key(), len(prefix))
		value = append(value[:0], v...)
		return seq, err
	}
	if !r.Desc {
		for it.First(); it.Valid(); it.Next() {
			seq, err := read()
			if err != nil {
				return true, err
			}
			if !emit(seq, value) {
				return true, ferr
			}
		}
		return true, it.Error()
	}
	// Descending: the values from the highest, the items of each in creation order, as
	// ascending. A short run is gathered backwards and sorted; a long one is read forward from
	// its first entry, so that a page taking a few of its items reads only those.
	//
	// forward emits the entries of value v from the entry at or after from, then leaves it
	// at the last entry below v; false once emit said to stop.
	forward := func(from, v []byte) (bool, error) {
		for it.SeekGE(p.indexBound(prefix, from)); it.Valid(); it.Next() {
			seq, err := read()
			if err != nil {
				return false, err
			}
			if !bytes.Equal(value, v) {
				break
			}
			if !emit(seq, value) {
				return false, ferr
			}
		}
		it.SeekLT(p.indexBound(prefix, v))
		return true, it.Error()
	}
	if r.Passed > 0 && r.Passed < math.MaxUint64 {
		// The rest of r.Resume's run first: it starts after the last item returned.
		if more, err := forward(resumeAt, r.Resume); !more || err != nil {
			return true, err
		}
	} else {
		it.Last()
	}
	var run []uint64
	for it.Valid() {
		seq, err := read()
		if err != nil {
			return true, err
		}
		runValue := slices.Clone(value)
		run = append(run[:0], seq)
		for it.Prev(); it.Valid() && len(run) < descRunMax; it.Prev() {
			if seq, err = read(); err != nil {
				return true, err
			}
			if !bytes.Equal(value, runValue) {
				break
			}
			run = append(run, seq)
		}
		if len(run) == descRunMax {
			if more, err := forward(runValue, runValue); !more || err != nil {
				return true, err
			}
			continue
		}
		slices.Sort(run)
		for _, seq := range run {
			if !emit(seq, runValue) {
				return true, ferr
			}
		}
	}
	return true, it.Error()
}

// pastValue follows a value's encoding in a bound past every index entry of that value.
var pastValue = []byte{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}

// descRunMax is the longest run of equal values a descending read gathers backwards; a longer
// one it reads forward from its start.
const descRunMax = 32

// countEntries counts the entries of the partition's index at the path whose escaped form is
// prefix: values are those of a value, others those of an array or object (ordercount.go).
func countEntries(snap *storage.Snapshot, container, partition uint32, prefix []byte) (values, others int64, err error) {
	it, err := snap.NewIter(storage.IndexBound(container, partition, prefix), storage.IndexBound(container, partition, append(prefix[:len(prefix):len(prefix)], 0xFF)))
	if err != nil {
		return 0, 0, err
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		v, _, err := storage.ParseIndexEntry(it.Key(), len(prefix))
		if err != nil {
			return 0, 0, err
		}
		if v[0] < composite {
			values++
		} else {
			others++
		}
	}
	return values, others, it.Error()
}

// Relative costs of the two ways to read part of a partition in ORDER BY order, per item or
// entry, in units of one index entry counted by countEntries (about 0.15 µs), as measured by
// the engine's BenchmarkCostAgainstLogicalSize: reading, parsing and sorting an item of the
// part costs about a hundred; an index entry read in order costs about ten, for the lookup of
// the EPK that says whether its item is in the part.
const (
	orderedSortCost  = 100
	orderedEntryCost = 10
)

// orderedCheaper reports whether r, a part of the partition, which holds items items, is read
// in ORDER BY order more cheaply from the partition's index than by reading and sorting its own
// items: the path's entries are counted once whole unless counted is set (ordercount.go), then
// the index is read in order until need items of r have come, which takes about need/share
// entries when r holds that share of the items.
func (p *Partition) orderedCheaper(snap *storage.Snapshot, r epk.Range, items int64, need int, counted bool) (bool, error) {
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
	cost := orderedEntryCost * passed
	if !counted {
		cost += items
	}
	return cost < orderedSortCost*int64(in), nil
}
