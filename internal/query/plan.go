package query

import (
	"github.com/partita-db/partita/internal/value"
)

// Plan describes a query the way a Cosmos DB query plan does (the partitioned query execution
// info the JavaScript SDK asks for): what ordering, aggregation, DISTINCT and paging it needs.
// Partita executes every query completely on the server when it is sent whole; an SDK that
// plans runs the plan's rewritten query (RangeQuery) on each range and merges the results as
// the plan says.
type Plan struct {
	DistinctType       string   // "None", "Ordered" or "Unordered"
	Top                *int     // nil when absent
	Offset, Limit      *int     // nil when absent
	OrderBy            []string // "Ascending" or "Descending" per key
	OrderByExpressions []string
	GroupByExpressions []string
	GroupByAliases     []string
	// GroupByAliasToAggregateType gives, for a grouped query without VALUE, the aggregate of
	// each output property, nil for a property that is not one (a GROUP BY key).
	GroupByAliasToAggregateType map[string]*string
	// Aggregates are those of SELECT VALUE: "Count", "Sum", "Average", "Min", "Max", "CountIf".
	Aggregates     []string
	HasSelectValue bool
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
	names := map[string]string{"COUNT": "Count", "SUM": "Sum", "AVG": "Average", "MIN": "Min", "MAX": "Max", "COUNTIF": "CountIf"}
	switch {
	case q.Select.Value != nil:
		for _, a := range p.aggs {
			pl.Aggregates = append(pl.Aggregates, names[a.name])
		}
	case p.grouped:
		// Without VALUE, the aggregates are given by output property: SDKs refuse a plan
		// that lists them in Aggregates ("Aggregate queries must use the VALUE keyword").
		pl.GroupByAliases = append(pl.GroupByAliases, p.names...)
		pl.GroupByAliasToAggregateType = map[string]*string{}
		for i, it := range q.Select.Items {
			var kind *string
			if ref, ok := it.Expr.(aggRef); ok {
				name := names[p.aggs[ref.i].name]
				kind = &name
			}
			pl.GroupByAliasToAggregateType[p.names[i]] = kind
		}
	}
	return pl
}
