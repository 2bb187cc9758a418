package query

import (
	"math"
	"slices"
	"sort"
	"strconv"
	"unicode"

	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/value"
)

// Prepared is a parsed, validated query ready to run any number of times.
type Prepared struct {
	q      *Query
	params map[string]bool // parameters the query (and its subqueries) use
	// counts names the clause (TOP, OFFSET, LIMIT) of each parameter that gives one its
	// count, in this query only: each subquery's Prepared has its own.
	counts map[string]string
	// grouped: the query has GROUP BY or aggregates, so results are per group.
	grouped bool
	aggs    []aggSpec
	// streaming: results follow item order one for one, so a page can stop early.
	streaming bool
	names     []string // output property names of the SELECT items
	subs      map[*Query]*Prepared
	// indexPreds are the WHERE conjuncts a range index can answer.
	indexPreds []indexPred
	// needsItems is false when no expression reads the items (SELECT VALUE COUNT(1) FROM c):
	// they are then counted without being decoded.
	needsItems bool
	// derived is set when the query reads the container through a subquery, its first
	// source, that needs all of its input (wholeInput): that subquery is run over the items
	// first, as a table, and this query over its results. Any other subquery source is
	// evaluated item by item, which gives the same rows.
	derived *Prepared
}

// aggSpec is one aggregate call of the SELECT clause, replaced there by an aggRef.
type aggSpec struct {
	name string
	arg  Expr // nil for COUNT(*)-like calls without an argument
}

// MaxTextBytes is the longest query text Cosmos takes: 512 KB.
const MaxTextBytes = 512 << 10

// Prepare parses and validates a query.
func Prepare(sql string) (*Prepared, error) {
	if len(sql) > MaxTextBytes {
		return nil, fault.New(fault.BadRequest, "The SQL query text exceeded the maximum limit of %d characters; it has %d. Pass long lists as parameters (ARRAY_CONTAINS(@list, c.x))", MaxTextBytes, len(sql))
	}
	q, err := Parse(sql)
	if err != nil {
		return nil, err
	}
	return prepareTree(q, sql)
}

// PrepareQuery validates a query given as a syntax tree, for front ends whose language
// compiles into this one (CQL). The tree is the query's from then on: preparing rewrites it
// (aggregates, index predicates), so the caller must not change or reuse it.
func PrepareQuery(q *Query) (*Prepared, error) {
	return prepareTree(q, "")
}

// prepareTree binds and prepares q; src is its text, "" for a built tree.
func prepareTree(q *Query, src string) (*Prepared, error) {
	if err := bind(q, src); err != nil {
		return nil, err
	}
	subs := map[*Query]*Prepared{}
	p, err := prepareQuery(q, true, subs)
	if err != nil {
		return nil, err
	}
	p.markDerived()
	return p, nil
}

// markDerived sets derived on a query that reads the container through a subquery that needs
// all its input, and on such subqueries of that subquery.
func (p *Prepared) markDerived() {
	inner := p.fromSubquery()
	if inner == nil || !inner.wholeInput() {
		return
	}
	p.derived, p.streaming, p.needsItems = inner, false, true
	inner.markDerived()
}

// fromSubquery is the query's first source when it is a subquery.
func (p *Prepared) fromSubquery() *Prepared {
	if p.q.From == nil {
		return nil
	}
	if sq, ok := p.q.From.Source.Expr.(Subquery); ok {
		return p.subs[sq.Q]
	}
	return nil
}

// wholeInput reports whether the query's results depend on more than one item at a time:
// it groups or aggregates, orders, removes duplicates, counts (TOP, OFFSET), or reads such a
// subquery.
func (p *Prepared) wholeInput() bool {
	q := p.q
	if p.grouped || len(q.OrderBy) > 0 || q.Select.Distinct || q.Select.Top != nil || q.Offset != nil {
		return true
	}
	inner := p.fromSubquery()
	return inner != nil && inner.wholeInput()
}

