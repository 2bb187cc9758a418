package query

import (
	"reflect"
	"testing"

	"github.com/partita-db/partita/internal/value"
)

func TestPlan(t *testing.T) {
	p, err := Prepare("SELECT DISTINCT TOP @n c.city, COUNT(1) AS n FROM c WHERE c.x > 1 GROUP BY c.city")
	if err != nil {
		t.Fatal(err)
	}
	pl := p.Plan(map[string]value.Value{"@n": value.Num(5)})
	if pl.DistinctType != "Unordered" || pl.Top == nil || *pl.Top != 5 || pl.Offset != nil || pl.HasSelectValue ||
		pl.OrderBy != nil || !reflect.DeepEqual(pl.GroupByExpressions, []string{`c["city"]`}) || pl.Aggregates != nil || *pl.GroupByAliasToAggregateType["n"] != "Count" || pl.GroupByAliasToAggregateType["city"] != nil ||
		!reflect.DeepEqual(pl.GroupByAliases, []string{"city", "n"}) {
		t.Fatalf("%+v", pl)
	}
	p, _ = Prepare("SELECT DISTINCT VALUE c.city FROM c ORDER BY c.city DESC")
	pl = p.Plan(nil)
	if pl.DistinctType != "Ordered" || !reflect.DeepEqual(pl.OrderBy, []string{"Descending"}) || !reflect.DeepEqual(pl.OrderByExpressions, []string{`c["city"]`}) {
		t.Fatalf("%+v", pl)
	}
	p, _ = Prepare("SELECT VALUE AVG(c.n * 2) FROM c OFFSET 1 LIMIT 2")
	pl = p.Plan(nil)
	if !pl.HasSelectValue || *pl.Offset != 1 || *pl.Limit != 2 || pl.Aggregates[0] != "Average" || pl.DistinctType != "None" {
		t.Fatalf("%+v", pl)
	}
	if got := FormatExpr(Binary{Op: "AND", L: Call{Name: "LOWER", Args: []Expr{Property{Ident{Name: "c"}, "a"}}}, R: Literal{value.Str("x")}}); got != `(LOWER(c["a"]) AND "x")` {
		t.Fatalf("FormatExpr: %s", got)
	}
}
