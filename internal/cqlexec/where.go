package cqlexec

import (
	"github.com/partita-db/partita/internal/cql"
	"github.com/partita-db/partita/internal/cqlvalue"
	"github.com/partita-db/partita/internal/fault"
)

// where is a WHERE clause sorted by what each relation restricts.
type where struct {
	// cols are the single-column relations, by column.
	cols map[string]*restriction
	// token is token(pk) > / >= / < / <= / = relations.
	token []cql.Relation
	// tuples are the multi-column relations on clustering columns: (c1, c2) op (v1, v2).
	tuples []cql.Relation
	// filters are the relations only a filter can apply: on regular or static columns, and
	// CONTAINS, CONTAINS KEY, != and LIKE on any column.
	filters []filterRel
}

// restriction is what the relations on one key column say.
type restriction struct {
	col *column
	// eq is the value of col = v; in the values of col IN (...), or inList the one marker of
	// col IN ?.
	eq     cql.Term
	in     []cql.Term
	inList cql.Term
	// lo and hi bound a slice (>, >=, <, <=); nil when open.
	lo, hi         cql.Term
	loIncl, hiIncl bool
}

// single reports whether the restriction pins one or several values (= or IN).
func (r *restriction) single() bool {
	return r != nil && (r.eq != nil || r.in != nil || r.inList != nil)
}

// slice reports whether the restriction is a range.
func (r *restriction) slice() bool { return r != nil && (r.lo != nil || r.hi != nil) }

// filterRel is a relation checked row by row.
type filterRel struct {
	col *column
	rel cql.Relation
}

// parseWhere sorts rels against t, typing their markers in p.
func parseWhere(p *Prepared, t *table, rels []cql.Relation) (*where, error) {
	w := &where{cols: map[string]*restriction{}}
	for _, rel := range rels {
		switch rel.Kind {
		case cql.RelToken:
			if err := checkTokenColumns(t, rel.Columns); err != nil {
				return nil, err
			}
			if rel.Op == cql.OpIn || rel.Op > cql.OpGe && rel.Op != cql.OpEq {
				return nil, cql.Invalid(fault.Pos{}, "Unsupported operator %s on token()", rel.Op)
			}
			typeMarkers(p, nil, rel.Value, cqlvalue.Native(cqlvalue.Bigint), "partition key token")
			w.token = append(w.token, rel)
		case cql.RelTuple:
			for i, n := range rel.Columns {
				c := t.byName[n]
				if c == nil {
					return nil, undefinedColumn(n)
				}
				if c.kind != clustering || c.pos != i {
					return nil, cql.Invalid(fault.Pos{}, "Multi-column relations can only be applied to clustering columns, in their order from the first: %s is not clustering column %d", n, i+1)
				}
			}
			if rel.Op == cql.OpIn || rel.Op == cql.OpNe || rel.Op > cql.OpGe && rel.Op != cql.OpEq {
				return nil, cql.Invalid(fault.Pos{}, "Unsupported operator %s in a multi-column relation", rel.Op)
			}
			tupleType := &cqlvalue.Type{Kind: cqlvalue.Tuple, Frozen: true}
			for _, n := range rel.Columns {
				tupleType.Elems = append(tupleType.Elems, t.byName[n].typ)
			}
			typeMarkers(p, t, rel.Value, tupleType, "("+joinNames(rel.Columns)+")")
			w.tuples = append(w.tuples, rel)
		default:
			c := t.byName[rel.Columns[0]]
			if c == nil {
				return nil, undefinedColumn(rel.Columns[0])
			}
			if err := w.addColumn(p, t, c, rel); err != nil {
				return nil, err
			}
		}
	}
	return w, nil
}

func joinNames(ns []string) string {
	s := ""
	for i, n := range ns {
		if i > 0 {
			s += ", "
		}
		s += n
	}
	return s
}

func undefinedColumn(n string) error {
	return cql.Invalid(fault.Pos{}, "Undefined column name %s", n)
}

