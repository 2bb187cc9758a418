package ru

import (
	"context"
	"testing"
	"time"
)

// serveSecond runs one second of a budget: each round a High request (when high) and then a
// Low one (when low) of 10 RU each ask to run, until every one asking is refused; it reports
// what each level got.
func serveSecond(b *Budget, now time.Time, high, low bool) (gotHigh, gotLow float64) {
	for {
		admitted := false
		for _, p := range []Priority{High, Low} {
			if p == High && !high || p == Low && !low {
				continue
			}
			if ok, _ := b.Admit(now, p); ok {
				b.Spend(now, 10, p)
				admitted = true
				if p == High {
					gotHigh += 10
				} else {
					gotLow += 10
				}
			}
		}
		if !admitted {
			return
		}
	}
}

// Low requests are refused before High ones when together they want more than the budget;
// either alone gets the whole budget.
func TestPriority(t *testing.T) {
	t0 := time.Unix(9000, 0)
	var b Budget
	b.SetRate(100)
	if h, l := serveSecond(&b, t0, false, true); h != 0 || l != 100 {
		t.Fatalf("Low alone got %v, want the whole 100", l)
	}
	// Both want everything: after the first second (in which they share, and High is
	// refused), High gets it all.
	serveSecond(&b, t0.Add(time.Second), true, true)
	for s := 2; s < 5; s++ {
		if h, l := serveSecond(&b, t0.Add(time.Duration(s)*time.Second), true, true); h != 100 || l != 0 {
			t.Fatalf("second %d: High got %v and Low %v, want 100 and 0", s, h, l)
		}
	}
	// High wants 30 a second and no more: Low gets the rest, whichever asks first.
	var c Budget
	c.SetRate(100)
	for s := range 6 {
		now := t0.Add(time.Duration(s) * time.Second)
		high := func() (got float64) {
			for range 3 {
				if ok, _ := c.Admit(now, High); ok {
					c.Spend(now, 10, High)
					got += 10
				}
			}
			return got
		}
		var gotHigh, gotLow float64
		if s%2 == 0 {
			gotHigh = high()
			_, gotLow = serveSecond(&c, now, false, true)
		} else {
			_, gotLow = serveSecond(&c, now, false, true)
			gotHigh = high()
		}
		if gotHigh != 30 || s > 0 && gotLow != 70 {
			t.Fatalf("second %d: High got %v of its 30, Low %v (want 70)", s, gotHigh, gotLow)
		}
	}
	// Once High stops, Low gets the whole budget again.
	if _, l := serveSecond(&c, t0.Add(8*time.Second), false, true); l != 100 {
		t.Fatalf("Low alone after High stopped got %v", l)
	}
	if p, ok := ParsePriority("low"); !ok || p != Low {
		t.Fatal(`"low" does not read as Low`)
	}
	if _, ok := ParsePriority("Medium"); ok {
		t.Fatal(`"Medium" reads as a priority level`)
	}
	if PriorityOf(WithPriority(context.Background(), Low)) != Low || PriorityOf(context.Background()) != High || PriorityOf(nil) != High {
		t.Fatal("a context's priority")
	}
}
