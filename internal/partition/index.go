package partition

import (
	"bytes"
	"encoding/binary"
	"sort"
	"strings"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/storage"
	"github.com/partita-db/partita/internal/value"
)

// IndexTerms returns the range index terms of an item body: one per primitive value at each
// path (see value.Terms), encoded as storage.IndexTerm, sorted and without duplicates. System
// properties are not indexed.
func IndexTerms(body []byte) ([][]byte, error) {
	v, err := value.Parse(body)
	if err != nil {
		return nil, err
	}
	return TermsOf(v), nil
}

// TermsOf is IndexTerms of an item already parsed.
func TermsOf(v value.Value) [][]byte {
	var terms [][]byte
	var ord []byte
	value.Terms(v, func(path string, leaf value.Value) {
		if isSystemPath(path) {
			return
		}
		var ok bool
		if ord, ok = value.AppendIndexed(ord[:0], leaf); !ok {
			ord = append(ord[:0], value.OrderedMarker(leaf.Kind()))
		}
		terms = append(terms, storage.IndexTerm(nil, path, ord))
	})
	sort.Slice(terms, func(i, j int) bool { return bytes.Compare(terms[i], terms[j]) < 0 })
	out := terms[:0]
	for i, t := range terms {
		if i == 0 || !bytes.Equal(t, terms[i-1]) {
			out = append(out, t)
		}
	}
	return out
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

// IndexScan lists, in (EPK, id) order and once each, the items of the partition whose EPK is in
// r, that come after the cursor (at it, when inclusive), and that have an index entry at path
// with an encoded value in [lo, hi).
func (p *Partition) IndexScan(path string, lo, hi []byte, r epk.Range, after *Cursor) ([]Cursor, error) {
	prefix := storage.IndexPathPrefix(path)
	start := storage.IndexBound(p.container, p.id, append(prefix[:len(prefix):len(prefix)], lo...))
	end := storage.IndexBound(p.container, p.id, append(prefix[:len(prefix):len(prefix)], hi...))
	it, err := p.db.NewIter(start, end)
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var out []Cursor
	for it.First(); it.Valid(); it.Next() {
		e, id, err := storage.ParseIndexKey(it.Key(), len(prefix))
		if err != nil {
			return nil, err
		}
		c := Cursor{EPK: epk.EPK(e), ID: id}
		if !r.Contains(c.EPK) || after != nil && !after.before(c) {
			continue
		}
		out = append(out, c)
	}
	if err := it.Error(); err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].less(out[j]) })
	uniq := out[:0]
	for i, c := range out {
		if i == 0 || c != out[i-1] {
			uniq = append(uniq, c)
		}
	}
	return uniq, nil
}

func (c Cursor) less(d Cursor) bool {
	return c.EPK < d.EPK || c.EPK == d.EPK && c.ID < d.ID
}

// before reports whether d comes after the cursor (or is the cursor itself, if inclusive).
func (c Cursor) before(d Cursor) bool {
	if c.Inclusive && c.EPK == d.EPK && c.ID == d.ID {
		return true
	}
	return c.less(d)
}

// Get returns the item (e, id) with its creation order; ok is false when it does not exist.
func (p *Partition) Get(e epk.EPK, id string) (d Doc, ok bool, err error) {
	var buf [256]byte
	v, closer, err := p.db.Get(storage.DocKey(buf[:0], p.container, string(e), id))
	if storage.IsNotFound(err) {
		return Doc{}, false, nil
	}
	if err != nil {
		return Doc{}, false, err
	}
	defer closer.Close()
	docRID, lsn, json, err := decodeValue(v)
	if err != nil {
		return Doc{}, false, err
	}
	out := make([]byte, len(json))
	copy(out, json)
	return Doc{JSON: out, LSN: lsn, Created: binary.BigEndian.Uint64(docRID[:])}, true, nil
}

// IndexOrdered calls fn with the items of the partition whose EPK is in r, in the order of
// their value at path (descending when desc), with the encoded value each entry records.
// Values the index records equally (long strings cut to the same prefix) come in no
// particular order; the caller orders them by their full value.
//
// With bounds (encoded values [from, to)), only those entries are listed: the caller's filter
// excludes every other item. Without, ok is false and fn is not called when the index cannot
// give the full order: some item in r has no value at path, or an array or object there
// (those order by content, which the index does not keep).
func (p *Partition) IndexOrdered(path string, from, to []byte, r epk.Range, desc bool, fn func(c Cursor, value []byte) bool) (ok bool, err error) {
	prefix := storage.IndexPathPrefix(path)
	bounded := from != nil
	if !bounded {
		from, to = nil, []byte{0xFF}
	}
	start := storage.IndexBound(p.container, p.id, append(prefix[:len(prefix):len(prefix)], from...))
	end := storage.IndexBound(p.container, p.id, append(prefix[:len(prefix):len(prefix)], to...))
	it, err := p.db.NewIter(start, end)
	if err != nil {
		return false, err
	}
	defer it.Close()
	lo, hi := max(r.Min, p.rng.Min), min(r.Max, p.rng.Max)
	if !bounded {
		if ok, err := p.indexComplete(it, len(prefix), lo, hi); !ok || err != nil {
			return false, err
		}
	}
	next, valid := it.Next, it.First
	if desc {
		next, valid = it.Prev, it.Last
	}
	for valid(); it.Valid(); next() {
		v, e, id, err := storage.ParseIndexEntry(it.Key(), len(prefix))
		if err != nil {
			return true, err
		}
		if epk.EPK(e) < lo || epk.EPK(e) >= hi {
			continue
		}
		if !fn(Cursor{EPK: epk.EPK(e), ID: id}, v) {
			break
		}
	}
	return true, it.Error()
}

// indexComplete reports whether every item with an EPK in [lo, hi) has a primitive value in
// the index range it iterates.
func (p *Partition) indexComplete(it *storage.Iter, prefixLen int, lo, hi epk.EPK) (bool, error) {
	want, err := p.sumLogical(epk.Range{Min: lo, Max: hi})
	if err != nil {
		return false, err
	}
	var n int64
	for it.First(); it.Valid(); it.Next() {
		v, e, _, err := storage.ParseIndexEntry(it.Key(), prefixLen)
		if err != nil {
			return false, err
		}
		if epk.EPK(e) < lo || epk.EPK(e) >= hi {
			continue
		}
		if v[0] >= 0x06 {
			return false, nil // an array or object at path
		}
		n++
	}
	return n == want.Items, it.Error() // fewer: some item has no value at path
}
