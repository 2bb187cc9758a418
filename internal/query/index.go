package query

import (
	"bytes"
	"slices"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/fulltext"
	"github.com/partita-db/partita/internal/indexing"
	"github.com/partita-db/partita/internal/searchpolicy"
	"github.com/partita-db/partita/internal/value"
)

// IndexRange is a range of a range index that holds every item a query can match: the items
// with a value at Path whose ordered encoding (value.AppendOrdered of the indexed value) lies
// in [Lo, Hi), or, when Values is set, that is one of Values. It may hold more; the query's
// WHERE is always checked on the items themselves.
type IndexRange struct {
	Path   string // as value.TermPath builds it, or an indexing.FullTextTermPath
	Lo, Hi []byte
	// Values, when set, stand for [Lo, Hi): the items with any of these exact values (the
	// tokens of FullTextContainsAny, or of a ranking's search terms).
	Values [][]byte `json:",omitempty"`
}

// IndexedReader is a Reader that can also list, in item order, the items of an index range.
type IndexedReader interface {
	Reader
	// Indexes reports whether the index records the values at path (the indexing policy
	// may leave paths out).
	Indexes(path string) bool
	ScanIndex(r IndexRange, from *Resume, fn func(pos Position, doc []byte) (bool, error)) error
}

// indexPred is a WHERE conjunct that an index can answer: root.path op constant, or a
// full-text search of a path's text.
type indexPred struct {
	path string
	op   string // "=", "<", "<=", ">", ">=", or opText, opTextAny
	arg  Expr   // a Literal or a Param
	// For opText and opTextAny: the search strings (Literals or Params), and the property
	// names of the path, whose language the full-text policy gives.
	search []Expr
	segs   []string
}

// The ops of full-text searches: FullTextContains and FullTextContainsAll (every search string
// is in the text), and FullTextContainsAny (one is). path is the indexing.FullTextTermPath.
const (
	opText    = "text"
	opTextAny = "textAny"
)

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
		case Call:
			if x.UDF || x.Name != "FULLTEXTCONTAINS" && x.Name != "FULLTEXTCONTAINSALL" && x.Name != "FULLTEXTCONTAINSANY" || len(x.Args) < 2 {
				return
			}
			segs, ok := rootPath(x.Args[0], alias)
			if !ok || !slices.ContainsFunc(x.Args[1:], constant) {
				return
			}
			op := opText
			if x.Name == "FULLTEXTCONTAINSANY" {
				op = opTextAny
				if !all(x.Args[1:], constant) {
					return // a computed string may match what no index read finds
				}
			}
			p.indexPreds = append(p.indexPreds, indexPred{path: indexing.FullTextTermPath(value.TermPath(segs)), op: op, search: x.Args[1:], segs: segs})
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
				p.indexPreds = append(p.indexPreds, indexPred{path: value.TermPath(segs), op: x.Op, arg: x.R})
			} else if segs, ok := rootPath(x.R, alias); ok && constant(x.L) {
				p.indexPreds = append(p.indexPreds, indexPred{path: value.TermPath(segs), op: flip[x.Op], arg: x.L})
			}
		case Between:
			if segs, ok := rootPath(x.X, alias); ok && !x.Not && constant(x.Lo) && constant(x.Hi) {
				path := value.TermPath(segs)
				p.indexPreds = append(p.indexPreds, indexPred{path: path, op: ">=", arg: x.Lo}, indexPred{path: path, op: "<=", arg: x.Hi})
			}
		}
	}
	visit(q.Where)
}

// rootPath returns the property names of alias.a.b or alias["a"]["b"]. Of the system
// properties the index records _ts alone (indexing.AlwaysIndexed), so paths to the others are
// refused.
func rootPath(e Expr, alias string) ([]string, bool) {
	segs, ok := propertyPath(e, alias)
	if ok && len(segs) == 1 && segs[0] != "_ts" && document.IsSystemProperty(segs[0]) {
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

// all reports whether every element of xs satisfies f.
func all[T any](xs []T, f func(T) bool) bool {
	return !slices.ContainsFunc(xs, func(x T) bool { return !f(x) })
}

// indexRange picks the index range for this execution: an equality or a full-text search if
// there is one, else the intersection of the range bounds on the first path that has any,
// among the paths indexed reports recorded (nil: all). ft is the container's full-text
// policy, which gives the language of search strings. ok is false when no conjunct can use
// the index (or a constant is not a primitive value).
func (p *Prepared) indexRange(params map[string]value.Value, ft *searchpolicy.FullTextPolicy, indexed func(path string) bool) (IndexRange, bool) {
	var best IndexRange
	found := false
	for _, pred := range p.indexPreds {
		if indexed != nil && !indexed(pred.path) {
			continue
		}
		if pred.op == opText || pred.op == opTextAny {
			if r, ok := pred.textRange(params, ft); ok {
				return r, true
			}
			continue
		}
		v, _ := constantOf(pred.arg, params)
		enc, ok := value.AppendIndexed(nil, v)
		if !ok {
			continue
		}
		r := IndexRange{Path: pred.path, Lo: []byte{value.OrderedTypeStart(v.Kind())}, Hi: []byte{value.OrderedTypeEnd(v.Kind())}}
		// The bounds take in the entries that record v, but for '>' and '<' of a value the index
		// records alone: a cut string may stand for longer ones, above or below v.
		switch pred.op {
		case "=":
			r.Lo, r.Hi = enc, append(enc[:len(enc):len(enc)], 0xFF)
			return r, true
		case ">", ">=":
			r.Lo = enc
			if pred.op == ">" && value.IndexedAlone(v) {
				r.Lo = append(enc[:len(enc):len(enc)], 0xFF)
			}
		case "<", "<=":
			r.Hi = append(enc[:len(enc):len(enc)], 0xFF)
			if pred.op == "<" && value.IndexedAlone(v) {
				r.Hi = enc
			}
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

// textRange is the index range of a full-text search: the items that hold one token of the
// search (FullTextContains, FullTextContainsAll: the first token of the first search string
// that has any, which every match holds), or one of the first tokens of each string
// (FullTextContainsAny). A string that analyzes to no token is never contained: it needs no
// read (Any), or another string stands for the search (All). ok is false when no string gives
// a token (only stop words, say: the query reads every item, as it returns none of them
// either way) or a search string of Any is not a string.
func (pred indexPred) textRange(params map[string]value.Value, ft *searchpolicy.FullTextPolicy) (IndexRange, bool) {
	lang := ft.Language(pred.segs)
	var values [][]byte
	for _, e := range pred.search {
		v, ok := constantOf(e, params)
		if !ok {
			continue // computed: another string stands for an All search (Any has none)
		}
		if v.Kind() != value.String {
			if pred.op == opTextAny {
				return IndexRange{}, false
			}
			continue
		}
		terms := fulltext.Analyze(lang, v.Str())
		if len(terms) == 0 {
			continue
		}
		tok := indexing.FullTextToken(terms[0])
		if pred.op == opText {
			return IndexRange{Path: pred.path, Lo: tok, Hi: append(tok[:len(tok):len(tok)], 0xFF)}, true
		}
		values = append(values, tok)
	}
	if len(values) == 0 {
		return IndexRange{}, false
	}
	return IndexRange{Path: pred.path, Values: values}, true
}
