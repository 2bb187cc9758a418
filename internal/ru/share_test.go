package ru

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func sum(xs []float64) float64 {
	t := 0.0
	for _, x := range xs {
		t += x
	}
	return t
}

func TestDivide(t *testing.T) {
	inf := Want{Hungry: true}
	for _, tc := range []struct {
		name  string
		wants []Want
		want  []float64
	}{
		{"all hungry: equal parts", []Want{inf, inf, inf}, []float64{400.0 / 3, 400.0 / 3, 400.0 / 3}},
		{"idle: what nobody wants, evenly", []Want{{RU: 20}, {RU: 20}, {RU: 20}}, []float64{400.0 / 3, 400.0 / 3, 400.0 / 3}},
		{"one hungry follower, the others keep their floor", []Want{{RU: 20}, inf, {RU: 20}}, []float64{20, 360, 20}},
		{"a modest want is met, the hungry share the rest", []Want{{RU: 100}, inf, inf}, []float64{100, 150, 150}},
		{"wants below the rate: the rest evenly", []Want{{RU: 100}, {RU: 50}, {RU: 10}}, []float64{100 + 230.0/3, 50 + 230.0/3, 20 + 230.0/3}},
		{"a want below the floor keeps the floor", []Want{{RU: 0}, inf}, []float64{20, 380}},
	} {
		got := Divide(400, tc.wants)
		for i := range got {
			if !near(got[i], tc.want[i]) {
				t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
				break
			}
		}
		if !near(sum(got), 400) {
			t.Errorf("%s: parts add up to %v", tc.name, sum(got))
		}
	}
	if got := Divide(0, []Want{inf}); got[0] != 0 {
		t.Errorf("an unlimited rate divided: %v", got)
	}
}

// A budget shared by three replicas allows its fallback, a third, in a second it holds
// nothing for; a promise lowers a second, a grant raises it, and the leader's own limit is
// what it is set to.
func TestBudgetShare(t *testing.T) {
	var b Budget
	b.SetRate(300)
	t0 := time.Unix(1000, 0)
	b.Share(3)
	if l := b.limit(1000); l != 100 {
		t.Fatalf("fallback %v, want 100", l)
	}
	b.Spend(t0, 100, High)
	if ok, _ := b.Admit(t0, High); ok {
		t.Fatal("a replica spent its fallback and was admitted again")
	}
	// Refused this second: hungry, so it promises its fallback.
	a := b.Bind(t0.Add(500 * time.Millisecond))
	if a.From != 1001 || a.To != 1000+PromiseSeconds || !a.Want.Hungry || a.Promise != 100 {
		t.Fatalf("ask %+v", a)
	}
	b.Granted(1001, 180)
	if l := b.limit(1001); l != 180 {
		t.Fatalf("granted second allows %v, want 180", l)
	}
	if l := b.limit(1002); l != 100 {
		t.Fatalf("promised second allows %v, want 100", l)
	}
	// Two idle seconds later it wants little, and promises so.
	t3 := t0.Add(3 * time.Second)
	a = b.Bind(t3)
	if a.Want.Hungry || a.Promise != 15 || a.Want.RU != 15 { // the floor: 5% of 300
		t.Fatalf("idle ask %+v", a)
	}
	if l := b.limit(1004); l != 15 {
		t.Fatalf("after the promise %v, want 15", l)
	}
	// A later, larger want does not raise a promise already made.
	b.Spend(t3, 90, High)
	if a = b.Bind(t3.Add(100 * time.Millisecond)); a.Promise != 100 || b.limit(1004) != 15 || b.limit(1006) != 15 {
		t.Fatalf("promise raised: %+v, %v", a, b.limit(1004))
	}
	b.Own(1007, 250)
	if l := b.limit(1007); l != 250 {
		t.Fatalf("own %v, want 250", l)
	}
	b.Reset()
	if l := b.limit(1007); l != 100 {
		t.Fatalf("after a reset %v, want the fallback", l)
	}
	b.Share(1)
	if l := b.limit(1007); l != 300 {
		t.Fatalf("unshared %v, want the rate", l)
	}
}

