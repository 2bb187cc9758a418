package query

import (
	"bytes"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/value"
)

// IndexRange is a range of a range index that holds every item a query can match: the items
// with a value at Path whose ordered encoding (value.AppendOrdered of the indexed value) lies
// in [Lo, Hi). It may hold more; the query's WHERE is always checked on the items themselves.
type IndexRange struct {
	Path   string // as value.TermPath builds it
	Lo, Hi []byte
}

// IndexedReader is a Reader that can also list, in item order, the items of an index range.
type IndexedReader interface {
	Reader
	// Indexes reports whether the index records the values at path (the indexing policy
	// may leave paths out).
	Indexes(path string) bool
	ScanIndex(r IndexRange, from *Resume, fn func(pos Position, doc []byte) (bool, error)) error
}

// indexPred is a WHERE conjunct that an index can answer: root.path op constant.
type indexPred struct {
	path string
	op   string // "=", "<", "<=", ">", ">="
	arg  Expr   // a Literal or a Param
}

// findIndexPreds collects the conjuncts of WHERE that compare a property of the root alias
// with a constant.
func (p *Prepared) findIndexPreds() {
	q := p.q
	if q.From == nil || q.Where == nil || q.From.Source.In {
		return
	}
	if _, ok := q.From.Source.Expr.(Ident); !ok {
		return
	}
	alias := q.From.Source.Alias
	constant := func(e Expr) bool {
		switch e.(type) {
		case Literal, Param:
			return true
		}
		return false
	}
	flip := map[string]string{"=": "=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
	var visit func(e Expr)
	visit = func(e Expr) {
		switch x := e.(type) {
		case Binary:
			if x.Op == "AND" {
				visit(x.L)
				visit(x.R)
				return
			}
			if _, ok := flip[x.Op]; !ok {
				return
			}
			if segs, ok := rootPath(x.L, alias); ok && constant(x.R) {
				p.indexPreds = append(p.indexPreds, indexPred{value.TermPath(segs), x.Op, x.R})
			} else if segs, ok := rootPath(x.R, alias); ok && constant(x.L) {
				p.indexPreds = append(p.indexPreds, indexPred{value.TermPath(segs), flip[x.Op], x.L})
			}
		case Between:
			if segs, ok := rootPath(x.X, alias); ok && !x.Not && constant(x.Lo) && constant(x.Hi) {
				path := value.TermPath(segs)
				p.indexPreds = append(p.indexPreds, indexPred{path, ">=", x.Lo}, indexPred{path, "<=", x.Hi})
			}
		}
	}
	visit(q.Where)
}

// rootPath returns the property names of alias.a.b or alias["a"]["b"]. System properties
// are not indexed, so paths to them are refused.
func rootPath(e Expr, alias string) ([]string, bool) {
	segs, ok := propertyPath(e, alias)
	if ok && len(segs) == 1 && document.IsSystemProperty(segs[0]) {
		return nil, false
	}
	return segs, ok
}

// propertyPath is the property names of a path e from the name alias (any name when alias is
// ""); ok is false when e is not such a path.
func propertyPath(e Expr, alias string) ([]string, bool) {
	var segs []string
	for {
		switch x := e.(type) {
		case Property:
			segs = append([]string{x.Name}, segs...)
			e = x.Obj
		case Index:
			l, ok := x.Index.(Literal)
			if !ok || l.Val.Kind() != value.String {
				return nil, false
			}
			segs = append([]string{l.Val.Str()}, segs...)
			e = x.Obj
		case Ident:
			return segs, (alias == "" || x.Name == alias) && len(segs) > 0
		default:
			return nil, false
		}
	}
}

// indexRange picks the index range for this execution: an equality if there is one, else the
// intersection of the range bounds on the first path that has any, among the paths indexed
// reports recorded (nil: all). ok is false when no conjunct can use the index (or a constant
// is not a primitive value).
func (p *Prepared) indexRange(params map[string]value.Value, indexed func(path string) bool) (IndexRange, bool) {
	var best IndexRange
	found := false
	for _, pred := range p.indexPreds {
		if indexed != nil && !indexed(pred.path) {
			continue
		}
		var v value.Value
		switch a := pred.arg.(type) {
		case Literal:
			v = a.Val
		case Param:
			v = params[a.Name]
		}
		enc, ok := value.AppendIndexed(nil, v)
		if !ok {
			continue
		}
		r := IndexRange{Path: pred.path, Lo: []byte{value.OrderedTypeStart(v.Kind())}, Hi: []byte{value.OrderedTypeEnd(v.Kind())}}
		switch pred.op {
		case "=":
			r.Lo, r.Hi = enc, append(enc[:len(enc):len(enc)], 0xFF)
			return r, true
		case ">", ">=":
			r.Lo = enc // inclusive even for '>': a cut string may stand for longer ones
		case "<", "<=":
			r.Hi = append(enc[:len(enc):len(enc)], 0xFF)
		}
		switch {
		case !found:
			best, found = r, true
		case best.Path == r.Path:
			if bytes.Compare(r.Lo, best.Lo) > 0 {
				best.Lo = r.Lo
			}
			if bytes.Compare(r.Hi, best.Hi) < 0 {
				best.Hi = r.Hi
			}
		}
	}
	return best, found
}
