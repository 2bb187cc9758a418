package ru

import "time"

// Spare is what the budget leaves unused, for background work that must never take request
// units from users (deleting expired items): the per-second rate (this replica's share of it,
// when replicas share the budget) less what the busier of the
// last complete second and the current one spent, and nothing once either spent it all. An
// unlimited budget spares unlimited.
//
// Work paced by Spare is not charged to the budget, so it never makes a user request wait: it
// only uses, a second later, what users left over.
func (b *Budget) Spare(now time.Time) float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.roll(now)
	if b.perSecond <= 0 {
		return unlimitedSpare
	}
	busiest := b.spent
	if h := b.history[(b.second-1)%60]; h.second == b.second-1 {
		busiest = max(busiest, h.spent)
	}
	return max(b.limit(b.second)-busiest, 0)
}

// unlimitedSpare is what an unlimited budget spares per call: enough for background work to
// keep up, bounded so that one pass still ends.
const unlimitedSpare = 10000
