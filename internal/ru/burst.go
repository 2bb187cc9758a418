package ru

import "time"

// Burst capacity, as Cosmos DB's account setting of that name: a physical partition whose
// rate is under BurstRate banks what it leaves unused of each second, up to BurstSeconds of
// its rate, and spends the bank on requests that its rate alone would refuse, up to BurstRate
// in any one second. Best effort, as the service says: a split's children start with empty
// banks, and a replica's bank is its own (of its part of the rate, when replicas share it).
const (
	// BurstRate is the most a partition may spend in a second with its bank, and the rate
	// at and above which it banks nothing.
	BurstRate = 3000
	// BurstSeconds is how many seconds of its rate a partition's bank holds at most.
	BurstSeconds = 300
)

// SetBurst turns burst capacity on or off; off empties the bank. Banking starts at now: what
// the budget left unused before is not banked.
func (b *Budget) SetBurst(on bool, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !on {
		b.burst, b.bank = false, 0
		return
	}
	if !b.burst {
		b.burst = true
		b.roll(now)
	}
}

// bursts reports whether the budget banks and spends a bank. Callers hold b.mu.
func (b *Budget) bursts() bool { return b.burst && b.perSecond > 0 && b.perSecond < BurstRate }

// bankAt is the bank as of second: with what the budget left unused from b.second up to it
// (the rest of b.second's limit, and the whole of every second after, which spent nothing).
// Callers hold b.mu.
func (b *Budget) bankAt(second int64) float64 {
	if !b.bursts() || second <= b.second || b.second == 0 || b.second < b.bankedTo {
		return b.bank
	}
	idle := max(b.limit(b.second)-b.spent, 0)
	if gap := second - b.second - 1; gap > 0 {
		idle += float64(min(gap, BurstSeconds)) * b.limit(second)
	}
	return min(b.bank+idle, BurstSeconds*b.perSecond)
}

// burstCeiling is what the budget may spend in the current second with its bank: BurstRate,
// or this replica's part of it when replicas share the rate. Callers hold b.mu.
func (b *Budget) burstCeiling() float64 {
	return BurstRate * b.limit(b.second) / b.perSecond
}

// drawBank takes from the bank what a charge spent beyond the second's limit: spent is what
// the second had spent before it. Callers hold b.mu.
func (b *Budget) drawBank(before, charge float64) {
	if !b.bursts() {
		return
	}
	over := before + charge - max(before, b.limit(b.second))
	if over > 0 {
		b.bank = max(b.bank-over, 0)
	}
}
