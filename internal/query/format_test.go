package query

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/partita-db/partita/internal/value"
)

// writeQuery writes a parsed query back as text.
func writeQuery(q *Query) string {
	var f formatter
	f.query(q)
	return f.String()
}

// checkFormat checks that sql, written back from its syntax tree, is a query of its own that
// writes back to the same text and returns the same results over fuzzDocs. Queries that do
// not prepare are not its concern.
func checkFormat(t *testing.T, sql string) {
	t.Helper()
	q, err := Parse(sql)
	if err != nil {
		return
	}
	p, err := Prepare(sql)
	if err != nil {
		return
	}
	text := writeQuery(q)
	again, err := Parse(text)
	if err != nil {
		t.Fatalf("%q written back as %q, which does not parse: %v", sql, text, err)
	}
	if got := writeQuery(again); got != text {
		t.Fatalf("%q written back as %q, and that as %q", sql, text, got)
	}
	p2, err := Prepare(text)
	if err != nil {
		t.Fatalf("%q written back as %q, which does not prepare: %v", sql, text, err)
	}
	want, werr := allResults(p)
	got, gerr := allResults(p2)
	if (werr == nil) != (gerr == nil) || !slices.Equal(got, want) {
		t.Fatalf("%q gives %v (%v); written back as %q it gives %v (%v)", sql, want, werr, text, got, gerr)
	}
}

// allResults runs p over fuzzDocs to its last page.
func allResults(p *Prepared) ([]string, error) {
	var out []string
	tok := ""
	for range 100 {
		page, err := p.Run(fuzzDocs, Options{Params: map[string]value.Value{"@n": value.Num(2)}, MaxItems: 2, Continuation: tok})
		if err != nil {
			return out, err
		}
		for _, v := range page.Results {
			out = append(out, string(value.AppendJSON(nil, v)))
		}
		if tok = page.Next; tok == "" {
			break
		}
	}
	return out, nil
}

func TestFormatRoundTrip(t *testing.T) {
	for _, sql := range append(append(slices.Clone(evalSeeds), continuationQueries...),
		`SELECT VALUE {"a": c["x y"], "b": [1, -2.5, "q\"\\\n", null, undefined, true]} FROM root r JOIN t IN r.arr WHERE NOT (t > 1) OR t IN (1, 2) ORDER BY r.n DESC, r.id ASC`,
		"SELECT c.id, c.s || 'x' AS t, (SELECT VALUE COUNT(1) FROM a IN c.arr) AS n FROM c WHERE EXISTS(SELECT VALUE x FROM x IN c.arr WHERE x = 1) AND c.n BETWEEN -1 AND 2",
		"SELECT TOP 1 VALUE ARRAY(SELECT DISTINCT VALUE x FROM x IN c.arr) FROM c",
		"SELECT * FROM c.o.p p",
		"SELECT * FROM c.arr[1]",
		"SELECT VALUE x FROM x IN (SELECT VALUE c.n FROM c)",
		"SELECT VALUE (c.n > 0 ? 'pos' : c.n ?? 0) FROM c WHERE c.s NOT LIKE '%!%%' ESCAPE '!'",
	) {
		checkFormat(t, sql)
	}
}

// The documented Cosmos DB samples' queries write back too.
func TestFormatSamples(t *testing.T) {
	dir := samplesDir(t)
	files, _ := filepath.Glob(filepath.Join(dir, "*", "query.sql"))
	if len(files) == 0 {
		t.Fatalf("no query.sql under %s", dir)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sql := string(b)
		if upper := strings.ToUpper(sql); strings.Contains(upper, "GETCURRENT") || strings.Contains(upper, "RAND(") {
			continue // not the same result twice
		}
		checkFormat(t, sql)
	}
}

// FuzzFormat writes arbitrary queries back as text: what prepares must write back to a query
// that prepares, writes back to itself, and returns the same results.
func FuzzFormat(f *testing.F) {
	for _, q := range evalSeeds {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, sql string) { checkFormat(t, sql) })
}
