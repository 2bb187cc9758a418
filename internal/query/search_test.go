package query

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/fulltext"
	"github.com/partita-db/partita/internal/indexing"
	"github.com/partita-db/partita/internal/searchpolicy"
	"github.com/partita-db/partita/internal/value"
)

var searchDocs = Slice{
	[]byte(`{"id":"a","v":[1,0,0],"text":"The quick brown fox jumps"}`),
	[]byte(`{"id":"b","v":[0.9,0.1,0],"text":"A brown dog sleeps; brown dogs sleep a lot"}`),
	[]byte(`{"id":"c","v":[0,1,0],"text":"Foxes are quick and clever"}`),
	[]byte(`{"id":"d","v":[0,0,2],"text":"Nothing to see here"}`),
	[]byte(`{"id":"e","text":"no vector, a quick note"}`),
}

func runSearch(t *testing.T, sql string, opts Options) []value.Value {
	t.Helper()
	p, err := Prepare(sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	page, err := p.Run(searchDocs, opts)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return page.Results
}

func TestVectorDistance(t *testing.T) {
	near := func(got value.Value, want float64) bool {
		return got.Kind() == value.Number && math.Abs(got.Num()-want) < 1e-6
	}
	res := runSearch(t, `SELECT VALUE [VectorDistance(c.v, [1,0,0]), VectorDistance(c.v, [1,0,0], false, {"distanceFunction": "DotProduct"}), VectorDistance(c.v, [1,0,0], true, {"distanceFunction": "euclidean"})] FROM c WHERE c.id = "b"`, Options{})
	cos := 0.9 / math.Sqrt(0.82)
	if e := res[0].Elems(); !near(e[0], cos) || !near(e[1], 0.9) || !near(e[2], math.Sqrt(0.02)) {
		t.Errorf("cosine, dot product, euclidean = %v; want %v, 0.9, %v", value.AppendJSON(nil, res[0]), cos, math.Sqrt(0.02))
	}
	// A vector of another length, or no vector, has no distance.
	res = runSearch(t, `SELECT VALUE VectorDistance(c.v, [1,0]) FROM c`, Options{})
	if len(res) != 0 {
		t.Errorf("mismatched lengths gave %d values, want none", len(res))
	}
	// ORDER BY VectorDistance ranks the most similar first: descending for cosine...
	res = runSearch(t, `SELECT TOP 3 c.id FROM c ORDER BY VectorDistance(c.v, [1,0,0])`, Options{})
	if got := idsOf(res); got != "a,b,c" {
		t.Errorf("cosine top 3 = %s, want a,b,c (d is orthogonal too, but later)", got)
	}
	// ... ascending for euclidean distance, whether the query or the policy names it.
	res = runSearch(t, `SELECT TOP 2 c.id FROM c ORDER BY VectorDistance(c.v, [0,0,1.9], false, {"distanceFunction": "euclidean"})`, Options{})
	if got := idsOf(res); got != "d,b" {
		t.Errorf("euclidean top 2 = %s, want d,b", got)
	}
	pol, err := searchpolicy.ParseVector([]byte(`{"vectorEmbeddings":[{"path":"/v","dataType":"float32","dimensions":3,"distanceFunction":"euclidean"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	res = runSearch(t, `SELECT TOP 2 c.id FROM c ORDER BY VectorDistance(c.v, [0,0,1.9])`, Options{Vectors: pol})
	if got := idsOf(res); got != "d,b" {
		t.Errorf("euclidean by policy top 2 = %s, want d,b", got)
	}
	// A written direction is kept.
	res = runSearch(t, `SELECT TOP 1 c.id FROM c ORDER BY VectorDistance(c.v, [1,0,0]) ASC`, Options{})
	if got := idsOf(res); got != "c" {
		t.Errorf("ascending cosine top 1 = %s, want c", got)
	}
	// Filters and ORDER BY RANK take it too.
	res = runSearch(t, `SELECT c.id FROM c WHERE VectorDistance(c.v, [1,0,0]) > 0.5 ORDER BY RANK VectorDistance(c.v, [1,0,0])`, Options{})
	if got := idsOf(res); got != "a,b" {
		t.Errorf("filtered = %s, want a,b", got)
	}
	// int8 vectors take whole numbers in range only.
	res = runSearch(t, `SELECT VALUE VectorDistance([1, 200], [1, 2], false, {"dataType": "int8"}) FROM c WHERE c.id = "a"`, Options{})
	if len(res) != 0 {
		t.Errorf("an int8 vector with 200 gave %v, want no value", res)
	}
}

func idsOf(vs []value.Value) string {
	var out []string
	for _, v := range vs {
		out = append(out, v.Get("id").Str())
	}
	return strings.Join(out, ",")
}

func TestFullTextContains(t *testing.T) {
	for _, c := range []struct{ where, want string }{
		{`FullTextContains(c.text, "fox")`, "a,c"}, // foxes stems to fox
		{`FullTextContains(c.text, "QUICK fox")`, "a,c"},
		{`FullTextContains(c.text, "the")`, ""}, // a stop word only: never contained
		{`FullTextContainsAll(c.text, "brown", "sleeping")`, "b"},
		{`FullTextContainsAny(c.text, "dog", "clever")`, "b,c"},
		{`FullTextContains(c.missing, "fox")`, ""},
		{`NOT FullTextContains(c.text, "quick")`, "b,d"},
	} {
		res := runSearch(t, `SELECT c.id FROM c WHERE `+c.where, Options{})
		if got := idsOf(res); got != c.want {
			t.Errorf("WHERE %s: %s, want %s", c.where, got, c.want)
		}
	}
}

// TestFullTextScore checks ORDER BY RANK FullTextScore's order against BM25 computed
// directly over the same corpus, and that the WHERE clause does not narrow the statistics.
func TestFullTextScore(t *testing.T) {
	corpus := fulltext.Corpus{Freq: map[string]int{}}
	scores := map[string]float64{}
	tfs := map[string]map[string]int{}
	lengths := map[string]int{}
	for _, d := range searchDocs {
		v, _ := value.Parse(d)
		id := v.Get("id").Str()
		terms := fulltext.Analyze("en-US", v.Get("text").Str())
		corpus.Docs++
		corpus.Terms += len(terms)
		tfs[id], lengths[id] = map[string]int{}, len(terms)
		for _, term := range terms {
			if tfs[id][term] == 0 && (term == "brown" || term == "quick") {
				corpus.Freq[term]++
			}
			tfs[id][term]++
		}
	}
	for id := range tfs {
		scores[id] = corpus.Score([]string{"brown", "quick"}, tfs[id], lengths[id])
	}
	// a holds both words; b brown twice; c and e quick once, in texts of the same length
	// (equal scores keep item order); d neither.
	want := []string{"a", "b", "c", "e", "d"}
	for i := 1; i < len(want); i++ {
		if scores[want[i-1]] < scores[want[i]] {
			t.Fatalf("reference scores %v do not order as %v", scores, want)
		}
	}
	for _, sql := range []string{
		`SELECT c.id FROM c ORDER BY RANK FullTextScore(c.text, "brown", "quick")`,
		`SELECT c.id FROM c ORDER BY RANK FullTextScore(c.text, ["brown", "quick"])`,
		`SELECT c.id FROM c ORDER BY RANK FullTextScore(c.text, @terms)`,
	} {
		res := runSearch(t, sql, Options{Params: map[string]value.Value{"@terms": value.Arr([]value.Value{value.Str("brown"), value.Str("quick")})}})
		if got := idsOf(res); got != strings.Join(want, ",") {
			t.Errorf("%s: %s, want %s", sql, got, strings.Join(want, ","))
		}
	}
	res := runSearch(t, `SELECT TOP 2 c.id FROM c WHERE c.id != "b" ORDER BY RANK FullTextScore(c.text, "brown", "quick")`, Options{})
	if got := idsOf(res); got != "a,c" {
		t.Errorf("filtered top 2: %s, want a,c", got)
	}
}

// TestRRF fuses a vector ranking with a full-text one. Ranks by cosine to [1,0,0]: a, b, c,
// d (c and d tie at 0 and keep item order; e has no vector). By BM25 for "quick": c, e (equal
// scores), a; b and d hold no "quick" and get no rank. Fused with k 60: a and c 1/61+1/63, b
// and e 1/62, d 1/64; ties keep item order.
func TestRRF(t *testing.T) {
	res := runSearch(t, `SELECT c.id FROM c ORDER BY RANK RRF(VectorDistance(c.v, [1,0,0]), FullTextScore(c.text, "quick"))`, Options{})
	if got := idsOf(res); got != "a,c,b,e,d" {
		t.Errorf("fused: %s, want a,c,b,e,d", got)
	}
	// Weights 1 and 10: c 1/63+10/61, a 1/61+10/63, e 10/62.
	res = runSearch(t, `SELECT TOP 3 c.id FROM c ORDER BY RANK RRF(VectorDistance(c.v, [1,0,0]), FullTextScore(c.text, "quick"), [1, 10])`, Options{})
	if got := idsOf(res); got != "c,a,e" {
		t.Errorf("weighted: %s, want c,a,e", got)
	}
}

func TestSearchRefusals(t *testing.T) {
	for _, c := range []struct{ sql, want string }{
		{`SELECT FullTextScore(c.text, "a") FROM c`, "only be used in ORDER BY RANK"},
		{`SELECT c.id FROM c WHERE FullTextScore(c.text, "a") > 1`, "only be used in ORDER BY RANK"},
		{`SELECT c.id FROM c ORDER BY FullTextScore(c.text, "a")`, "only be used in ORDER BY RANK"},
		{`SELECT c.id FROM c ORDER BY RANK c.id`, "takes a scoring function"},
		{`SELECT c.id FROM c ORDER BY RANK FullTextScore(c.text, "a"), c.id`, "only ORDER BY key"},
		{`SELECT c.id FROM c ORDER BY RANK RRF(FullTextScore(c.text, "a"))`, "two or more"},
		{`SELECT c.id FROM c ORDER BY RANK RRF(FullTextScore(c.text, "a"), LOWER(c.x))`, "must be FullTextScore or VectorDistance"},
		{`SELECT VALUE (SELECT VALUE 1 FROM x IN c.a ORDER BY RANK VectorDistance(x, [1])) FROM c`, "outermost"},
		{`SELECT c.id FROM c WHERE VectorDistance(c.v)`, "requires"},
	} {
		_, err := Prepare(c.sql)
		var f *fault.Error
		if !errors.As(err, &f) || f.Kind != fault.BadRequest || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want a 400 saying %q", c.sql, err, c.want)
		}
	}
	for _, c := range []struct{ sql, want string }{
		{`SELECT c.id FROM c ORDER BY RANK RRF(FullTextScore(c.text, "a"), VectorDistance(c.v, [1,0,0]), [1])`, "array of 2 numbers"},
		{`SELECT VALUE VectorDistance(c.v, [1,0,0], false, {"distanceFunction": "manhattan"}) FROM c`, "distanceFunction"},
		{`SELECT VALUE VectorDistance(c.v, [1,0,0], "yes") FROM c`, "brute force"},
		{`SELECT VALUE VectorDistance(c.v, [1,0,0], false, {"searchListSizeMultiplier": 101}) FROM c`, "from 1 to 100"},
		{`SELECT VALUE VectorDistance(c.v, [1,0,0], false, {"searchListSizeMultiplier": "wide"}) FROM c`, "from 1 to 100"},
	} {
		p, err := Prepare(c.sql)
		if err == nil {
			_, err = p.Run(searchDocs, Options{})
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want an error saying %q", c.sql, err, c.want)
		}
	}
}

// The full-text conjuncts of WHERE choose an index range of one analyzed token: the first of
// the first string that gives one (Contains, ContainsAll), or the first of each (ContainsAny);
// a search that gives no token reads every item, and so does one on a path the index lacks.
func TestFullTextIndexRange(t *testing.T) {
	ft, err := searchpolicy.ParseFullText([]byte(`{"defaultLanguage":"en-US","fullTextPaths":[{"path":"/text"},{"path":"/de","language":"de-DE"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	path := indexing.FullTextTermPath("/text")
	token := func(s string) string { return string(indexing.FullTextToken(s)) }
	for _, c := range []struct {
		sql    string
		want   []string // the tokens of the range: one for Lo, several for Values; nil for none
		values bool
	}{
		{`SELECT * FROM c WHERE FullTextContains(c.text, 'Running dogs')`, []string{"run"}, false},
		{`SELECT * FROM c WHERE FullTextContains(c.text, 'the')`, nil, false},
		{`SELECT * FROM c WHERE FullTextContains(c.text, @w)`, []string{"cat"}, false},
		{`SELECT * FROM c WHERE c.n > 1 AND FullTextContainsAll(c.text, 'the', c.x, 'foxes')`, []string{"fox"}, false},
		{`SELECT * FROM c WHERE FullTextContainsAny(c.text, 'the', 'cats', 'quick dogs')`, []string{"cat", "quick"}, true},
		{`SELECT * FROM c WHERE FullTextContainsAny(c.text, 'cats', c.x)`, nil, false},
		{`SELECT * FROM c WHERE NOT FullTextContains(c.text, 'cats')`, nil, false},
		{`SELECT * FROM c WHERE FullTextContains(c.other, 'cats')`, nil, false},
		{`SELECT * FROM c WHERE FullTextContains(c.de, 'Häuser')`, []string{"haus"}, false},
	} {
		p, err := Prepare(c.sql)
		if err != nil {
			t.Fatal(err)
		}
		r, ok := p.indexRange(map[string]value.Value{"@w": value.Str("cats")}, ft, func(p string) bool {
			return p == path || p == indexing.FullTextTermPath("/de")
		})
		var got []string
		switch {
		case ok && r.Values != nil:
			for _, v := range r.Values {
				got = append(got, string(v))
			}
		case ok:
			if string(r.Hi) != string(r.Lo)+"\xff" {
				t.Errorf("%s: range [%q, %q) is not one value", c.sql, r.Lo, r.Hi)
			}
			got = []string{string(r.Lo)}
		}
		var want []string
		for _, w := range c.want {
			want = append(want, token(w))
		}
		if strings.Join(got, "|") != strings.Join(want, "|") || ok && (r.Values != nil) != c.values {
			t.Errorf("%s: range %q (values %v), want %q", c.sql, got, r.Values != nil, want)
		}
	}
}