// The leader grants a hungry follower what idle replicas leave, keeps its floor, and counts a
// follower it has heard nothing of at its fallback.
func TestLedger(t *testing.T) {
	var own Budget // the leader's: idle, it wants its floor, 20
	own.SetRate(400)
	own.Share(3)
	at := func(sec int64) time.Time { return time.Unix(sec, 0) }
	l := NewLedger()
	l.Set(400, []uint64{2, 3})
	if o := l.Own(11); !near(o, 400.0/3) {
		t.Fatalf("own with silent followers %v, want a third", o)
	}
	idle := Ask{From: 11, To: 13, Want: Want{RU: 20}, Promise: 20}
	hungry := Ask{From: 11, To: 13, Want: Want{Hungry: true}, Promise: 400.0 / 3}
	// Follower 2, silent, counts at its fallback; what the wants leave goes to all evenly.
	idlePart := 20 + (340-(400.0/3-20))/3
	if sec, g := l.Ask(3, idle, &own, at(10)); sec != 11 || !near(g, idlePart) {
		t.Fatalf("idle follower granted %v for %d, want %v", g, sec, idlePart)
	}
	// Follower 2 hungry: it gets what the others leave, follower 3 holding its grant for 11.
	if _, g := l.Ask(2, hungry, &own, at(10)); !near(g, 400-20-idlePart) {
		t.Fatalf("hungry follower granted %v for 11", g)
	}
	if o := l.Own(11); !near(o, 20) || own.limit(11) != o {
		t.Fatalf("leader keeps %v (its budget %v), want its floor", o, own.limit(11))
	}
	// A second on, follower 3's grant has lapsed and it promised 20.
	if _, g := l.Ask(3, Ask{From: 12, To: 14, Want: Want{RU: 20}, Promise: 20}, &own, at(11)); g != 20 {
		t.Fatalf("idle follower granted %v", g)
	}
	if _, g := l.Ask(2, Ask{From: 12, To: 14, Want: Want{Hungry: true}, Promise: 400.0 / 3}, &own, at(11)); !near(g, 360) {
		t.Fatalf("hungry follower granted %v for 12, want 360", g)
	}
	if o := l.Own(12); !near(o, 20) || own.limit(12) != o {
		t.Fatalf("leader keeps %v (its budget %v), want 20", o, own.limit(12))
	}
	// Beyond what anyone promised, the leader counts each follower at its fallback.
	if o := l.Own(15); !near(o, 400.0/3) {
		t.Fatalf("own past the promises %v", o)
	}
	// A follower dropped from the group no longer counts; a change of rate forgets all.
	l.Set(400, []uint64{2})
	if o := l.Own(12); !near(o, 400-360) {
		t.Fatalf("own without follower 3: %v", o)
	}
	l.Set(800, []uint64{2})
	if o := l.Own(12); o != 400 {
		t.Fatalf("own after a rate change: %v, want half", o)
	}
}

// Whatever the replicas want and whichever messages are lost, the limits of a leader and its
// two followers add up to at most the rate in every second, and none is ever left at zero.
func TestSharesNeverExceedTheRate(t *testing.T) {
	const rate = 400.0
	rng := rand.New(rand.NewPCG(7, 11))
	leader := &Budget{}
	followers := []*Budget{{}, {}}
	for _, b := range append([]*Budget{leader}, followers...) {
		b.SetRate(rate)
		b.Share(3)
	}
	l := NewLedger()
	l.Set(rate, []uint64{1, 2})
	// check fails when what the replicas may spend in sec adds up to more than the rate.
	check := func(sec int64, when string) {
		t.Helper()
		total := leader.limit(sec)
		for _, b := range append([]*Budget{leader}, followers...) {
			if b.limit(sec) <= 0 {
				t.Fatalf("second %d, %s: a replica may spend nothing", sec, when)
			}
		}
		for _, f := range followers {
			total += f.limit(sec)
		}
		if total > rate+1e-6 {
			t.Fatalf("second %d, %s: the replicas may spend %v of %v", sec, when, total, rate)
		}
	}
	start := int64(5000)
	for sec := start; sec < start+2000; sec++ {
		check(sec, "as it begins")
		// Each replica spends at random: some seconds idle, some far over its part.
		for _, b := range append([]*Budget{leader}, followers...) {
			at := time.Unix(sec, 100e6)
			for range rng.IntN(4) {
				if ok, _ := b.Admit(at, High); ok {
					b.Spend(at, rng.Float64()*rate/2, High)
				}
			}
		}
		// Two asks a second from each follower, some lost on the way or back; the leader's
		// own pass once a second.
		for _, frac := range []int64{250e6, 750e6} {
			now := time.Unix(sec, frac)
			for i, f := range followers {
				a := f.Bind(now)
				if rng.IntN(5) == 0 {
					continue // the ask is lost
				}
				g, perSecond := l.Ask(uint64(i+1), a, leader, now)
				if rng.IntN(5) == 0 {
					continue // the answer is lost
				}
				f.Granted(g, perSecond)
			}
			if frac == 250e6 {
				l.Apply(leader, now)
			}
			check(sec, "during it")
		}
	}
}
