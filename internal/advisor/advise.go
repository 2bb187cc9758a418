package advisor

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/partita-db/partita/internal/epk"
)

// judge holds what every candidate is measured against.
type judge struct {
	items      []item
	p          int // spread partitions
	total      int64
	totalBytes int64
	growth     float64
	queries    []preparedQuery
	qTotal     int64
	current    []path
	curEPK     []epk.EPK           // each item's EPK under the current key, when rates are known
	rates      map[epk.EPK]float64 // RU per logical partition of the current key
	rateTotal  float64
}

// Advise ranks candidate partition keys for the sample and proposes synthetic keys when none
// is good. The same input always gives the same advice.
func Advise(in Input) Advice {
	items := parseItems(in.Items)
	j := &judge{items: items, growth: in.Growth}
	parts := max(in.Partitions, 1)
	j.p = in.SpreadPartitions
	if j.p <= 0 {
		j.p = max(parts, MinSpread)
	}
	j.p = min(j.p, MaxSpread)
	if j.growth <= 0 {
		j.growth = 1
	}
	var sampleBytes int64
	for _, it := range items {
		sampleBytes += it.bytes
	}
	j.total = max(in.TotalItems, int64(len(items)))
	j.totalBytes = max(in.TotalBytes, sampleBytes)
	if in.TotalBytes <= 0 && len(items) > 0 {
		j.totalBytes = int64(float64(sampleBytes) * float64(j.total) / float64(len(items)))
	}
	var unparsed int64
	j.queries, j.qTotal, unparsed = prepareQueries(in.Queries)
	for _, t := range in.Current.Paths {
		if p, ok := parsePath(t); ok {
			j.current = append(j.current, p)
		}
	}
	if len(in.Rates) > 0 && len(j.current) > 0 {
		j.rates = map[epk.EPK]float64{}
		for _, r := range in.Rates {
			j.rates[r.EPK] += r.RU
			j.rateTotal += r.RU
		}
		scheme := in.Current.scheme()
		for _, it := range items {
			_, key, _ := keyOf(it.v, j.current)
			j.curEPK = append(j.curEPK, scheme.Hash(key))
		}
	}

	adv := Advice{
		Database: in.Database, Container: in.Container, Sampled: len(items), Current: []string{},
		Candidates: []Candidate{}, Synthetic: []Synthetic{}, Partitions: parts, SpreadPartitions: j.p,
		TotalItems: j.total, TotalBytes: j.totalBytes, Growth: j.growth, Queries: j.qTotal, Notes: []string{},
	}
	for _, p := range j.current {
		adv.Current = append(adv.Current, p.text)
	}
	adv.WriteRate = in.WriteRate
	if len(items) == 0 {
		adv.Notes = append(adv.Notes, "the sample holds no JSON objects: nothing to judge")
		return adv
	}
	if unparsed > 0 {
		adv.Notes = append(adv.Notes, fmt.Sprintf("%d query executions did not parse and were left out", unparsed))
	}
	if j.total > int64(len(items)) {
		adv.Notes = append(adv.Notes, fmt.Sprintf("judged on a sample of %d of %d items; distinct values are estimated (Chao1), shares are the sample's", len(items), j.total))
	}
	if in.Rates != nil && j.rateTotal == 0 {
		adv.Notes = append(adv.Notes, "no request units were recorded recently: request skew is unknown")
	}

	var singles []Candidate
	for _, p := range discoverPaths(items) {
		singles = append(singles, j.candidate([]path{p}))
	}
	sortCandidates(singles)
	all := append([]Candidate(nil), singles...)
	var pool [][]path
	for _, c := range singles {
		if len(pool) == hierarchyPool {
			break
		}
		if c.Factors.Presence >= 0.5 && c.SampleDistinct > 1 {
			p, _ := parsePath(c.Paths[0])
			pool = append(pool, []path{p})
		}
	}
	seen := map[string]bool{}
	distinct := map[string]int{}
	for _, c := range all {
		seen[strings.Join(c.Paths, ",")] = true
		distinct[c.Paths[0]] = c.SampleDistinct
	}
	add := func(ps []path) {
		// Coarse first: a hierarchy narrows from the level with fewer values to more.
		ps = slices.Clone(ps)
		sort.SliceStable(ps, func(a, b int) bool { return distinct[ps[a].text] < distinct[ps[b].text] })
		name := pathsText(ps)
		name = strings.ReplaceAll(name, ", ", ",")
		if !seen[name] {
			seen[name] = true
			all = append(all, j.candidate(ps))
		}
	}
	for a := range pool {
		for b := a + 1; b < len(pool); b++ {
			add([]path{pool[a][0], pool[b][0]})
		}
	}
	if len(pool) >= 3 {
		add([]path{pool[0][0], pool[1][0], pool[2][0]})
	}
	if len(j.current) > 0 && !seen[strings.Join(adv.Current, ",")] {
		seen[strings.Join(adv.Current, ",")] = true
		all = append(all, j.candidate(j.current))
	}
	if len(all) == 0 {
		adv.Notes = append(adv.Notes, "the sampled items have no scalar properties to judge")
		return adv
	}
	sortCandidates(all)
	for i := range all {
		all[i].Rank = i + 1
	}
	adv.Candidates = all
	// Synthetic keys answer "no property is good enough": they are proposed when no single
	// path is good, even if a hierarchical combination is (the other way out the guidance
	// describes; both are shown).
	if !slices.ContainsFunc(singles, func(c Candidate) bool { return c.Verdict == "good" }) {
		adv.Synthetic = j.synthetic(singles, in.WriteRate)
	}
	return adv
}

