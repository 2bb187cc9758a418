package partition

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/storage"
	"github.com/partita-db/partita/internal/value"
)

// IndexScan of a range of values gives, page by page, the items whose index entries are in
// the range, in creation order, whether it gathers the range's entries or walks the items:
// for every kind of value at a path (numbers, strings cut by the index, arrays, objects,
// null, booleans, none, a duplicated key), nested and escaped paths, replaced and deleted
// items, the whole partition and one logical partition, from the start and from the middle.
// Each page is checked against the items' index terms as the writer computes them. A page of
// a broad range walks about what it returns; a narrow range gathers its few entries and does
// not walk.
func TestIndexScanRangeWalksAndGathers(t *testing.T) {
	defer func(f, g, w int) { gatherFirst, gatherStep, walkStep = f, g, w }(gatherFirst, gatherStep, walkStep)
	gatherFirst, gatherStep, walkStep = 100, 32, 2
	p := openWhole(t)
	pks := []string{"a", "b", "c"}
	epkOf := func(pk string) epk.EPK { return epk.SchemeV2.Hash(epk.Key{epk.String(pk)}) }
	long := strings.Repeat("L", value.MaxIndexedString)
	body := func(i, n int) string {
		var v string
		switch i % 50 {
		case 0:
			v = fmt.Sprintf(`"s%d"`, i%7)
		case 10:
			v = fmt.Sprintf(`"%s"`, long) // exactly what the index keeps
		case 20:
			v = fmt.Sprintf(`"%s%d"`, long, i%3) // cut to the same entry
		case 1:
			v = fmt.Sprintf(`[%d]`, n)
		case 2:
			v = fmt.Sprintf(`{"x":%d}`, n)
		case 3:
			return fmt.Sprintf(`{"id":"%d","pk":%q}`, i, pks[i%3])
		case 4:
			v = "null"
		case 5:
			v = "true"
		case 6:
			v = fmt.Sprintf(`"dup", "n" : %d.5`, n) // the later of two keys counts
		default:
			v = fmt.Sprint(n)
		}
		return fmt.Sprintf(`{"id":"%d","pk":%q, "n": %s,"o":{"x":%d,"y":[1]},"a/b~[c":%d}`, i, pks[i%3], v, n%100, n%3)
	}
	write := func(kind OpKind, i, n int) {
		t.Helper()
		item, key, err := document.Parse([]byte(body(i, n)), [][]string{{"pk"}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Execute(Operation{Kind: kind, EPK: epk.SchemeV2.Hash(key), ID: fmt.Sprint(i), Item: item}); err != nil {
			t.Fatal(err)
		}
	}
	const items = 3000
	for i := range items {
		write(Create, i, i)
	}
	for i := 0; i < items; i += 7 {
		write(Replace, i, -i) // moves out of the high ranges, later in the log than its creation
	}
	for i := 0; i < items; i += 11 {
		if _, err := p.Execute(Operation{Kind: Delete, EPK: epkOf(pks[i%3]), ID: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}

	num := func(f float64) []byte { b, _ := value.AppendIndexed(nil, value.Num(f)); return b }
	past := func(b []byte) []byte { return append(b[:len(b):len(b)], 0xFF) }
	typ := func(k value.Kind) valueSpan {
		return valueSpan{[]byte{value.OrderedTypeStart(k)}, []byte{value.OrderedTypeEnd(k)}}
	}
	numbers, strs := typ(value.Number), typ(value.String)
	spans := []struct {
		name string
		span valueSpan
	}{
		{"numbers", numbers},
		{">= 1500", valueSpan{num(1500), numbers.hi}},
		{"> 1500", valueSpan{past(num(1500)), numbers.hi}},
		{">= 2900", valueSpan{num(2900), numbers.hi}},
		{"< 100", valueSpan{numbers.lo, num(100)}},
		{"strings", strs},
		{"everything", valueSpan{[]byte{0}, []byte{0xFF}}},
	}
	whole := []epk.Range{epk.All}
	a := epkOf("a")
	logical := []epk.Range{{Min: a, Max: a + "\x00"}}
	// want lists the items of ranges from sequence from with an entry at path in span, from
	// their terms as the writer computes them.
	want := func(path string, span valueSpan, ranges []epk.Range, from uint64) []uint64 {
		prefix := storage.IndexPathPrefix(path)
		var out []uint64
		if err := p.Scan(ranges, from, func(d Doc) bool {
			terms, err := IndexTerms(d.JSON, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, term := range terms {
				entry := binary.BigEndian.AppendUint64(bytes.Clone(term), d.Seq)
				if bytes.HasPrefix(term, prefix) && bytes.Compare(entry[len(prefix):], span.lo) >= 0 && bytes.Compare(entry[len(prefix):], span.hi) < 0 {
					out = append(out, d.Seq)
					break
				}
			}
			return true
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	var read struct{ entries, walked int }
	rangeScanned = func(entries, walked int) { read.entries, read.walked = entries, walked }
	defer func() { rangeScanned = nil }()
	// page reads up to k items (0: all) as IndexScan gives them.
	page := func(path string, span valueSpan, ranges []epk.Range, from uint64, k int) []uint64 {
		var out []uint64
		if err := p.IndexScan(path, span.lo, span.hi, ranges, from, func(d Doc) bool {
			out = append(out, d.Seq)
			return len(out) != k
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	paths := []string{"/n", "/o/x", value.TermPath([]string{"a/b~[c"})}
	walks := 0
	for _, path := range paths {
		for _, sp := range spans {
			for rname, ranges := range map[string][]epk.Range{"whole": whole, "logical": logical} {
				all := want(path, sp.span, ranges, 0)
				for _, from := range []uint64{0, items / 2} {
					full := want(path, sp.span, ranges, from)
					for _, k := range []int{1, 10, 100, 0} {
						got := page(path, sp.span, ranges, from, k)
						exp := full
						if k > 0 && k < len(exp) {
							exp = exp[:k]
						}
						if !slices.Equal(got, exp) {
							t.Fatalf("%s %s, %s from %d, page of %d: %v, want %v", path, sp.name, rname, from, k, got, exp)
						}
						if read.walked > 0 {
							walks++
						}
						if k == 10 && from == 0 {
							t.Logf("%s %s, %s: %d matches, read %d entries, walked %d", path, sp.name, rname, len(all), read.entries, read.walked)
						}
						// A broad range's page of 10 from the start: about what it returns,
						// never every entry of the range.
						if k == 10 && from == 0 && len(all) > 1000 && (read.walked > 100 || read.entries > len(all)/2) {
							t.Errorf("%s %s, %s: a page of 10 of %d matches read %d entries and walked %d items", path, sp.name, rname, len(all), read.entries, read.walked)
						}
						// A narrow one (no more entries than the first step) does not walk at all.
						if rname == "whole" && len(all) <= gatherFirst && read.walked > 0 {
							t.Errorf("%s %s, %s: %d matches, and a page of %d walked %d items", path, sp.name, rname, len(all), k, read.walked)
						}
					}
				}
			}
		}
	}
	if walks == 0 {
		t.Fatal("no read walked the items")
	}
}

// BenchmarkIndexScanRange reads a page of ranges that 50%, 5% and 0.5% of 20,000 items of 1 KB
// match (spread evenly over creation order) three ways: gathering the range's entries only,
// walking the items only, and both at once as IndexScan does. The first two give the cost of an
// entry gathered and of an item walked, which set gatherStep and walkStep.
//
//	go test ./internal/partition -run XXX -bench IndexScanRange
func BenchmarkIndexScanRange(b *testing.B) {
	p := openWhole(b)
	const items = 20000
	pad := strings.Repeat("x", 960)
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Go(func() {
			for i := w; i < items; i += 16 {
				item, key, err := document.Parse(fmt.Appendf(nil, `{"id":"%d","pk":"k%d","n":%d,"pad":%q}`, i, i%100, i*7919%1000, pad), [][]string{{"pk"}})
				if err == nil {
					_, err = p.Execute(Operation{Kind: Create, EPK: epk.SchemeV2.Hash(key), ID: fmt.Sprint(i), Item: item})
				}
				if err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	num := func(f float64) []byte { b, _ := value.AppendIndexed(nil, value.Num(f)); return b }
	hi := []byte{value.OrderedTypeEnd(value.Number)}
	defer func(f, g, w int) { gatherFirst, gatherStep, walkStep = f, g, w }(gatherFirst, gatherStep, walkStep)
	for _, share := range []struct {
		name string
		lo   float64
	}{{"50%", 500}, {"5%", 950}, {"0.5%", 995}} {
		for _, page := range []int{10, 100} {
			for _, way := range []struct {
				name                string
				first, gather, walk int
			}{{"gather", 1 << 30, 1 << 30, walkStep}, {"walk", 0, 0, walkStep}, {"both", gatherFirst, gatherStep, walkStep}} {
				b.Run(fmt.Sprintf("%s/page=%d/%s", share.name, page, way.name), func(b *testing.B) {
					gatherFirst, gatherStep, walkStep = way.first, way.gather, way.walk
					var entries, walked int
					rangeScanned = func(e, w int) { entries, walked = e, w }
					defer func() { rangeScanned = nil }()
					for b.Loop() {
						n := 0
						if err := p.IndexScan("/n", num(share.lo), hi, []epk.Range{epk.All}, 0, func(Doc) bool {
							n++
							return n < page
						}); err != nil || n != page {
							b.Fatalf("%d items, %v", n, err)
						}
					}
					b.ReportMetric(float64(entries), "entries/op")
					b.ReportMetric(float64(walked), "walked/op")
				})
			}
		}
	}
}
