package advisor

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/partita-db/partita/internal/epk"
)

// dataset is n items: a unique id, a uniform high-cardinality user (5,000 values), a tenant
// where one value holds 62% of items and the rest spread over 200, a region with 3 values,
// and a nested address city (50 values).
func dataset(n int) [][]byte {
	rng := rand.New(rand.NewPCG(1, 2))
	out := make([][]byte, n)
	for i := range out {
		tenant := "big"
		if rng.Float64() >= 0.62 {
			tenant = fmt.Sprintf("t%d", rng.IntN(200))
		}
		out[i] = []byte(fmt.Sprintf(`{"id":"item-%d","user":"u%d","tenant":%q,"region":%q,"address":{"city":"c%d"},"n":%d}`,
			i, rng.IntN(5000), tenant, []string{"eu", "us", "asia"}[rng.IntN(3)], rng.IntN(50), i%7))
	}
	return out
}

func find(t *testing.T, a Advice, paths ...string) Candidate {
	t.Helper()
	for _, c := range a.Candidates {
		if strings.Join(c.Paths, ",") == strings.Join(paths, ",") {
			return c
		}
	}
	t.Fatalf("no candidate %v among %d", paths, len(a.Candidates))
	return Candidate{}
}

func hasReason(c Candidate, part string) bool {
	for _, r := range c.Reasons {
		if strings.Contains(r, part) {
			return true
		}
	}
	return false
}

func TestUniformHighCardinalityWinsSkewedAndLowCardinalityLose(t *testing.T) {
	a := Advise(Input{Items: dataset(2000), TotalItems: 1_000_000, TotalBytes: 150 << 20, Partitions: 4})
	if a.Sampled != 2000 || a.SpreadPartitions != 4 {
		t.Fatalf("sampled %d, spread %d", a.Sampled, a.SpreadPartitions)
	}
	user, tenant, region := find(t, a, "/user"), find(t, a, "/tenant"), find(t, a, "/region")
	top := a.Candidates[0]
	if top.Verdict != "good" || (top.Paths[0] != "/user" && top.Paths[0] != "/id") || len(top.Paths) != 1 {
		t.Fatalf("top candidate %v %d %s, want /user or /id, good:\n%v", top.Paths, top.Score, top.Verdict, top.Reasons)
	}
	if user.Verdict != "good" || user.Cardinality < 4000 {
		t.Errorf("/user: %s, cardinality %d: %v", user.Verdict, user.Cardinality, user.Reasons)
	}
	if tenant.Verdict != "poor" || tenant.LargestShare < 0.55 || !hasReason(tenant, `the largest value ("big") holds 6`) {
		t.Errorf("/tenant: %s, largest %v: %v", tenant.Verdict, tenant.LargestShare, tenant.Reasons)
	}
	if region.Verdict != "poor" || region.Cardinality != 3 || !hasReason(region, "only 3 distinct values: at most 3 logical partitions") {
		t.Errorf("/region: %s %d: %v", region.Verdict, region.Cardinality, region.Reasons)
	}
	if find(t, a, "/address/city").Cardinality != 50 {
		t.Errorf("nested path: %+v", find(t, a, "/address/city"))
	}
	for i, c := range a.Candidates {
		if c.Rank != i+1 || i > 0 && c.Score > a.Candidates[i-1].Score {
			t.Fatalf("ranks out of order at %d: %+v", i, c)
		}
	}
	if len(a.Synthetic) != 0 {
		t.Errorf("synthetic keys proposed although /user is good: %+v", a.Synthetic)
	}
}

// The score is the product of the factors, as the formula in every candidate's reasons says.
func TestScoreIsTheFormula(t *testing.T) {
	a := Advise(Input{Items: dataset(500)})
	for _, c := range a.Candidates {
		f := c.Factors
		want := int(100*f.Cardinality*f.Storage*f.Request*f.FanOut*f.Presence*f.Cap + 0.5)
		if c.Score != want || c.Verdict != verdict(want) {
			t.Fatalf("%v: score %d %s, factors give %d", c.Paths, c.Score, c.Verdict, want)
		}
		if !strings.HasPrefix(c.Reasons[len(c.Reasons)-1], fmt.Sprintf("score = 100 × %.2f cardinality", f.Cardinality)) {
			t.Fatalf("%v: last reason %q", c.Paths, c.Reasons[len(c.Reasons)-1])
		}
	}
}

