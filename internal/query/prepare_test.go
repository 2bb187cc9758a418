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
