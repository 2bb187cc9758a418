package ru

import (
	"testing"
	"time"
)

// A partition under BurstRate banks what it leaves idle, up to BurstSeconds of its rate, and
// spends the bank on what its rate would refuse, at most BurstRate in a second; without burst
// capacity the same requests are refused.
func TestBurst(t *testing.T) {
	t0 := time.Unix(5000, 0)
	var on, off Budget
	for _, b := range []*Budget{&on, &off} {
		b.SetRate(100)
	}
	on.SetBurst(true, t0)
	// Idle for 10 s, then 40 RU spent in second 10: 10*100 banked before it, 60 of it after.
	on.Spend(t0.Add(10*time.Second), 40, High)
	if got := on.StatsAt(t0.Add(10 * time.Second)).Bank; got != 1000 {
		t.Fatalf("after 10 idle seconds the bank holds %v, want 1000", got)
	}
	if got := on.StatsAt(t0.Add(11 * time.Second)).Bank; got != 1060 {
		t.Fatalf("a second on, the bank holds %v, want 1060", got)
	}
	// Second 11: 100 of the rate, then the bank, up to BurstRate in the second.
	now := t0.Add(11 * time.Second)
	if got := spendAll(&off, now, 50); got != 100 {
		t.Fatalf("without burst capacity %v RU were served in a second of 100 RU/s", got)
	}
	// 100 of the rate, then requests while the bank holds anything: the last one takes it
	// below what it holds, as a request takes a budget below zero.
	if got := spendAll(&on, now, 50); got != 1200 {
		t.Fatalf("with burst capacity %v RU were served, want 1200", got)
	}
	if got := on.StatsAt(now).Bank; got != 0 {
		t.Fatalf("the bank holds %v after it was spent", got)
	}
	// A caller whose clock is a second behind takes the budget back a second: the seconds
	// banked already are not banked again.
	var w Budget
	w.SetRate(100)
	w.SetBurst(true, t0)
	w.Spend(t0.Add(5*time.Second), 80, High) // seconds 0 to 4 idle: 500 banked
	w.Spend(t0.Add(4*time.Second), 0, High)  // a clock a second behind
	w.Spend(t0.Add(5*time.Second), 0, High)
	if got := w.StatsAt(t0.Add(6 * time.Second)).Bank; got != 600 {
		t.Fatalf("after a clock went back the bank holds %v, want 600 (second 4 banked once)", got)
	}
	// The bank holds at most BurstSeconds of the rate, and is spent at most BurstRate a second.
	var long Budget
	long.SetRate(1000)
	long.SetBurst(true, t0)
	later := t0.Add(time.Hour)
	if got := long.StatsAt(later).Bank; got != BurstSeconds*1000 {
		t.Fatalf("after an hour idle the bank holds %v, want %v", got, BurstSeconds*1000)
	}
	if spent := spendAll(&long, later, 100); spent != BurstRate {
		t.Fatalf("%v RU spent in a second with a full bank, want %v", spent, float64(BurstRate))
	}
	// A rate of BurstRate or more banks nothing; turning burst off empties the bank.
	var big Budget
	big.SetRate(BurstRate)
	big.SetBurst(true, t0)
	if got := big.StatsAt(t0.Add(time.Minute)).Bank; got != 0 {
		t.Fatalf("a %v RU/s partition banked %v", float64(BurstRate), got)
	}
	long.SetBurst(false, later)
	long.SetBurst(true, later)
	if got := long.StatsAt(later.Add(time.Second)).Bank; got > 1000 {
		t.Fatalf("burst turned off and on again: the bank holds %v, more than the second since", got)
	}
}

// A replica that shares its partition's rate banks from its part, and bursts up to its part of
// BurstRate.
func TestBurstShared(t *testing.T) {
	t0 := time.Unix(7000, 0)
	var b Budget
	b.SetRate(400)
	b.Share(2) // 200 a second each, with no grant
	b.SetBurst(true, t0)
	now := t0.Add(20 * time.Second)
	if got := b.StatsAt(now).Bank; got != 19*200+200 {
		t.Fatalf("the bank holds %v, want %v", got, 20*200)
	}
	if spent := spendAll(&b, now, 100); spent != BurstRate/2 {
		t.Fatalf("%v RU spent in a second, want %v (half of BurstRate)", spent, BurstRate/2)
	}
}

// spendAll spends charge at a time in now's second while the budget admits High requests, and
// reports what it spent.
func spendAll(b *Budget, now time.Time, charge float64) float64 {
	spent := 0.0
	for {
		if ok, _ := b.Admit(now, High); !ok {
			return spent
		}
		b.Spend(now, charge, High)
		spent += charge
	}
}
