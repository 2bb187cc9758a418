package partitiontest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/partition"
	"github.com/partita-db/partita/internal/storage"
	"github.com/partita-db/partita/internal/value"
)

// itemKey names an item.
type itemKey struct {
	EPK epk.EPK
	ID  string
}

type indexEntry struct {
	c     itemKey
	value string // decoded for printing
	raw   string
}

func (env *Env) entryName(c itemKey) string { return env.items.ItemName(c.EPK, c.ID) }

func pairOf(a, b []byte) [2][]byte { return [2][]byte{a, b} }

// handleIndex prints each open partition's index at a top-level path in value order, and
// checks it against the items: one entry per item with a value at the path, recording its
// current value, and nothing else.
//
//	index path=/p
func (env *Env) handleIndex(t *testing.T, d *datadriven.TestData) string {
	var path string
	d.ScanArgs(t, "path", &path)
	if strings.Count(path, "/") != 1 {
		t.Fatal("index checks top-level paths only")
	}
	var b strings.Builder
	for _, p := range env.parts {
		var got []indexEntry
		_, err := p.IndexOrdered(partition.OrderedRead{Path: path, Range: epk.All, From: []byte{0}, To: []byte{0xff}}, func(d partition.Doc, v []byte) bool {
			got = append(got, indexEntry{c: itemKey{d.EPK(), d.ID()}, value: decodeOrdered(v), raw: string(v)})
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
		want := map[itemKey]string{}
		seqOf := map[itemKey]uint64{}
		itemOf := map[uint64]itemKey{}
		complete := true
		err = p.Scan([]epk.Range{epk.All}, 0, func(d partition.Doc) bool {
			e, id := d.EPK(), d.ID()
			seqOf[itemKey{e, id}], itemOf[d.Seq] = d.Seq, itemKey{e, id}
			v, err := value.Parse(d.JSON)
			if err != nil {
				t.Fatal(err)
			}
			var at value.Value
			found := false
			for _, m := range v.Members() {
				if "/"+m.Key == path {
					at, found = m.Val, true
				}
			}
			if !found {
				complete = false
				return true
			}
			enc, ok := value.AppendIndexed(nil, at)
			if !ok {
				enc, complete = []byte{value.OrderedMarker(at.Kind())}, false
			}
			want[itemKey{EPK: e, ID: id}] = string(enc)
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		var problems []string
		seen := map[itemKey]bool{}
		for _, g := range got {
			names = append(names, env.entryName(g.c)+"="+g.value)
			w, ok := want[g.c]
			switch {
			case !ok:
				problems = append(problems, "EXTRA "+env.entryName(g.c)+"="+g.value)
			case seen[g.c]:
				problems = append(problems, "DUPLICATE "+env.entryName(g.c)+"="+g.value)
			case w != g.raw:
				problems = append(problems, "STALE "+env.entryName(g.c)+"="+g.value+", the item has "+decodeOrdered([]byte(w)))
			}
			seen[g.c] = true
		}
		for c, w := range want {
			if !seen[c] {
				problems = append(problems, "MISSING "+env.entryName(c)+"="+decodeOrdered([]byte(w)))
			}
		}
		// IndexScan over every value must name the same items, in creation order.
		var scanned []uint64
		err = p.IndexScan(path, []byte{0}, []byte{0xff}, []epk.Range{epk.All}, 0, func(d partition.Doc) bool {
			scanned = append(scanned, d.Seq)
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
		var wantScan []uint64
		for c := range seen {
			wantScan = append(wantScan, seqOf[c])
		}
		slices.Sort(wantScan)
		if fmt.Sprint(scanned) != fmt.Sprint(wantScan) {
			problems = append(problems, fmt.Sprintf("IndexScan lists %v, the entries %v", scanned, wantScan))
		}
		// Unbounded, IndexOrdered must answer exactly when every item has a primitive there.
		ok, err := p.IndexOrdered(partition.OrderedRead{Path: path, Range: epk.All}, func(partition.Doc, []byte) bool { return false })
		if err != nil {
			t.Fatal(err)
		}
		if ok != complete {
			problems = append(problems, fmt.Sprintf("IndexOrdered says the order is complete: %v, the items: %v", ok, complete))
		}
		// No entry of the partition's index or creation order, at any path, may name an item
		// that is not one of its own.
		for _, span := range [][2][]byte{pairOf(storage.IndexPartitionSpan(container, p.ID())), pairOf(storage.OrderPartitionSpan(container, p.ID()))} {
			it, err := env.db.NewIter(span[0], span[1])
			if err != nil {
				t.Fatal(err)
			}
			for it.First(); it.Valid(); it.Next() {
				seq, err := storage.SeqOf(it.Key())
				if err != nil {
					t.Fatal(err)
				}
				if _, ok := itemOf[seq]; !ok {
					problems = append(problems, fmt.Sprintf("STRAY entry %x for sequence %d", it.Key()[0], seq))
				}
			}
			if err := errors.Join(it.Error(), it.Close()); err != nil {
				t.Fatal(err)
			}
		}
		sort.Strings(problems)
		fmt.Fprintf(&b, "p%d: %s\n", p.ID(), strings.Join(names, " "))
		for _, pr := range problems {
			b.WriteString("  " + pr + "\n")
		}
	}
	return b.String()
}

// handleIndexEntries lists the raw index entries in storage of partition id N, open or not:
// at path /p, by item and value, or everywhere, as a count.
//
//	index-entries id=N [path=/p]
func (env *Env) handleIndexEntries(t *testing.T, d *datadriven.TestData) string {
	var id uint32
	var path string
	d.ScanArgs(t, "id", &id)
	d.MaybeScanArgs(t, "path", &path)
	return env.indexEntries(t, id, path)
}

// indexEntries lists the raw index entries of partition id (at path, or everywhere).
func (env *Env) indexEntries(t testing.TB, id uint32, path string) string {
	start, end := storage.IndexPartitionSpan(container, id)
	if path != "" {
		prefix := storage.IndexPathPrefix(path)
		start = storage.IndexBound(container, id, prefix)
		end = storage.IndexBound(container, id, append(prefix, 0xff))
	}
	it, err := env.db.NewIter(start, end)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var out []string
	n := 0
	for it.First(); it.Valid(); it.Next() {
		n++
		if path == "" {
			continue
		}
		v, seq, err := storage.ParseIndexEntry(it.Key(), len(storage.IndexPathPrefix(path)))
		if err != nil {
			t.Fatal(err)
		}
		e, itemID, err := partition.ItemAt(env.db, container, id, seq)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, env.items.ItemName(e, itemID)+"="+decodeOrdered(v))
	}
	if err := it.Error(); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		return "none"
	}
	if path == "" {
		return fmt.Sprintf("%d entries", n)
	}
	return strings.Join(out, " ")
}

// decodeOrdered prints a value encoded by value.AppendOrdered, or a marker.
func decodeOrdered(v []byte) string {
	if len(v) == 0 {
		return "?"
	}
	switch v[0] {
	case 0x01:
		return "null"
	case 0x02:
		return "false"
	case 0x03:
		return "true"
	case 0x04:
		if len(v) < 9 {
			return "?"
		}
		bits := binary.BigEndian.Uint64(v[1:9])
		if bits>>63 == 1 {
			bits &^= 1 << 63
		} else {
			bits = ^bits
		}
		return strconv.FormatFloat(math.Float64frombits(bits), 'g', -1, 64)
	case 0x05:
		var out []byte
		for i := 1; i < len(v); i++ {
			if v[i] == 0 && i+1 < len(v) {
				if v[i+1] == 1 {
					break
				}
				i++
			}
			out = append(out, v[i])
		}
		return strconv.Quote(string(out))
	case 0x06:
		return "[...]"
	case 0x07:
		return "{...}"
	}
	return "?"
}
