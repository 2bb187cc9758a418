package ru

import (
	"testing"
	"time"
)

func TestBudget(t *testing.T) {
	var b Budget
	b.SetRate(10)
	t0 := time.Unix(1000, 0)
	for i := range 2 {
		if ok, _ := b.Admit(t0); !ok {
			t.Fatalf("request %d refused within the budget", i)
		}
		b.Spend(t0, 6) // the second request takes the budget below zero
	}
	ok, retry := b.Admit(t0.Add(300 * time.Millisecond))
	if ok || retry != 700*time.Millisecond {
		t.Fatalf("over budget: admitted %v, retry after %v", ok, retry)
	}
	if ok, _ := b.Admit(t0.Add(time.Second)); !ok {
		t.Fatal("the budget must renew the next second")
	}
	s := b.StatsAt(t0.Add(time.Second))
	if s.Throttled != 1 || s.Total != 12 || s.NormalizedUse != 1.2 || s.LastSecond != 12 || s.LastMinute != 12 {
		t.Fatalf("stats %+v", s)
	}
	b.Spend(t0.Add(30*time.Second), 5)
	if s := b.StatsAt(t0.Add(59 * time.Second)); s.LastMinute != 17 {
		t.Fatalf("in the minute: %v RUs, want 17", s.LastMinute)
	}
	if s := b.StatsAt(t0.Add(61 * time.Second)); s.LastMinute != 5 {
		t.Fatalf("a minute on: %v RUs, want the 5 spent since", s.LastMinute)
	}
	var unlimited Budget
	unlimited.Spend(t0, 1e9)
	if ok, _ := unlimited.Admit(t0); !ok {
		t.Fatal("an unset budget never refuses")
	}
}
