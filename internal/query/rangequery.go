package query

import (
	"slices"

	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/value"
)

// An SDK that plans a cross-partition query itself (the .NET and Java SDKs always do, the
// JavaScript SDK when told to) asks the gateway for the query's plan, runs the plan's
// rewrittenQuery on each partition key range, and merges the ranges' results on its side:
// it orders them by their orderByItems, groups them by their groupByItems, combines partial
// aggregates, removes duplicates and counts TOP, OFFSET and LIMIT, as the plan says. The
// rewritten query therefore returns, per range, what that merge needs:
//
//	ORDER BY      SELECT c._rid, [{"item": o1}, ...] AS orderByItems, <row> AS payload
//	              FROM ... WHERE ({documentdb-formattableorderbyquery-filter} AND (<where>))
//	              ORDER BY o1, ...
//	GROUP BY      SELECT [{"item": g1}, ...] AS groupByItems, <row> AS payload ... GROUP BY g1, ...
//	aggregates    SELECT VALUE [{"item": <partial>}] ...   or   SELECT {"n": {"item": <partial>}} AS payload ...
//	OFFSET/LIMIT  SELECT TOP <offset+limit> ...
//
// where a partial aggregate is one the SDK can combine: COUNT, SUM and COUNTIF as they are,
// AVG as {"sum", "count"}, MIN and MAX as {"min" or "max", "count"}. The SDK replaces the
// filter placeholder with true, or with a condition that resumes an ORDER BY after a
// continuation. Other queries need no rewriting: each range runs them as they are.

// orderByFilter is the placeholder an SDK replaces in an ORDER BY's rewritten query.
const orderByFilter = "{documentdb-formattableorderbyquery-filter}"

// RangeQuery is the query plan's rewrittenQuery: the query an SDK that plans runs on each
// partition key range, "" when that is the query itself. Parameters give TOP, OFFSET and
// LIMIT their values. A query whose results such an SDK cannot merge (an expression over an
// aggregate, ORDER BY with aggregates, a FROM subquery that needs every item) is refused with
// a 400; a search that orders by rank or by vector distance gets "" (see
// docs/compatibility.md).
func (p *Prepared) RangeQuery(params map[string]value.Value) (string, error) {
	q := p.q
	if q.From == nil || slices.ContainsFunc(q.OrderBy, OrderItem.scored) {
		return "", nil
	}
	if p.derived != nil {
		// Each range would, say, count its own distinct values, and the SDK add the counts up.
		return "", unmergeable("a FROM subquery over the whole container (DISTINCT, TOP, ORDER BY, OFFSET, GROUP BY or aggregates inside it)")
	}
	ev := &evaluator{params: params}
	r := &Query{From: q.From, Where: q.Where}
	switch {
	case p.grouped:
		if len(q.OrderBy) > 0 {
			return "", unmergeable("ORDER BY with GROUP BY or aggregates")
		}
		// DISTINCT, TOP, OFFSET and LIMIT apply to the groups, on the SDK's side.
		var row Expr
		if v := q.Select.Value; v != nil {
			partial, err := p.partialOf(v)
			if err != nil {
				return "", err
			}
			row = v
			if partial != nil {
				row = ArrayLit{Elems: []Expr{item(partial)}}
			}
		} else {
			var err error
			row, err = p.rowObject(func(e Expr) (Expr, error) {
				partial, err := p.partialOf(e)
				if partial != nil {
					return item(partial), err
				}
				return e, err
			})
			if err != nil {
				return "", err
			}
		}
		switch {
		case len(q.GroupBy) > 0:
			keys := ArrayLit{}
			for _, g := range q.GroupBy {
				keys.Elems = append(keys.Elems, item(g))
			}
			r.Select.Items = []SelectItem{{Expr: keys, Alias: "groupByItems"}, {Expr: row, Alias: "payload"}}
			r.GroupBy = q.GroupBy
		case q.Select.Value != nil:
			r.Select.Value = row
		default:
			r.Select.Items = []SelectItem{{Expr: row, Alias: "payload"}}
		}
	case len(q.OrderBy) > 0:
		if q.From.Source.Alias == "" {
			return "", unmergeable("ORDER BY over a FROM source without a name, whose rows cannot be told apart")
		}
		keys := ArrayLit{}
		for _, o := range q.OrderBy {
			keys.Elems = append(keys.Elems, item(o.Expr))
		}
		var row Expr
		switch s := q.Select; {
		case s.Star:
			row = Ident{Name: q.From.Source.Alias}
		case s.Value != nil:
			row = s.Value
		default:
			row, _ = p.rowObject(func(e Expr) (Expr, error) { return e, nil })
		}
		r.Select.Items = []SelectItem{
			{Expr: Property{Obj: Ident{Name: q.From.Source.Alias}, Name: "_rid"}, Alias: "_rid"},
			{Expr: keys, Alias: "orderByItems"},
			{Expr: row, Alias: "payload"},
		}
		// DISTINCT applies to the merged payloads, on the SDK's side. A range needs no more
		// than the rows TOP, or OFFSET and LIMIT, let through, unless duplicates are removed
		// after it: its first rows could all be one value.
		if !q.Select.Distinct {
			r.Select.Top = p.rangeTop(ev)
		}
		r.Where = Ident{Name: orderByFilter}
		if q.Where != nil {
			r.Where = Binary{Op: "AND", L: r.Where, R: q.Where}
		}
		r.OrderBy = q.OrderBy
	case q.Offset != nil:
		// Each range returns its first offset+limit rows; the SDK skips and counts.
		r.Select = q.Select
		r.Select.Top = p.rangeTop(ev)
	default:
		return "", nil
	}
	f := formatter{aggs: func(q *Query) []aggSpec {
		if sub := p.subs[q]; sub != nil {
			return sub.aggs
		}
		return nil
	}}
	f.query(r)
	return f.String(), nil
}

