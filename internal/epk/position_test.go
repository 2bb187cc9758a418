package epk

import (
	"slices"
	"testing"
)

func TestPosition(t *testing.T) {
	for _, s := range []Scheme{SchemeV1, SchemeV2, SchemeMulti} {
		if got := s.Position(Min); got != 0 {
			t.Errorf("%v: Min at %v", s, got)
		}
		if got := s.Position(Max); got != 1 {
			t.Errorf("%v: Max at %v", s, got)
		}
		// The initial ranges divide the hash space evenly: each is a quarter of it.
		for i, r := range InitialRanges(s, 4) {
			if w := s.Position(r.Max) - s.Position(r.Min); w < 0.2499 || w > 0.2501 {
				t.Errorf("%v: range %d [%x, %x) is %.4f of the space, not a quarter", s, i, r.Min, r.Max, w)
			}
		}
	}
	// Keys land inside, in the order of their EPKs.
	for _, s := range []Scheme{SchemeV1, SchemeV2} {
		var es []EPK
		for _, k := range []string{"a", "tenant-42", "zz", "0", "β", "tenant-43"} {
			es = append(es, s.Hash(Key{String(k)}))
		}
		slices.Sort(es)
		prev := 0.0
		for _, e := range es {
			p := s.Position(e)
			if p <= prev || p >= 1 {
				t.Errorf("%v: %x at %v, after %v", s, e, p, prev)
			}
			prev = p
		}
	}
}
