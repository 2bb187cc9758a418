package query

import (
	"testing"
)

// A resume after a position carries the floors of the ranges past it, so that a split's
// right child still resumes after its parent's sequence while the left child is read.
func TestResumeAcrossSplits(t *testing.T) {
	var r *Resume // from the start
	if s, ok := r.Start("a", "b"); !ok || s != 0 {
		t.Fatalf("from the start: %d %v", s, ok)
	}
	// Page 1 stopped in the partition [a, z) at sequence 5.
	r1 := r.After(Position{Min: "a", Max: "z", Seq: 5})
	// It split at m: both children resume after 5; what comes after z starts over.
	for _, c := range []struct {
		min, max string
		start    uint64
		ok       bool
	}{{"a", "m", 6, true}, {"m", "z", 6, true}, {"z", "\xff", 0, true}, {"", "a", 0, false}} {
		if s, ok := r1.Start(c.min, c.max); s != c.start || ok != c.ok {
			t.Errorf("[%q,%q) after page 1: %d %v, want %d %v", c.min, c.max, s, ok, c.start, c.ok)
		}
	}
	// Page 2 stopped in the left child at 9: the right child still owes everything after 5.
	r2 := r1.After(Position{Min: "a", Max: "m", Seq: 9})
	for _, c := range []struct {
		min, max string
		start    uint64
		ok       bool
	}{{"a", "m", 10, true}, {"m", "z", 6, true}, {"m", "q", 6, true}, {"z", "\xff", 0, true}} {
		if s, ok := r2.Start(c.min, c.max); s != c.start || ok != c.ok {
			t.Errorf("[%q,%q) after page 2: %d %v, want %d %v", c.min, c.max, s, ok, c.start, c.ok)
		}
	}
	back, ok := DecodeResume(EncodeResume(r2))
	if !ok || back.Min != r2.Min || len(back.Floors) != 2 || back.Floors[1] != r2.Floors[1] {
		t.Fatalf("round trip: %+v %v", back, ok)
	}
}

// Tokens come from clients: whatever they hold, decoding never panics, and what it accepts
// encodes back to the same resume.
func FuzzDecodeResume(f *testing.F) {
	f.Add(EncodeResume(Resume{Min: "a", Floors: []Floor{{Max: "m", Seq: 9}, {Max: "z", Seq: 5}}}))
	f.Add("eyJhIjoiIiwiZiI6W119")
	f.Add("!!")
	f.Fuzz(func(t *testing.T, s string) {
		r, ok := DecodeResume(s)
		if !ok {
			return
		}
		again, ok := DecodeResume(EncodeResume(*r))
		if !ok || again.Min != r.Min || len(again.Floors) != len(r.Floors) {
			t.Fatalf("%q decodes to %+v, which does not round trip", s, r)
		}
		prev := r.Min
		for _, fl := range r.Floors {
			if fl.Max <= prev {
				t.Fatalf("%q: floors do not ascend: %+v", s, r)
			}
			prev = fl.Max
		}
	})
}
