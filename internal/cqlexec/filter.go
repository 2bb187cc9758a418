package cqlexec

import (
	"github.com/partita-db/partita/internal/cql"
	"github.com/partita-db/partita/internal/cqlvalue"
)

// boundFilter is a relation checked on each row, with its values bound.
type boundFilter struct {
	col  *column
	op   cql.Operator
	vals []cqlvalue.Value
	// tuple is a multi-column relation: its columns' values compared as one tuple.
	tuple []*column
}

// bindFilters binds the relations rows are checked against: the filters, and the key
// restrictions the read does not apply by its spans.
func bindFilters(b *binder, sp *selectPlan) ([]boundFilter, error) {
	t, w := sp.t, sp.w
	var out []boundFilter
	for _, f := range w.filters {
		bf := boundFilter{col: f.col, op: f.rel.Op}
		typ := f.col.typ
		switch f.rel.Op {
		case cql.OpContains:
			typ = containedType(typ, false)
		case cql.OpContainsKey:
			typ = containedType(typ, true)
		}
		vals, err := bindRelValues(b, f.rel, typ, f.col.name)
		if err != nil {
			return nil, err
		}
		bf.vals = vals
		out = append(out, bf)
	}
	keyFilter := func(c *column) bool {
		return t.virtual != nil || c.kind == partitionKey && !sp.byPartition || c.kind == clustering && sp.ckFilter
	}
	for _, c := range t.cols {
		r := w.cols[c.name]
		if r == nil || !keyFilter(c) {
			continue
		}
		switch {
		case r.eq != nil:
			v, err := b.value(r.eq, c.typ, c.name)
			if err != nil {
				return nil, err
			}
			out = append(out, boundFilter{col: c, op: cql.OpEq, vals: []cqlvalue.Value{v}})
		case r.in != nil || r.inList != nil:
			vs, err := b.values(r)
			if err != nil {
				return nil, err
			}
			bf := boundFilter{col: c, op: cql.OpIn}
			for _, v := range vs {
				bf.vals = append(bf.vals, cqlvalue.Value{Bytes: v})
			}
			out = append(out, bf)
		default:
			for _, bound := range []struct {
				term cql.Term
				op   cql.Operator
			}{{r.lo, cql.OpGt}, {r.hi, cql.OpLt}} {
				if bound.term == nil {
					continue
				}
				op := bound.op
				if bound.term == r.lo && r.loIncl {
					op = cql.OpGe
				}
				if bound.term == r.hi && r.hiIncl {
					op = cql.OpLe
				}
				v, err := b.value(bound.term, c.typ, c.name)
				if err != nil {
					return nil, err
				}
				out = append(out, boundFilter{col: c, op: op, vals: []cqlvalue.Value{v}})
			}
		}
	}
	for _, rel := range w.tuples {
		tt := &cqlvalue.Type{Kind: cqlvalue.Tuple, Frozen: true}
		bf := boundFilter{op: rel.Op}
		for _, n := range rel.Columns {
			bf.tuple = append(bf.tuple, t.byName[n])
			tt.Elems = append(tt.Elems, t.byName[n].typ)
		}
		v, err := b.value(rel.Value, tt, "("+joinNames(rel.Columns)+")")
		if err != nil {
			return nil, err
		}
		bf.vals = []cqlvalue.Value{v}
		bf.col = &column{name: "tuple", typ: tt, kind: regular}
		out = append(out, bf)
	}
	return out, nil
}

func bindRelValues(b *binder, rel cql.Relation, typ *cqlvalue.Type, name string) ([]cqlvalue.Value, error) {
	if rel.Op == cql.OpIn && rel.In == nil {
		v, err := b.value(rel.Value, cqlvalue.ListOf(typ), name)
		if err != nil || v.Null || v.Unset {
			return nil, err
		}
		elems, err := cqlvalue.Elements(v.Bytes)
		if err != nil {
			return nil, err
		}
		var out []cqlvalue.Value
		for _, e := range elems {
			out = append(out, cqlvalue.Value{Bytes: e, Null: e == nil})
		}
		return out, nil
	}
	if rel.Op == cql.OpIn {
		var out []cqlvalue.Value
		for _, term := range rel.In {
			v, err := b.value(term, typ, name)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	}
	v, err := b.value(rel.Value, typ, name)
	if err != nil {
		return nil, err
	}
	return []cqlvalue.Value{v}, nil
}

// pass reports whether row r passes every filter.
func (rd *reader) pass(r *rowDoc) bool {
	for _, f := range rd.filters {
		var cur []byte
		if f.tuple != nil {
			var elems [][]byte
			for _, c := range f.tuple {
				elems = append(elems, cellValue(rd.sp.t, r, c, rd.now))
			}
			cur = cqlvalue.EncodeTuple(elems...)
		} else {
			src := r
			if f.col.kind == static {
				src = rd.cur.static
			}
			if src != nil {
				cur = cellValue(rd.sp.t, src, f.col, rd.now)
			}
		}
		if !matches(f, cur) {
			return false
		}
	}
	return true
}

// matches applies one filter to the value cur (nil: null).
func matches(f boundFilter, cur []byte) bool {
	switch f.op {
	case cql.OpContains, cql.OpContainsKey:
		if cur == nil || len(f.vals) == 0 || f.vals[0].Null {
			return false
		}
		if f.op == cql.OpContainsKey {
			ok, _ := cqlvalue.ContainsKey(f.col.typ, cur, f.vals[0].Bytes)
			return ok
		}
		ok, _ := cqlvalue.Contains(f.col.typ, cur, f.vals[0].Bytes)
		return ok
	}
	return compareCond(f.col.typ, cur, boundCond{col: f.col, op: f.op, vals: f.vals})
}
