package epk

import (
	"math"
	"testing"
)

// The number a version 1 EPK begins with reads back, and the midpoint of a version 1 range
// splits its hashes in half, for the full range and for ranges with key components after the
// number.
func TestMidpointV1(t *testing.T) {
	for _, f := range []float64{0, 1, 2, 3, 255, 256, 65535, 1 << 31, 1<<32 - 1, 12345.5} {
		if got, ok := hashNumber(EPK(appendNumber(nil, f))); !ok || got != f {
			t.Fatalf("%v reads back as %v %v", f, got, ok)
		}
	}
	m, ok := MidpointV1(Range{Min: Min, Max: Max})
	if h, _ := hashNumber(m); !ok || h != 1<<31 {
		t.Fatalf("the full range's midpoint: %x (hash %v)", m, h)
	}
	// Keys hashed under version 1 spread evenly over the two halves.
	left := 0
	for i := range 4000 {
		if HashV1(Key{String(string(rune('a'+i%26)) + string(rune(i)))}) < m {
			left++
		}
	}
	if left < 1700 || left > 2300 {
		t.Fatalf("%d of 4000 keys in the left half", left)
	}
	// A bound with key components after the number.
	lo := HashV1(Key{String("some key")})
	r := Range{Min: lo, Max: Max}
	m2, ok := MidpointV1(r)
	hlo, _ := hashNumber(lo)
	h2, _ := hashNumber(m2)
	if !ok || !(m2 > lo && m2 < Max) || math.Abs(h2-(hlo+(1<<32))/2) > 1 {
		t.Fatalf("midpoint of %x..Max: %x (hash %v of %v..2^32) %v", lo, m2, h2, hlo, ok)
	}
	if _, ok := MidpointV1(Range{Min: EPK(appendNumber(nil, 7)), Max: EPK(appendNumber(nil, 8))}); ok {
		t.Fatal("a range of one hash has a midpoint")
	}
}
