package ru

import "time"

// The consumption trend: a short, bounded history of how much of its budget a partition used,
// so that a chart of normalized RU consumption (the explorer's timeline) is full as soon as it
// is opened, rather than filling while someone watches.
const (
	// TrendStep is the width of one point of the trend, in seconds.
	TrendStep = 5
	// trendLen points cover the last five minutes.
	trendLen = 60
)

// trendPoint is the busiest second of one TrendStep window.
type trendPoint struct {
	window     int64   // Unix second / TrendStep; the slot holds nothing for other windows
	peak       float64 // the most RUs spent in one second of the window
	normalized float64 // the highest share of the per-second budget used in one second; 0 when unlimited
}

// TrendPoint is one window of a budget's consumption trend.
type TrendPoint struct {
	Start      time.Time // the window's first second
	PeakRU     float64   // the most RUs spent in one second of the window
	Normalized float64   // the highest share of the budget spent in one second (0 when unlimited)
}

// record notes that the current second's spending reached spent. Callers hold b.mu.
func (b *Budget) record(spent float64) {
	w := b.second / TrendStep
	p := &b.trend[w%trendLen]
	if p.window != w {
		*p = trendPoint{window: w}
	}
	p.peak = max(p.peak, spent)
	if b.perSecond > 0 {
		p.normalized = max(p.normalized, spent/b.perSecond)
	}
}

// Trend returns the windows of the last five minutes in which anything was spent, oldest
// first; a window without a point spent nothing. The current window is included, though it is
// not complete.
func (b *Budget) Trend(now time.Time) []TrendPoint {
	b.mu.Lock()
	defer b.mu.Unlock()
	cur := now.Unix() / TrendStep
	var out []TrendPoint
	for w := cur - trendLen + 1; w <= cur; w++ {
		if p := b.trend[w%trendLen]; p.window == w && p.peak > 0 {
			out = append(out, TrendPoint{Start: time.Unix(w*TrendStep, 0), PeakRU: p.peak, Normalized: p.normalized})
		}
	}
	return out
}
