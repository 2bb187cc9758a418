package storage

import (
	"bytes"
	"math/rand/v2"
	"sort"
	"testing"
)

// Item keys must sort exactly as their (EPK, id) tuples do, for any bytes, and a
// partition's span must hold exactly the keys whose EPK it owns.
func TestItemKeyOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	word := func() string {
		b := make([]byte, r.IntN(5))
		for i := range b {
			b[i] = []byte{0, 1, 0xFE, 0xFF, 'a'}[r.IntN(5)]
		}
		return string(b)
	}
	type tuple struct{ epk, id string }
	tuples := make([]tuple, 2000)
	for i := range tuples {
		tuples[i] = tuple{word(), word()}
	}
	less := func(a, b tuple) bool {
		if a.epk != b.epk {
			return a.epk < b.epk
		}
		return a.id < b.id
	}
	for i := 0; i < len(tuples)-1; i++ {
		a, b := tuples[i], tuples[i+1]
		ka, kb := ItemKey(nil, 7, a.epk, a.id), ItemKey(nil, 7, b.epk, b.id)
		if got, want := bytes.Compare(ka, kb) < 0, less(a, b); got != want && a != b {
			t.Fatalf("(%x,%x) vs (%x,%x): key order %v, tuple order %v", a.epk, a.id, b.epk, b.id, got, want)
		}
		lo, hi := ItemSpan(7, min(a.epk, b.epk), max(a.epk, b.epk))
		for _, tu := range []tuple{a, b} {
			k := ItemKey(nil, 7, tu.epk, tu.id)
			inSpan := bytes.Compare(k, lo) >= 0 && bytes.Compare(k, hi) < 0
			owned := tu.epk >= min(a.epk, b.epk) && tu.epk < max(a.epk, b.epk)
			if inSpan != owned {
				t.Fatalf("key of EPK %x in span [%x,%x): %v, owned: %v", tu.epk, a.epk, b.epk, inSpan, owned)
			}
		}
	}
	keys := make([][]byte, len(tuples))
	for i, tu := range tuples {
		keys[i] = ItemKey(nil, 7, tu.epk, tu.id)
	}
	sort.Slice(keys, func(i, j int) bool { return bytes.Compare(keys[i], keys[j]) < 0 })
	lo, hi := containerSpan(familyItem, 7)
	if bytes.Compare(keys[0], lo) < 0 || bytes.Compare(keys[len(keys)-1], hi) >= 0 {
		t.Fatal("document keys escape their container's span")
	}
}
