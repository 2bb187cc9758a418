package advisor

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/partita-db/partita/internal/epk"
)

// SyntheticProperty is the property a proposed synthetic key is stored in.
const SyntheticProperty = "/partitionKey"

// synthetic proposes the three synthetic keys of the Cosmos guidance, built on the best
// single paths (singles are sorted by score).
func (j *judge) synthetic(singles []Candidate, writeRate float64) []Synthetic {
	var usable []Candidate
	for _, c := range singles {
		if c.Factors.Presence >= 0.5 && c.SampleDistinct > 1 {
			usable = append(usable, c)
		}
	}
	// The base the suffixes extend: the current key when it is one present path (the
	// application already addresses its data by it), else the best single path.
	var base path
	switch {
	case len(j.current) == 1 && presence(j.items, j.current[0]) >= 0.5:
		base = j.current[0]
	case len(usable) > 0:
		base, _ = parsePath(usable[0].Paths[0])
	default:
		return []Synthetic{}
	}
	// The concatenation's partner: the best other path that is not unique per item (a unique
	// one makes every item its own logical partition, which the id already is), else any.
	var out []Synthetic
	partner := ""
	for _, c := range usable {
		if c.Paths[0] != base.text && (partner == "" || c.SampleDistinct < len(j.items)) {
			if partner = c.Paths[0]; c.SampleDistinct < len(j.items) {
				break
			}
		}
	}
	if partner != "" {
		out = append(out, j.propose(Synthetic{Kind: "concat", Paths: []string{base.text, partner}}))
	}
	bd := distribution(j.items, []path{base}, epk.SchemeV2)
	n, why := suffixCount(bd, writeRate, j.p)
	out = append(out, j.propose(Synthetic{Kind: "random-suffix", Paths: []string{base.text}, Suffixes: n}))
	// The hash suffix is computed from a property every item has and point reads know: the
	// id when the sample has it, else the path with the most distinct values.
	source := ""
	if presence(j.items, path{text: "/id", segs: []string{"id"}}) == 1 {
		source = "/id"
	} else {
		bestCard := 0
		for _, c := range usable {
			if c.Factors.Presence == 1 && c.SampleDistinct > bestCard && c.Paths[0] != base.text {
				source, bestCard = c.Paths[0], c.SampleDistinct
			}
		}
	}
	if source != "" {
		out = append(out, j.propose(Synthetic{Kind: "hash-suffix", Paths: []string{base.text, source}, Suffixes: n}))
	}
	for i := range out {
		if out[i].Kind != "concat" {
			out[i].Reasons = append([]string{why}, out[i].Reasons...)
		}
	}
	return out
}

// suffixCount sizes a suffix: enough that the hottest base value's writes, split over the
// suffixes, stay under half of a physical partition's 10,000 RU/s, and enough logical
// partitions (logicalPerPhysical per physical partition: with fewer, hashing leaves some
// partitions with twice the keys of others) for the hash to spread them over p partitions.
func suffixCount(bd dist, writeRate float64, p int) (int, string) {
	hot := writeRate * bd.largestShare()
	byRate := int(math.Ceil(hot / (suffixShareOfLimit * PhysicalRUPerSec)))
	bySpread := int(math.Ceil(logicalPerPhysical * float64(p) / float64(bd.distinct())))
	n := min(max(byRate, bySpread, 2), maxSuffixes)
	why := fmt.Sprintf("%d suffixes: %d base values × %d suffixes gives about %d logical partitions per physical partition of %d", n, bd.distinct(), bySpread, logicalPerPhysical, p)
	if writeRate > 0 {
		why = fmt.Sprintf("%d suffixes: the busiest base value (%s of items) takes about %.0f of the %.0f RU/s of writes; keeping each suffixed logical partition under %.0f RU/s (half of a physical partition's %d) needs %d, and spreading %d base values over %d physical partitions needs %d",
			n, pct(bd.largestShare()), hot, writeRate, suffixShareOfLimit*PhysicalRUPerSec, PhysicalRUPerSec, byRate, bd.distinct(), p, bySpread)
	}
	return n, why
}

func presence(items []item, p path) float64 {
	if len(items) == 0 {
		return 0
	}
	n := 0
	for _, it := range items {
		if !p.get(it.v).IsUndefined() {
			n++
		}
	}
	return float64(n) / float64(len(items))
}