func checkTokenColumns(t *table, cols []string) error {
	if len(cols) != len(t.pk) {
		return cql.Invalid(fault.Pos{}, "The token function arguments must be in the partition key order: %s", pkNames(t))
	}
	for i, n := range cols {
		if t.pk[i].name != n {
			return cql.Invalid(fault.Pos{}, "The token function arguments must be in the partition key order: %s", pkNames(t))
		}
	}
	return nil
}

func pkNames(t *table) string {
	var ns []string
	for _, c := range t.pk {
		ns = append(ns, c.name)
	}
	return joinNames(ns)
}

// addColumn records a single-column relation.
func (w *where) addColumn(p *Prepared, t *table, c *column, rel cql.Relation) error {
	key := c.kind == partitionKey || c.kind == clustering
	switch {
	case rel.Op == cql.OpContains:
		typeMarkers(p, t, rel.Value, containedType(c.typ, false), c.name)
		w.filters = append(w.filters, filterRel{col: c, rel: rel})
		return nil
	case rel.Op == cql.OpContainsKey:
		typeMarkers(p, t, rel.Value, containedType(c.typ, true), c.name)
		w.filters = append(w.filters, filterRel{col: c, rel: rel})
		return nil
	case rel.Op == cql.OpIsNotNull || rel.Op == cql.OpLike:
		return cql.Invalid(fault.Pos{}, "Unsupported restriction: %s %s", c.name, rel.Op)
	case !key || rel.Op == cql.OpNe:
		if rel.Op == cql.OpIn {
			if rel.In == nil {
				typeMarkers(p, t, rel.Value, cqlvalue.ListOf(c.typ), "in("+c.name+")")
			}
			for _, v := range rel.In {
				typeMarkers(p, t, v, c.typ, c.name)
			}
		} else {
			typeMarkers(p, t, rel.Value, c.typ, c.name)
		}
		w.filters = append(w.filters, filterRel{col: c, rel: rel})
		return nil
	}
	r := w.cols[c.name]
	if r == nil {
		r = &restriction{col: c}
		w.cols[c.name] = r
	}
	switch rel.Op {
	case cql.OpEq:
		if r.single() || r.slice() {
			return cql.Invalid(fault.Pos{}, "%s cannot be restricted by more than one relation if it includes an Equal", c.name)
		}
		typeMarkers(p, t, rel.Value, c.typ, c.name)
		r.eq = rel.Value
	case cql.OpIn:
		if r.single() || r.slice() {
			return cql.Invalid(fault.Pos{}, "%s cannot be restricted by more than one relation if it includes a IN", c.name)
		}
		if rel.In == nil {
			typeMarkers(p, t, rel.Value, cqlvalue.ListOf(c.typ), "in("+c.name+")")
			r.inList = rel.Value
		} else {
			for _, v := range rel.In {
				typeMarkers(p, t, v, c.typ, c.name)
			}
			r.in = rel.In
			if len(r.in) == 0 {
				r.in = []cql.Term{}
			}
		}
	case cql.OpGt, cql.OpGe:
		if r.single() || r.lo != nil {
			return cql.Invalid(fault.Pos{}, "More than one restriction was found for the start bound on %s", c.name)
		}
		typeMarkers(p, t, rel.Value, c.typ, c.name)
		r.lo, r.loIncl = rel.Value, rel.Op == cql.OpGe
	case cql.OpLt, cql.OpLe:
		if r.single() || r.hi != nil {
			return cql.Invalid(fault.Pos{}, "More than one restriction was found for the end bound on %s", c.name)
		}
		typeMarkers(p, t, rel.Value, c.typ, c.name)
		r.hi, r.hiIncl = rel.Value, rel.Op == cql.OpLe
	}
	if c.kind == partitionKey && r.slice() {
		return cql.Invalid(fault.Pos{}, "Only EQ and IN relation are supported on the partition key (unless you use the token() function)")
	}
	return nil
}

