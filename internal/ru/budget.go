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
	// maxShare is the highest share of the budget spent in any second since it was last read.
	maxShare  float64
	total     float64 // RUs charged since start
	throttled uint64  // requests refused
}

// SetRate sets the RU/s this budget allows.
func (b *Budget) SetRate(perSecond float64) {
	b.mu.Lock()
	b.perSecond = perSecond
	b.mu.Unlock()
}

func (b *Budget) roll(now time.Time) {
	if s := now.Unix(); s != b.second {
		b.second, b.spent = s, 0
	}
}

// Admit reports whether a request may run now; when it may not, retryAfter says when the
// budget renews.
func (b *Budget) Admit(now time.Time) (ok bool, retryAfter time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.roll(now)
	if b.perSecond <= 0 || b.spent < b.perSecond {
		return true, 0
	}
	b.throttled++
	next := time.Unix(b.second+1, 0)
	return false, max(next.Sub(now), time.Millisecond)
}

// Spend records a request's charge.
func (b *Budget) Spend(now time.Time, charge float64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.roll(now)
	b.spent += charge
	b.total += charge
	if b.perSecond > 0 {
		b.maxShare = math.Max(b.maxShare, b.spent/b.perSecond)
	}
}

// BudgetStats are a budget's figures.
type BudgetStats struct {
	PerSecond float64 // RU/s allowed
	Total     float64 // RUs charged since start
	Throttled uint64  // requests refused with 429
	// NormalizedUse is the highest share of the budget used in any one second since the
	// previous call (1 means the partition was throttled); reading it starts a new period.
	NormalizedUse float64
}

// Stats returns the budget's figures and starts a new period for NormalizedUse.
func (b *Budget) Stats() BudgetStats {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := BudgetStats{PerSecond: b.perSecond, Total: b.total, Throttled: b.throttled, NormalizedUse: b.maxShare}
	b.maxShare = 0
	return s
}
