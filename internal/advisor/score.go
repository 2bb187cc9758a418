package advisor

import (
	"fmt"
	"math"
	"strings"
)

// The score of a candidate key is
//
//	score = round(100 × C × S × R × Q × M × K)
//
// with each factor in [0, 1]:
//
//	C cardinality: log10(distinct) / log10(1000), at most 1 — a key needs many more logical
//	  partitions than physical ones for the hash to spread them (3 values: 0.16, 100: 0.67);
//	S storage: the smaller of
//	    1 - log10(skew')/3, skew' = (largest/mean) / (1 + 3/√mean), at least 1 (sampling noise
//	    of an even key forgiven), so 10× the mean costs a third and 1000× everything;
//	    (2 - share×P)/1.5, share the largest logical partition's part of the items and P the
//	    spread partitions: a value holding more than half a physical partition's fair share
//	    starts to make that partition hot, twice its share is 0;
//	R request: (2 - hot×P)/1.5 like the second storage term, hot the hottest logical
//	  partition's part of the recent request units (1 when not known);
//	Q fan-out: 1 - fanOut/2, fanOut the share of query executions that would read every
//	  partition (1 without queries): fanning out costs, but does not break a key;
//	M presence: 1 - missing, the share of items without a value (they all share one logical
//	  partition, the undefined key);
//	K cap: 1 when the largest logical partition is projected under 2 GB, 0.8 under the 20 GB
//	  cap, 0.2 past it (the container would refuse its writes).
//
// Verdicts: good at 70 and above, fair at 40, poor below.

// factors computes the terms of the score; see above.
func factors(card int64, d dist, hot *float64, fan *float64, p int, capRisk string) Factors {
	f := Factors{Request: 1, FanOut: 1, Cap: 1}
	if card > 1 {
		f.Cardinality = clamp(math.Log10(float64(card)) / math.Log10(targetCardinality))
	}
	f.Storage = math.Min(clamp(1-math.Log10(d.noisySkew())/3), shareFactor(d.largestShare(), p))
	if hot != nil {
		f.Request = shareFactor(*hot, p)
	}
	if fan != nil {
		f.FanOut = 1 - *fan/2
	}
	if d.n > 0 {
		f.Presence = 1 - float64(d.missing)/float64(d.n)
	}
	switch capRisk {
	case "low":
		f.Cap = 0.8
	case "high":
		f.Cap = 0.2
	}
	return f
}

// shareFactor judges the share of a load one logical partition takes against the fair share
// of one of p physical partitions: 1 up to half of it, 0 at twice it.
func shareFactor(share float64, p int) float64 {
	return clamp((2 - share*float64(p)) / 1.5)
}

func (f Factors) score() int {
	return int(math.Round(100 * f.Cardinality * f.Storage * f.Request * f.FanOut * f.Presence * f.Cap))
}

func verdict(score int) string {
	switch {
	case score >= goodScore:
		return "good"
	case score >= fairScore:
		return "fair"
	}
	return "poor"
}

// capRisk projects the largest logical partition's size to the whole container and its
// growth: high past the 20 GB cap, low past a tenth of it.
func capRisk(d dist, totalBytes int64, growth float64) (string, int64) {
	if d.total == 0 {
		return "none", 0
	}
	projected := int64(float64(d.maxBytes) / float64(d.total) * float64(totalBytes) * growth)
	switch {
	case projected >= LogicalCapBytes:
		return "high", projected
	case projected >= LogicalCapBytes/10:
		return "low", projected
	}
	return "none", projected
}

func (f Factors) formula() string {
	return fmt.Sprintf("score = 100 × %.2f cardinality × %.2f storage × %.2f request × %.2f fan-out × %.2f presence × %.2f cap",
		f.Cardinality, f.Storage, f.Request, f.FanOut, f.Presence, f.Cap)
}

func clamp(x float64) float64 { return math.Max(0, math.Min(1, x)) }

func pct(x float64) string {
	switch {
	case x == 0:
		return "0%"
	case x < 0.01:
		return fmt.Sprintf("%.2f%%", 100*x)
	case x < 0.1:
		return fmt.Sprintf("%.1f%%", 100*x)
	}
	return fmt.Sprintf("%.0f%%", 100*x)
}

func bytesText(b int64) string {
	units := []string{"B", "KB", "MB", "GB", "TB", "PB"}
	f := float64(b)
	i := 0
	for f >= 1024 && i < len(units)-1 {
		f /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%d B", b)
	}
	return fmt.Sprintf("%.1f %s", f, units[i])
}

func pathsText(ps []path) string {
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.text
	}
	return strings.Join(names, ", ")
}
