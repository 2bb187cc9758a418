package query

import "github.com/partita-db/partita/internal/value"

// maxRoutedKeys bounds how many partition key values a WHERE clause may pin before the query
// is simply fanned out.
const maxRoutedKeys = 100

// PartitionKeys reads the WHERE clause for the partition key values it pins: equality or IN
// on the container's key paths (given as segments, in order), joined by AND at the top level.
// Each returned key holds values for a prefix of the paths, at least the first; a query whose
// WHERE pins nothing returns ok false and must read every partition.
func (p *Prepared) PartitionKeys(paths [][]string, params map[string]value.Value) (keys [][]value.Value, ok bool) {
	q := p.q
	if q.From == nil || q.Where == nil || q.From.Source.In || len(paths) == 0 {
		return nil, false
	}
	if _, isRoot := q.From.Source.Expr.(Ident); !isRoot {
		return nil, false
	}
	alias := q.From.Source.Alias
	var conjuncts []Expr
	var split func(e Expr)
	split = func(e Expr) {
		if b, ok := e.(Binary); ok && b.Op == "AND" {
			split(b.L)
			split(b.R)
			return
		}
		conjuncts = append(conjuncts, e)
	}
	split(q.Where)
	constant := func(e Expr) (value.Value, bool) {
		v, ok := constantOf(e, params)
		return v, ok && v.IsPrimitive()
	}
	candidates := func(path []string) []value.Value {
		for _, c := range conjuncts {
			switch x := c.(type) {
			case Binary:
				if x.Op != "=" {
					continue
				}
				if isPath(x.L, alias, path) {
					if v, ok := constant(x.R); ok {
						return []value.Value{v}
					}
				}
				if isPath(x.R, alias, path) {
					if v, ok := constant(x.L); ok {
						return []value.Value{v}
					}
				}
			case In:
				if x.Not || !isPath(x.X, alias, path) {
					continue
				}
				var vs []value.Value
				for _, item := range x.List {
					v, ok := constant(item)
					if !ok {
						vs = nil
						break
					}
					vs = append(vs, v)
				}
				if vs != nil {
					return vs
				}
			}
		}
		return nil
	}
	keys = [][]value.Value{{}}
	for _, path := range paths {
		vs := candidates(path)
		if vs == nil || len(keys)*len(vs) > maxRoutedKeys {
			break
		}
		var next [][]value.Value
		for _, k := range keys {
			for _, v := range vs {
				next = append(next, append(k[:len(k):len(k)], v))
			}
		}
		keys = next
	}
	if len(keys[0]) == 0 {
		return nil, false
	}
	return keys, true
}

// isPath reports whether e is alias.seg1.seg2... (dots or ["..."]).
func isPath(e Expr, alias string, path []string) bool {
	for i := len(path) - 1; i >= 0; i-- {
		switch x := e.(type) {
		case Property:
			if x.Name != path[i] {
				return false
			}
			e = x.Obj
		case Index:
			l, ok := x.Index.(Literal)
			if !ok || l.Val.Kind() != value.String || l.Val.Str() != path[i] {
				return false
			}
			e = x.Obj
		default:
			return false
		}
	}
	id, ok := e.(Ident)
	return ok && id.Name == alias
}
