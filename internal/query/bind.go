package query

import (
	"fmt"

	"github.com/partita-db/partita/internal/fault"
)

// Name binding: every identifier of a query must name a source alias in scope, as in Cosmos
// DB, where SELECT x.id FROM c fails with "Identifier 'x' could not be resolved." rather than
// reading nothing. The executor would otherwise evaluate an unbound name to undefined and
// return a plausible but wrong answer, so binding runs once, before a query is prepared.
//
// The rules:
//   - The first source of a top-level FROM starts from the container, whatever name it is
//     written with (FROM c, FROM root, FROM anything, FROM x IN anything.tags). That name is
//     not an alias: only the source's alias is bound afterwards, so SELECT root.id FROM root r
//     fails. A subquery that is the first source of such a FROM reads the container too.
//   - Every other source (JOINs, and every source of a nested query) starts from an alias
//     already in scope: subqueries are correlated, they read the outer item, not the
//     container.
//   - The aliases of one FROM are unique.
//   - SELECT, WHERE, GROUP BY and ORDER BY see the query's aliases and those of the queries
//     around it; nested queries (EXISTS, ARRAY, scalar and FROM subqueries) see the aliases in
//     scope where they are written. Projection aliases (SELECT c.n AS x) are output names, not
//     bindings.
//   - SELECT * needs exactly one source.
//   - Parameters (@p) and function names are not identifiers.

// bind checks the names of q. src is the query's text, for error positions; "" when the tree
// was built without text.
func bind(q *Query, src string) error {
	b := binder{src: src}
	return b.query(q, nil, true)
}

type binder struct {
	src string
}

// scope is the aliases visible at a point, outermost first.
type scope []string

func (s scope) has(name string) bool {
	for _, n := range s {
		if n == name {
			return true
		}
	}
	return false
}

// with returns s extended by name, never sharing the extension with another branch.
func (s scope) with(name string) scope {
	if name == "" {
		return s
	}
	return append(s[:len(s):len(s)], name)
}

// query binds q in the scope outer. fromContainer says that q's first source reads the
// container (a top-level query, or the first-source subquery of one) rather than an outer
// alias.
func (b *binder) query(q *Query, outer scope, fromContainer bool) error {
	in := outer
	if q.From != nil {
		var err error
		if in, err = b.from(q.From, outer, fromContainer); err != nil {
			return err
		}
	}
	s := q.Select
	if s.Star {
		switch {
		case q.From == nil:
			return fault.New(fault.BadRequest, "'SELECT *' is not valid if FROM clause is omitted.")
		case len(q.From.Joins) > 0:
			return fault.New(fault.BadRequest, "'SELECT *' is only valid with a single input set. Name what to return instead, as in SELECT c, t or SELECT VALUE {...}.")
		}
	}
	exprs := []Expr{s.Value, q.Where}
	for _, it := range s.Items {
		exprs = append(exprs, it.Expr)
	}
	exprs = append(exprs, q.GroupBy...)
	for _, o := range q.OrderBy {
		exprs = append(exprs, o.Expr)
	}
	for _, e := range exprs {
		if err := b.expr(e, in, q.From); err != nil {
			return err
		}
	}
	return nil
}

// from binds the sources of f in order and returns the scope they leave for the rest of the
// query.
func (b *binder) from(f *From, outer scope, fromContainer bool) (scope, error) {
	in := outer
	seen := map[string]bool{}
	for i, src := range append([]Source{f.Source}, f.Joins...) {
		first := i == 0
		switch x := src.Expr.(type) {
		case Subquery:
			if err := b.query(x.Q, in, first && fromContainer); err != nil {
				return nil, err
			}
		default:
			root, rest := splitRoot(src.Expr)
			if root.Name == "" || !(first && fromContainer) {
				// Not the container: the path starts at an alias in scope.
				if err := b.expr(src.Expr, in, f); err != nil {
					return nil, err
				}
				break
			}
			for _, e := range rest {
				if err := b.expr(e, in, f); err != nil {
					return nil, err
				}
			}
		}
		if src.Alias != "" {
			if seen[src.Alias] {
				return nil, fault.New(fault.BadRequest, "The alias '%s' is used twice in the FROM clause; each source needs its own alias.", src.Alias)
			}
			seen[src.Alias] = true
		}
		in = in.with(src.Alias)
	}
	return in, nil
}

// splitRoot returns the identifier a path starts from (zero when it starts elsewhere) and the
// index expressions along it, which are bound like any expression.
func splitRoot(e Expr) (Ident, []Expr) {
	var rest []Expr
	for {
		switch x := e.(type) {
		case Ident:
			return x, rest
		case Property:
			e = x.Obj
		case Index:
			rest = append(rest, x.Index)
			e = x.Obj
		default:
			return Ident{}, append(rest, e)
		}
	}
}

// expr checks that every identifier of e is in scope s, binding the queries nested in it with
// s as their outer scope. from is the FROM clause of the query e belongs to, for hints.
func (b *binder) expr(e Expr, s scope, from *From) error {
	var err error
	walk(e, func(x Expr) {
		if err != nil {
			return
		}
		switch y := x.(type) {
		case Ident:
			if !s.has(y.Name) {
				err = b.unresolved(y, from)
			}
		case Subquery, Exists, ArrayQuery:
			err = b.query(nestedQuery(y), s, false)
		}
	})
	return err
}

// unresolved is Cosmos DB's error for an unbound identifier, with where it is and a hint: when
// the name is the container's own, why it no longer resolves.
func (b *binder) unresolved(id Ident, from *From) error {
	where := ""
	var pos fault.Pos
	if id.At > 0 && id.At <= len(b.src) {
		pos = fault.PosAt(b.src, id.At-1)
		where = fmt.Sprintf(" (line %d, column %d)", pos.Line, pos.Column)
	}
	hint := "Every name must be an alias defined in FROM, such as c in FROM c or t in JOIN t IN c.tags."
	if from != nil {
		if root, _ := splitRoot(from.Source.Expr); root.Name == id.Name && from.Source.Alias != "" {
			hint = fmt.Sprintf("The container is aliased '%s' in FROM, and once aliased its own name is no longer bound.", from.Source.Alias)
		}
	}
	e := fault.New(fault.BadRequest, "Identifier '%s' could not be resolved%s. %s", id.Name, where, hint)
	e.Pos = pos
	return e
}