// propose fills in a proposal's values, spread and reasons.
func (j *judge) propose(s Synthetic) Synthetic {
	s.Property = SyntheticProperty
	vals := syntheticValues(s, j.items)
	epks := make([]epk.EPK, len(vals))
	counts := map[string]int{}
	top := 0
	for i, v := range vals {
		epks[i] = epk.HashV2(epk.Key{epk.String(v)})
		counts[v]++
		top = max(top, counts[v])
	}
	s.Cardinality = len(counts)
	if len(vals) > 0 {
		s.Example = vals[0]
		s.LargestShare = round3(float64(top) / float64(len(vals)))
	}
	s.PredictedSpread = spread(epks, epk.SchemeV2, j.p)
	for i := range s.PredictedSpread {
		s.PredictedSpread[i].Share = round3(s.PredictedSpread[i].Share)
	}
	prop, a := s.Property[1:], strings.TrimPrefix(s.Paths[0], "/")
	switch s.Kind {
	case "concat":
		s.Description = fmt.Sprintf("store \"<%s>-<%s>\" in %q at each write and make %s the partition key", a, strings.TrimPrefix(s.Paths[1], "/"), prop, s.Property)
		s.Reasons = append(s.Reasons,
			fmt.Sprintf("combining %s and %s gives %d distinct values in the sample, the largest holding %s of items", s.Paths[0], s.Paths[1], s.Cardinality, pct(s.LargestShare)),
			fmt.Sprintf("point reads and single-partition queries need both values; queries that know only %s fan out", s.Paths[0]))
	case "random-suffix":
		s.Description = fmt.Sprintf("store \"<%s>-<random 0..%d>\" in %q at each write and make %s the partition key", a, s.Suffixes-1, prop, s.Property)
		s.Reasons = append(s.Reasons,
			fmt.Sprintf("read-side cost: the items of one %s value are spread over %d logical partitions, so reading them takes %d point reads or a query over %d keys (about %d× a single-partition read); a point read cannot know the suffix", s.Paths[0], s.Suffixes, s.Suffixes, s.Suffixes, s.Suffixes),
			fmt.Sprintf("the spread shown draws each sampled item's suffix from a generator seeded with %d: one likely outcome, not the suffixes your writes will draw", randomSeed))
	case "hash-suffix":
		s.Description = fmt.Sprintf("store \"<%s>-<FNV-1a 32-bit hash of %s's UTF-8 bytes mod %d>\" in %q at each write and make %s the partition key", a, strings.TrimPrefix(s.Paths[1], "/"), s.Suffixes, prop, s.Property)
		s.Reasons = append(s.Reasons,
			fmt.Sprintf("a point read recomputes the key from %s and %s, so it stays one read; queries over one %s value still read %d logical partitions", s.Paths[0], s.Paths[1], s.Paths[0], s.Suffixes))
	}
	even := 1 / float64(len(s.PredictedSpread))
	s.Reasons = append(s.Reasons, fmt.Sprintf("predicted spread over %d physical partitions: the largest would hold %s of items (even: %s)", len(s.PredictedSpread), pct(largestSpread(s.PredictedSpread)), pct(even)))
	return s
}

// SyntheticValues computes the key each item (JSON objects, in sample order) gets under a
// proposal, exactly as the prediction does: a test can load the items with these values and
// compare the partitions' counts with PredictedSpread.
func SyntheticValues(s Synthetic, raw [][]byte) []string {
	return syntheticValues(s, parseItems(raw))
}

func syntheticValues(s Synthetic, items []item) []string {
	paths := make([]path, len(s.Paths))
	for i, t := range s.Paths {
		paths[i], _ = parsePath(t)
	}
	rng := rand.New(rand.NewPCG(randomSeed, randomSeed))
	out := make([]string, len(items))
	for i, it := range items {
		base := textOf(paths[0].get(it.v))
		switch s.Kind {
		case "concat":
			out[i] = base + "-" + textOf(paths[1].get(it.v))
		case "random-suffix":
			out[i] = fmt.Sprintf("%s-%d", base, rng.IntN(s.Suffixes))
		case "hash-suffix":
			out[i] = fmt.Sprintf("%s-%d", base, HashSuffix(textOf(paths[1].get(it.v)), s.Suffixes))
		}
	}
	return out
}

// HashSuffix is the hash-suffix proposal's suffix: the FNV-1a 32-bit hash of s's UTF-8 bytes
// modulo n, chosen because every language has it in a few lines, so the application can
// compute the same key at write and point-read time.
func HashSuffix(s string, n int) uint32 {
	h := fnv.New32a()
	h.Write([]byte(s))
	return h.Sum32() % uint32(n)
}