// sortCandidates orders by score, then fewer paths, then path names.
func sortCandidates(cs []Candidate) {
	sort.SliceStable(cs, func(a, b int) bool {
		if cs[a].Score != cs[b].Score {
			return cs[a].Score > cs[b].Score
		}
		if len(cs[a].Paths) != len(cs[b].Paths) {
			return len(cs[a].Paths) < len(cs[b].Paths)
		}
		return strings.Join(cs[a].Paths, ",") < strings.Join(cs[b].Paths, ",")
	})
}

// isCurrent reports whether ps is the current key.
func (j *judge) isCurrent(ps []path) bool {
	if len(ps) != len(j.current) {
		return false
	}
	for i := range ps {
		if ps[i].text != j.current[i].text {
			return false
		}
	}
	return true
}

// determinedByCurrent reports whether every path of ps is a path of the current key, so that
// the current key's request rates can be summed per value of ps.
func (j *judge) determinedByCurrent(ps []path) bool {
	if j.rates == nil || j.rateTotal == 0 {
		return false
	}
	for _, p := range ps {
		if !slices.ContainsFunc(j.current, func(c path) bool { return c.text == p.text }) {
			return false
		}
	}
	return true
}

// requests is the hottest logical partition's share of the request units charged to ps's
// logical partitions, their max/mean ratio, and the share of all recorded RU attributed.
func (j *judge) requests(ps []path) (hot, skew, attributed float64) {
	perValue := map[string]float64{}
	if j.isCurrent(ps) {
		for e, ru := range j.rates {
			perValue[string(e)] = ru
		}
	} else {
		counted := map[epk.EPK]bool{}
		for i, it := range j.items {
			e := j.curEPK[i]
			ru, ok := j.rates[e]
			if !ok || counted[e] {
				continue
			}
			counted[e] = true
			k, _, _ := keyOf(it.v, ps)
			perValue[k] += ru
		}
	}
	var sum, top float64
	active := 0
	for _, ru := range perValue {
		sum += ru
		top = max(top, ru)
		if ru > 0 {
			active++
		}
	}
	if sum == 0 {
		return 0, 1, 0
	}
	return top / sum, top / (sum / float64(active)), sum / j.rateTotal
}

