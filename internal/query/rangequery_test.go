package query

import (
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/value"
)

// TestRangeQuery runs testdata/rangequery: each case is a query, and what an SDK that plans
// runs on each range for it (the plan's rewrittenQuery), "as is" when that is the query
// itself, or the error the plan request answers. @n is 2. Every rewritten query must prepare
// once the SDK has put its filter in.
func TestRangeQuery(t *testing.T) {
	datadriven.RunTest(t, "testdata/rangequery", func(t *testing.T, d *datadriven.TestData) string {
		p, err := Prepare(d.Input)
		if err != nil {
			return "prepare: " + err.Error() + "\n"
		}
		text, err := p.RangeQuery(map[string]value.Value{"@n": value.Num(2)})
		switch {
		case err != nil:
			return "error: " + err.Error() + "\n"
		case text == "":
			return "as is\n"
		}
		filters := []string{"true"}
		if len(p.q.OrderBy) > 0 {
			filters = append(filters, "("+FormatExpr(p.q.OrderBy[0].Expr)+" > 1)") // as an SDK resumes
		}
		for _, filter := range filters {
			if _, err := Prepare(strings.ReplaceAll(text, orderByFilter, filter)); err != nil {
				t.Errorf("%s\nwith filter %s does not prepare: %v", text, filter, err)
			}
		}
		return text + "\n"
	})
}

// FuzzRangeQuery plans arbitrary queries: the query each range runs must prepare, with the
// SDK's filter in place, or the plan must be refused with a 400.
func FuzzRangeQuery(f *testing.F) {
	for _, q := range evalSeeds {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		p, err := Prepare(sql)
		if err != nil {
			return
		}
		text, err := p.RangeQuery(map[string]value.Value{"@n": value.Num(2)})
		if err != nil {
			if e, ok := err.(*fault.Error); !ok || e.Kind != fault.BadRequest {
				t.Fatalf("%q: failure is not a 400: %v", sql, err)
			}
			return
		}
		if _, err := Prepare(strings.ReplaceAll(text, orderByFilter, "true")); text != "" && err != nil {
			t.Fatalf("%q runs on each range as %q, which does not prepare: %v", sql, text, err)
		}
	})
}
