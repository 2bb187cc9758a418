package ru

import (
	"context"
	"strings"
)

// Priority is a request's priority level, as the service's priority-based execution names
// them (the x-ms-cosmos-priority-level header): when a partition's requests want more than its
// budget, Low ones are refused first. There is no reservation: either level may spend the
// whole budget when the other asks for nothing.
type Priority uint8

const (
	High Priority = iota // the default
	Low
)

func (p Priority) String() string {
	if p == Low {
		return "Low"
	}
	return "High"
}

// ParsePriority reads a priority level by its name, in any case; ok is false for any other.
func ParsePriority(s string) (p Priority, ok bool) {
	switch {
	case strings.EqualFold(s, "High"):
		return High, true
	case strings.EqualFold(s, "Low"):
		return Low, true
	}
	return High, false
}

type priorityKey struct{}

// WithPriority is ctx carrying a request's priority level.
func WithPriority(ctx context.Context, p Priority) context.Context {
	return context.WithValue(ctx, priorityKey{}, p)
}

// PriorityOf is the priority level ctx carries: High when none (or ctx is nil).
func PriorityOf(ctx context.Context) Priority {
	if ctx == nil {
		return High
	}
	p, _ := ctx.Value(priorityKey{}).(Priority)
	return p
}

// How a budget keeps Low requests behind High ones (Budget.Admit): a Low request is admitted
// while what the second spent is under the limit less what High requests are still to spend
// in it, taken to be what they spent in the second before less what they spent in this one so
// far; and not at all for two seconds after a High request was refused, which wanted more than
// it got. So High requests that want less than the budget get what they want and Low ones the
// rest; High ones that want it all get it all; and with no High request, Low ones get the
// whole budget.

// highToCome is what High requests are taken to spend still in the current second. Callers
// hold b.mu.
func (b *Budget) highToCome() float64 { return max(b.highPrev-b.highSpent, 0) }

// highStarved reports whether a High request was refused in this second or the one before.
// Callers hold b.mu.
func (b *Budget) highStarved() bool { return b.highRefusedAt != 0 && b.highRefusedAt >= b.second-1 }
