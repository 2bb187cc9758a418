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
		if ok, _ := b.Admit(t0, High); !ok {
			t.Fatalf("request %d refused within the budget", i)
		}
		b.Spend(t0, 6, High) // the second request takes the budget below zero
	}
	ok, retry := b.Admit(t0.Add(300*time.Millisecond), High)
	if ok || retry != 700*time.Millisecond {
		t.Fatalf("over budget: admitted %v, retry after %v", ok, retry)
	}
	if ok, _ := b.Admit(t0.Add(time.Second), High); !ok {
		t.Fatal("the budget must renew the next second")
	}
	s := b.StatsAt(t0.Add(time.Second))
	if s.Throttled != 1 || s.Total != 12 || s.NormalizedUse != 1.2 || s.LastSecond != 12 || s.LastMinute != 12 {
		t.Fatalf("stats %+v", s)
	}
	b.Spend(t0.Add(30*time.Second), 5, High)
	if s := b.StatsAt(t0.Add(59 * time.Second)); s.LastMinute != 17 {
		t.Fatalf("in the minute: %v RUs, want 17", s.LastMinute)
	}
	if s := b.StatsAt(t0.Add(61 * time.Second)); s.LastMinute != 5 {
		t.Fatalf("a minute on: %v RUs, want the 5 spent since", s.LastMinute)
	}
	var unlimited Budget
	unlimited.Spend(t0, 1e9, High)
	if ok, _ := unlimited.Admit(t0, High); !ok {
		t.Fatal("an unset budget never refuses")
	}
}

// A partition's figures are its replicas' added second by second.
func TestStatsOf(t *testing.T) {
	var a, b Budget
	a.SetRate(100)
	b.SetRate(100)
	t0 := time.Unix(2000, 0)
	a.Spend(t0, 40, High)
	b.Spend(t0, 50, High) // the same second on another replica: 90 in all
	a.Spend(t0.Add(time.Second), 30, High)
	a.Spend(t0.Add(-90*time.Second), 1000, High) // long gone
	now := t0.Add(2 * time.Second)
	s := StatsOf(100, append(a.Seconds(now), b.Seconds(now)...), now.Unix())
	if s.LastSecond != 30 || s.LastMinute != 120 || s.NormalizedUse != 0.9 || s.PerSecond != 100 {
		t.Fatalf("stats %+v", s)
	}
	if got := a.Seconds(now); len(got) != 2 || got[0] != (SecondSpent{Second: 2000, RU: 40}) {
		t.Fatalf("seconds %+v", got)
	}
}
