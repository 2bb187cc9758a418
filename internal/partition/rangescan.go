package partition

import (
	"bytes"
	"encoding/binary"
	"slices"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/indexing"
	"github.com/partita-db/partita/internal/storage"
	"github.com/partita-db/partita/internal/value"
)

// A range of values at a path (c.n > 5) lists its items by value, so the index gives its
// items in creation order only once every entry of the range is gathered and sorted: a page
// would cost what the range matches, which can be most of the partition. Walking the items
// themselves in creation order and keeping those whose value is in the range gives a page
// for about page/share reads when the range holds that share of them: cheap when the range
// matches much, ruinous when it matches little. gatherSpans runs both at once, in steps
// of about equal cost, and keeps the first to finish: the gather when the range's entries
// run out (what the walk passed on already is not given again), the walk when the caller has
// its page or the items run out. A page so costs about twice the cheaper of the two.

// The steps: an entry gathered costs about a sixteenth of an item walked (a creation-order
// entry, a document read and a look at one of its properties), by BenchmarkIndexScanRange.
// Over a whole partition the walk starts only after a first, longer step of the gather
// (gatherFirst entries, about 0.3 ms): a range that matches no more than that costs what it
// did without the walk, and one that matches many costs that much more. Over one logical
// partition the walk goes first: its items are one run of documents, read without a seek
// each, and the range's entries are the whole partition's, most of them of other logical
// partitions. Tests shrink the steps, to race the two over few items.
var (
	gatherFirst = 1024 // entries
	gatherStep  = 256  // entries
	walkStep    = 16   // items
)

// rangeScanned, when set (by tests), is told what each gatherSpans read: the entries it
// gathered and the items it walked.
var rangeScanned func(entries, walked int)

// gatherSpans is indexScanSpans of spans other than one value: it gathers the spans' entries
// from sequence from, sorts them and hands visit the items, which hands fn those of ranges.
// For one span it walks the items of ranges meanwhile, when it can (rangeWalker).
func (p *Partition) gatherSpans(snap *storage.Snapshot, docs *docReader, path string, prefix []byte, spans []valueSpan,
	ranges []epk.Range, from uint64, visit func(seq uint64) (bool, error), fn func(d Doc) bool) error {
	var w *rangeWalk
	walk := len(spans) == 1 // until the walk turns out impossible
	defer func() {
		if w != nil {
			w.close()
		}
	}()
	var seqs []uint64
	entries := 0
	if rangeScanned != nil {
		defer func() { rangeScanned(entries, w.count()) }()
	}
	// gather reads sp's entries a step at a time, and walks a step after each; done is true
	// once the walk has given fn what it wants.
	gather := func(sp valueSpan) (done bool, err error) {
		it, err := snap.NewIter(p.indexBound(prefix, sp.lo), p.indexBound(prefix, sp.hi))
		if err != nil {
			return false, err
		}
		defer it.Close()
		first := gatherFirst
		if _, ok := logicalRange(ranges); ok && walk {
			first = 0
		}
		it.First()
		for step := first; it.Valid(); step = gatherStep {
			for n := 0; n < step && it.Valid(); n, _ = n+1, it.Next() {
				entries++
				_, seq, err := storage.ParseIndexEntry(it.Key(), len(prefix))
				if err != nil {
					return false, err
				}
				if seq >= from {
					seqs = append(seqs, seq)
				}
			}
			if !walk || !it.Valid() {
				continue
			}
			if w == nil { // only now: most ranges that match little are gathered in the first step
				if w, err = p.rangeWalker(snap, docs, path, sp, ranges, from); err != nil {
					return false, err
				}
				if w == nil {
					walk = false
					continue
				}
			}
			if done, err := w.step(walkStep, fn); done || err != nil {
				return true, err
			}
		}
		return false, it.Error()
	}
	for _, sp := range spans {
		if done, err := gather(sp); done || err != nil {
			return err
		}
	}
	if w != nil {
		from = w.next // the walk passed on every item before
	}
	slices.Sort(seqs)
	for _, seq := range slices.Compact(seqs) {
		if seq < from {
			continue
		}
		if more, err := visit(seq); !more || err != nil {
			return err
		}
	}
	return nil
}

