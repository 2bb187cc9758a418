package query

import (
	"math"
	"strconv"
	"strings"

	"github.com/partita-db/partita/internal/value"
)

// Formatting writes a syntax tree back as query text that parses to the same tree: the query
// plan's expressions, and the query each partition key range runs for an SDK that plans
// (rangequery.go). Every operation is parenthesized, so no precedence is lost.

// FormatExpr writes an expression back as query text.
func FormatExpr(e Expr) string {
	var f formatter
	f.expr(e)
	return f.String()
}

// formatter writes query text. aggs gives, for a prepared query, the aggregate calls that
// preparing replaced with references (aggRef) in each of its queries; without it a reference
// is written as $aggregateN, which no parser reads back.
type formatter struct {
	strings.Builder
	aggs func(q *Query) []aggSpec
	cur  []aggSpec // the aggregates of the query being written
}

// text writes s quoted as a query string literal.
func (f *formatter) text(s string) { f.WriteString(value.Str(s).String()) }

func (f *formatter) list(xs []Expr) {
	for i, x := range xs {
		if i > 0 {
			f.WriteString(", ")
		}
		f.expr(x)
	}
}

func (f *formatter) expr(e Expr) {
	switch x := e.(type) {
	case Literal:
		switch n := x.Val.Num(); {
		case x.Val.Kind() != value.Number || !math.IsNaN(n) && !math.IsInf(n, 0):
			f.WriteString(x.Val.String()) // JSON, which writes no NaN or infinity
		case math.IsNaN(n):
			f.WriteString("NaN")
		case n > 0:
			f.WriteString("Infinity")
		default:
			f.WriteString("-Infinity")
		}
	case Param:
		f.WriteString(x.Name)
	case Ident:
		f.WriteString(x.Name)
	case Property:
		f.expr(x.Obj)
		f.WriteByte('[')
		f.text(x.Name)
		f.WriteByte(']')
	case Index:
		f.expr(x.Obj)
		f.WriteByte('[')
		f.expr(x.Index)
		f.WriteByte(']')
	case Unary:
		f.WriteString(x.Op)
		if x.Op == "NOT" {
			f.WriteByte(' ')
		}
		f.WriteByte('(')
		f.expr(x.X)
		f.WriteByte(')')
	case Binary:
		f.WriteByte('(')
		f.expr(x.L)
		f.WriteString(" " + x.Op + " ")
		f.expr(x.R)
		f.WriteByte(')')
	case Between:
		f.negatable(x.X, x.Not, "BETWEEN")
		f.expr(x.Lo)
		f.WriteString(" AND ")
		f.expr(x.Hi)
		f.WriteByte(')')
	case In:
		f.negatable(x.X, x.Not, "IN")
		f.WriteByte('(')
		f.list(x.List)
		f.WriteString("))")
	case Like:
		f.negatable(x.X, x.Not, "LIKE")
		f.expr(x.Pattern)
		if x.Escape != nil {
			f.WriteString(" ESCAPE ")
			f.expr(x.Escape)
		}
		f.WriteByte(')')
	case Conditional:
		f.WriteByte('(')
		f.expr(x.Cond)
		f.WriteString(" ? ")
		f.expr(x.Then)
		f.WriteString(" : ")
		f.expr(x.Else)
		f.WriteByte(')')
	case Call:
		if x.UDF {
			f.WriteString("udf.")
		}
		f.WriteString(x.Name + "(")
		f.list(x.Args)
		f.WriteByte(')')
	case ArrayLit:
		f.WriteByte('[')
		f.list(x.Elems)
		f.WriteByte(']')
	case ObjectLit:
		f.WriteByte('{')
		for i, m := range x.Members {
			if i > 0 {
				f.WriteString(", ")
			}
			f.text(m.Key)
			f.WriteString(": ")
			f.expr(m.Val)
		}
		f.WriteByte('}')
	case aggRef:
		if x.i < len(f.cur) {
			a := f.cur[x.i]
			f.expr(Call{Name: a.name, Args: []Expr{a.arg}})
		} else {
			f.WriteString("$aggregate" + strconv.Itoa(x.i))
		}
	case Subquery:
		f.WriteByte('(')
		f.query(x.Q)
		f.WriteByte(')')
	case Exists:
		f.WriteString("EXISTS(")
		f.query(x.Q)
		f.WriteByte(')')
	case ArrayQuery:
		f.WriteString("ARRAY(")
		f.query(x.Q)
		f.WriteByte(')')
	}
}

// negatable opens an operation that NOT may negate: "(x [NOT] op ".
func (f *formatter) negatable(x Expr, not bool, op string) {
	f.WriteByte('(')
	f.expr(x)
	if not {
		f.WriteString(" NOT")
	}
	f.WriteString(" " + op + " ")
}

// query writes a whole query.
func (f *formatter) query(q *Query) {
	outer := f.cur
	f.cur = nil
	if f.aggs != nil {
		f.cur = f.aggs(q)
	}
	defer func() { f.cur = outer }()
	s := &q.Select
	f.WriteString("SELECT ")
	if s.Distinct {
		f.WriteString("DISTINCT ")
	}
	if s.Top != nil {
		f.WriteString("TOP ")
		f.expr(s.Top)
		f.WriteByte(' ')
	}
	switch {
	case s.Star:
		f.WriteByte('*')
	case s.Value != nil:
		f.WriteString("VALUE ")
		f.expr(s.Value)
	default:
		for i, it := range s.Items {
			if i > 0 {
				f.WriteString(", ")
			}
			f.expr(it.Expr)
			if it.Alias != "" {
				f.WriteString(" AS " + it.Alias)
			}
		}
	}
	if q.From != nil {
		f.WriteString(" FROM ")
		f.source(q.From.Source)
		for _, j := range q.From.Joins {
			f.WriteString(" JOIN ")
			f.source(j)
		}
	}
	if q.Where != nil {
		f.WriteString(" WHERE ")
		f.expr(q.Where)
	}
	if len(q.GroupBy) > 0 {
		f.WriteString(" GROUP BY ")
		f.list(q.GroupBy)
	}
	for i, o := range q.OrderBy {
		if i == 0 {
			f.WriteString(" ORDER BY ")
		} else {
			f.WriteString(", ")
		}
		if o.Rank {
			f.WriteString("RANK ")
		}
		f.expr(o.Expr)
		if o.Directed {
			f.WriteString(map[bool]string{false: " ASC", true: " DESC"}[o.Desc])
		}
	}
	if q.Offset != nil {
		f.WriteString(" OFFSET ")
		f.expr(q.Offset)
		f.WriteString(" LIMIT ")
		f.expr(q.Limit)
	}
}

// source writes a FROM or JOIN source, its alias always written out.
func (f *formatter) source(s Source) {
	if s.In {
		f.WriteString(s.Alias + " IN ")
		f.expr(s.Expr)
		return
	}
	f.expr(s.Expr)
	if id, ok := s.Expr.(Ident); s.Alias != "" && (!ok || id.Name != s.Alias) {
		f.WriteString(" AS " + s.Alias)
	}
}
