package advisor

import (
	"math"

	"github.com/partita-db/partita/internal/epk"
)

// dist is how the sample falls into the logical partitions of one key.
type dist struct {
	n        int            // items
	counts   map[string]int // items per logical partition (canonical key -> count)
	bytes    map[string]int64
	epks     map[string]epk.EPK // the logical partition's EPK under the key's scheme
	display  map[string]string  // the logical partition's value as people read it
	missing  int                // items with an undefined component
	maxKey   string             // the logical partition with the most items
	maxCount int
	maxBytes int64 // the largest logical partition by bytes
	total    int64 // bytes of the sample
	f1, f2   int   // values seen once and twice (for the cardinality estimate)
}

func distribution(items []item, paths []path, scheme epk.Scheme) dist {
	d := dist{n: len(items), counts: map[string]int{}, bytes: map[string]int64{}, epks: map[string]epk.EPK{}, display: map[string]string{}}
	for _, it := range items {
		k, key, missing := keyOf(it.v, paths)
		if missing {
			d.missing++
		}
		if _, ok := d.epks[k]; !ok {
			d.epks[k] = scheme.Hash(key)
			d.display[k] = displayKey(it.v, paths)
		}
		d.counts[k]++
		d.bytes[k] += it.bytes
		d.total += it.bytes
	}
	for k, c := range d.counts {
		if c > d.maxCount || c == d.maxCount && k < d.maxKey {
			d.maxKey, d.maxCount = k, c
		}
		d.maxBytes = max(d.maxBytes, d.bytes[k])
		switch c {
		case 1:
			d.f1++
		case 2:
			d.f2++
		}
	}
	return d
}

func (d dist) distinct() int { return len(d.counts) }

// estimate is the distinct values in a container of total items, from the sample: exact when
// the sample is the whole container, otherwise Chao1 (distinct + f1²/2f2, the values seen
// once stand for those never seen), at most one per item.
func (d dist) estimate(total int64) int64 {
	seen := int64(d.distinct())
	if total <= int64(d.n) || d.f1 == 0 {
		return seen
	}
	f1 := float64(d.f1)
	var unseen float64
	if d.f2 > 0 {
		unseen = f1 * f1 / (2 * float64(d.f2))
	} else {
		unseen = f1 * (f1 - 1) / 2
	}
	// Scale: Chao1 bounds a population the sample was drawn from; never more than its items.
	est := int64(math.Min(float64(seen)+unseen, float64(total)))
	return max(est, seen)
}

// skew is the largest logical partition's item count over the mean (1 = perfectly even).
func (d dist) skew() float64 {
	if d.n == 0 {
		return 1
	}
	return float64(d.maxCount) / (float64(d.n) / float64(d.distinct()))
}

// noisySkew is skew divided by what sampling alone would produce for an even key (three
// standard deviations of a Poisson count over its mean), at least 1: a key whose values
// appear a handful of times each is not called skewed because one appeared twice as often.
func (d dist) noisySkew() float64 {
	if d.n == 0 {
		return 1
	}
	mean := float64(d.n) / float64(d.distinct())
	return math.Max(1, d.skew()/(1+3/math.Sqrt(mean)))
}

func (d dist) largestShare() float64 {
	if d.n == 0 {
		return 0
	}
	return float64(d.maxCount) / float64(d.n)
}
