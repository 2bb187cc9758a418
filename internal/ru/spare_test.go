package ru

import (
	"testing"
	"time"
)

func TestSpare(t *testing.T) {
	var b Budget
	b.SetRate(100)
	t0 := time.Unix(1000, 0)
	if s := b.Spare(t0); s != 100 {
		t.Fatalf("idle budget spares %v, want 100", s)
	}
	b.Spend(t0, 30, High)
	if s := b.Spare(t0.Add(100 * time.Millisecond)); s != 70 {
		t.Fatalf("spares %v, want 70", s)
	}
	// The next second: the last one's 30 still counts, as the busier of the two.
	if s := b.Spare(t0.Add(time.Second)); s != 70 {
		t.Fatalf("next second spares %v, want 70", s)
	}
	b.Spend(t0.Add(time.Second), 150, High) // over budget: nothing spare
	if s := b.Spare(t0.Add(time.Second)); s != 0 {
		t.Fatalf("spent budget spares %v, want 0", s)
	}
	if s := b.Spare(t0.Add(3 * time.Second)); s != 100 {
		t.Fatalf("after an idle second spares %v, want 100", s)
	}
}
