package query

import (
	"strconv"
	"strings"

	"github.com/partita-db/partita/internal/value"
)

// Plan describes a query the way a Cosmos DB query plan does (the partitioned query execution
// info the JavaScript SDK asks for): what ordering, aggregation, DISTINCT and paging it needs.
// Partita executes every query completely on the server, so clients never have to act on it;
// it is answered faithfully all the same.
type Plan struct {
	DistinctType       string   // "None", "Ordered" or "Unordered"
	Top                *int     // nil when absent
	Offset, Limit      *int     // nil when absent
	OrderBy            []string // "Ascending" or "Descending" per key
	OrderByExpressions []string
	GroupByExpressions []string
	GroupByAliases     []string
	Aggregates         []string // "Count", "Sum", "Average", "Min", "Max", "CountIf"
	HasSelectValue     bool
}

// Plan returns the query's plan; parameters give TOP, OFFSET and LIMIT their values.
func (p *Prepared) Plan(params map[string]value.Value) Plan {
	q := p.q
	pl := Plan{DistinctType: "None", HasSelectValue: q.Select.Value != nil}
	if q.Select.Distinct {
		pl.DistinctType = "Unordered"
		if len(q.OrderBy) > 0 {
			pl.DistinctType = "Ordered"
		}
	}
	ev := &evaluator{params: params}
	count := func(e Expr) *int {
		if e == nil {
			return nil
		}
		n := p.count(ev, e)
		return &n
	}
	pl.Top, pl.Offset, pl.Limit = count(q.Select.Top), count(q.Offset), count(q.Limit)
	for _, o := range q.OrderBy {
		dir := "Ascending"
		if o.Desc {
			dir = "Descending"
		}
		pl.OrderBy = append(pl.OrderBy, dir)
		pl.OrderByExpressions = append(pl.OrderByExpressions, FormatExpr(o.Expr))
	}
	for _, g := range q.GroupBy {
		pl.GroupByExpressions = append(pl.GroupByExpressions, FormatExpr(g))
	}
	if len(q.GroupBy) > 0 {
		pl.GroupByAliases = append(pl.GroupByAliases, p.names...)
	}
	names := map[string]string{"COUNT": "Count", "SUM": "Sum", "AVG": "Average", "MIN": "Min", "MAX": "Max", "COUNTIF": "CountIf"}
	for _, a := range p.aggs {
		pl.Aggregates = append(pl.Aggregates, names[a.name])
	}
	return pl
}

// FormatExpr writes an expression back as query text.
func FormatExpr(e Expr) string {
	var b strings.Builder
	formatExpr(&b, e)
	return b.String()
}

func formatExpr(b *strings.Builder, e Expr) {
	list := func(xs []Expr) {
		for i, x := range xs {
			if i > 0 {
				b.WriteString(", ")
			}
			formatExpr(b, x)
		}
	}
	switch x := e.(type) {
	case Literal:
		b.WriteString(x.Val.String())
	case Param:
		b.WriteString(x.Name)
	case Ident:
		b.WriteString(x.Name)
	case Property:
		formatExpr(b, x.Obj)
		b.WriteString("[" + strconv.Quote(x.Name) + "]")
	case Index:
		formatExpr(b, x.Obj)
		b.WriteByte('[')
		formatExpr(b, x.Index)
		b.WriteByte(']')
	case Unary:
		b.WriteString(x.Op)
		if x.Op == "NOT" {
			b.WriteByte(' ')
		}
		b.WriteByte('(')
		formatExpr(b, x.X)
		b.WriteByte(')')
	case Binary:
		b.WriteByte('(')
		formatExpr(b, x.L)
		b.WriteString(" " + x.Op + " ")
		formatExpr(b, x.R)
		b.WriteByte(')')
	case Between:
		b.WriteByte('(')
		formatExpr(b, x.X)
		if x.Not {
			b.WriteString(" NOT")
		}
		b.WriteString(" BETWEEN ")
		formatExpr(b, x.Lo)
		b.WriteString(" AND ")
		formatExpr(b, x.Hi)
		b.WriteByte(')')
	case In:
		b.WriteByte('(')
		formatExpr(b, x.X)
		if x.Not {
			b.WriteString(" NOT")
		}
		b.WriteString(" IN (")
		list(x.List)
		b.WriteString("))")
	case Like:
		b.WriteByte('(')
		formatExpr(b, x.X)
		if x.Not {
			b.WriteString(" NOT")
		}
		b.WriteString(" LIKE ")
		formatExpr(b, x.Pattern)
		if x.Escape != nil {
			b.WriteString(" ESCAPE ")
			formatExpr(b, x.Escape)
		}
		b.WriteByte(')')
	case Conditional:
		b.WriteByte('(')
		formatExpr(b, x.Cond)
		b.WriteString(" ? ")
		formatExpr(b, x.Then)
		b.WriteString(" : ")
		formatExpr(b, x.Else)
		b.WriteByte(')')
	case Call:
		if x.UDF {
			b.WriteString("udf.")
		}
		b.WriteString(x.Name + "(")
		list(x.Args)
		b.WriteByte(')')
	case ArrayLit:
		b.WriteByte('[')
		list(x.Elems)
		b.WriteByte(']')
	case ObjectLit:
		b.WriteByte('{')
		for i, m := range x.Members {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(strconv.Quote(m.Key) + ": ")
			formatExpr(b, m.Val)
		}
		b.WriteByte('}')
	case aggRef:
		b.WriteString("$aggregate" + strconv.Itoa(x.i))
	case Subquery, Exists, ArrayQuery:
		b.WriteString("(subquery)")
	}
}
