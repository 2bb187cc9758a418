package query

import (
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
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