func isAggregate(name string) bool {
	switch name {
	case "COUNT", "SUM", "AVG", "MIN", "MAX", "COUNTIF":
		return true
	}
	return false
}

func prepareQuery(q *Query, top bool, subs map[*Query]*Prepared) (*Prepared, error) {
	p := &Prepared{q: q, params: map[string]bool{}, subs: subs}
	subs[q] = p
	s := &q.Select
	// Aggregates may only appear in the SELECT clause; there they become references to the
	// group's accumulated values.
	replaceAggs := func(e Expr) (Expr, error) {
		var ferr error
		out := rewrite(e, func(x Expr) (Expr, bool) {
			c, ok := x.(Call)
			if !ok || c.UDF || !isAggregate(c.Name) {
				return x, false
			}
			if len(c.Args) != 1 {
				ferr = fault.New(fault.BadRequest, "Aggregate %s takes exactly one argument", c.Name)
				return x, true
			}
			walk(c.Args[0], func(y Expr) {
				if yc, ok := y.(Call); ok && !yc.UDF && isAggregate(yc.Name) {
					ferr = fault.New(fault.BadRequest, "Aggregate %s cannot be nested inside %s", yc.Name, c.Name)
				}
			})
			p.aggs = append(p.aggs, aggSpec{name: c.Name, arg: c.Args[0]})
			return aggRef{i: len(p.aggs) - 1}, true
		})
		return out, ferr
	}
	var err error
	if s.Value != nil {
		if s.Value, err = replaceAggs(s.Value); err != nil {
			return nil, err
		}
	}
	unnamed := 0
	for i := range s.Items {
		if s.Items[i].Expr, err = replaceAggs(s.Items[i].Expr); err != nil {
			return nil, err
		}
		name := s.Items[i].Alias
		if name == "" {
			switch x := s.Items[i].Expr.(type) {
			case Property:
				name = x.Name
			case Ident:
				name = x.Name
			default:
				unnamed++
				name = "$" + strconv.Itoa(unnamed)
			}
		}
		p.names = append(p.names, name)
	}
	p.grouped = len(p.aggs) > 0 || len(q.GroupBy) > 0
	if p.grouped && s.Star {
		return nil, fault.New(fault.BadRequest, "SELECT * cannot be used with GROUP BY or aggregates")
	}
	if len(q.GroupBy) > 0 {
		if err := checkGroupBy(q); err != nil {
			return nil, err
		}
		if err := selectsOnlyGroups(s, q.GroupBy); err != nil {
			return nil, err
		}
	}
	if len(p.aggs) > 0 && q.From != nil && groupsInFrom(q.From) {
		return nil, fault.New(fault.BadRequest, "Aggregate functions over a subquery that has a GROUP BY clause are not supported")
	}
	if err := checkSearch(q); err != nil {
		return nil, err
	}
	if !top && slices.ContainsFunc(q.OrderBy, func(o OrderItem) bool { return o.Rank }) {
		return nil, fault.New(fault.BadRequest, "ORDER BY RANK is only supported in the outermost query")
	}

	// Every other expression: functions must exist with the right number of arguments, no
	// aggregates, parameters are recorded, nested queries are prepared.
	var exprs []Expr
	if s.Value != nil {
		exprs = append(exprs, s.Value)
	}
	for _, it := range s.Items {
		exprs = append(exprs, it.Expr)
	}
	for _, a := range p.aggs {
		exprs = append(exprs, a.arg)
	}
	if q.From != nil {
		for _, src := range append([]Source{q.From.Source}, q.From.Joins...) {
			exprs = append(exprs, src.Expr)
		}
	}
	clauses := []Expr{q.Where}
	clauses = append(clauses, q.GroupBy...)
	for _, o := range q.OrderBy {
		clauses = append(clauses, o.Expr)
	}
	for _, e := range clauses {
		if e == nil {
			continue
		}
		if err := noAggregates(e); err != nil {
			return nil, err
		}
		exprs = append(exprs, e)
	}
	for i, n := range []Expr{s.Top, q.Offset, q.Limit} {
		switch x := n.(type) {
		case nil:
		case Param:
			p.params[x.Name] = true
			if p.counts == nil {
				p.counts = map[string]string{}
			}
			p.counts[x.Name] = [...]string{"TOP", "OFFSET", "LIMIT"}[i]
		case Literal:
			if !x.Val.IsInteger() || x.Val.Num() < 0 {
				return nil, fault.New(fault.BadRequest, "TOP, OFFSET and LIMIT take a non-negative integer, not %s", x.Val)
			}
		default:
			return nil, fault.New(fault.BadRequest, "TOP, OFFSET and LIMIT take a number or a parameter")
		}
	}
	if (q.Offset == nil) != (q.Limit == nil) {
		return nil, fault.New(fault.BadRequest, "OFFSET and LIMIT must be used together")
	}
	for _, e := range exprs {
		if err := p.check(e); err != nil {
			return nil, err
		}
	}
	p.findIndexPreds()
	rootSource := false
	if q.From != nil {
		_, rootSource = q.From.Source.Expr.(Ident)
	}
	p.needsItems = q.From != nil && (len(q.From.Joins) > 0 || q.From.Source.In || !rootSource || s.Star ||
		readsItems(append(clauses, s.Value)) || readsItems(itemExprs(s, p.aggs)))
	p.streaming = top && !p.grouped && len(q.OrderBy) == 0 && !s.Distinct && q.Offset == nil && q.From != nil
	return p, nil
}

