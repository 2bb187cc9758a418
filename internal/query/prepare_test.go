package query

import (
	"fmt"
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