// rowObject is the query's list of projections as one object, its members named as in the
// query's results, each value what fn makes of its projection.
func (p *Prepared) rowObject(fn func(Expr) (Expr, error)) (Expr, error) {
	obj := ObjectLit{}
	for i, it := range p.q.Select.Items {
		val, err := fn(it.Expr)
		if err != nil {
			return nil, err
		}
		obj.Members = append(obj.Members, ObjectMember{Key: p.names[i], Val: val})
	}
	return obj, nil
}

// item wraps e as {"item": e}, the shape SDKs read ORDER BY and GROUP BY keys and partial
// aggregates in.
func item(e Expr) Expr { return ObjectLit{Members: []ObjectMember{{Key: "item", Val: e}}} }

// rangeTop is the TOP of a range's query: TOP n, or offset+limit; nil for neither.
func (p *Prepared) rangeTop(ev *evaluator) Expr {
	q := p.q
	switch {
	case q.Select.Top != nil:
		return Literal{Val: value.Num(float64(p.count(ev, q.Select.Top)))}
	case q.Offset != nil:
		return Literal{Val: value.Num(float64(p.count(ev, q.Offset) + p.count(ev, q.Limit)))}
	}
	return nil
}

// partialOf is, for a projection that is one aggregate call, what each range returns of it
// for the SDK to combine; nil for a projection without aggregates. An expression that
// computes on an aggregate cannot be combined from the ranges' partials: it is refused.
func (p *Prepared) partialOf(e Expr) (Expr, error) {
	ref, ok := e.(aggRef)
	if !ok {
		has := false
		walk(e, func(x Expr) {
			if _, ok := x.(aggRef); ok {
				has = true
			}
		})
		if has {
			return nil, unmergeable("an expression over an aggregate")
		}
		return nil, nil
	}
	a := p.aggs[ref.i]
	call := func(name string) Expr { return Call{Name: name, Args: []Expr{a.arg}} }
	pair := func(key, name string) Expr {
		return ObjectLit{Members: []ObjectMember{{Key: key, Val: call(name)}, {Key: "count", Val: call("COUNT")}}}
	}
	switch a.name {
	case "AVG":
		return pair("sum", "SUM"), nil
	case "MIN":
		return pair("min", "MIN"), nil
	case "MAX":
		return pair("max", "MAX"), nil
	}
	return call(a.name), nil // COUNT, SUM, COUNTIF: the ranges' values add up
}

func unmergeable(what string) error {
	return fault.New(fault.BadRequest, "A cross-partition query planned by the client cannot have %s: its ranges' results cannot be merged. Send the query to the gateway without a query plan, which runs it whole, or scope it to one partition key", what)
}
