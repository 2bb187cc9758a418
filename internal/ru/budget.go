package ru

import (
	"math"
	"sync"
	"time"
)

// Budget is a physical partition's request-unit budget: its share of the provisioned
// throughput, renewed every second. A request is admitted while the current second's budget is
// not spent; its charge may take the budget below zero, and requests are then refused until
// the next second, as Cosmos does. It also keeps the figures partition metrics report.
type Budget struct {
	mu        sync.Mutex
	perSecond float64 // RU/s; <= 0 means unlimited
	second    int64   // the Unix second spent refers to
	spent     float64
	// history holds the RUs spent in each of the last minute's seconds, by second % 60, so
	// that normalized consumption is the highest share in the last minute.
	history [60]struct {
		second int64
		spent  float64
	}
	// trend keeps the busiest second of each TrendStep window of the last five minutes
	// (trend.go), by window % trendLen.
	trend     [trendLen]trendPoint
	total     float64 // RUs charged since start
	throttled uint64  // requests refused
	// refusedAt is the last second in which a request was refused: the replica wanted more
	// than it had (Demand).
	refusedAt int64
	// replicas, when above one, is how many replicas share the partition's budget
	// (share.go): this one spends at most its limit of each second, slots[second %
	// slotLen] when that slot is the second's, and its fallback, perSecond/replicas,
	// otherwise. At one or zero the budget is this replica's alone (a node alone, or a
	// cluster whose version does not share budgets yet) and the slots are empty.
	replicas int
	slots    [slotLen]slot
	// burst and bank are burst capacity's (burst.go): whether it is on, and the RUs banked,
	// at most BurstSeconds of the rate.
	burst bool
	bank  float64
	// bankedTo is the latest second the bank counted the idle capacity up to: a caller with
	// an earlier clock may take the budget back a second (roll), and the seconds up to
	// bankedTo are not banked twice.
	bankedTo int64
	// highSpent is what High requests spent in the current second, highPrev in the one
	// before; highRefusedAt is the last second a High request was refused (priority.go).
	highSpent, highPrev float64
	highRefusedAt       int64
}

// SetRate sets the RU/s this budget allows: the partition's, however many replicas share it.
// A change of rate forgets the shares of the old one: the slots held figures of it.
func (b *Budget) SetRate(perSecond float64) {
	b.mu.Lock()
	if perSecond != b.perSecond {
		b.slots = [slotLen]slot{}
	}
	b.perSecond = perSecond
	b.mu.Unlock()
}

// Rate is the RU/s the budget allows: the partition's.
func (b *Budget) Rate() float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.perSecond
}

func (b *Budget) roll(now time.Time) {
	if s := now.Unix(); s != b.second {
		if s > b.bankedTo {
			b.bank, b.bankedTo = b.bankAt(s), s
		}
		b.highPrev = 0
		if s == b.second+1 {
			b.highPrev = b.highSpent
		}
		b.second, b.spent, b.highSpent = s, 0, 0
	}
}

// Admit reports whether a request of priority p may run now; when it may not, retryAfter says
// when the budget renews. A Low request is held behind High ones (priority.go).
func (b *Budget) Admit(now time.Time, p Priority) (ok bool, retryAfter time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.roll(now)
	if b.perSecond <= 0 {
		return true, 0
	}
	var reserved float64 // for High requests, out of a Low one's reach
	if p == Low {
		reserved = b.highToCome()
	}
	if p == High || !b.highStarved() {
		if b.spent < b.limit(b.second)-reserved {
			return true, 0
		}
		if b.bursts() && b.bank > 0 && b.spent < b.burstCeiling()-reserved {
			return true, 0 // on the bank (burst.go)
		}
	}
	if p == High {
		b.highRefusedAt = b.second
	}
	b.throttled++
	b.refusedAt = b.second
	next := time.Unix(b.second+1, 0)
	return false, max(next.Sub(now), time.Millisecond)
}

// Spend records the charge of a request of priority p.
func (b *Budget) Spend(now time.Time, charge float64, p Priority) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.roll(now)
	b.drawBank(b.spent, charge)
	b.spent += charge
	if p == High {
		b.highSpent += charge
	}
	b.total += charge
	h := &b.history[b.second%60]
	h.second, h.spent = b.second, b.spent
	b.record(b.spent)
}

// BudgetStats are a budget's figures.
type BudgetStats struct {
	PerSecond float64 // RU/s allowed
	Total     float64 // RUs charged since start
	Throttled uint64  // requests refused with 429
	// NormalizedUse is the highest share of the budget used in any one second of the last
	// minute, as Cosmos reports normalized RU consumption: 1 or more means requests were
	// (or could have been) throttled. Zero when the budget is unlimited.
	NormalizedUse float64
	// LastSecond is the RUs spent in the last complete second; LastMinute in the last 60.
	LastSecond, LastMinute float64
	// Bank is what burst capacity has banked (burst.go); zero when it is off, or the rate
	// is BurstRate or more.
	Bank float64
}

// Stats returns the budget's figures as of now.
func (b *Budget) Stats() BudgetStats { return b.StatsAt(time.Now()) }

// StatsAt returns the budget's figures as of the given time.
func (b *Budget) StatsAt(now time.Time) BudgetStats {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := BudgetStats{PerSecond: b.perSecond, Total: b.total, Throttled: b.throttled}
	if b.bursts() {
		s.Bank = b.bankAt(now.Unix())
	}
	cur := now.Unix()
	for _, h := range b.history {
		if h.second > cur-60 && h.second <= cur && b.perSecond > 0 {
			s.NormalizedUse = math.Max(s.NormalizedUse, h.spent/b.perSecond)
		}
		if h.second == cur-1 {
			s.LastSecond = h.spent
		}
		if h.second > cur-60 && h.second <= cur {
			s.LastMinute += h.spent
		}
	}
	return s
}

// SecondSpent is what a budget spent in one second.
type SecondSpent struct {
	Second int64   `json:"s"` // Unix time
	RU     float64 `json:"ru"`
}

// Seconds returns the seconds of the last minute, as of now, in which anything was spent,
// oldest first: what the replicas of a partition spent, added second by second, is what the
// partition spent (StatsOf).
func (b *Budget) Seconds(now time.Time) []SecondSpent {
	b.mu.Lock()
	defer b.mu.Unlock()
	cur := now.Unix()
	var out []SecondSpent
	for s := cur - 59; s <= cur; s++ {
		if h := b.history[uint64(s)%60]; h.second == s && h.spent > 0 {
			out = append(out, SecondSpent{Second: s, RU: h.spent})
		}
	}
	return out
}

// StatsOf are the figures of a budget of perSecond RU/s as of the second now from what it
// spent in each second of the last minute (those of all its replicas, in any order; a second
// may come more than once). Total and Throttled are not in them.
func StatsOf(perSecond float64, seconds []SecondSpent, now int64) BudgetStats {
	s := BudgetStats{PerSecond: perSecond}
	by := map[int64]float64{}
	for _, x := range seconds {
		if x.Second > now-60 && x.Second <= now {
			by[x.Second] += x.RU
		}
	}
	for sec, spent := range by {
		s.LastMinute += spent
		if sec == now-1 {
			s.LastSecond = spent
		}
		if perSecond > 0 {
			s.NormalizedUse = math.Max(s.NormalizedUse, spent/perSecond)
		}
	}
	return s
}