// containedType is the type CONTAINS (or CONTAINS KEY) compares a collection's elements with.
func containedType(t *cqlvalue.Type, key bool) *cqlvalue.Type {
	switch {
	case t.Kind == cqlvalue.Map && !key:
		return t.Elems[1]
	case len(t.Elems) > 0:
		return t.Elems[0]
	}
	return t
}

// values are the values a key restriction pins, in the order given (IN values sorted and
// unique: Cassandra treats IN as a set).
func (b *binder) values(r *restriction) ([][]byte, error) {
	c := r.col
	switch {
	case r.eq != nil:
		v, err := b.keyValue(r.eq, c)
		if err != nil {
			return nil, err
		}
		return [][]byte{v}, nil
	case r.inList != nil:
		v, err := b.value(r.inList, cqlvalue.ListOf(c.typ), c.name)
		if err != nil {
			return nil, err
		}
		if v.Null || v.Unset {
			return nil, cql.Invalid(fault.Pos{}, "Invalid null value for IN restriction on %s", c.name)
		}
		elems, err := cqlvalue.Elements(v.Bytes)
		if err != nil {
			return nil, err
		}
		return uniqueSorted(c.typ, elems), nil
	default:
		out := make([][]byte, 0, len(r.in))
		for _, term := range r.in {
			v, err := b.keyValue(term, c)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return uniqueSorted(c.typ, out), nil
	}
}

// keyValue is a key column's value, which may not be null or unset.
func (b *binder) keyValue(term cql.Term, c *column) ([]byte, error) {
	v, err := b.value(term, c.typ, c.name)
	if err != nil {
		return nil, err
	}
	if v.Null {
		return nil, cql.Invalid(fault.Pos{}, "Invalid null value for %s", keyKindName(c))
	}
	if v.Unset {
		return nil, cql.Invalid(fault.Pos{}, "Invalid unset value for column %s", c.name)
	}
	if len(v.Bytes) > maxKeyComponent {
		return nil, keyTooLong()
	}
	return v.Bytes, nil
}

func keyKindName(c *column) string {
	if c.kind == partitionKey {
		return "partition key part " + c.name
	}
	return "clustering column " + c.name
}

// uniqueSorted sorts values in the type's order and drops repeats.
func uniqueSorted(t *cqlvalue.Type, vs [][]byte) [][]byte {
	sortValues(t, vs)
	out := vs[:0]
	for i, v := range vs {
		if i == 0 || cqlvalue.Compare(t, out[len(out)-1], v) != 0 {
			out = append(out, v)
		}
	}
	return out
}

// maxInProduct bounds the combinations IN restrictions pin, on the partition key and on the
// clustering columns apart: each is a partition read or written, or a span of one, so the
// count is the work a short statement can ask for. Cassandra bounds it with its
// in_select_cartesian_product guardrail (off by default) and Scylla with
// max_partition_key_restrictions_per_query and max_clustering_key_restrictions_per_query,
// 100 each by default; Partita takes Scylla's 100 and Cassandra's message, for writes too.
const maxInProduct = 100

// product is every combination of one value per column, in order; what ("partition key"
// or "clustering key") names the columns for the error when there are more than
// maxInProduct.
func product(per [][][]byte, what string) ([][][]byte, error) {
	n := 1
	for _, vs := range per {
		n *= len(vs)
		if n > maxInProduct {
			return nil, cql.Invalid(fault.Pos{}, "Aborting query because the cartesian product of the IN restrictions on %s produces %d values, this exceeds fail threshold of %d.", what, n, maxInProduct)
		}
	}
	out := [][][]byte{nil}
	for _, vs := range per {
		next := make([][][]byte, 0, len(out)*len(vs))
		for _, prefix := range out {
			for _, v := range vs {
				next = append(next, append(append([][]byte(nil), prefix...), v))
			}
		}
		out = next
	}
	return out, nil
}