// rangeWalk hands fn, in creation order, the items of the partition, or of one of its logical
// partitions, whose value at a path the index records within a span, as the index would.
type rangeWalk struct {
	it      *storage.Iter // the creation order, or the logical partition's documents
	docs    *docReader    // reads the documents the creation order names; nil for a logical partition
	live    liveness      // for a logical partition's documents, which are read directly
	logical []byte        // the logical partition's EPK, when one is walked
	segs    []string
	span    valueSpan
	next    uint64 // every item below this sequence has been walked
	walked  int    // items walked, for rangeScanned
	entry   []byte // scratch: what the item's index entry would hold, value and sequence
}

// rangeWalker returns the walk of ranges from sequence from, or nil when the items of ranges
// cannot be walked in creation order (they are not the partition or one logical partition of
// it), or their content does not tell their index entries: some item is kept out of the index,
// or path is not a property path.
func (p *Partition) rangeWalker(snap *storage.Snapshot, docs *docReader, path string, span valueSpan, ranges []epk.Range, from uint64) (*rangeWalk, error) {
	segs, ok := value.SplitTermPath(path)
	if !ok || indexing.IsFullTextTermPath(path) || !p.AllIndexed() || len(ranges) != 1 {
		return nil, nil
	}
	w := &rangeWalk{segs: segs, span: span, next: from}
	var start, end []byte
	if e, ok := logicalRange(ranges); ok {
		start, end = storage.DocLogicalSpan(p.container, string(e), from)
		w.logical, w.live = []byte(e), p.liveness()
	} else if ranges[0] == p.rng {
		start = storage.OrderKey(nil, p.container, p.id, from)
		_, end = storage.OrderPartitionSpan(p.container, p.id)
		w.docs = docs
	} else {
		return nil, nil
	}
	it, err := snap.NewIter(start, end)
	if err != nil {
		return nil, err
	}
	it.First()
	w.it = it
	return w, nil
}

// step walks up to n items; done is true once fn has what it wants or every item is walked.
func (w *rangeWalk) step(n int, fn func(d Doc) bool) (done bool, err error) {
	for ; n > 0 && w.it.Valid(); n-- {
		seq, err := storage.SeqOf(w.it.Key())
		if err != nil {
			return true, err
		}
		w.next = seq + 1
		w.walked++
		var d Doc
		if w.docs != nil {
			e := w.it.Value()
			s, ok, err := w.docs.get(e, seq)
			if err != nil || !ok {
				w.it.Next()
				if err != nil {
					return true, err
				}
				continue
			}
			d = s.doc(e, seq)
		} else {
			s, err := decodeValue(w.it.Value())
			if err != nil {
				return true, err
			}
			if w.live.expired(w.logical, s) {
				w.it.Next()
				continue
			}
			d = s.doc(w.logical, seq)
		}
		if w.holds(d.JSON, seq) && !fn(d) {
			return true, nil
		}
		w.it.Next()
	}
	return !w.it.Valid(), w.it.Error()
}

// holds reports whether the item seq, whose JSON is doc, has an index entry in the span: the
// entry termsOf writes for its value at the path, which is an array's or an object's marker
// for those.
func (w *rangeWalk) holds(doc []byte, seq uint64) bool {
	raw, ok := document.Lookup(doc, w.segs)
	if !ok {
		return false
	}
	switch raw[0] {
	case '[':
		w.entry = append(w.entry[:0], value.OrderedMarker(value.Array))
	case '{':
		w.entry = append(w.entry[:0], value.OrderedMarker(value.Object))
	default:
		v, err := value.Parse(raw)
		if err != nil {
			return false
		}
		w.entry, _ = value.AppendIndexed(w.entry[:0], v)
	}
	w.entry = binary.BigEndian.AppendUint64(w.entry, seq)
	return bytes.Compare(w.entry, w.span.lo) >= 0 && bytes.Compare(w.entry, w.span.hi) < 0
}

func (w *rangeWalk) close() { w.it.Close() }

// count is how many items w walked; none when there is no walk.
func (w *rangeWalk) count() int {
	if w == nil {
		return 0
	}
	return w.walked
}