// itemExprs are the SELECT list's expressions and the aggregates' arguments.
func itemExprs(s *Select, aggs []aggSpec) []Expr {
	var out []Expr
	for _, it := range s.Items {
		out = append(out, it.Expr)
	}
	for _, a := range aggs {
		out = append(out, a.arg)
	}
	return out
}

// readsItems reports whether any of exprs reads a FROM alias or runs a nested query.
func readsItems(exprs []Expr) bool {
	found := false
	for _, e := range exprs {
		walk(e, func(x Expr) {
			switch x.(type) {
			case Ident, Subquery, Exists, ArrayQuery:
				found = true
			}
		})
	}
	return found
}

func noAggregates(e Expr) error {
	var err error
	walk(e, func(x Expr) {
		if c, ok := x.(Call); ok && !c.UDF && isAggregate(c.Name) {
			err = fault.New(fault.BadRequest, "Aggregate %s is only allowed in the SELECT clause", c.Name)
		}
	})
	return err
}

// check validates calls and records parameters in e, preparing nested queries.
func (p *Prepared) check(e Expr) error {
	var err error
	walk(e, func(x Expr) {
		if err != nil {
			return
		}
		switch c := x.(type) {
		case Param:
			p.params[c.Name] = true
		case Call:
			if c.UDF {
				return // the container's, found when the query runs (Options.UDF)
			}
			if isAggregate(c.Name) {
				err = fault.New(fault.BadRequest, "Aggregate %s is only allowed in the SELECT clause", c.Name)
				return
			}
			if f, ok := searchFunction(c.Name); ok {
				if len(c.Args) < f.minArgs || f.maxArgs >= 0 && len(c.Args) > f.maxArgs {
					err = fault.New(fault.BadRequest, "The %s function requires %s argument(s); got %d", c.Name, arity(builtin{minArgs: f.minArgs, maxArgs: f.maxArgs}), len(c.Args))
				}
				return
			}
			b, ok := lookupBuiltin(c.Name)
			if !ok {
				err = fault.New(fault.BadRequest, "%s is not a recognized built-in function name", c.Name)
				return
			}
			if len(c.Args) < b.minArgs || b.maxArgs >= 0 && len(c.Args) > b.maxArgs {
				err = fault.New(fault.BadRequest, "The %s function requires %s argument(s); got %d", c.Name, arity(b), len(c.Args))
			}
		case Subquery, Exists, ArrayQuery:
			q := nestedQuery(c)
			sub, serr := prepareQuery(q, false, p.subs)
			if serr != nil {
				err = serr
				return
			}
			for name := range sub.params {
				p.params[name] = true
			}
		}
	})
	return err
}