func TestFactors(t *testing.T) {
	d := dist{n: 100, counts: map[string]int{"a": 97, "b": 1, "c": 1, "d": 1}, maxCount: 97}
	f := factors(4, d, nil, nil, 4, "none")
	if f.Storage != 0 || f.Cardinality < 0.2 || f.Cardinality > 0.21 || f.Request != 1 || f.FanOut != 1 || f.Presence != 1 {
		t.Fatalf("skewed: %+v", f)
	}
	even := dist{n: 1000, counts: map[string]int{}, maxCount: 1}
	for i := range 1000 {
		even.counts[fmt.Sprint(i)] = 1
	}
	hot, fan := 0.9, 1.0
	f = factors(1000, even, &hot, &fan, 4, "high")
	if f.Cardinality != 1 || f.Storage != 1 || f.Request != 0 || f.FanOut != 0.5 || f.Cap != 0.2 {
		t.Fatalf("even, hot, fanned, over the cap: %+v", f)
	}
	if shareFactor(0.125, 4) != 1 || shareFactor(0.5, 4) != 0 || shareFactor(0.25, 4) < 0.66 || shareFactor(0.25, 4) > 0.67 {
		t.Fatal("shareFactor")
	}
}

func TestMissingPathAndCapRisk(t *testing.T) {
	items := make([][]byte, 1000)
	for i := range items {
		if i%2 == 0 {
			items[i] = []byte(fmt.Sprintf(`{"id":"%d","k":"v%d","pad":"%s"}`, i, i, strings.Repeat("x", 100)))
		} else {
			items[i] = []byte(fmt.Sprintf(`{"id":"%d"}`, i))
		}
	}
	// 1 TB in all: the undefined key's half of the items (a few percent of the bytes) is far
	// past 20 GB.
	a := Advise(Input{Items: items, TotalItems: 10_000_000_000, TotalBytes: 1 << 40})
	k := find(t, a, "/k")
	if k.MissingShare != 0.5 || !hasReason(k, "50% of items (500) lack /k: all of them share one logical partition") || k.CapRisk != "high" || k.Verdict != "poor" {
		t.Fatalf("/k: %+v", k)
	}
	if id := find(t, a, "/id"); id.CapRisk != "none" || id.MissingShare != 0 {
		t.Fatalf("/id: %+v", id)
	}
}

func TestFanOutShare(t *testing.T) {
	qs := []QueryCount{
		{"SELECT * FROM c WHERE c.user = 'u1'", 6},
		{"SELECT * FROM c WHERE c.user = @u AND c.region = 'eu'", 2},
		{"SELECT * FROM c WHERE c.user IN ('u1', 'u2')", 1}, // two values: fans out
		{"SELECT * FROM c WHERE c.region = 'eu' OR c.user = 'u1'", 1},
		{"SELECT * FROM c WHERE c.tenant IN ('big')", 5},
		{"SELECT * FROM", 3}, // does not parse
	}
	a := Advise(Input{Items: dataset(300), Queries: qs})
	if a.Queries != 15 || len(a.Notes) == 0 || !strings.Contains(strings.Join(a.Notes, ";"), "3 query executions did not parse") {
		t.Fatalf("queries %d notes %v", a.Queries, a.Notes)
	}
	for _, tc := range []struct {
		paths []string
		want  float64
	}{
		{[]string{"/user"}, 7.0 / 15},
		{[]string{"/tenant"}, 10.0 / 15},
		{[]string{"/region"}, 13.0 / 15},
		{[]string{"/id"}, 1},
	} {
		c := find(t, a, tc.paths...)
		if c.FanOutShare == nil || *c.FanOutShare != round3(tc.want) {
			t.Errorf("%v: fan-out %v, want %.3f", tc.paths, c.FanOutShare, tc.want)
		}
	}
}

func TestRequestSkewOfTheCurrentKey(t *testing.T) {
	items := dataset(1000)
	// Rates for the current key /region: eu drew 90 RU, the others 5 each.
	rates := []LogicalRate{
		{EPK: epk.HashV2(epk.Key{epk.String("eu")}), RU: 90},
		{EPK: epk.HashV2(epk.Key{epk.String("us")}), RU: 5},
		{EPK: epk.HashV2(epk.Key{epk.String("asia")}), RU: 5},
	}
	a := Advise(Input{Items: items, Current: KeyDef{Paths: []string{"/region"}, Version: 2}, Rates: rates, Partitions: 1})
	r := find(t, a, "/region")
	if !r.IsCurrent || r.RequestSkew == nil || *r.RequestSkew != 2.7 || r.Factors.Request != 0 || !hasReason(r, "drew 90% of recent request units") {
		t.Fatalf("/region: %+v", r)
	}
	if u := find(t, a, "/user"); u.RequestSkew != nil {
		t.Fatalf("/user has a request skew although its rates are unknown: %+v", u)
	}
}

