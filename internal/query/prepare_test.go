package query

import (
	"fmt"
	"strings"
	"testing"

	"github.com/partita-db/partita/internal/value"
)

// A syntax tree built by hand, as another language's compiler would, runs like the same query
// written in SQL.
func TestPrepareQueryRunsABuiltTree(t *testing.T) {
	docs := Slice{}
	for i := range 6 {
		docs = append(docs, []byte(fmt.Sprintf(`{"id":"%d","n":%d}`, i, i)))
	}
	tree := &Query{
		Select: Select{Value: Property{Obj: Ident{Name: "c"}, Name: "id"}},
		From:   &From{Source: Source{Alias: "c", Expr: Ident{Name: "c"}}},
		Where:  Binary{Op: ">=", L: Property{Obj: Ident{Name: "c"}, Name: "n"}, R: Literal{Val: value.Num(3)}},
	}
	built, err := PrepareQuery(tree)
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := Prepare("SELECT VALUE c.id FROM c WHERE c.n >= 3")
	if err != nil {
		t.Fatal(err)
	}
	got, err := built.Run(docs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := parsed.Run(docs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got.Results) != fmt.Sprint(want.Results) || len(got.Results) != 3 {
		t.Fatalf("built tree gave %v, SQL gave %v", got.Results, want.Results)
	}
	// A tree that is not a valid query is refused as SQL would be.
	if _, err := PrepareQuery(&Query{Select: Select{Star: true}}); err == nil {
		t.Fatal("SELECT * without FROM was accepted")
	}
}

// TOP, OFFSET and LIMIT parameters must hold non-negative integers, in the query and in its
// subqueries; a query text past Cosmos's limit is refused before it is parsed.
func TestCheckParams(t *testing.T) {
	for _, tc := range []struct {
		sql    string
		params map[string]value.Value
		ok     bool
	}{
		{"SELECT TOP @n * FROM c", map[string]value.Value{"@n": value.Num(5)}, true},
		{"SELECT TOP @n * FROM c", map[string]value.Value{"@n": value.Str("5")}, false},
		{"SELECT TOP @n * FROM c", map[string]value.Value{"@n": value.Num(1.5)}, false},
		{"SELECT TOP @n * FROM c", map[string]value.Value{"@n": value.Num(-1)}, false},
		{"SELECT TOP @n * FROM c", map[string]value.Value{"@n": value.Arr(nil)}, false},
		{"SELECT TOP @n * FROM c", nil, false},
		{"SELECT * FROM c OFFSET @o LIMIT @l", map[string]value.Value{"@o": value.Num(0), "@l": value.Str("x")}, false},
		{"SELECT * FROM c OFFSET @o LIMIT @l", map[string]value.Value{"@o": value.Num(0), "@l": value.Num(2)}, true},
		{"SELECT VALUE ARRAY(SELECT TOP @n VALUE t FROM t IN c.tags) FROM c", map[string]value.Value{"@n": value.Bool(true)}, false},
	} {
		p, err := Prepare(tc.sql)
		if err != nil {
			t.Fatalf("%s: %v", tc.sql, err)
		}
		if err := p.CheckParams(tc.params); (err == nil) != tc.ok {
			t.Errorf("%s with %v: %v", tc.sql, tc.params, err)
		}
	}
	long := "SELECT * FROM c WHERE c.x IN (" + strings.Repeat("1,", MaxTextBytes/2) + "1)"
	if _, err := Prepare(long); err == nil || !strings.Contains(err.Error(), "maximum limit") {
		t.Fatalf("a %d-byte query: %v", len(long), err)
	}
}

// A grouped query may select its GROUP BY expressions (and what lies below them), aggregates
// and constants; any other property of the items differs inside a group and is refused.
func TestGroupedSelectReadsOnlyGroups(t *testing.T) {
	for _, sql := range []string{
		"SELECT c.pk, COUNT(1) AS n FROM c GROUP BY c.pk",
		"SELECT VALUE {k: c.pk, n: SUM(c.n), one: 1} FROM c GROUP BY c.pk",
		"SELECT e.a.b AS x FROM employees e GROUP BY e.a.b",
		"SELECT c.a.b FROM c GROUP BY c.a",
		"SELECT LOWER(c.pk) AS l FROM c GROUP BY LOWER(c.pk)",
		"SELECT UPPER(c.pk) AS u, c.k FROM c GROUP BY c.pk, c.k",
		"SELECT c.pk, @p AS p FROM c GROUP BY c.pk",
	} {
		if _, err := Prepare(sql); err != nil {
			t.Errorf("%s: %v", sql, err)
		}
	}
	for sql, ref := range map[string]string{
		"SELECT c.n FROM c GROUP BY c.pk":                     "c.n",
		"SELECT c.pk, c.n + 1 AS m FROM c GROUP BY c.pk":      "c.n",
		"SELECT VALUE c FROM c GROUP BY c.pk":                 "c",
		"SELECT LOWER(c.pk) AS l FROM c GROUP BY UPPER(c.pk)": "c.pk",
		"SELECT c.a FROM c GROUP BY c.a.b":                    "c.a",
	} {
		_, err := Prepare(sql)
		if err == nil || !strings.Contains(err.Error(), "'"+ref+"'") {
			t.Errorf("%s: got %v, want a refusal naming %s", sql, err, ref)
		}
	}
}

// The forms the GROUP BY documentation rules out are refused, each with its reason, and their
// neighbours that it allows are accepted.
func TestGroupByRules(t *testing.T) {
	for _, sql := range []string{
		"SELECT x.a FROM (SELECT c.a FROM c GROUP BY c.a) x",
		"SELECT COUNT(1) FROM (SELECT DISTINCT c.a FROM c) x",
		"SELECT COUNT(1) FROM (SELECT TOP 4 * FROM c) x",
		"SELECT c.a, 1 AS one FROM c GROUP BY c.a",
		"SELECT c.a FROM c GROUP BY c.a OFFSET 1 LIMIT 2",
		"SELECT * FROM c WHERE EXISTS (SELECT VALUE COUNT(1) FROM t IN c.tags GROUP BY t)",
		"SELECT VALUE COUNT(1) FROM c GROUP BY LOWER(c.a)",
	} {
		if _, err := Prepare(sql); err != nil {
			t.Errorf("%s: %v", sql, err)
		}
	}
	for sql, why := range map[string]string{
		"SELECT COUNT(x) FROM (SELECT c.a FROM c GROUP BY c.a) AS x":                  "over a subquery that has a GROUP BY",
		"SELECT VALUE COUNT(1) FROM (SELECT c.a FROM c GROUP BY c.a)":                 "over a subquery that has a GROUP BY",
		"SELECT SUM(x.n) FROM (SELECT COUNT(1) AS n FROM c GROUP BY c.a) x":           "over a subquery that has a GROUP BY",
		"SELECT COUNT(1) FROM (SELECT y.a FROM (SELECT c.a FROM c GROUP BY c.a) y) x": "over a subquery that has a GROUP BY",
		"SELECT c.a FROM c GROUP BY c.a ORDER BY c.a":                                 "ORDER BY is not supported",
		"SELECT c.a FROM c GROUP BY (SELECT VALUE 1)":                                 "Subqueries are not supported",
		"SELECT c.a FROM c GROUP BY c.a, EXISTS(SELECT VALUE 1)":                      "Subqueries are not supported",
		"SELECT c.a FROM c GROUP BY COUNT(c.a)":                                       "only allowed in the SELECT clause",
		"SELECT COUNT(1) FROM c GROUP BY 1":                                           "at least one property reference",
		"SELECT COUNT(1) FROM c GROUP BY @p":                                          "at least one property reference",
	} {
		if _, err := Prepare(sql); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("%s: got %v, want a refusal: %s", sql, err, why)
		}
	}
}