func arity(b builtin) string {
	switch {
	case b.maxArgs < 0:
		return "at least " + strconv.Itoa(b.minArgs)
	case b.minArgs == b.maxArgs:
		return strconv.Itoa(b.minArgs)
	}
	return strconv.Itoa(b.minArgs) + " to " + strconv.Itoa(b.maxArgs)
}

func nestedQuery(e Expr) *Query {
	switch x := e.(type) {
	case Subquery:
		return x.Q
	case Exists:
		return x.Q
	case ArrayQuery:
		return x.Q
	}
	return nil
}

// walk calls fn on e and every expression below it, but not inside nested queries (which
// are validated on their own).
func walk(e Expr, fn func(Expr)) {
	rewrite(e, func(x Expr) (Expr, bool) { fn(x); return x, false })
}

// rewrite returns e with every node for which fn reports true replaced by fn's result; it
// visits parents before children and does not descend into replaced nodes or nested queries.
func rewrite(e Expr, fn func(Expr) (Expr, bool)) Expr {
	if e == nil {
		return nil
	}
	if out, done := fn(e); done {
		return out
	}
	r := func(x Expr) Expr { return rewrite(x, fn) }
	list := func(xs []Expr) []Expr {
		out := make([]Expr, len(xs))
		for i, x := range xs {
			out[i] = r(x)
		}
		return out
	}
	switch x := e.(type) {
	case Property:
		return Property{Obj: r(x.Obj), Name: x.Name}
	case Index:
		return Index{Obj: r(x.Obj), Index: r(x.Index)}
	case Unary:
		return Unary{Op: x.Op, X: r(x.X)}
	case Binary:
		return Binary{Op: x.Op, L: r(x.L), R: r(x.R)}
	case Between:
		return Between{X: r(x.X), Lo: r(x.Lo), Hi: r(x.Hi), Not: x.Not}
	case In:
		return In{X: r(x.X), List: list(x.List), Not: x.Not}
	case Like:
		return Like{X: r(x.X), Pattern: r(x.Pattern), Escape: r(x.Escape), Not: x.Not}
	case Conditional:
		return Conditional{Cond: r(x.Cond), Then: r(x.Then), Else: r(x.Else)}
	case Call:
		return Call{Name: x.Name, UDF: x.UDF, Args: list(x.Args)}
	case ArrayLit:
		return ArrayLit{Elems: list(x.Elems)}
	case ObjectLit:
		ms := make([]ObjectMember, len(x.Members))
		for i, m := range x.Members {
			ms[i] = ObjectMember{Key: m.Key, Val: r(m.Val)}
		}
		return ObjectLit{Members: ms}
	}
	return e
}