// A low-cardinality key gets the three synthetic proposals; their spreads count every
// sampled item once, and the values are what SyntheticValues gives. (The application queries
// by region, so the id, unique as it is, fans every query out and is only fair.)
func TestLowCardinalityGetsSyntheticKeys(t *testing.T) {
	items := make([][]byte, 3000)
	for i := range items {
		items[i] = []byte(fmt.Sprintf(`{"id":"o%d","region":%q,"kind":"k%d"}`, i, []string{"eu", "us", "asia"}[i%3], i%5))
	}
	byRegion := []QueryCount{{"SELECT * FROM c WHERE c.region = @r", 10}}
	a := Advise(Input{Items: items, Current: KeyDef{Paths: []string{"/region"}}, Partitions: 1, WriteRate: 40000, Queries: byRegion})
	for _, c := range a.Candidates {
		if c.Verdict == "good" && len(c.Paths) == 1 {
			t.Fatalf("a good single key: %v", c)
		}
	}
	kinds := map[string]Synthetic{}
	for _, s := range a.Synthetic {
		kinds[s.Kind] = s
		total := 0
		for _, sh := range s.PredictedSpread {
			total += sh.Items
		}
		if total != 3000 || len(s.PredictedSpread) != 4 {
			t.Fatalf("%s spread: %+v", s.Kind, s.PredictedSpread)
		}
	}
	rs, hs, cs := kinds["random-suffix"], kinds["hash-suffix"], kinds["concat"]
	// 40,000 RU/s of writes, a third on the busiest region: 13,333 over 5,000 per suffix = 3;
	// spreading 3 regions over 4 partitions at 25 each: 34.
	if rs.Suffixes != 34 || hs.Suffixes != 34 || hs.Paths[1] != "/id" || cs.Paths[0] != "/region" {
		t.Fatalf("proposals: %+v", a.Synthetic)
	}
	vals := SyntheticValues(hs, items)
	if vals[7] != fmt.Sprintf("us-%d", HashSuffix("o7", 34)) || hs.Example != vals[0] {
		t.Fatalf("hash-suffix values: %q, example %q", vals[:8], hs.Example)
	}
	if largestSpread(hs.PredictedSpread) > 0.4 || largestSpread(rs.PredictedSpread) > 0.4 {
		t.Errorf("suffix spreads are lopsided: %+v %+v", hs.PredictedSpread, rs.PredictedSpread)
	}
	// With a write rate that needs more: 600,000 RU/s, 200,000 on a region, 40 suffixes.
	a = Advise(Input{Items: items, Current: KeyDef{Paths: []string{"/region"}}, WriteRate: 600000, Queries: byRegion})
	for _, s := range a.Synthetic {
		if s.Kind == "random-suffix" && (s.Suffixes != 40 || !strings.Contains(s.Reasons[0], "needs 40")) {
			t.Fatalf("random suffix for 600,000 RU/s: %+v", s)
		}
	}
}

// HashSuffix is FNV-1a 32 mod n, as docs/advisor.md tells applications to compute it.
func TestHashSuffix(t *testing.T) {
	if HashSuffix("o7", 34) != 25 || HashSuffix("", 1000) != 2166136261%1000 {
		t.Fatal(HashSuffix("o7", 34), HashSuffix("", 1000))
	}
}

// The same input gives the same advice.
func TestDeterministic(t *testing.T) {
	in := Input{Items: dataset(400), Current: KeyDef{Paths: []string{"/region"}}}
	a, b := Advise(in), Advise(in)
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatal("two runs differ")
	}
}

// A sample with nothing to judge answers an empty ranking with a note, not a failure.
func TestNothingToJudge(t *testing.T) {
	for _, items := range [][][]byte{nil, {[]byte(`[1,2]`), []byte(`not json`)}, {[]byte(`{"a":[1],"b":{}}`)}} {
		a := Advise(Input{Items: items})
		if len(a.Candidates) != 0 || len(a.Synthetic) != 0 || len(a.Notes) != 1 {
			t.Fatalf("%q: %+v", items, a)
		}
	}
}

// A Zipf-distributed key (value k drawn with weight 1/k over 1,000 values) ranks below a
// uniform key of fewer values, and its reason names the skew.
func TestZipfKeyLosesToUniform(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	z := rand.NewZipf(rand.New(rand.NewPCG(8, 8)), 1.0001, 1, 999)
	items := make([][]byte, 2000)
	for i := range items {
		items[i] = []byte(fmt.Sprintf(`{"zipf":"z%d","uniform":"u%d"}`, z.Uint64(), rng.IntN(500)))
	}
	a := Advise(Input{Items: items, TotalItems: 2_000_000})
	zipf, uniform := find(t, a, "/zipf"), find(t, a, "/uniform")
	if zipf.Rank <= uniform.Rank || zipf.Score >= uniform.Score || !hasReason(zipf, "an even share of") || !hasReason(zipf, "storage and requests are skewed") {
		t.Fatalf("zipf %d (rank %d): %v\nuniform %d (rank %d): %v", zipf.Score, zipf.Rank, zipf.Reasons, uniform.Score, uniform.Rank, uniform.Reasons)
	}
	t.Logf("zipf %d %s (skew %.0f), uniform %d %s", zipf.Score, zipf.Verdict, zipf.StorageSkew, uniform.Score, uniform.Verdict)
}