// candidate judges the key of paths ps.
func (j *judge) candidate(ps []path) Candidate {
	scheme := epk.SchemeV2
	kind := "Hash"
	if len(ps) > 1 {
		scheme, kind = epk.SchemeMulti, "MultiHash"
	}
	d := distribution(j.items, ps, scheme)
	card := d.estimate(j.total)
	c := Candidate{Kind: kind, Cardinality: card, SampleDistinct: d.distinct(), StorageSkew: round3(d.skew()),
		LargestShare: round3(d.largestShare()), MissingShare: round3(float64(d.missing) / float64(d.n)), IsCurrent: j.isCurrent(ps)}
	for _, p := range ps {
		c.Paths = append(c.Paths, p.text)
	}
	var hot *float64
	var reasons []string
	if c.IsCurrent {
		reasons = append(reasons, "the container's current partition key")
	}
	if len(ps) > 1 {
		reasons = append(reasons, fmt.Sprintf("hierarchical (MultiHash): queries that pin %s alone are routed to that prefix's partitions, and one %s value may pass 20 GB across several logical partitions", ps[0].text, ps[0].text))
	}

	// Cardinality.
	switch {
	case card <= 1:
		reasons = append(reasons, "a single value in the sample: every item would share one logical partition, so one physical partition takes all the load")
	case card <= 20:
		reasons = append(reasons, fmt.Sprintf("only %d distinct values: at most %d logical partitions, so at most %d physical partitions can ever share the load", card, card, card))
	case card < targetCardinality:
		reasons = append(reasons, fmt.Sprintf("about %d distinct values (%d in the sample): enough to spread over a few physical partitions, but they cap how far the container can scale out", card, d.distinct()))
	default:
		reasons = append(reasons, fmt.Sprintf("about %d distinct values (%d in the sample of %d): plenty of logical partitions to spread over many physical partitions", card, d.distinct(), d.n))
	}

	// Storage skew.
	largest := fmt.Sprintf("the largest value (%s) holds %s of items", d.display[d.maxKey], pct(d.largestShare()))
	fair := 1 / float64(d.distinct())
	switch sf := shareFactor(d.largestShare(), j.p); {
	case d.largestShare()*float64(j.p) > 1:
		reasons = append(reasons, fmt.Sprintf("%s, more than a whole physical partition's fair share (%s of %d): that partition is hot and cannot be split further", largest, pct(1/float64(j.p)), j.p))
	case d.noisySkew() >= 10:
		reasons = append(reasons, fmt.Sprintf("%s, %.0f× an even share of %s: storage and requests are skewed", largest, d.skew(), pct(fair)))
	case sf < 1:
		reasons = append(reasons, fmt.Sprintf("%s, over half of one physical partition's fair share (%s of %d)", largest, pct(1/float64(j.p)), j.p))
	default:
		reasons = append(reasons, fmt.Sprintf("%s (an even share is %s): storage spreads evenly", largest, pct(fair)))
	}

	// Presence.
	if d.missing > 0 {
		reasons = append(reasons, fmt.Sprintf("%s of items (%d) lack %s: all of them share one logical partition, the undefined key", pct(float64(d.missing)/float64(d.n)), d.missing, pathsText(ps)))
	}

	// Request skew.
	if j.determinedByCurrent(ps) {
		h, skew, attributed := j.requests(ps)
		if attributed > 0 {
			hot = &h
			rs := round3(skew)
			c.RequestSkew = &rs
			text := fmt.Sprintf("the hottest logical partition drew %s of recent request units (%.1f× the mean of those that drew any)", pct(h), skew)
			if attributed < 0.999 {
				text += fmt.Sprintf("; %s of the recorded units could be attributed through the sample", pct(attributed))
			}
			if h*float64(j.p) > 1 {
				text += fmt.Sprintf(", more than one physical partition's fair share (%s of %d): it will be throttled first", pct(1/float64(j.p)), j.p)
			}
			reasons = append(reasons, text)
		}
	}

	// Fan-out.
	var fan *float64
	if j.qTotal > 0 {
		share, fanned := fanOut(j.queries, j.qTotal, ps)
		s := round3(share)
		fan, c.FanOutShare = &s, &s
		if fanned == 0 {
			reasons = append(reasons, fmt.Sprintf("every recorded query (%d executions) pins one %s value: all stay in one partition", j.qTotal, ps[0].text))
		} else {
			reasons = append(reasons, fmt.Sprintf("%s of query executions (%d of %d) do not pin one %s value in their WHERE and would fan out over every partition", pct(share), fanned, j.qTotal, ps[0].text))
		}
	}

	// Cap.
	risk, projected := capRisk(d, j.totalBytes, j.growth)
	c.CapRisk, c.ProjectedLargestBytes = risk, projected
	growth := ""
	if j.growth != 1 {
		growth = fmt.Sprintf(" grown %g×", j.growth)
	}
	capText := fmt.Sprintf("the largest logical partition is projected at %s (its %s of the sample's bytes times the container's %s%s)",
		bytesText(projected), pct(float64(d.maxBytes)/float64(d.total)), bytesText(j.totalBytes), growth)
	switch risk {
	case "high":
		capText += ": past the 20 GB logical partition limit, writes to it would be refused"
	case "low":
		capText += ": under the 20 GB limit, but within a tenth of it; watch it grow"
	default:
		capText += ": far under the 20 GB limit"
	}
	reasons = append(reasons, capText)

	c.Factors = factors(card, d, hot, fan, j.p, risk)
	c.Factors = Factors{Cardinality: round3(c.Factors.Cardinality), Storage: round3(c.Factors.Storage), Request: round3(c.Factors.Request),
		FanOut: round3(c.Factors.FanOut), Presence: round3(c.Factors.Presence), Cap: round3(c.Factors.Cap)}
	c.Score = c.Factors.score()
	c.Verdict = verdict(c.Score)
	c.Reasons = append(reasons, c.Factors.formula())
	return c
}

func round3(x float64) float64 { return float64(int64(x*1000+0.5)) / 1000 }