// Parameters names the parameters the query and its subqueries use, sorted: tools that
// judge a query text without its values (the partition key advisor) bind placeholders to them.
func (p *Prepared) Parameters() []string {
	names := make([]string, 0, len(p.params))
	for name := range p.params {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// CheckParams refuses parameter values the query cannot run with: a parameter it uses that
// has no value, and a TOP, OFFSET or LIMIT parameter that is not a non-negative integer.
func (p *Prepared) CheckParams(params map[string]value.Value) error {
	for name := range p.params {
		if _, ok := params[name]; !ok {
			return fault.New(fault.BadRequest, "The query uses parameter %s, which was not given a value", name)
		}
	}
	for _, q := range p.subs { // the query itself and every subquery
		for name, clause := range q.counts {
			if v := params[name]; !v.IsInteger() || v.Num() < 0 || v.Num() > math.MaxInt32 {
				return fault.New(fault.BadRequest, "%s takes a non-negative integer; parameter %s is %s", clause, name, v)
			}
		}
	}
	return nil
}

// Ordered reports whether the query fixes the order of its results (ORDER BY). Without it,
// results come in the order items are stored, which clients must not rely on.
func (p *Prepared) Ordered() bool { return len(p.q.OrderBy) > 0 }

// checkGroupBy applies the service's rules for GROUP BY: each expression reads a property and
// holds no subquery and no aggregate, and the query has no ORDER BY.
func checkGroupBy(q *Query) error {
	for _, g := range q.GroupBy {
		if err := noAggregates(g); err != nil {
			return err
		}
		reads := false
		var sub bool
		walk(g, func(x Expr) {
			switch x.(type) {
			case Ident:
				reads = true
			case Subquery, Exists, ArrayQuery:
				sub = true
			}
		})
		if sub {
			return fault.New(fault.BadRequest, "Subqueries are not supported in the GROUP BY clause")
		}
		if !reads {
			return fault.New(fault.BadRequest, "Each GROUP BY expression must contain at least one property reference: '%s' contains none", FormatExpr(g))
		}
	}
	if len(q.OrderBy) > 0 {
		return fault.New(fault.BadRequest, "ORDER BY is not supported in a query with a GROUP BY clause")
	}
	return nil
}

// groupsInFrom reports whether a subquery in f (or in a subquery's own FROM) has GROUP BY: the
// service does not run an aggregate over such a subquery.
func groupsInFrom(f *From) bool {
	for _, src := range append([]Source{f.Source}, f.Joins...) {
		sq, ok := src.Expr.(Subquery)
		if !ok {
			continue
		}
		if len(sq.Q.GroupBy) > 0 || sq.Q.From != nil && groupsInFrom(sq.Q.From) {
			return true
		}
	}
	return false
}

// selectsOnlyGroups refuses a grouped projection that reads an item's properties other than
// through its GROUP BY expressions or aggregates (s's aggregates are already aggRefs): such a
// value differs between the items of a group, so Cosmos refuses it rather than pick one.
// A property below a grouped one (c.a.b when grouping by c.a) is one value per group, so it
// is allowed.
func selectsOnlyGroups(s *Select, groupBy []Expr) error {
	grouped := map[string]bool{}
	for _, g := range groupBy {
		grouped[FormatExpr(g)] = true
	}
	var bad Expr
	check := func(e Expr) {
		rewrite(e, func(x Expr) (Expr, bool) {
			if bad != nil {
				return x, true
			}
			switch x.(type) {
			case aggRef, Literal, Param:
				return x, true
			case Ident, Property, Index:
				for y := x; y != nil; {
					if grouped[FormatExpr(y)] {
						return x, true
					}
					switch z := y.(type) {
					case Property:
						y = z.Obj
					case Index:
						y = z.Obj
					default:
						y = nil
					}
				}
				bad = x
				return x, true
			}
			if grouped[FormatExpr(x)] {
				return x, true
			}
			return x, false
		})
	}
	if s.Value != nil {
		check(s.Value)
	}
	for _, it := range s.Items {
		check(it.Expr)
	}
	if bad != nil {
		return fault.New(fault.BadRequest, "Property reference '%s' is invalid in the select list because it is not contained in either an aggregate function or the GROUP BY clause.", refText(bad))
	}
	return nil
}

// refText writes a property reference as a person writes it: c.a.b, c["a b"], c.a[0].
func refText(e Expr) string {
	switch x := e.(type) {
	case Ident:
		return x.Name
	case Property:
		if isIdentName(x.Name) {
			return refText(x.Obj) + "." + x.Name
		}
		return refText(x.Obj) + "[" + strconv.Quote(x.Name) + "]"
	case Index:
		return refText(x.Obj) + "[" + FormatExpr(x.Index) + "]"
	}
	return FormatExpr(e)
}

func isIdentName(s string) bool {
	for i, r := range s {
		if r != '_' && r != '$' && !unicode.IsLetter(r) && (i == 0 || !unicode.IsDigit(r)) {
			return false
		}
	}
	return s != ""
}
