package ru

import (
	"testing"
	"time"
)

func TestTrend(t *testing.T) {
	var b Budget
	b.SetRate(100)
	t0 := time.Unix(1000, 0) // a window boundary: 1000 is a multiple of TrendStep
	b.Spend(t0, 30, High)
	b.Spend(t0, 20, High)                     // 50 in second 1000
	b.Spend(t0.Add(2*time.Second), 80, High)  // the busiest second of the first window
	b.Spend(t0.Add(20*time.Second), 10, High) // a later window; the ones between spent nothing
	got := b.Trend(t0.Add(21 * time.Second))
	want := []TrendPoint{
		{Start: time.Unix(1000, 0), PeakRU: 80, Normalized: 0.8},
		{Start: time.Unix(1020, 0), PeakRU: 10, Normalized: 0.1},
	}
	if len(got) != len(want) {
		t.Fatalf("trend %+v, want %+v", got, want)
	}
	for i := range want {
		if !got[i].Start.Equal(want[i].Start) || got[i].PeakRU != want[i].PeakRU || got[i].Normalized != want[i].Normalized {
			t.Fatalf("point %d is %+v, want %+v", i, got[i], want[i])
		}
	}

	// Five minutes on, the first window has left the trend; its slot is reused by a new one.
	later := t0.Add(trendLen * TrendStep * time.Second)
	b.Spend(later, 5, High)
	got = b.Trend(later)
	if len(got) != 2 || !got[0].Start.Equal(time.Unix(1020, 0)) || got[1].PeakRU != 5 || !got[1].Start.Equal(later) {
		t.Fatalf("after five minutes the trend is %+v", got)
	}
	if got := b.Trend(later.Add(time.Hour)); len(got) != 0 {
		t.Fatalf("an hour later the trend still holds %+v", got)
	}

	// An unlimited budget keeps the RUs, with no share of a budget.
	var u Budget
	u.Spend(t0, 7, High)
	if got := u.Trend(t0); len(got) != 1 || got[0].PeakRU != 7 || got[0].Normalized != 0 {
		t.Fatalf("unlimited trend %+v", got)
	}
}
