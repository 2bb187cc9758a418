package query

import (
	"slices"

	"github.com/partita-db/partita/internal/value"
)

// OrderKey is one ORDER BY expression that reads a property of the root item.
type OrderKey struct {
	Path string // as value.TermPath builds it
	Desc bool
}

// OrderKeys are the query's ORDER BY expressions as property paths of the root, for the
// indexing policy to check (Cosmos serves ORDER BY from the index only). ok is false when
// some expression is not such a path (a computed value, a JOIN alias, a system property):
// those are sorted by evaluation and the policy is not asked.
func (p *Prepared) OrderKeys() (keys []OrderKey, ok bool) {
	q := p.q
	if len(q.OrderBy) == 0 || q.From == nil || q.From.Source.In {
		return nil, false
	}
	if _, isRoot := q.From.Source.Expr.(Ident); !isRoot {
		return nil, false
	}
	for _, o := range q.OrderBy {
		segs, ok := rootPath(o.Expr, q.From.Source.Alias)
		if !ok {
			return nil, false
		}
		keys = append(keys, OrderKey{Path: value.TermPath(segs), Desc: o.Desc})
	}
	return keys, true
}

// FilterPaths are the property paths of the root that WHERE compares with constants, the
// ones a range index could answer, without repeats and in the order they appear.
func (p *Prepared) FilterPaths() []string {
	var out []string
	for _, pred := range p.indexPreds {
		if pred.op != opText && pred.op != opTextAny && !slices.Contains(out, pred.path) {
			out = append(out, pred.path)
		}
	}
	return out
}

// Equalities are the FilterPaths compared with "=", which lead a composite index that a
// filter and an ORDER BY can share.
func (p *Prepared) equalities() []string {
	var out []string
	for _, pred := range p.indexPreds {
		if pred.op == "=" && !slices.Contains(out, pred.path) {
			out = append(out, pred.path)
		}
	}
	return out
}

// IndexUse is how an execution used the range index, for query and index metrics.
type IndexUse struct {
	// Filter is the path whose index range the read was narrowed to; "" when every item of
	// the source was read.
	Filter string
	// Order is the path whose index gave the ORDER BY order; "" when results were sorted.
	Order string
	// Vector is the path whose vector index gave a vector search's candidates; "" when the
	// items were read.
	Vector string
}

// CompositeCandidates are the composite indexes (paths with directions) that could serve the
// query better than single paths: equality filters followed by the ORDER BY keys, or several
// filters on different paths. Nil when none applies.
func (p *Prepared) CompositeCandidates() [][]OrderKey {
	var out [][]OrderKey
	eq := p.equalities()
	keys, ordered := p.OrderKeys()
	switch {
	case ordered && len(eq) > 0:
		var c []OrderKey
		for _, path := range eq {
			if !slices.ContainsFunc(keys, func(k OrderKey) bool { return k.Path == path }) {
				c = append(c, OrderKey{Path: path, Desc: keys[0].Desc})
			}
		}
		if len(c) > 0 {
			out = append(out, append(c, keys...))
		}
	case !ordered && len(p.FilterPaths()) > 1:
		var c []OrderKey
		for _, path := range p.FilterPaths() {
			c = append(c, OrderKey{Path: path})
		}
		out = append(out, c)
	}
	return out
}

// HasFilter reports whether the query has a WHERE clause.
func (p *Prepared) HasFilter() bool { return p.q.Where != nil }
